"""How the model *reads* operands: shared-memory matrices through a descriptor, A and scale factors
out of tensor memory, and what ``tcgen05.cp`` writes. The spec reading, vectorised.

Why a separate reading from the encoders: the model must find each element by following the
descriptor and the layout rules (9.7.16.3.3 canonical layouts, Table 40/41 descriptor, 9.7.16.10.4
packing, 9.7.16.10.7 scale-factor layouts), never by knowing where the host put it. A wrong
descriptor bit or a wrong SF ID then reads the wrong bytes and the case fails -- which is what the
model's self-test checks.

Readings that the spec leaves to missing figures are named constants here (and hypotheses the
probes vary): ``SF_LANE_RULES``, ``A_TMEM_FP4_SHIFT``/``A_TMEM_FP6_SHIFT``, the K=96 continuation.
"""

from __future__ import annotations

import numpy as np

from reference.tcgen05.smem_image import decode_operand


def container_for(kind: str, fmt: str) -> str:
    """The shared-memory container (``reference.tcgen05.smem_image`` elem) of ``fmt`` under ``kind``.

    mxf8f6f4 keeps 4/6-bit codes in padded 16-byte chunks (``p4``/``p6``, 9.7.16.10.4.4);
    mxf4/mxf4nvf4 pack E2M1 two per byte (``fp4x2``, 9.7.16.10.4.6).
    """
    if kind in ("mxf4", "mxf4nvf4"):
        return "fp4x2"
    return {"e4m3": "b8", "e5m2": "b8", "e2m3": "p6", "e3m2": "p6", "e2m1": "p4"}[fmt]


def gather_smem(smem: np.ndarray, desc_word: int, rows: int, k: int, *, major: str,
                container: str) -> np.ndarray:
    """Codes of a (rows x k) operand (rows = M or N) read by walking ``desc_word`` over ``smem``.

    Delegates to the descriptor-walk decoder of ``reference.tcgen05.smem_image`` (the spec
    reading of 9.7.16.3.3 and Table 40); the model adds nothing to it.
    """
    return decode_operand(smem, int(desc_word), mn=rows, k=k, major=major, elem=container)


# ---------------------------------------------------------------------------------------------
# Tensor memory

A_TMEM_FP4_SHIFT = 2
"""E2M1 in an 8-bit TMEM holder under mxf8f6f4: bits [5:2] (Figure 199 missing; CUTLASS DSL
``cp_narrow_a_to_tmem_mma.py`` and mma.sync ``fp4_shift``). Hypothesis, probed."""
A_TMEM_FP6_SHIFT = 1
"""E3M2/E2M3 in an 8-bit holder: bits [6:1] (Figures 200/201 missing; CUTLASS DSL). Hypothesis."""


def tmem_bytes(tmem: np.ndarray, lane: np.ndarray, col: np.ndarray, byte: np.ndarray) -> np.ndarray:
    """Byte ``byte`` of the 32-bit cell (lane, col) of one CTA's (128, 512) TMEM image."""
    cell = tmem[lane.astype(np.intp), col.astype(np.intp)]
    return ((cell >> (8 * byte.astype(np.uint32))) & 0xFF).astype(np.uint8)


