"""Per-thread inputs of a fuzz kernel: edge-value classes mixed with random bits.

Why classes: random bits almost never hit the values where implementations differ (NaN payloads and
signs, subnormals at the flush boundary, rounding ties, values beside a conversion's limits, integer
MIN/MAX). Each input slot draws, per thread, a class, then a value of that class; the slot's
register reinterprets the bits (a ``.f32`` register loading an integer-class slot sees a subnormal or
a NaN: also useful).

The layout (``N_IN`` u64 slots a thread) is part of the frame :mod:`mmacts.validation.fuzz.generate` emits;
:func:`kernel_inputs` is a pure function of the seed, so a record stores the seed and a digest, not
the bytes.
"""

from __future__ import annotations

import hashlib

import numpy as np

U64 = np.uint64
N_IN = 17
"""Input slots (u64) per thread; see :data:`SLOT_KIND`."""

SLOT_KIND = ("i64",) * 6 + ("i32x2",) * 4 + ("f32x2",) * 3 + ("f64",) * 2 + ("f16x4",) + ("pred",)
"""What each input slot mostly holds: rd0-5 <- 0-5, r0-7 <- 6-9 (halves), f0-5 <- 10-12 (halves),
fd0-1 <- 13-14, h0-3 <- 15 (quarters), p0-7 <- bits of 16."""


def _f32_edges() -> np.ndarray:
    v = [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7FFFFFFF, 0xFFFFFFFF,
         0x7FC00001, 0x7FD23456, 0xFFE00001, 0x7F800001, 0x7FA00000, 0x7FBFFFFF, 0xFF800001, 0xFF912345,
         0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00400000, 0x00800000, 0x80800000, 0x00800001,
         0x7F7FFFFF, 0xFF7FFFFF, 0x3F800000, 0xBF800000, 0x3F000000, 0xBF000000, 0x3FC00000, 0xC0200000,
         0x40200000, 0x3EC00000, 0x4F000000, 0xCF000000, 0x4EFFFFFF, 0xCF000001, 0x4F800000, 0x4F7FFFFF,
         0x5F000000, 0xDF000000, 0x5EFFFFFF, 0x5F800000, 0x5F7FFFFF, 0x477FE000, 0x477FF000, 0x477FEFFF,
         0x477FFFFF, 0x47800000, 0x33800000, 0x33000000, 0x33000001, 0x387FC000, 0x38800000, 0x387FE000,
         0x46FFFE00, 0x47000000, 0xC7000100, 0x437F0000, 0x43800000, 0xC3000000, 0xC3010000, 0x4B000001,
         0x4B400001, 0x3F800001, 0x3F7FFFFF, 0x7F000000, 0x01000000, 0x0C000000, 0x43FF8000, 0x43E00000,
         0x47600000, 0x477FFFFF, 0x3F808000, 0x3F818000, 0x3F80C000, 0x3F814000]
    return np.array(v, dtype=np.uint32)


def _f16_edges() -> np.ndarray:
    v = [0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7FFF, 0xFFFF, 0x7C01, 0x7D00, 0x7E01, 0xFC01,
         0x0001, 0x8001, 0x03FF, 0x83FF, 0x0400, 0x8400, 0x7BFF, 0xFBFF, 0x3C00, 0xBC00, 0x3800, 0x3E00,
         0x4100, 0xC100, 0x3C01, 0x3BFF, 0x5BF8, 0x5C00, 0x7800, 0x0200, 0x1000, 0x7A00,
         # bf16 codes too (the same 16 bits read as bf16)
         0x7F80, 0xFF80, 0x7FC0, 0xFFC0, 0x7F81, 0x7FA0, 0x0080, 0x8080, 0x007F, 0x807F, 0x7F7F, 0xFF7F,
         0x3F80, 0xBF80, 0x3FC0, 0x3F81, 0x4F00, 0x4780]
    return np.array(v, dtype=np.uint16)


