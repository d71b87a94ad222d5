"""Named fault points of the kernel generators: the one hook through which a planted kernel fault changes PTX.

Why: a planted kernel fault (:mod:`mmacts.mutants.kernel_faults`) proves a suite would notice one mistake in a
kernel -- a wrong shift, a missing wait -- by making one of its cases fail. Planted as a regular expression
over the generated text, every fault was pinned to the exact spelling of registers and offsets, so a
refactor that kept the PTX's meaning broke the faults. Instead the generator itself, at the one block a
fault changes, asks :func:`faulty` whether that named fault is planted and, if so, emits the faulty variant
of that block. The names and what each variant does are listed once, in :data:`POINTS`.

Off by default: with nothing planted :func:`faulty` is one context-variable read returning False, and the
generated PTX is byte-for-byte what it is without the hook. :func:`planted` turns points on for the current
context only (a context variable, so nothing leaks into another thread or outlives the ``with`` block) and
refuses, on leaving, a planted point that no generated kernel reached: a fault that changes nothing proves
nothing, and a generator that lost its point must be fixed, not the fault dropped.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

POINTS: dict[str, str] = {
    # tcgen05 block-scale kernel (mmacts.ptx.tcgen05_kernels)
    "wrong-cluster-rank": "both CTAs of a pair read the leader's record (rank not added)",
    "missing-proxy-fence": "fence.proxy.async removed after the shared-memory image copy",
    "tmem-quadrant-shift": "tcgen05.ld/st lane-quadrant base shifted by 20 instead of 21 bits",
    "missing-wait-st": "tcgen05.wait::st removed after the preload stores",
    "mma-sfa-sfb-swapped": "SFA and SFB tensor-memory operands of tcgen05.mma swapped",
    "missing-mbarrier-wait": "the bounded wait on the commit's mbarrier is skipped",
    "params-record-offset": "the read-back column (record word 5) is read from word 6",
    "readback-loop-off-by-one": "the TMEM read-back loop runs one .x8 step too far",
    "missing-wait-ld": "tcgen05.wait::ld removed: the next .x8 load overwrites registers still being loaded "
                       "(anti-dependency) and dealloc may overtake the loads (9.7.16.6.4.5)",
    "wrong-ld-shape": "tcgen05.ld.32x32b.x8 replaced by .16x64b.x8",
    # warp-level kernels (mmacts.ptx.mma_sync_kernels)
    "mma-sync-tida-byte": "mma.sync kernel unpacks thread-id-a from byte 2 instead of byte 1",
    "wgmma-missing-fence": "wgmma.fence removed before the first wgmma.mma_async",
}
"""Every fault point a generator offers: name -> what its faulty variant does (the planted fault's name and
description)."""


@dataclass
class _Planting:
    names: frozenset[str]
    reached: set[str] = field(default_factory=set)


_PLANTED: ContextVar[_Planting | None] = ContextVar("mmacts_ptx_fault_points", default=None)


def faulty(point: str) -> bool:
    """True while the fault point ``point`` is planted: the generator then emits that block's faulty variant."""
    planting = _PLANTED.get()
    if planting is None or point not in planting.names:
        return False
    planting.reached.add(point)
    return True


@contextmanager
def planted(*points: str) -> Iterator[None]:
    """Kernels generated inside the block carry the faulty variant of each named point.

    Unknown names are refused up front; on leaving (without an exception in flight) a point no generator
    reached is an AssertionError."""
    unknown = [p for p in points if p not in POINTS]
    if unknown:
        raise ValueError(f"unknown kernel fault point(s) {', '.join(unknown)}; known: {', '.join(POINTS)}")
    planting = _Planting(frozenset(points))
    token = _PLANTED.set(planting)
    try:
        yield
    finally:
        _PLANTED.reset(token)
    missed = sorted(planting.names - planting.reached)
    if missed:
        raise AssertionError(f"planted kernel fault point(s) {', '.join(missed)} reached by no generated kernel")
