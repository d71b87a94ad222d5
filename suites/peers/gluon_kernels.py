"""A project-written Gluon (Triton 3.9) block-scaled tcgen05 kernel, for one CTA and for a CTA pair.

Why write one: Triton's ``tl.dot_scaled`` lowering never emits ``tcgen05.mma.cta_group::2``, and the
2-CTA block-scaled forms are where the spec is least clear (whose scale factors a pair MMA reads, how
``tcgen05.cp.cta_group::2`` fills the two tensor memories). Gluon exposes the tensor-memory layouts,
``tcgen05_copy`` and ``two_ctas=True`` directly; its compiler chooses the PTX (mapa, multicast commits,
shared::cluster addresses carrying the CTA rank), so the VM runs what Triton emits for a pair, not our
idea of it.

``mma_scaled_kernel`` computes one ``BM x BN`` tile of ``C = (A * sA) @ (B * sB)`` (fp32) per cluster,
looping over K:

- A ``[M, K / packA]`` and B ``[N, K / packB]`` (K-major; FP4 packed two per byte along K, low nibble
  first) arrive by TMA through host tensor maps (``__grid_constant__`` parameters);
- the scale factors arrive by TMA in the 5-D "packed block" layout ``(1, MN / 128, K / G / 4, 2, 256)``
  (one 512-byte atom per 128 rows x 4 groups: element ``(r, g)`` of atom ``(i, j)`` at byte
  ``(r % 32) * 16 + (r // 32) * 4 + g % 4``); the shared-memory view is un-permuted to ``[MN, K / G]``,
  which is the layout ``tcgen05.cp ... 32x128b.warpx4`` reads, and copied to tensor memory with
  ``tcgen05_copy``;
- ``tcgen05_mma_scaled`` issues the MMA with ``mbarriers=[mma_bar]``, which Gluon lowers to a
  ``tcgen05.commit`` (multicast to both CTAs of a pair) that arrives when the MMA is done;
- the accumulator is read with ``tcgen05.ld`` and stored to C with plain stores.

With ``TWO_CTAS`` (``num_ctas=2``): the tile is ``BM = 256`` rows, each CTA loads and holds its 128 rows
of A and of SFA (``cga_layout [[1, 0]]``) and half the N rows of B (B's tile ``[BN, K]`` split on its
first axis, i.e. N after the permute). The scale-factor B tile is held whole by both CTAs (``SFB_SPLIT``
False, the cases' form and what Triton's newer 2-CTA tests use: a broadcast ``cga_layout``, each CTA
TMA-loads the same bytes) or split like B (``SFB_SPLIT`` True: Triton 3.9 compiles it too; it is right only
if a pair MMA read SFB's N half h from CTA h, see AMB-SF-2CTA-SFB-COPY). The accumulator layout has
``two_ctas=True``; the lead (even) CTA issues the MMA and the scale copies for the pair, and Gluon forms the
lead's barrier address by masking the CTA rank out of a shared::cluster address.

This module needs ``triton`` (the ``peers`` extra); nothing else in the project imports it.
"""

from __future__ import annotations

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.blackwell import (
    TensorMemoryLayout,
    TensorMemoryScalesLayout,
    allocate_tensor_memory,
    mbarrier,
    tcgen05_copy,
    tcgen05_mma_scaled,
    tma,
)


