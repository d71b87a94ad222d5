"""Probe for the host side of the VM's GPU (issue 23): the real driver and silicon against our readings.

    PYTHONPATH=$PWD python3 validation/probes/tma-im2col/run.py OUT   # on an H100 (CuPy, libcuda), ptxas carried

Dry runs, no GPU: ``PROBE_LIBCUDA=path/libvmcuda.so PROBE_CONTRACT_ONLY=1`` runs parts 1 and 3 against our own C
library (``PROBE_SM=90`` predicts as for an sm_90 device; default 100 there); ``PROBE_REPLAY=LOG`` checks the
predictions against the ``contract:`` lines of an earlier run's log (driver X python Y {args}) instead.

1. Contract: the seeded argument sweeps of ``mmacts/ptxvm/host/test_libvmcuda.py`` (tiled and im2col, every data
   type, swizzle, interleave, L2 promotion, OOB fill, and every invalid class) go to the real
   ``cuTensorMapEncodeTiled`` / ``cuTensorMapEncodeIm2col``; each CUresult is compared with the prediction: the
   Python encoder's, and on a device below sm_100 also a refusal of the sm_100-only swizzles and packed types
   (``tensormap.refused_before_sm100``). The 2026-11-25 H100 run (first encoder) differed on 355 of 2351 calls;
   the encoder's rules now follow the driver (see ``mmacts/ptxvm/host/test_driver_observations.py``).
2. im2col semantics (PTX 5.5.4): the ISA's examples and the seeded cases of ``test_im2col.py`` loaded by TMA on
   silicon (map from the real driver) and on the VM (map from ``encode_im2col``), both compared with the test's
   numpy ``reference``. Each silicon case runs in a child process, so a case that faults (the first run died of
   cudaErrorIllegalInstruction and poisoned every later case) costs only itself; a case whose map the real driver
   refuses is skipped and counted. A tiled load through the same kernel harness runs first as a control.
3. Limits (``limits.py``): scans that pin the driver rules ``cuda.h`` does not state.
Writes OUT/result.json, prints one line per disagreement and a one-line summary.
"""

from __future__ import annotations

import ast
import ctypes
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
CODES = {0: "CUDA_SUCCESS", 1: "CUDA_ERROR_INVALID_VALUE"}
LOGGED_CLASSES = [  # invalid classes of the first run's test lists that the driver accepted (kept for reruns)
    ("tiled", {"global_dim": [64, 2**31 + 1, 4]}), ("tiled", {"interleave": 2, "swizzle": 3})]


def _driver() -> ctypes.CDLL:
    from mmacts.ptxvm.host.libvmcuda import declare

    lib = declare(ctypes.CDLL(os.environ.get("PROBE_LIBCUDA", "libcuda.so.1")))
    lib.cuInit(0)
    if not os.environ.get("PROBE_LIBCUDA"):  # the encoders need a current context (else 201, INVALID_CONTEXT)
        import cupy

        cupy.zeros(1)
        cupy.cuda.Device().synchronize()
    return lib


def _sm() -> int:
    if os.environ.get("PROBE_SM"):
        return int(os.environ["PROBE_SM"])
    if os.environ.get("PROBE_LIBCUDA"):
        return 100  # libvmcuda models sm_100a
    import cupy

    return int(cupy.cuda.Device().compute_capability)


def sweep() -> list[tuple[str, dict]]:
    """The calls of part 1: the first run's (same seed, same generators) and :data:`LOGGED_CLASSES`."""
    from mmacts.ptxvm.host import test_libvmcuda as T

    rng = np.random.default_rng(23)
    cases: list[tuple[str, dict]] = [("tiled", {**T.TILED, **c}) for c in [{}] + T.BAD_TILED]
    cases += [("im2col", {**T.IM2COL, **c}) for c in [{}] + T.BAD_IM2COL]
    cases += [(k, {**(T.TILED if k == "tiled" else T.IM2COL), **c}) for k, c in LOGGED_CLASSES]
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
    return cases


def predict(kind: str, args: dict, sm: int) -> int:
    """The CUresult our encoders predict for the driver on a device of compute capability ``sm`` (90, 100, ...)."""
    from mmacts.ptxvm.host import test_libvmcuda as T
    from mmacts.ptxvm.host.tensormap import refused_before_sm100

    if sm < 100 and refused_before_sm100(args["data_type"], args.get("swizzle", 0)):
        return 1
    return T.py_result(T.encode_tiled if kind == "tiled" else T.encode_im2col, args)[0]


def contract(drv: ctypes.CDLL, sm: int) -> dict:
    """Real driver's CUresult vs the prediction, over :func:`sweep`."""
    from mmacts.ptxvm.host import test_libvmcuda as T

    cases = sweep()
    differ = []
    for kind, args in cases:
        real = (T.c_tiled if kind == "tiled" else T.c_im2col)(drv, **args)[0]  # same signature as libvmcuda
        ours = predict(kind, args, sm)
        if real != ours:
            differ.append({"kind": kind, "args": args, "driver": real, "python": ours})
            print(f"contract: {kind} driver {real} python {ours} {args}")
    return {"cases": len(cases), "differ": differ, "sm": sm}


