"""``BSProbe.applies`` decides without building vectors, and agrees with what the build yields.

Listing the ``probes`` cases asks every (path, probe) whether it applies; that answer must not
cost the vectors (they are built when a case runs), yet it must be the build's truth: a probe
has a case on a path exactly when the path's form gets at least one of its vectors.
"""

from __future__ import annotations

import pytest

from suites.probes import blockscale_driver as BSD
from suites.probes import blockscale_probes as BP
from suites.probes.blockscale_paths import BS_PATHS


def _excluded_by_flags(p: BP.BSProbe, tcgen05: bool, stype: str) -> bool:
    """What the probe's flags rule out, whatever the build would say (tcgen05-only probes on
    mma.sync, UE8M0/UE4M3-only probes on the other scale type: the build may even refuse those)."""
    return ((p.tcgen05_only and not tcgen05) or (p.ue8m0_only and stype != "ue8m0")
            or (p.ue4m3_only and stype != "ue4m3"))


@pytest.mark.parametrize("path", list(BS_PATHS))
def test_applies_is_the_build_truth(path: str) -> None:
    """For every path x probe: ``applies == bool(vectors)`` wherever the flags leave the choice to
    the form (and ``applies`` is False where they do not)."""
    bp = BS_PATHS[path]
    for p in BP.BS_PROBES:
        got = p.applies(bp.form, bp.tcgen05)
        if _excluded_by_flags(p, bp.tcgen05, bp.form.stype):
            assert got is False, (path, p.name)
        else:
            assert got == bool(BP.vectors(p, bp.form)), (path, p.name, got)


def test_forms_without_vectors() -> None:
    """The (path, probe) pairs whose build is empty although the flags allow them, as enumerated:
    the anchor probe on 1X (one scale block) and the NaN-element probe on E2M1 (no NaN code)."""
    empty = sorted((bp.name, p.name) for bp in BS_PATHS.values() for p in BP.BS_PROBES
                   if not _excluded_by_flags(p, bp.tcgen05, bp.form.stype) and not p.applies(bp.form, bp.tcgen05))
    want = sorted([(f"{fam}.mxf8f6f4.1X", "bs_scale_anchor") for fam in ("mma_sync.sm_120a", "tcgen05.sm_100a")]
                  + [(f"{fam}.{t}", "bs_nan_element") for fam in ("mma_sync.sm_120a", "tcgen05.sm_100a")
                     for t in ("mxf4.2X", "mxf4nvf4.2X", "mxf4nvf4.4X", "mxf4nvf4.4X.ue4m3")
                     if f"{fam}.{t}" in BS_PATHS])
    assert empty == want


def test_listing_cases_builds_no_vector(monkeypatch: pytest.MonkeyPatch) -> None:
    """Enumerating the block-scale cases (what ``mmacts run``/``list`` and pytest collection do)
    leaves the vector cache untouched; a case's vectors are built when it asks for them."""
    cache: dict = {}
    monkeypatch.setattr(BP, "_CACHE", cache)
    cases = BSD.cases()
    assert cases and not cache
    one = next(c for c in cases if c.runtime["probe"] == "bs_signed_zero")
    assert BSD.case_vectors(one) and list(cache) == [("bs_signed_zero", BSD.path_of(one).form.tag)]
