"""Throughput of the reference: numeric-model vectors/s and exact-GEMM time per shape.

Prints figures only (never a test). Run: ``python benchmarks/bench_reference.py``.
"""

from __future__ import annotations

import functools
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from reference import formats as F  # noqa: E402
from reference import gemm as G  # noqa: E402
from reference import numeric_model as NM  # noqa: E402


def _best(fn, repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def bench_models(v: int = 5000, k: int = 32) -> None:
    rng = np.random.default_rng(0)
    vals = F.decode("e4m3", F.finite_codes("e4m3"))
    a, b = rng.choice(vals, (v, k)), rng.choice(vals, (v, k))
    c = rng.standard_normal(v).astype(np.float32).astype(np.float64)
    for name in NM.MODELS:
        for out in ("fp32", "fp16"):
            t = _best(lambda name=name, out=out: NM.dot(name, a, b, c, out))
            print(f"model {name:26s} {out}: {v}x{k} in {t * 1e3:7.1f} ms = {v / t:12,.0f} vectors/s")


def bench_gemm() -> None:
    rng = np.random.default_rng(1)
    cases = [
        ("mxf8f6f4", "e4m3", "e4m3", "ue8m0", 32, (128, 8, 32)),
        ("mxf8f6f4", "e5m2", "e2m1", "ue8m0", 32, (128, 256, 32)),
        ("mxf4", "e2m1", "e2m1", "ue8m0", 32, (128, 256, 64)),
        ("mxf4nvf4", "e2m1", "e2m1", "ue4m3", 16, (128, 256, 64)),
        ("mxf8f6f4", "e4m3", "e4m3", "ue8m0", 32, (256, 256, 128)),
        ("mxf4nvf4", "e2m1", "e2m1", "ue4m3", 16, (256, 256, 128)),
    ]
    for kind, af, bf, sf, vs, (m, n, k) in cases:
        a = rng.choice(F.finite_codes(af), (m, k))
        b = rng.choice(F.finite_codes(bf), (k, n))
        for spread, label in ((6, "scales 2^+-6"), (126, "scales full range")):
            if sf == "ue8m0":
                sa = rng.integers(127 - spread, 127 + spread, (m, k // vs)).astype(np.uint8)
                sb = rng.integers(127 - spread, 127 + spread, (k // vs, n)).astype(np.uint8)
            else:
                sa = rng.choice(F.finite_codes(sf), (m, k // vs)).astype(np.uint8)
                sb = rng.choice(F.finite_codes(sf), (k // vs, n)).astype(np.uint8)
            c = rng.standard_normal((m, n)).astype(np.float32).astype(np.float64)
            run = functools.partial(G.block_scaled_gemm, a, b, sa, sb, c, kind=kind, a_fmt=af, b_fmt=bf,
                                    scale_fmt=sf)
            t = _best(run, 3)
            print(f"exact gemm {kind:9s} {af}x{bf} {sf} VS={vs:2d} M={m:3d} N={n:3d} K={k:3d} ({label:17s}): "
                  f"{t * 1e3:7.1f} ms, {m * n * k / t / 1e6:7.1f} M products/s")
    t = _best(lambda: G.exact_recipe("mxf8f6f4", 256, 256, 128, a_fmt="e4m3", b_fmt="e4m3", scale_fmt="ue8m0",
                                     vs=32, seed=3), 3)
    print(f"exact_recipe mxf8f6f4 e4m3 256x256x128 (data + exactness check + D): {t * 1e3:.1f} ms")


if __name__ == "__main__":
    bench_models()
    bench_gemm()
