"""Triton ``tl.dot_scaled`` kernels for the peers suite (Triton's own Blackwell lowering).

Each kernel computes one ``BLOCK_M x BLOCK_N`` tile per program of ``C = (A * sA) @ (B * sB)`` with
fp32 accumulation, looping over K. Formats are Triton's strings (``e4m3``, ``e5m2``, ``e2m1``); FP4
operands are packed two per byte along K (low nibble first), as ``tl.dot_scaled`` expects. Scales
are ``[M, K / GROUP]`` for A and ``[N, K / GROUP]`` for B (uint8 E8M0 with GROUP 32, or float8
E4M3 with GROUP 16 for nvfp4).

``B_KMAJOR`` picks the memory layout of B: K-major (``[N, K / packB]`` row-major: each column of the
logical ``K x N`` B is contiguous) or MN-major (``[K / packB, N]`` row-major). Triton sees the
layout through the strides and chooses the shared-memory layout and descriptor major-ness itself.

Two load styles: plain pointer loads (``dot_scaled_ptr``) and TMA tensor descriptors created on
the device (``dot_scaled_tma``: ``tl.make_tensor_descriptor``, which needs a global scratch buffer
for the 128-byte tensor maps) for A and B; scales are loaded through pointers.

``dot_scaled_5d`` is Triton's tutorial 10 (block-scaled matmul): A and K-major B through TMA, scales
stored preshuffled in the 5-D layout ``(MN / 128, K / GROUP / 4, 32, 4, 4)`` and loaded either through
pointers (``tma5p``) or a 5-D TMA descriptor (``tma5t``), then ``reshape``/``trans``-ed to 2-D. Triton
recognises that layout and stages the scales through shared memory with
``tcgen05.cp.cta_group::1.warpx4.32x128b`` (the 2-D kernels above write them with ``tcgen05.st``).

``dot_scaled_chain`` chains two products in one tile: ``P = (A * sA) @ (B * sB)`` rounded to e4m3, then
``C = (P * sP) @ (D * sD)`` (``K`` of the second product is ``BLOCK_K``; B is ``[K, BLOCK_K]`` and D is
``[BLOCK_K, N]``, both MN-major, one K tile). Triton keeps P in tensor memory and the second
``tcgen05.mma ... block_scale`` reads its A operand from TMEM (``[a_tmem]`` instead of a descriptor).

This module needs ``triton`` (the ``peers`` extra); nothing else in the project imports it.
"""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def dot_scaled_ptr(a_ptr, b_ptr, sa_ptr, sb_ptr, c_ptr, M, N, K,
                   stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                   FMT_A: tl.constexpr, FMT_B: tl.constexpr, GROUP: tl.constexpr):
    PACK_A: tl.constexpr = 2 if FMT_A == "e2m1" else 1
    PACK_B: tl.constexpr = 2 if FMT_B == "e2m1" else 1
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_ka = tl.arange(0, BLOCK_K // PACK_A)
    offs_kb = tl.arange(0, BLOCK_K // PACK_B)
    offs_ks = tl.arange(0, BLOCK_K // GROUP)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + (k // PACK_A + offs_ka)[None, :] * stride_ak)
        b = tl.load(b_ptr + (k // PACK_B + offs_kb)[:, None] * stride_bk + offs_n[None, :] * stride_bn)
        sa = tl.load(sa_ptr + offs_m[:, None] * (K // GROUP) + (k // GROUP + offs_ks)[None, :])
        sb = tl.load(sb_ptr + offs_n[:, None] * (K // GROUP) + (k // GROUP + offs_ks)[None, :])
        acc = tl.dot_scaled(a, sa, FMT_A, b, sb, FMT_B, acc)
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn, acc)


@triton.jit
def dot_scaled_tma(a_ptr, b_ptr, sa_ptr, sb_ptr, c_ptr, M, N, K,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                   FMT_A: tl.constexpr, FMT_B: tl.constexpr, GROUP: tl.constexpr, B_KMAJOR: tl.constexpr):
    PACK_A: tl.constexpr = 2 if FMT_A == "e2m1" else 1
    PACK_B: tl.constexpr = 2 if FMT_B == "e2m1" else 1
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K // PACK_A], strides=[K // PACK_A, 1],
                                       block_shape=[BLOCK_M, BLOCK_K // PACK_A])
    if B_KMAJOR:
        b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K // PACK_B], strides=[K // PACK_B, 1],
                                           block_shape=[BLOCK_N, BLOCK_K // PACK_B])
    else:
        b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K // PACK_B, N], strides=[N, 1],
                                           block_shape=[BLOCK_K // PACK_B, BLOCK_N])
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_ks = tl.arange(0, BLOCK_K // GROUP)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = a_desc.load([pid_m * BLOCK_M, k // PACK_A])
        if B_KMAJOR:
            b = b_desc.load([pid_n * BLOCK_N, k // PACK_B]).T
        else:
            b = b_desc.load([k // PACK_B, pid_n * BLOCK_N])
        sa = tl.load(sa_ptr + offs_m[:, None] * (K // GROUP) + (k // GROUP + offs_ks)[None, :])
        sb = tl.load(sb_ptr + offs_n[:, None] * (K // GROUP) + (k // GROUP + offs_ks)[None, :])
        acc = tl.dot_scaled(a, sa, FMT_A, b, sb, FMT_B, acc)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc)


@triton.jit
def dot_scaled_5d(a_ptr, b_ptr, sa_ptr, sb_ptr, c_ptr, M, N, K,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  FMT_A: tl.constexpr, FMT_B: tl.constexpr, GROUP: tl.constexpr, SCALE_TMA: tl.constexpr):
    PACK_A: tl.constexpr = 2 if FMT_A == "e2m1" else 1
    PACK_B: tl.constexpr = 2 if FMT_B == "e2m1" else 1
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K // PACK_A], strides=[K // PACK_A, 1],
                                       block_shape=[BLOCK_M, BLOCK_K // PACK_A])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K // PACK_B], strides=[K // PACK_B, 1],
                                       block_shape=[BLOCK_N, BLOCK_K // PACK_B])
    SK: tl.constexpr = BLOCK_K // GROUP // 4
    SKT = K // GROUP // 4
    # scales preshuffled as in Triton's tutorial 10: (MN // 128, K // GROUP // 4, 32, 4, 4), 512 bytes per
    # (128 rows x 4 groups) atom; the TMA view splits each atom into 2 x 256 bytes (box dims are at most 256)
    if SCALE_TMA:
        sa_desc = tl.make_tensor_descriptor(sa_ptr, shape=[1, M // 128, SKT, 2, 256],
                                            strides=[M // 128 * SKT * 512, SKT * 512, 512, 256, 1],
                                            block_shape=[1, BLOCK_M // 128, SK, 2, 256])
        sb_desc = tl.make_tensor_descriptor(sb_ptr, shape=[1, N // 128, SKT, 2, 256],
                                            strides=[N // 128 * SKT * 512, SKT * 512, 512, 256, 1],
                                            block_shape=[1, BLOCK_N // 128, SK, 2, 256])
    offs_sm = pid_m * (BLOCK_M // 128) + tl.arange(0, BLOCK_M // 128)
    offs_sn = pid_n * (BLOCK_N // 128) + tl.arange(0, BLOCK_N // 128)
    offs_inner = tl.arange(0, SK * 512)
    sa_p = sa_ptr + offs_sm[:, None] * (K // GROUP * 128) + offs_inner[None, :]
    sb_p = sb_ptr + offs_sn[:, None] * (K // GROUP * 128) + offs_inner[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = a_desc.load([pid_m * BLOCK_M, k // PACK_A])
        b = b_desc.load([pid_n * BLOCK_N, k // PACK_B])
        if SCALE_TMA:
            sa = sa_desc.load([0, pid_m * (BLOCK_M // 128), k // GROUP // 4, 0, 0])
            sb = sb_desc.load([0, pid_n * (BLOCK_N // 128), k // GROUP // 4, 0, 0])
        else:
            sa = tl.load(sa_p + (k // GROUP // 4) * 512)
            sb = tl.load(sb_p + (k // GROUP // 4) * 512)
        sa = sa.reshape(BLOCK_M // 128, SK, 32, 4, 4).trans(0, 3, 2, 1, 4).reshape(BLOCK_M, BLOCK_K // GROUP)
        sb = sb.reshape(BLOCK_N // 128, SK, 32, 4, 4).trans(0, 3, 2, 1, 4).reshape(BLOCK_N, BLOCK_K // GROUP)
        acc = tl.dot_scaled(a, sa, FMT_A, b.T, sb, FMT_B, acc)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc)


@triton.jit
def dot_scaled_chain(a_ptr, b_ptr, d_ptr, sa_ptr, sb_ptr, sp_ptr, sd_ptr, c_ptr, M, N, K,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                     FMT_A: tl.constexpr, FMT_B: tl.constexpr, GROUP: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)  # K of the first product (K == BLOCK_K)
    offs_p = tl.arange(0, BLOCK_K)  # columns of P: K of the second product
    offs_ks = tl.arange(0, BLOCK_K // GROUP)
    a = tl.load(a_ptr + offs_m[:, None] * K + offs_k[None, :])
    b = tl.load(b_ptr + offs_k[:, None] * BLOCK_K + offs_p[None, :])
    d = tl.load(d_ptr + offs_p[:, None] * N + offs_n[None, :])
    sa = tl.load(sa_ptr + offs_m[:, None] * (K // GROUP) + offs_ks[None, :])
    sb = tl.load(sb_ptr + offs_p[:, None] * (K // GROUP) + offs_ks[None, :])
    sp = tl.load(sp_ptr + offs_m[:, None] * (BLOCK_K // GROUP) + offs_ks[None, :])
    sd = tl.load(sd_ptr + offs_n[:, None] * (BLOCK_K // GROUP) + offs_ks[None, :])
    p = tl.dot_scaled(a, sa, FMT_A, b, sb, FMT_B).to(tl.float8e4nv)
    acc = tl.dot_scaled(p, sp, "e4m3", d, sd, FMT_B)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc)


KERNELS = {"ptr": dot_scaled_ptr, "tma": dot_scaled_tma, "tma5p": dot_scaled_5d, "tma5t": dot_scaled_5d,
           "chain": dot_scaled_chain}
