"""The kernel generators' fault points: every named point is reached by a generator and changes its PTX
while planted (and only then); a point that no kernel reaches, or an unknown name, is refused."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from mmacts.ptx import fault_points as FP
from mmacts.ptx import mma_sync_kernels as MS
from mmacts.ptx import tcgen05_kernels as TK


def _tcgen05_pair() -> str:
    return TK.module_ptx(TK.KernelForm("mxf8f6f4", "1X", cta_group=2))


def _mma_sync() -> str:
    return MS.mma_sync_blockscale_module("mxf8f6f4", "e4m3", "e4m3", "ue8m0", "1X")


def _wgmma() -> str:
    return MS.wgmma_module("e4m3", 64, img_bytes=4096)


GENERATOR: dict[str, Callable[[], str]] = {
    **{p: _tcgen05_pair for p in FP.POINTS},
    "mma-sync-tida-byte": _mma_sync,
    "wgmma-missing-fence": _wgmma,
}


@pytest.mark.parametrize("point", sorted(FP.POINTS))
def test_planted_point_changes_the_kernel(point: str) -> None:
    gen = GENERATOR[point]
    clean = gen()
    with FP.planted(point):
        faulty = gen()
    assert faulty != clean, f"{point}: planting it left the PTX unchanged"
    assert gen() == clean, f"{point}: still planted after the context closed"
    others = [g for p, g in GENERATOR.items() if g is not gen]
    with pytest.raises(AssertionError, match=point):  # a generator without the point does not reach it
        with FP.planted(point):
            for g in others:
                g()


def test_hook_off_by_default() -> None:
    assert not any(FP.faulty(p) for p in FP.POINTS)


def test_unknown_point_refused() -> None:
    with pytest.raises(ValueError, match="no-such-point"):
        with FP.planted("no-such-point"):
            pass
