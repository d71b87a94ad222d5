"""The Hopper validation suite's case records: one form and one run-time record per path (mma.sync, wgmma).

Declared once here (issue 25, item 1): the driver builds ``Case(form=WgmmaForm(...),
runtime=WgmmaRuntime(...))`` and reads attributes; every default is written beside its field, not restated
where it is read. Why two records per side and not one with every field: an mma.sync case has no swizzle,
no major-ness and no shared-memory image, and a record that held them would show a swizzle for a kernel
that has none (in the case list, the report's JSON and the module key). The ``path`` field stays a field,
as it was in the dict, so the module key (``Case.form_key``) and the readers that go through the mapping
view (the VM's differential tests pick cases by ``form["path"]``) see the same keys as before.
"""

from __future__ import annotations

from dataclasses import dataclass

from mmacts.core.fields import Fields

WG_KBYTES = 128
"""K bytes of the wgmma A/B tiles: one 128-B swizzle row, 4 wgmma K-steps."""
IMG_BYTES = 16384
"""Shared-memory image of one wgmma case: A at 0, B at 8192 (both 1024-aligned)."""


def _same_path(record: Fields, path: str, want: str) -> None:
    if path != want:
        raise ValueError(f"{type(record).__name__} is the {want} path, not {path!r}")


@dataclass(frozen=True)
class MmaSyncForm(Fields):
    """Compile-time qualifiers of ``mma.sync.aligned.m16n8k32.row.col.{dtype}.{atype}.{btype}.{dtype}``
    (one kernel module per form). Defaults: the first form the suite enumerates."""

    path: str = "mma_sync"
    """Which kernel family; always ``mma_sync`` here (kept as a field: it is part of the module key)."""
    atype: str = "e4m3"
    btype: str = "e4m3"
    dtype: str = "f32"
    """Accumulator and D type: ``f32`` or ``f16``."""

    def __post_init__(self) -> None:
        _same_path(self, self.path, "mma_sync")


@dataclass(frozen=True)
class MmaSyncRuntime(Fields):
    """Run-time fields of an mma.sync case: only the published replay has one."""

    gpu: str = ""
    """The GPU whose published output file a ``published`` case replays (``B200``, ``H100``, ``H200``);
    empty for every other recipe."""


@dataclass(frozen=True)
class WgmmaForm(Fields):
    """Compile-time qualifiers of ``wgmma.mma_async.sync.aligned.m64n64k{16,32}.f32.{atype}.{btype}`` from
    shared memory (one kernel module per form). Defaults: the suite's K-major fp8 tile."""

    path: str = "wgmma"
    """Which kernel family; always ``wgmma`` here (kept as a field: it is part of the module key)."""
    atype: str = "e4m3"
    """``e4m3``/``e5m2`` (k32) or ``bf16`` (k16; then ``btype`` is ``bf16`` too)."""
    btype: str = "e4m3"
    steps: int = WG_KBYTES // 32
    """wgmma instructions chained along K (each one 32 K bytes: k32 fp8, k16 bf16)."""
    trans_a: int = 0
    """1: A is MN-major in shared memory (the instruction's transpose immediate); bf16 only."""
    trans_b: int = 0
    """1: B is MN-major in shared memory; bf16 only."""
    img: int = IMG_BYTES
    """Bytes of the shared-memory image; B starts at its middle."""

    def __post_init__(self) -> None:
        _same_path(self, self.path, "wgmma")


@dataclass(frozen=True)
class WgmmaRuntime(Fields):
    """Run-time fields of a wgmma case: how the operands are placed in the image (its descriptors) and C."""

    swizzle: str = "128B"
    """Shared-memory swizzle of both operands: ``none``, ``32B``, ``64B`` or ``128B``."""
    a_major: str = "K"
    """``K`` or ``MN``: A's major-ness in the image (agrees with the form's ``trans_a``)."""
    b_major: str = "K"
    zero_c: int = 0
    """1: C = 0 (accumulated with scale-d = 1), the regime the published H100/H200 data and the
    ``hopper_wgmma_fp8`` model were validated in; 0: C is random."""
    gpu: str = ""
    """The GPU whose published output file a ``published`` case replays (``H100``, ``H200``); else empty."""


HopperForm = MmaSyncForm | WgmmaForm
HopperRuntime = MmaSyncRuntime | WgmmaRuntime
