"""Record rcp.approx.ftz.f32 and rcp.approx.f32 on a GPU for the PTX VM (mmacts/ptxvm/mufu.py).

    # on the GPU machine, from the repository root (CuPy; the driver JIT-compiles the PTX):
    python validation/silicon/mufu/record_rcp.py --out OUT/rcp-approx.npz

Why: rcp.approx's bits are the multi-function unit's, not the ISA's (9.7.3.13 gives only a 1-ulp bound),
and CUTLASS's block-scaled epilogues make scale factors with it. What it does:

1. records rcp(m) of both variants for all 2^23 f32 ``m`` in [1, 2);
2. checks all 2^32 inputs on the GPU against rules built from that table, per input class (normal,
   tiny result, subnormal input, zero, inf, NaN; see mufu.py's docstring), counting the mismatches of
   every candidate rule; the candidate with the fewest becomes the class's rule;
3. collects the inputs that break their class's rule (up to CAP per class; a class with more is stored
   as incomplete and the VM refuses its unrecorded inputs) and writes the table with
   ``mufu.write_table`` (about 1.7 MB).
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from mmacts.ptxvm import mufu  # noqa: E402

CAP = 1 << 12
"""Exceptions kept per (variant, class): 8 bytes each, so the file stays under ~2 MB."""
CANDIDATES = {"normal": ("scale",), "tiny": ("flush", "rn", "rz"), "subnormal": ("flush", "scale"),
              "zero": ("inf",), "inf": ("zero",), "nan": ("canonical", "quiet")}
NCAND = 3

SOURCE = r"""
#define NCLS 6
#define NCAND 3
__device__ __forceinline__ unsigned rcp_hw(unsigned x, int v) {
    float r, a = __uint_as_float(x);
    if (v == 0) asm volatile("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(a));
    else asm volatile("rcp.approx.f32 %0, %1;" : "=f"(r) : "f"(a));
    return __float_as_uint(r);
}

__device__ int classify(unsigned x, const unsigned* tab, int* field_out) {
    unsigned e = (x >> 23) & 0xFF, m = x & 0x7FFFFF;
    if (e == 0) return m == 0 ? 3 : 2;
    if (e == 255) return m == 0 ? 4 : 5;
    int field = (int)((tab[m] >> 23) & 0xFF) - ((int)e - 127);
    *field_out = field;
    return field < 1 ? 1 : 0;
}

// the prediction of candidate c for class k (see CANDIDATES in record_rcp.py, same order)
__device__ unsigned predict(unsigned x, int k, int c, const unsigned* tab, int field) {
    unsigned s = x & 0x80000000u, e = (x >> 23) & 0xFF, m = x & 0x7FFFFF;
    if (k == 0) return s | ((unsigned)field << 23) | (tab[m] & 0x7FFFFF);
    if (k == 1) {
        if (c == 0) return s;
        unsigned r = tab[m];
        unsigned sig = (r & 0x7FFFFF) | 0x800000;
        int sh = (int)e - (int)((r >> 23) & 0xFF) - 126;
        unsigned q = sh >= 32 ? 0 : sig >> sh;
        unsigned rem = sh >= 32 ? sig : sig - (q << sh);
        unsigned half = sh >= 33 ? 0xFFFFFFFFu : 1u << (sh - 1);
        if (c == 1 && (rem > half || (rem == half && (q & 1)))) q += 1;
        return s | q;
    }
    if (k == 2) {
        if (c == 0) return s | 0x7F800000u;
        int p = 31 - __clz(m);
        unsigned f = (m << (23 - p)) & 0x7FFFFF;
        unsigned r = tab[f];
        int fld = (int)((r >> 23) & 0xFF) + 149 - p;
        if (fld >= 255) return s | 0x7F800000u;
        return s | ((unsigned)fld << 23) | (r & 0x7FFFFF);
    }
    if (k == 3) return s | 0x7F800000u;
    if (k == 4) return s;
    return c == 0 ? 0x7FFFFFFFu : (x | 0x00400000u);
}

extern "C" __global__ void table(unsigned* out_ftz, unsigned* out_full) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (1u << 23)) return;
    out_ftz[i] = rcp_hw(0x3F800000u | i, 0);
    out_full[i] = rcp_hw(0x3F800000u | i, 1);
}