def _f64_edges() -> np.ndarray:
    v = [0x0, 0x8000000000000000, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000,
         0xFFF8000000000000, 0x7FFFFFFFFFFFFFFF, 0x7FF8000000000123, 0x7FF0000000000001, 0x7FF4000000000000,
         0xFFF0000000012345, 0x0000000000000001, 0x8000000000000001, 0x000FFFFFFFFFFFFF, 0x0010000000000000,
         0x7FEFFFFFFFFFFFFF, 0xFFEFFFFFFFFFFFFF, 0x3FF0000000000000, 0xBFF0000000000000, 0x3FE0000000000000,
         0x3FF8000000000000, 0x4004000000000000, 0x41E0000000000000, 0xC1E0000000000000, 0x41DFFFFFFFC00000,
         0x41DFFFFFFFE00000, 0xC1E0000000100000, 0x41F0000000000000, 0x41EFFFFFFFE00000, 0x43E0000000000000,
         0xC3E0000000000000, 0x43DFFFFFFFFFFFFF, 0x43F0000000000000, 0x43EFFFFFFFFFFFFF, 0x40EFFC0000000000,
         0x40EFFE0000000000, 0x47EFFFFFE0000000, 0x47EFFFFFF0000000, 0x47F0000000000000, 0x36A0000000000000,
         0x3690000000000000, 0x380FFFFFE0000000, 0x3810000000000000, 0x3FF0000010000000, 0x3FF0000008000000,
         0x3FF0000018000000, 0x3E70000000000000, 0x3E60000000000001, 0x4330000000000001, 0x4338000000000001]
    return np.array(v, dtype=np.uint64)


def _int_edges(bits: int) -> np.ndarray:
    m = (1 << bits) - 1
    h = 1 << (bits - 1)
    v = {0, 1, 2, 3, m, m - 1, h, h - 1, h + 1, 0x7F, 0x80, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFFFF, 0x10000,
         0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x100000000, 0x5555555555555555, 0xAAAAAAAAAAAAAAAA,
         0xFFFFFFFF80000000, 0xFFFFFFFFFFFF8000, 0xFFFFFFFFFFFFFF80, 0x123456789ABCDEF0}
    for s in (1, 4, 8, 15, 16, 17, 24, 31, 32, 33, 48, 62, 63):
        if s < bits:
            v |= {1 << s, (1 << s) - 1, m ^ (1 << s)}
    return np.array(sorted(x & m for x in v), dtype=U64)


F32_EDGES = _f32_edges()
F16_EDGES = _f16_edges()
F64_EDGES = _f64_edges()
I64_EDGES = _int_edges(64)
I32_EDGES = _int_edges(32)


