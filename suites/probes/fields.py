"""The ``probes`` suite's case records: which instruction path a probe runs on, and which probe.

Declared once here (issue 25, item 1): the E4M3 probes (``suites.probes.driver``) and the block-scale probes
(``suites.probes.blockscale_driver``) build their cases with these and read attributes. Both forms carry
``path``, the key that tells the two families apart (:func:`suites.probes.blockscale_driver.is_blockscale`).
"""

from __future__ import annotations

from dataclasses import dataclass

from mmacts.core.fields import Fields


@dataclass(frozen=True)
class ProbePathForm(Fields):
    """What every probe form has: the name of the instruction path it runs on (one module per path)."""

    path: str = ""


@dataclass(frozen=True)
class E4M3ProbeForm(ProbePathForm):
    """An E4M3 probe path: ``path`` names instruction family and target (``mma_sync.sm_90a``); the operand and
    output types are the same on every path."""

    atype: str = "e4m3"
    btype: str = "e4m3"
    out: str = "fp32"


@dataclass(frozen=True)
class BlockScaleProbeForm(ProbePathForm):
    """A block-scale probe path (``suites.probes.blockscale_paths.BS_PATHS``): its name and the block-scaled form
    it runs (family ``mma_sync`` or ``tcgen05``, kind, scale_vec, scale and element types)."""

    family: str = "mma_sync"
    kind: str = "mxf8f6f4"
    scale_vec: str = "1X"
    stype: str = "ue8m0"
    etype: str = "e4m3"


@dataclass(frozen=True)
class ProbeRuntime(Fields):
    """Which probe a case runs: a probe name of the path's catalog, or the recovery over all of them
    (``recover`` / ``bs_recover``). Empty names no probe (no case is made without one)."""

    probe: str = ""
