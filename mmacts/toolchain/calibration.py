"""The ptxas the compile expectations were calibrated with, and the warning a run gives under another.

The compile suite's verdicts (which forms ptxas accepts or refuses, the minimum PTX ISA versions of
``mmacts/ptx``, the SASS families of ``suites/compile/test_sass_families.py``) and the ptxas facts in
the ambiguity register were recorded with this ptxas. Another ptxas is allowed (the floor is the
first release that accepts every PTX ISA version the suite emits, see ``constraints/minimum.txt``),
but where it differs a ``fail`` of a compile case may be the toolchain's change, not a defect: the
run says so once on stderr and in ``run.json`` (``warnings``).
"""

from __future__ import annotations

CALIBRATED_PTXAS = "13.5.37"
"""``ptxas --version`` of the toolchain (nvidia-cuda-nvcc 13.5.37) the expectations were calibrated with."""


def ptxas_warning(ptxas: str | None) -> str | None:
    """A one-line warning if ``ptxas`` (as ``run.json`` records it, e.g. ``13.1.80`` or
    ``13.5.37 (MMACTS_TOOLCHAIN_DIR=/tmp/tc)``) is not the calibrated one; None if it is or is unknown."""
    text = (ptxas or "").strip()
    if not text or text.startswith("unavailable"):
        return None  # no ptxas at all is reported elsewhere (the run refuses to start)
    version = text.split()[0]
    if version == CALIBRATED_PTXAS:
        return None
    return (f"ptxas {version} differs from ptxas {CALIBRATED_PTXAS}, with which the compile expectations were "
            f"calibrated: a compile-case fail may be a change of the toolchain, not of the spec reading")
