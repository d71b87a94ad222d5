"""Running probe vectors through real instructions: mma.sync fp8 and wgmma fp8 (Hopper).

Each probe vector becomes one inner product inside an otherwise-zero MMA, the way the
published vectors were measured: for ``mma.sync`` (one warp per vector) ``a`` is row 0 of
A, ``b`` column 0 of B, ``c`` is C[0][0] and D[0][0] is read back; for ``wgmma`` (one
warpgroup per 64 vectors) vector i is row i of A, column i of B and C[i][i], and D[i][i]
is read. The operand images are built with the project's encoders
(``reference.mma_sync.fragments``, ``suites.hopper_validation.wgmma_layout``), so a probe
run on silicon also exercises them.

The suite's driver launches through here; ``suites.probes.silicon`` records every probe on a GPU
(``python -m suites.probes.silicon build|run``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mmacts.backends import cuda_runtime as cr
from mmacts.ptx import mma_sync_kernels as kern
from mmacts.ptx import tcgen05_kernels as tk
from reference.mma_sync import fragments as fr
from suites.hopper_validation import wgmma_layout as wl
from suites.probes.vectors import K, Vector, e4m3_codes, stack

MMA_ARCH_OF_CC: dict[tuple[int, int], str] = {(9, 0): "sm_90a", (12, 0): "sm_120a", (10, 0): "sm_100a"}
WG_N = 64
WG_IMG_BYTES = 4096  # A (64 x 32 B) at 0, B (64 x 32 B) at 2048; one K = 32 step, 32-B swizzle


def mma_sync_operands(vectors: Sequence[Vector]) -> dict[str, np.ndarray]:
    """Register images (one warp per vector) for ``mma_fp8`` with f32 C/D."""
    a, b, c = stack(vectors)
    n = len(vectors)
    A = np.zeros((n, 16, K), dtype=np.uint8)
    B = np.zeros((n, K, 8), dtype=np.uint8)
    C = np.zeros((n, 16, 8), dtype=np.float32)
    A[:, 0, :] = e4m3_codes(a)
    B[:, :, 0] = e4m3_codes(b)
    C[:, 0, 0] = c.astype(np.float32)
    return {"a": fr.encode(A, fr.a_layout(32)), "b": fr.encode(B, fr.b_layout(32)), "c": fr.encode_f32(C)}


def mma_sync_result(d_regs: np.ndarray) -> np.ndarray:
    """D[0][0] of every warp's D register image [n, 32, 4]."""
    return fr.decode_f32(d_regs)[:, 0, 0].astype(np.float64)


def wgmma_operands(vectors: Sequence[Vector]) -> dict[str, Any]:
    """Shared-memory images + descriptors (one warpgroup per 64 vectors) for ``wgmma``."""
    a, b, c = stack(vectors)
    n = len(vectors)
    w = -(-n // 64)
    av = np.zeros((w * 64, K))
    bv = np.zeros((w * 64, K))
    cv = np.zeros(w * 64)
    av[:n], bv[:n], cv[:n] = a, b, c
    a_codes = e4m3_codes(av).reshape(w, 64, K)
    b_codes = e4m3_codes(bv).reshape(w, 64, K)  # (N, K): column i of B = vector i
    imgs = np.zeros((w, WG_IMG_BYTES), dtype=np.uint8)
    descs = np.zeros((w, 1, 2), dtype=np.uint64)
    half = WG_IMG_BYTES // 2
    for i in range(w):
        opa = wl.place_operand(a_codes[i], major="K", swizzle="32B", elem_bytes=1, base=0, k_step=32,
                               smem_size=WG_IMG_BYTES)
        opb = wl.place_operand(b_codes[i], major="K", swizzle="32B", elem_bytes=1, base=half, k_step=32,
                               smem_size=WG_IMG_BYTES)
        imgs[i] = opa.smem
        imgs[i, half:] = opb.smem[half:]
        descs[i, 0, 0], descs[i, 0, 1] = opa.descs[0], opb.descs[0]
    C = np.zeros((w, 64, WG_N), dtype=np.float32)
    idx = np.arange(64)
    C[:, idx, idx] = cv.reshape(w, 64).astype(np.float32)
    return {"img": imgs, "desc": descs, "c": wl.encode_d(C, WG_N), "n": n}


def wgmma_result(d_regs: np.ndarray, n: int) -> np.ndarray:
    D = wl.decode_d(d_regs, WG_N)
    idx = np.arange(64)
    return D[:, idx, idx].reshape(-1)[:n].astype(np.float64)


def launch_mma_sync(module: Any, vectors: Sequence[Vector]) -> tuple[np.ndarray, float | None, str]:
    """Run the vectors through ``mma_fp8``; (values, kernel_us, status)."""
    mod = cr.as_module(module)
    rt = mod.rt
    ops = mma_sync_operands(vectors)
    n = len(vectors)
    a, b, c = (rt.to_device(ops[k]) for k in ("a", "b", "c"))
    d = rt.empty((n, 32, 4), np.uint32)
    res = mod.launch("mma_fp8", (-(-n // kern.WARPS_PER_CTA),), (32 * kern.WARPS_PER_CTA,),
                     (a, b, c, d, np.uint32(n)))
    if res.status != "ok":
        return np.full(n, np.nan), None, f"{res.status}: {res.message}"
    return mma_sync_result(rt.to_host(d)), res.kernel_us, "ok"


def launch_wgmma(module: Any, vectors: Sequence[Vector]) -> tuple[np.ndarray, float | None, str]:
    """Run the vectors through ``wgmma`` (m64n64k32 e4m3, C used); (values, kernel_us, status)."""
    mod = cr.as_module(module)
    rt = mod.rt
    ops = wgmma_operands(vectors)
    w = ops["img"].shape[0]
    img, desc, c = rt.to_device(ops["img"]), rt.to_device(ops["desc"]), rt.to_device(ops["c"])
    d = rt.empty((w, 128, WG_N // 2), np.float32)
    res = mod.launch("wgmma", (w,), (128,), (img, desc, c, d, np.uint32(1), np.uint32(w)))
    if res.status != "ok":
        return np.full(len(vectors), np.nan), None, f"{res.status}: {res.message}"
    return wgmma_result(rt.to_host(d), ops["n"]), res.kernel_us, "ok"


def module_ptx_for(path: str) -> str:
    """PTX of the kernel a path runs (the same module the suite's cases name)."""
    kind, arch = path.split(".")
    if kind == "mma_sync":
        return kern.mma_sync_fp8_module("e4m3", "e4m3", dtype="f32", arch=arch)
    if kind == "wgmma":
        return kern.wgmma_module("e4m3", WG_N, "e4m3", steps=1, img_bytes=WG_IMG_BYTES, arch=arch)
    if kind == "tcgen05":
        return tk.module_ptx(tk.KernelForm("mxf8f6f4", "1X", arch=arch))
    raise ValueError(f"unknown probe path {path!r}")


def paths_for(cc: tuple[int, int]) -> list[str]:
    """The probe paths a GPU of compute capability ``cc`` runs here."""
    if cc == (9, 0):
        return ["mma_sync.sm_90a", "wgmma.sm_90a"]
    if cc[0] == 12:
        return ["mma_sync.sm_120a"]
    return []


def evaluate_on_gpu(path: str, module: Any, vectors: Sequence[Vector]) -> tuple[np.ndarray, float | None, str]:
    kind = path.split(".")[0]
    if kind == "mma_sync":
        return launch_mma_sync(module, vectors)
    if kind == "wgmma":
        return launch_wgmma(module, vectors)
    raise ValueError(f"path {path} has no GPU launcher here")