@gluon.jit
def _scales_2d(smem, MN: gl.constexpr, KG: gl.constexpr):
    """The ``[MN, KG]`` view of a packed-block scale tile ``(1, MN / 128, KG / 4, 2, 256)`` in shared memory."""
    v = smem.reshape((MN // 128, KG // 4, 32, 4, 4))
    v = v.permute((0, 3, 2, 1, 4))
    return v.reshape((MN, KG))


@gluon.jit
def mma_scaled_kernel(a_desc, b_desc, sa_desc, sb_desc, c_ptr, K, stride_cm,
                      FMT_A: gl.constexpr, FMT_B: gl.constexpr, GROUP: gl.constexpr, TWO_CTAS: gl.constexpr,
                      SFB_SPLIT: gl.constexpr):
    PACK_A: gl.constexpr = 2 if FMT_A == "e2m1" else 1
    PACK_B: gl.constexpr = 2 if FMT_B == "e2m1" else 1
    BM: gl.constexpr = a_desc.block_shape[0]
    BN: gl.constexpr = b_desc.block_shape[0]
    BK: gl.constexpr = a_desc.block_shape[1] * PACK_A
    KG: gl.constexpr = BK // GROUP
    NCTA: gl.constexpr = 2 if TWO_CTAS else 1
    pid_m = gl.program_id(0)
    pid_n = gl.program_id(1)

    a_smem = gl.allocate_shared_memory(a_desc.dtype, a_desc.block_shape, a_desc.layout)
    b_smem = gl.allocate_shared_memory(b_desc.dtype, b_desc.block_shape, b_desc.layout)
    sa_smem = gl.allocate_shared_memory(sa_desc.dtype, sa_desc.block_shape, sa_desc.layout)
    sb_smem = gl.allocate_shared_memory(sb_desc.dtype, sb_desc.block_shape, sb_desc.layout)

    split: gl.constexpr = [[1, 0]] if TWO_CTAS else []
    sfb_cga: gl.constexpr = ([[1, 0]] if SFB_SPLIT else [[0, 0]]) if TWO_CTAS else []
    sa_tmem = allocate_tensor_memory(sa_desc.dtype, [BM, KG], TensorMemoryScalesLayout(cga_layout=split))
    sb_tmem = allocate_tensor_memory(sb_desc.dtype, [BN, KG], TensorMemoryScalesLayout(cga_layout=sfb_cga))
    acc_layout: gl.constexpr = TensorMemoryLayout([BM // NCTA, BN], col_stride=1, cga_layout=split,
                                                  two_ctas=TWO_CTAS)
    acc = allocate_tensor_memory(gl.float32, [BM, BN], acc_layout)

    load_bar = mbarrier.allocate_mbarrier(two_ctas=TWO_CTAS)
    mma_bar = mbarrier.allocate_mbarrier()
    mbarrier.init(load_bar, count=1)
    mbarrier.init(mma_bar, count=1)
    nbytes: gl.constexpr = (a_desc.nbytes_per_cta + b_desc.nbytes_per_cta + sa_desc.nbytes_per_cta
                            + sb_desc.nbytes_per_cta)
    phase = 0
    use_acc = False
    for k in range(0, K, BK):
        mbarrier.expect(load_bar, nbytes)
        tma.async_load(a_desc, [pid_m * BM, k // PACK_A], load_bar, a_smem)
        tma.async_load(b_desc, [pid_n * BN, k // PACK_B], load_bar, b_smem)
        tma.async_load(sa_desc, [0, pid_m * (BM // 128), k // GROUP // 4, 0, 0], load_bar, sa_smem)
        tma.async_load(sb_desc, [0, pid_n * (BN // 128), k // GROUP // 4, 0, 0], load_bar, sb_smem)
        mbarrier.wait(load_bar, phase, deps=[a_smem, b_smem, sa_smem, sb_smem])
        tcgen05_copy(_scales_2d(sa_smem, BM, KG), sa_tmem)
        tcgen05_copy(_scales_2d(sb_smem, BN, KG), sb_tmem)
        tcgen05_mma_scaled(a_smem, b_smem.permute((1, 0)), acc, sa_tmem, sb_tmem, FMT_A, FMT_B, use_acc=use_acc,
                           mbarriers=[mma_bar])
        mbarrier.wait(mma_bar, phase, deps=[a_smem, b_smem, sa_smem, sb_smem])
        use_acc = True
        phase ^= 1
    mbarrier.invalidate(load_bar)
    mbarrier.invalidate(mma_bar)

    reg: gl.constexpr = acc.get_reg_layout()
    rows = pid_m * BM + gl.arange(0, BM, layout=gl.SliceLayout(1, reg))
    cols = pid_n * BN + gl.arange(0, BN, layout=gl.SliceLayout(0, reg))
    gl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :], acc.load(reg))


KERNELS = {"mma_scaled": mma_scaled_kernel}