// pass 1: per (variant, class, candidate) the inputs whose GPU answer differs; per (variant, class) all inputs
extern "C" __global__ void count(const unsigned* tab, unsigned long long base, unsigned long long* counts) {
    __shared__ unsigned long long s[2 * NCLS * (NCAND + 1)];
    for (int i = threadIdx.x; i < 2 * NCLS * (NCAND + 1); i += blockDim.x) s[i] = 0;
    __syncthreads();
    unsigned x = (unsigned)(base + (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x);
    int field = 0;
    int k = classify(x, tab, &field);
    for (int v = 0; v < 2; ++v) {
        unsigned hw = rcp_hw(x, v);
        atomicAdd(&s[(v * NCLS + k) * (NCAND + 1) + NCAND], 1ull);
        for (int c = 0; c < NCAND; ++c)
            if (predict(x, k, c, tab, field) != hw) atomicAdd(&s[(v * NCLS + k) * (NCAND + 1) + c], 1ull);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < 2 * NCLS * (NCAND + 1); i += blockDim.x)
        if (s[i]) atomicAdd(&counts[i], s[i]);
}

// pass 2: the inputs that break the chosen rule (rules[v * NCLS + k]), up to cap per (variant, class)
extern "C" __global__ void collect(const unsigned* tab, unsigned long long base, const int* rules,
                                   unsigned* n, unsigned* xin, unsigned* xout, unsigned cap) {
    unsigned x = (unsigned)(base + (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x);
    int field = 0;
    int k = classify(x, tab, &field);
    for (int v = 0; v < 2; ++v) {
        unsigned hw = rcp_hw(x, v);
        if (predict(x, k, rules[v * NCLS + k], tab, field) != hw) {
            unsigned slot = atomicAdd(&n[v * NCLS + k], 1u);
            if (slot < cap) {
                xin[(v * NCLS + k) * cap + slot] = x;
                xout[(v * NCLS + k) * cap + slot] = hw;
            }
        }
    }
}
"""

CHUNK = 1 << 30
THREADS = 1024
FULL = [(base, CHUNK) for base in range(0, 1 << 32, CHUNK)]
"""All 2^32 inputs, as (first input, count) launches."""


def _sweep(cp, kern, chunks, args_of) -> None:
    for base, n in chunks:
        kern((n // THREADS,), (THREADS,), args_of(np.uint64(base)))
    cp.cuda.Device().synchronize()


def record(cp, chunks=FULL) -> dict:
    """Run the three kernels with ``cp`` (CuPy, or anything with its ``RawModule`` / ``zeros`` / ``asarray`` /
    ``asnumpy`` / ``cuda.Device().synchronize()``) over the inputs of ``chunks``: the table of rcp(m), the rule
    per variant and class, the inputs that break it, whether those lists are complete, and the counts."""
    mod = cp.RawModule(code=SOURCE, options=("-std=c++17",))
    n_cls = len(mufu.CLASSES)
    t_ftz, t_full = cp.zeros(mufu.N_MANT, np.uint32), cp.zeros(mufu.N_MANT, np.uint32)
    mod.get_function("table")((mufu.N_MANT // 256,), (256,), (t_ftz, t_full))
    tab = cp.asnumpy(t_ftz)
    counts = cp.zeros(2 * n_cls * (NCAND + 1), np.uint64)
    _sweep(cp, mod.get_function("count"), chunks, lambda b: (t_ftz, b, counts))
    c = cp.asnumpy(counts).reshape(2, n_cls, NCAND + 1)
    rules: dict[str, dict[str, str]] = {}
    rule_idx = np.zeros((2, n_cls), np.int32)
    for v, vname in enumerate(mufu.VARIANTS):
        rules[vname] = {}
        for k, cname in enumerate(mufu.CLASSES):
            cands = CANDIDATES[cname]
            rule_idx[v, k] = min(range(len(cands)), key=lambda i: c[v, k, i])
            rules[vname][cname] = cands[rule_idx[v, k]]
    n = cp.zeros(2 * n_cls, np.uint32)
    xin, xout = cp.zeros(2 * n_cls * CAP, np.uint32), cp.zeros(2 * n_cls * CAP, np.uint32)
    d_rules = cp.asarray(rule_idx.reshape(-1))
    _sweep(cp, mod.get_function("collect"), chunks, lambda b: (t_ftz, b, d_rules, n, xin, xout, np.uint32(CAP)))
    kept = cp.asnumpy(n).reshape(2, n_cls)
    xi, xo = cp.asnumpy(xin).reshape(2, n_cls, CAP), cp.asnumpy(xout).reshape(2, n_cls, CAP)
    exceptions, complete = {}, {}
    for v, vname in enumerate(mufu.VARIANTS):
        keep = [(xi[v, k, :min(kept[v, k], CAP)], xo[v, k, :min(kept[v, k], CAP)]) for k in range(n_cls)]
        exceptions[vname] = (np.concatenate([a for a, _ in keep]), np.concatenate([b for _, b in keep]))
        complete[vname] = {cname: bool(kept[v, k] <= CAP) for k, cname in enumerate(mufu.CLASSES)}
    summary = {vname: {cname: {"inputs": int(c[v, k, NCAND]),
                               "mismatches": {cand: int(c[v, k, i]) for i, cand in enumerate(CANDIDATES[cname])},
                               "rule": rules[vname][cname], "broken": int(kept[v, k])}
                       for k, cname in enumerate(mufu.CLASSES)} for v, vname in enumerate(mufu.VARIANTS)}
    return {"table": tab, "rules": rules, "exceptions": exceptions, "complete": complete, "summary": summary,
            "ftz_and_full_agree_on_1_2": bool((tab == cp.asnumpy(t_full)).all())}


def main() -> None:
    import cupy as cp

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    out = ap.parse_args().out
    r = record(cp)
    props = cp.cuda.runtime.getDeviceProperties(0)
    meta = {"device": props["name"].decode(), "driver": cp.cuda.runtime.driverGetVersion(),
            "runtime": cp.cuda.runtime.runtimeGetVersion(), "cupy": cp.__version__,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "ftz_and_full_agree_on_1_2": r["ftz_and_full_agree_on_1_2"], "summary": r["summary"]}
    out.parent.mkdir(parents=True, exist_ok=True)
    mufu.write_table(out, r["table"], r["rules"], r["exceptions"], r["complete"], meta)
    print(json.dumps(meta, indent=1))
    print(f"wrote {out} ({out.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