def _rbits(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.integers(0, 2**64, size=n, dtype=np.uint64, endpoint=False)


def _f32_moderate(rng: np.random.Generator, n: int) -> np.ndarray:
    """Random f32 bit patterns with exponents near 1 (arithmetic that neither overflows nor flushes),
    a quarter of them short mantissas (exact sums, ties under narrowing)."""
    e = rng.integers(127 - 12, 127 + 12, size=n).astype(np.uint32)
    mant = rng.integers(0, 1 << 23, size=n).astype(np.uint32)
    short = rng.random(n) < 0.25
    mant = np.where(short, mant & np.uint32(0x7FE000), mant)
    sign = rng.integers(0, 2, size=n).astype(np.uint32) << np.uint32(31)
    return sign | (e << np.uint32(23)) | mant


def _f64_moderate(rng: np.random.Generator, n: int) -> np.ndarray:
    e = rng.integers(1023 - 40, 1023 + 40, size=n).astype(np.uint64)
    mant = _rbits(rng, n) & U64((1 << 52) - 1)
    short = rng.random(n) < 0.25
    mant = np.where(short, mant & U64(0xFFFFFFE0000000), mant)
    sign = rng.integers(0, 2, size=n).astype(np.uint64) << U64(63)
    return sign | (e << U64(52)) | mant


def _f16_moderate(rng: np.random.Generator, n: int) -> np.ndarray:
    e = rng.integers(15 - 6, 15 + 6, size=n).astype(np.uint16)
    mant = rng.integers(0, 1 << 10, size=n).astype(np.uint16)
    sign = (rng.integers(0, 2, size=n).astype(np.uint16) << np.uint16(15)).astype(np.uint16)
    return (sign | (e << np.uint16(10)) | mant).astype(np.uint16)


def _pick(rng: np.random.Generator, table: np.ndarray, n: int) -> np.ndarray:
    return table[rng.integers(0, len(table), size=n)]


def _lanes32(rng: np.random.Generator, n: int, kind: str) -> np.ndarray:
    """One 32-bit lane per thread of class ``kind``."""
    if kind == "f32":
        c = rng.integers(0, 4, size=n)
        return np.choose(c, [_pick(rng, F32_EDGES, n), _f32_moderate(rng, n), _f32_moderate(rng, n),
                             (_rbits(rng, n) & U64(0xFFFFFFFF)).astype(np.uint32)]).astype(np.uint32)
    if kind == "i32":
        c = rng.integers(0, 4, size=n)
        small = (rng.integers(-40, 41, size=n).astype(np.int64).astype(np.uint64) & U64(0xFFFFFFFF))
        return np.choose(c, [_pick(rng, I32_EDGES, n), small, _rbits(rng, n) & U64(0xFFFFFFFF),
                             _pick(rng, F32_EDGES, n).astype(np.uint64)]).astype(np.uint32)
    h16 = [_lane16(rng, n) for _ in range(2)]
    return (h16[0].astype(np.uint32) | (h16[1].astype(np.uint32) << np.uint32(16))).astype(np.uint32)


def _lane16(rng: np.random.Generator, n: int) -> np.ndarray:
    c = rng.integers(0, 4, size=n)
    small = rng.integers(-40, 41, size=n).astype(np.int64).astype(np.uint64) & U64(0xFFFF)
    return np.choose(c, [_pick(rng, F16_EDGES, n), _f16_moderate(rng, n), _f16_moderate(rng, n),
                         small.astype(np.uint16)]).astype(np.uint16)


def _slot(rng: np.random.Generator, kind: str, n: int) -> np.ndarray:
    if kind == "i64":
        c = rng.integers(0, 5, size=n)
        small = rng.integers(-40, 41, size=n).astype(np.int64).astype(np.uint64)
        return np.choose(c, [_pick(rng, I64_EDGES, n), small, _rbits(rng, n), _pick(rng, F64_EDGES, n),
                             _f64_moderate(rng, n)]).astype(U64)
    if kind == "f64":
        c = rng.integers(0, 4, size=n)
        return np.choose(c, [_pick(rng, F64_EDGES, n), _f64_moderate(rng, n), _f64_moderate(rng, n),
                             _rbits(rng, n)]).astype(U64)
    if kind in ("i32x2", "f32x2"):
        lane = "f32" if kind == "f32x2" else None
        lo = _lanes32(rng, n, lane or ("i32" if rng.random() < 0.5 else "f16"))
        hi = _lanes32(rng, n, lane or ("i32" if rng.random() < 0.5 else "f16"))
        return lo.astype(U64) | (hi.astype(U64) << U64(32))
    if kind == "f16x4":
        v = np.zeros(n, dtype=U64)
        for q in range(4):
            v |= _lane16(rng, n).astype(U64) << U64(16 * q)
        return v
    return _rbits(rng, n)  # pred bits


def kernel_inputs(seed: int, threads: int) -> np.ndarray:
    """``uint64[threads, N_IN]`` for the kernel of ``seed`` (a pure function of both)."""
    rng = np.random.default_rng([seed, 0x1F])
    cols = [_slot(rng, k, threads) for k in SLOT_KIND]
    return np.ascontiguousarray(np.stack(cols, axis=1).astype(U64))


def digest(arr: np.ndarray) -> str:
    """A short content digest (inputs are regenerated at replay, and must be what silicon saw)."""
    return hashlib.sha256(np.ascontiguousarray(arr).tobytes()).hexdigest()[:16]