def replay(log: str, sm: int) -> dict:
    """The predictions against the driver results an earlier run logged (its ``contract:`` lines)."""
    lines = [ln.split(" ", 6) for ln in Path(log).read_text().splitlines() if ln.startswith("contract: ")]
    differ = []
    for _, kind, _, real, _, _, args in lines:
        a = ast.literal_eval(args)
        if predict(kind, a, sm) != int(real):
            differ.append({"kind": kind, "args": a, "driver": int(real), "python": predict(kind, a, sm)})
            print(f"replay: {kind} driver {real} predicted {predict(kind, a, sm)} {a}")
    return {"cases": len(lines), "differ": differ, "sm": sm, "replayed": log}


def _cases() -> list[dict]:
    from mmacts.ptxvm.host import test_im2col as T

    rng = np.random.default_rng(2027)
    cases = [dict(name="UINT16", shape=s, lower=lo, upper=up, c0=c0, base=b, n0=n0, offsets=o, ppc=64, cpp=8)
             for s, lo, up, c0, b, n0, o in T.SPEC_EXAMPLES]
    return cases + [T._random_case(rng) for _ in range(40)]


def im2col() -> dict:
    """Each case of :func:`_cases` (and the tiled control, index -1) in a child process; see ``one``."""
    rows: list[dict] = []
    for i in range(-1, len(_cases())):
        if len(rows) >= 3 and all(r.get("status") in ("timeout", "crashed") for r in rows[-3:]):
            print(f"im2col: stopped before case {i}: three cases in a row timed out or crashed (device wedged?)")
            break
        try:
            p = subprocess.run([sys.executable, __file__, "--one", str(i)], capture_output=True, text=True,
                               timeout=120)
            line = next((ln for ln in reversed(p.stdout.splitlines()) if ln.startswith("{")), None)
            row = json.loads(line) if line else {"case": i, "status": "crashed", "rc": p.returncode,
                                                 "stderr": p.stderr[-1500:]}
        except subprocess.TimeoutExpired:
            row = {"case": i, "status": "timeout"}
        rows.append(row)
        if row.get("status") != "ok" or not (row.get("vm_equals_reference", True) and
                                             row.get("silicon_equals_reference")):
            print(f"im2col case {i}: {json.dumps(row, default=str)[:600]}")
    real = [r for r in rows if r["case"] >= 0]
    return {"cases": len(real), "rows": rows, "planned": len(_cases()),
            "control_ok": rows[0].get("status") == "ok" and bool(rows[0].get("silicon_equals_reference")),
            "skipped_refused": sum(r.get("status") == "driver refused" for r in real),
            "failed_launch": sum(r.get("status") not in ("ok", "driver refused") for r in real),
            "silicon_agree": sum(bool(r.get("silicon_equals_reference")) for r in real),
            "vm_agree": sum(bool(r.get("vm_equals_reference")) for r in real)}


def main(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    sm = _sm()
    if os.environ.get("PROBE_REPLAY"):
        result: dict = {"contract": replay(os.environ["PROBE_REPLAY"], int(os.environ.get("PROBE_SM", "90")))}
        print(f"replay: {len(result['contract']['differ'])} of {result['contract']['cases']} logged calls differ "
              f"from the prediction")
        Path(out, "result.json").write_text(json.dumps(result, indent=1, default=str) + "\n")
        return
    from limits import limits

    drv = _driver()
    v = ctypes.c_int()
    drv.cuDriverGetVersion(ctypes.byref(v))
    result = {"driver_version": v.value, "contract": contract(drv, sm), "limits": limits(drv)}
    result["im2col"] = im2col() if not os.environ.get("PROBE_CONTRACT_ONLY") else {
        "cases": 0, "planned": 0, "silicon_agree": 0, "vm_agree": 0, "skipped_refused": 0, "failed_launch": 0,
        "control_ok": None}
    m = result["im2col"]
    print(f"driver {v.value} sm_{sm}: contract {len(result['contract']['differ'])} of {result['contract']['cases']} "
          f"differ; im2col control {m['control_ok']}, {m['cases']} of {m['planned']} cases run, silicon "
          f"{m['silicon_agree']}/{m['cases']} and VM "
          f"{m['vm_agree']}/{m['cases']} equal the reference, {m['skipped_refused']} skipped (driver refused), "
          f"{m['failed_launch']} failed launches")
    Path(out, "result.json").write_text(json.dumps(result, indent=1, default=str) + "\n")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--one":
        from one import one

        print(json.dumps(one(int(sys.argv[2]), _cases(), _driver()), default=str))
    else:
        main(sys.argv[1] if len(sys.argv) > 1 else ".")
