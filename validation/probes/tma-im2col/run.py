"""Probe for the host side of the VM's GPU (issue 23): the real driver and silicon against our readings.

    PYTHONPATH=$PWD python3 validation/probes/tma-im2col/run.py OUT   # on an H100 (CuPy, libcuda), ptxas carried

(``PROBE_LIBCUDA=path/libvmcuda.so PROBE_CONTRACT_ONLY=1`` dry-runs part 1 against our own C library, no GPU.)

1. Contract: the seeded argument sweeps of ``mmacts/ptxvm/host/test_libvmcuda.py`` (tiled and im2col, every data
   type, swizzle, interleave, L2 promotion, OOB fill, and every invalid class) go to the real
   ``cuTensorMapEncodeTiled`` / ``cuTensorMapEncodeIm2col``; each CUresult is compared with the Python encoder's
   (our reading of CUDA 13's ``cuda.h``: e.g. globalDim <= 2^31, the 16U4/16U6_ALIGN16B rules).
2. im2col semantics (PTX 5.5.4): the ISA's examples and the seeded cases of ``test_im2col.py`` loaded by TMA on
   silicon (map from the real driver) and on the VM (map from ``encode_im2col``), both compared with the test's
   numpy ``reference`` -- which encodes our readings that the upper corner counts from the last pixel and the
   traversal wraps W -> H -> D -> N inside the box.
Writes OUT/result.json and prints one line per disagreement and the totals.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
from pathlib import Path

import numpy as np

CODES = {0: "CUDA_SUCCESS", 1: "CUDA_ERROR_INVALID_VALUE"}


def _driver() -> ctypes.CDLL:
    from mmacts.ptxvm.host.libvmcuda import declare

    lib = declare(ctypes.CDLL(os.environ.get("PROBE_LIBCUDA", "libcuda.so.1")))
    lib.cuInit(0)
    return lib


def contract(drv: ctypes.CDLL) -> dict:
    """Real driver's CUresult vs the Python encoder's, over the sweeps and invalid classes of test_libvmcuda."""
    from mmacts.ptxvm.host import test_libvmcuda as T

    rng = np.random.default_rng(23)
    cases: list[tuple[str, dict]] = [("tiled", {**T.TILED, **c}) for c in [{}] + T.BAD_TILED]
    cases += [("im2col", {**T.IM2COL, **c}) for c in [{}] + T.BAD_IM2COL]
    for _ in range(1500):
        rank = int(rng.integers(1, 6))
        args = T._common_args(rng, rank)
        args["box_dim"] = [int(rng.choice([16, 32, 64, 128]))] + [int(rng.integers(1, 257)) for _ in range(rank - 1)]
        cases.append(("tiled", args))
    for _ in range(800):
        rank = int(rng.integers(3, 6))
        args = T._common_args(rng, rank)
        args.update(pixel_box_lower_corner=[-int(rng.integers(0, 3)) for _ in range(rank - 2)],
                    pixel_box_upper_corner=[-int(rng.integers(0, 3)) for _ in range(rank - 2)],
                    channels_per_pixel=int(rng.choice([8, 16, 32, 64, 128])),
                    pixels_per_column=int(rng.choice([1, 64, 128, 1024])))
        cases.append(("im2col", args))
    differ = []
    for kind, args in cases:
        real = (T.c_tiled if kind == "tiled" else T.c_im2col)(drv, **args)[0]  # same signature as libvmcuda
        ours = T.py_result(T.encode_tiled if kind == "tiled" else T.encode_im2col, args)[0]
        if real != ours:
            differ.append({"kind": kind, "args": args, "driver": real, "python": ours})
            print(f"contract: {kind} driver {real} python {ours} {args}")
    return {"cases": len(cases), "differ": differ}


def _encode_real(drv: ctypes.CDLL, a: np.ndarray, base: int, c: dict) -> np.ndarray:
    from mmacts.ptxvm.host import test_libvmcuda as T

    dt = {"UINT8": 0, "UINT16": 1, "FLOAT16": 6, "FLOAT32": 7, "BFLOAT16": 9}[c["name"]]
    sw = {"NONE": 0, "32B": 1, "64B": 2, "128B": 3}[c.get("swizzle", "NONE")]
    fill = 1 if c.get("fill", "NONE") != "NONE" else 0
    r, raw = T.c_im2col(drv, dt, a.ndim, base, list(reversed(a.shape)), list(reversed(a.strides))[1:],
                        c["lower"], c["upper"], c["cpp"], c["ppc"], [1] * a.ndim, 0, sw, 0, fill)
    if r:
        raise RuntimeError(f"driver refused the map: {r}")
    return np.frombuffer(raw, dtype=np.uint8)


def im2col(drv: ctypes.CDLL) -> dict:
    """TMA im2col loads on silicon and on the VM vs the numpy reference of test_im2col."""
    import cupy

    from mmacts.backends import cuda_runtime as cr
    from mmacts.ptxvm.host import test_im2col as T
    from mmacts.ptxvm.host.test_tensormap import _kernel
    from mmacts.toolchain.assemble import assemble

    rng = np.random.default_rng(2027)
    cases = [dict(name="UINT16", shape=s, lower=lo, upper=up, c0=c0, base=b, n0=n0, offsets=o, ppc=64, cpp=8)
             for s, lo, up, c0, b, n0, o in T.SPEC_EXAMPLES]
    cases += [T._random_case(rng) for _ in range(40)]
    rt = cr.Runtime(0)
    mods = {}
    rows = []
    for i, c in enumerate(cases):
        npdt = c.get("npdt", np.uint16)
        a = np.random.default_rng(i).integers(0, 100, size=c["shape"]).astype(npdt)
        args = (c["lower"], c["upper"], c["c0"], c["base"], c["n0"], c["offsets"], c["ppc"], c["cpp"])
        want = T.reference(a, *args, np.nan if c.get("fill", "NONE") != "NONE" else 0)
        vm_ok = T._equal(T._load(a, c["name"], *args, swizzle=c.get("swizzle", "NONE"),
                                 oob_fill=c.get("fill", "NONE")), want)
        rank = a.ndim
        if rank not in mods:
            ptx = _kernel(rank, im2col=True).replace(".target sm_100a", ".target sm_90a")
            mods[rank] = rt.load(assemble(ptx, "sm_90a", use_cache=False).cubin)
        g = cupy.asarray(a)
        tmap = cupy.asarray(_encode_real(drv, a, g.data.ptr, c))
        nbytes = c["ppc"] * c["cpp"] * a.itemsize
        foot = -(-nbytes // 1024) * 1024
        out = cupy.zeros(foot, dtype=np.uint8)
        params = [np.uint64(tmap.data.ptr), np.uint64(out.data.ptr), np.uint32(nbytes), np.uint32(foot)]
        params += [np.int32(c["c0"]), *map(np.int32, c["base"]), np.int32(c["n0"]), *map(np.uint16, c["offsets"])]
        res = rt.launch(mods[rank], "tma", (1, 1, 1), (128, 1, 1), params, shared_mem=foot)
        s = {"NONE": 0, "32B": 1, "64B": 2, "128B": 3}[c.get("swizzle", "NONE")]
        pos = np.arange(nbytes)
        pos = pos ^ (((pos >> 7) & ((1 << s) - 1)) << 4)
        got = cupy.asnumpy(out)[pos].view(npdt).reshape(c["ppc"], c["cpp"])
        hw_ok = T._equal(got, want)
        row = {k: (v if not isinstance(v, type) else np.dtype(v).name) for k, v in c.items()}
        row.update(vm_equals_reference=vm_ok, silicon_equals_reference=hw_ok, launch=res.status)
        rows.append(row)
        if not (vm_ok and hw_ok):
            print(f"im2col case {i}: VM {vm_ok} silicon {hw_ok} {row}")
    return {"cases": len(rows), "rows": rows,
            "silicon_agree": sum(r["silicon_equals_reference"] for r in rows),
            "vm_agree": sum(r["vm_equals_reference"] for r in rows)}


def main(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    drv = _driver()
    v = ctypes.c_int()
    drv.cuDriverGetVersion(ctypes.byref(v))
    result = {"driver_version": v.value, "contract": contract(drv),
              "im2col": im2col(drv) if not os.environ.get("PROBE_CONTRACT_ONLY") else {"cases": 0, "silicon_agree": 0,
                                                                                       "vm_agree": 0}}
    print(f"driver {v.value}: contract {len(result['contract']['differ'])} of {result['contract']['cases']} "
          f"differ; im2col silicon {result['im2col']['silicon_agree']}/{result['im2col']['cases']}, "
          f"VM {result['im2col']['vm_agree']}/{result['im2col']['cases']} equal the reference")
    Path(out, "result.json").write_text(json.dumps(result, indent=1, default=str) + "\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