def gather_a_tmem(tmem: np.ndarray, addr: int, rows: int, k: int, *, kind: str, fmt: str) -> np.ndarray:
    """A codes (rows x k) from tensor memory at ``addr`` (9.7.16.10.4.3 / .5).

    mxf8f6f4: one 8-bit holder per element, 4 per 32-bit cell (lowest k in byte 0); 4/6-bit codes
    at ``A_TMEM_FP4_SHIFT``/``A_TMEM_FP6_SHIFT``. mxf4/mxf4nvf4: two E2M1 per byte, 8 per cell,
    even k in the low nibble. Row r sits in lane (addr lane + r).
    """
    lane0, col0 = (addr >> 16) & 0x7F, addr & 0x1FF
    r, kk = np.meshgrid(np.arange(rows), np.arange(k), indexing="ij")
    lane = lane0 + r
    if kind in ("mxf4", "mxf4nvf4"):
        b = tmem_bytes(tmem, lane, col0 + kk // 8, (kk % 8) // 2)
        return ((b >> (4 * (kk % 2)).astype(np.uint8)) & 0xF).astype(np.uint8)
    b = tmem_bytes(tmem, lane, col0 + kk // 4, kk % 4)
    if fmt == "e2m1":
        return (b >> A_TMEM_FP4_SHIFT) & 0xF
    if fmt in ("e2m3", "e3m2"):
        return (b >> A_TMEM_FP6_SHIFT) & 0x3F
    return b


SF_LANE_RULES: tuple[str, ...] = ("row_quadrant", "quadrant0")
"""Which lane the MMA reads a scale factor from, for the D element held in lane L:
``row_quadrant`` -- the SF copy in L's own 32-lane quadrant (why the spec asks for duplication to
all lane partitions); ``quadrant0`` -- always quadrant 0. CUTLASS replicates, so both agree on its
data; the quadrant probes tell them apart (cutlass-facts §1.2, §9)."""


def sf_group_columns(operand: str, layout: str, n: int) -> int:
    """TMEM columns between consecutive 4-SF groups (cutlass-facts §1.1, §1.4).

    4x1 datapath: SFA 4 (128 rows / 32); SFB 4 * ceil(N / 128). Layout B (M=128, cta_group::2):
    SFA 2 (64 rows / 32); SFB ceil(N/2 / 32). Only the K=96 forms step into the next group
    inside one MMA (SF ID + scale count > 4); elsewhere this only fixes the host layout.
    """
    if layout == "B":
        return 2 if operand == "a" else max(1, -(-(n // 2) // 32))
    return 4 if operand == "a" else 4 * max(1, -(-n // 128))


def sf_read(tmem: np.ndarray, addr: int, sf_id: int, count: int, *, x_local: np.ndarray,
            d_lane: np.ndarray, group_cols: int, rule: str = "row_quadrant") -> np.ndarray:
    """Scale-factor codes (shape ``x_local.shape + (count,)``) read for MN indices ``x_local``.

    ``addr``: the SF operand (lane bits 16-22 and column bits 0-8 used; bits 23-31 ignored, the
    reading CUTLASS relies on). Scale j of the MMA: byte (sf_id + j) mod 4 of column
    ``col + floor(x/32) + group_cols * floor((sf_id + j) / 4)``, lane ``(x mod 32) + 32 * quadrant``
    with the quadrant given by ``rule`` and ``d_lane`` (the lane that holds the D element).
    """
    lane0, col0 = (addr >> 16) & 0x7F, addr & 0x1FF
    x = x_local.astype(np.int64)[..., None]
    j = np.arange(count)
    slot = sf_id + j
    col = col0 + x // 32 + group_cols * (slot // 4)
    if rule == "row_quadrant":
        quad = (d_lane.astype(np.int64) // 32)[..., None]
    elif rule == "quadrant0":
        quad = np.zeros_like(x)
    else:
        raise ValueError(f"unknown SF lane rule {rule!r}")
    lane = (lane0 + x % 32 + 32 * quad) % 128
    return tmem_bytes(tmem, np.broadcast_to(lane, col.shape), col, np.broadcast_to(slot % 4, col.shape))


# ---------------------------------------------------------------------------------------------
# tcgen05.cp (shared -> tensor memory), no decompression

CP_GEOMETRY: dict[int, tuple[int, int, tuple[tuple[int, ...], ...]]] = {
    # code: (rows, bytes per row, lane offsets per row block of 32 rows)
    0: (32, 16, ((0, 32, 64, 96),)),                 # 32x128b.warpx4: every row to all 4 quadrants
    1: (64, 16, ((0, 32), (64, 96))),                # 64x128b.warpx2::01_23
    2: (64, 16, ((0, 64), (32, 96))),                # 64x128b.warpx2::02_13
    3: (128, 16, ((0,), (32,), (64,), (96,))),      # 128x128b
    4: (128, 32, ((0,), (32,), (64,), (96,))),      # 128x256b
}
"""Shape codes of ``mmacts.ptx.tcgen05_kernels.CP_SHAPES`` -> source geometry and lane targets
(9.7.16.2.3 data-movement shapes; multicast per 9.7.16.9.2; row-to-lane maps cutlass-facts §2.2)."""


def apply_cp(tmem: np.ndarray, smem: np.ndarray, code: int, taddr: int, desc_word: int) -> None:
    """Execute one ``tcgen05.cp`` into ``tmem`` (in place): the source is a K-major byte matrix."""
    rows, width, targets = CP_GEOMETRY[code]
    src = gather_smem(smem, desc_word, rows, width, major="K", container="b8")
    cells = src.reshape(rows, width // 4, 4).astype(np.uint32)
    words = cells[..., 0] | (cells[..., 1] << 8) | (cells[..., 2] << 16) | (cells[..., 3] << 24)
    lane0, col0 = (taddr >> 16) & 0x7F, taddr & 0x1FF
    for blk, offs in enumerate(targets):
        part = words[32 * blk: 32 * blk + 32]
        for off in offs:
            tmem[(lane0 + off + np.arange(32)) % 128, col0: col0 + width // 4] = part
