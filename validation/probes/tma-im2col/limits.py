"""Part 3 of the tma-im2col probe: pin the driver's rules that ``cuda.h`` does not state by scanning and bisecting
the real ``cuTensorMapEncodeTiled`` / ``cuTensorMapEncodeIm2col`` (one call each: microseconds, no GPU work).

What each answer decides (ambiguity register entries AMB-TMAP-BOX-BYTES, AMB-TMAP-GLOBALDIM,
AMB-TMAP-INTERLEAVE32-SWIZZLE, AMB-TMAP-IM2COL-ROWS; the encoders in ``mmacts/ptxvm/host`` hold the values):
- ``box_bytes``: largest accepted box in bytes (tiled: FLOAT32 and UINT8 boxes; im2col: channels x pixels), the
  smallest refused, and whether the answers are monotone; ``estride``: whether ceil or floor of boxDim /
  elementStrides counts, and whether elementStrides[0] counts (tiled) / does not (im2col);
- ``global_dim``: largest accepted globalDim per dimension index, tiled (rank 3) and im2col (rank 4);
- ``interleave32``: CUresult of interleave 32B with each swizzle 0..3, tiled and im2col;
- ``rows``: CUresult of inner rows that are not a multiple of 16 bytes, per interleave, tiled and im2col.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable

U8, F32 = 0, 7
ADDR = 0x10000


def _tiled(drv: ctypes.CDLL, box: list[int], dt: int = U8, estr: list[int] | None = None, il: int = 0, sw: int = 0,
           dims: list[int] | None = None) -> int:
    from mmacts.ptxvm.host.test_libvmcuda import c_tiled

    r = len(box)
    dims = dims or [256] * r
    strides = [2**20 * (i + 1) for i in range(r - 1)]
    return c_tiled(drv, dt, r, ADDR, dims, strides, box, estr or [1] * r, il, sw, 0, 0)[0]


def _im2col(drv: ctypes.CDLL, cpp: int, ppc: int, dt: int = U8, estr: list[int] | None = None, il: int = 0,
            sw: int = 0, dims: list[int] | None = None) -> int:
    from mmacts.ptxvm.host.test_libvmcuda import c_im2col

    dims = dims or [256, 16, 16, 2]
    strides = [2**20 * (i + 1) for i in range(3)]
    return c_im2col(drv, dt, 4, ADDR, dims, strides, [0, 0], [0, 0], cpp, ppc, estr or [1] * 4, il, sw, 0, 0)[0]


def _tiled_factor(total: int, row: int) -> list[int] | None:
    """A rank-3 box of ``total`` bytes whose rows are ``row``-byte multiples (box0 = row elements of a byte type)."""
    if total % row:
        return None
    rest = total // row
    for b1 in range(256, 0, -1):
        if rest % b1 == 0 and rest // b1 <= 256:
            return [row, b1, rest // b1]
    return None


def _scan(accept: Callable[[int], int | None], lo: int, hi: int, step: int) -> dict:
    """Largest accepted and smallest refused size in [lo, hi] (``accept`` gives 0, nonzero, or None: no such box)."""
    ok, bad, seen = None, None, []
    for t in range(lo, hi + 1, step):
        r = accept(t)
        if r is None:
            continue
        seen.append((t, r))
        if r == 0:
            ok = t
        elif bad is None:
            bad = t
    monotone = all(r != 0 for t, r in seen if bad is not None and t >= bad)
    return {"max_accepted": ok, "min_refused": bad, "monotone": monotone, "tried": len(seen)}


def box_bytes(drv: ctypes.CDLL) -> dict:
    out = {"tiled_u8": _scan(lambda t: None if (b := _tiled_factor(t, 256)) is None else _tiled(drv, b),
                             196608, 262144 + 4096, 256)}
    out["tiled_u8_fine"] = _scan(lambda t: None if (b := _tiled_factor(t, 16)) is None else _tiled(drv, b),
                                 (out["tiled_u8"]["max_accepted"] or 196608), (out["tiled_u8"]["min_refused"] or
                                                                                262144), 16)
    out["tiled_f32"] = _scan(lambda t: None if (b := _tiled_factor(t // 4, 64)) is None else
                             _tiled(drv, b, dt=F32), 196608, 262144 + 4096, 256)
    out["im2col_u8"] = _scan(lambda t: next((_im2col(drv, c, t // c) for c in range(256, 15, -16)
                                             if t % c == 0 and t // c <= 1024), None), 196608, 262144 + 4096, 16)
    return out


def estride(drv: ctypes.CDLL, limit: int) -> dict:
    """Around ``limit`` (the largest accepted tiled box): ceil or floor, elementStrides[0] counted or not."""
    res: dict[str, object] = {}
    for b1 in range(1, 257):  # box [256, b1, b2] estr [1, 1, 2], b2 odd: floor <= limit < ceil
        b2 = 2 * (limit // (256 * b1)) + 1
        if b2 <= 256 and 256 * b1 * (b2 - 1) // 2 <= limit < 256 * b1 * (b2 + 1) // 2:
            res["ceil_over_floor_under"] = {"box": [256, b1, b2], "result": _tiled(drv, [256, b1, b2],
                                                                                 estr=[1, 1, 2])}
            break
    for b1 in range(1, 257):  # box [256, b1, b2] estr [2, 1, 1]: over the limit only if elementStrides[0] is ignored
        b2 = limit // (128 * b1)
        if b2 <= 256 and 256 * b1 * b2 > limit >= 128 * b1 * b2:
            res["estride0_halves_it"] = {"box": [256, b1, b2], "result": _tiled(drv, [256, b1, b2],
                                                                              estr=[2, 1, 1])}
            break
    res["im2col_estride0"] = {"cpp": 256, "ppc": 1024, "estr0": 2, "result": _im2col(drv, 256, 1024, estr=[2, 1, 1, 1])}
    return res


def _max_dim(accept: Callable[[int], int]) -> int | None:
    lo, hi = 2**30, 2**42
    if accept(lo):
        return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if accept(mid) == 0 else (lo, mid)
    return lo


def global_dim(drv: ctypes.CDLL) -> dict:
    tiled = {i: _max_dim(lambda d, i=i: _tiled(drv, [16, 1, 1], dims=[256 if j != i else d for j in range(3)]))
             for i in range(3)}
    im2col = {i: _max_dim(lambda d, i=i: _im2col(drv, 16, 1, dims=[256 if j != i else d for j in range(4)]))
              for i in range(4)}
    return {"tiled_rank3": tiled, "im2col_rank4": im2col}


def interleave_rows(drv: ctypes.CDLL) -> dict:
    il32 = {"tiled": {sw: _tiled(drv, [32, 2, 2], il=2, sw=sw) for sw in range(4)},
            "im2col": {sw: _im2col(drv, 32, 8, il=2, sw=sw) for sw in range(4)}}
    rows = {"tiled": {f"box0={b}, il={il}": _tiled(drv, [b, 2, 2], il=il, sw=1 if il == 2 else 0)
                      for b in (8, 24) for il in range(3)},
            "im2col": {f"cpp={c}, il={il}": _im2col(drv, c, 8, il=il, sw=1 if il == 2 else 0)
                       for c in (8, 24) for il in range(3)}}
    return {"interleave32": il32, "rows": rows}


def limits(drv: ctypes.CDLL) -> dict:
    """Every scan above; prints one line each."""
    out = {"box_bytes": box_bytes(drv)}
    lim = out["box_bytes"]["tiled_u8_fine"]["max_accepted"] or out["box_bytes"]["tiled_u8"]["max_accepted"]
    out["estride"] = estride(drv, lim) if lim else {}
    out.update(global_dim=global_dim(drv), **interleave_rows(drv))
    for k, v in out.items():
        print(f"limits {k}: {v}")
    return out
