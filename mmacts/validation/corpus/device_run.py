"""Run a silicon-record build on a GPU: numpy + CuPy (+ ``mmacts.backends.cuda_runtime``) only.

    PYTHONPATH=$PWD python3 mmacts/validation/corpus/device_run.py BUILD OUT

Run as a script (not ``-m``) so nothing of ``mmacts.ptxvm`` is imported on the GPU machine. ``BUILD``
comes from ``python -m mmacts.validation.corpus.record build BUILD``. Every output buffer is allocated
and filled with 0xFF bytes before its launch (what the VM's ``rt.empty`` does), so words a kernel
leaves unwritten compare equal too. Writes ``OUT/corpus_out.npz``, ``OUT/hopper_out.npz`` and
``OUT/device.json`` (statuses, kernel times, device, versions).
"""

from __future__ import annotations

import json
import os
import sys
import time

import numpy as np

from mmacts.backends import cuda_runtime as cr


def _filled(shape, dtype):
    import cupy

    out = cupy.empty(tuple(shape), dtype=dtype)
    out.view(cupy.uint8).fill(0xFF)
    return out


def main(build: str, out: str) -> None:
    import cupy

    os.makedirs(out, exist_ok=True)
    info = cr.probe()
    print("device:", info, flush=True)
    rt = cr.Runtime(0, timeout_s=30.0)
    dev = {"device": repr(info), "name": info.name, "compute_capability": list(info.compute_capability),
           "driver_version": info.driver_version, "runtime_version": info.runtime_version,
           "cupy": cupy.__version__, "numpy": np.__version__, "python": sys.version.split()[0], "corpus": {},
           "hopper": {}}
    # -- hopper_validation launches
    hdir = os.path.join(build, "hopper")
    with open(os.path.join(hdir, "manifest.json")) as fh:
        modules = json.load(fh)["modules"]
    houts: dict[str, np.ndarray] = {}
    for m in modules:
        data = np.load(os.path.join(hdir, f"{m['name']}.npz"))
        stats = []
        try:
            with open(os.path.join(hdir, f"{m['name']}.cubin"), "rb") as fh:
                mod = rt.load(fh.read())
        except Exception as exc:
            dev["hopper"][m["name"]] = [{"status": "error", "message": f"{type(exc).__name__}: {exc}"}]
            continue
        for la in m["launches"]:
            if rt.poisoned:
                stats.append({"status": "not run", "kernel_us": None, "message": rt.poisoned})
                continue
            args, outbufs = [], {}
            for a in la["args"]:
                arr = data[a["key"]]
                if a["kind"] == "scalar":
                    args.append(arr.dtype.type(arr))
                elif a["kind"] == "out":
                    d = _filled(arr.shape, arr.dtype)
                    outbufs[a["key"]] = d
                    args.append(d)
                else:
                    args.append(cupy.asarray(np.ascontiguousarray(arr)))
            cupy.cuda.Device().synchronize()
            res = rt.launch(mod, la["entry"], tuple(la["grid"]), tuple(la["block"]), args,
                            shared_mem=la["shared_mem"], timeout_s=30.0)
            stats.append({"status": res.status, "kernel_us": res.kernel_us, "message": res.message})
            if res.status == "ok":
                for key, d in outbufs.items():
                    houts[f"{m['name']}.{key}"] = cupy.asnumpy(d)
        dev["hopper"][m["name"]] = stats
        print("hopper", m["name"], stats, flush=True)
    np.savez_compressed(os.path.join(out, "hopper_out.npz"), **houts)
    with open(os.path.join(out, "device.json"), "w") as fh:
        json.dump(dev, fh, indent=1)
    # -- corpus
    cdir = os.path.join(build, "corpus")
    with open(os.path.join(cdir, "manifest.json")) as fh:
        kernels = json.load(fh)["kernels"]
    inputs = np.load(os.path.join(cdir, "inputs.npz"))
    outs: dict[str, np.ndarray] = {}
    t0 = time.monotonic()
    for k in kernels:
        name = k["name"]
        if rt.poisoned:  # a hung kernel: allocations may block behind it, stop here
            dev["corpus"][name] = {"status": "not run", "kernel_us": None, "message": rt.poisoned}
            continue
        try:
            with open(os.path.join(cdir, f"{name}.cubin"), "rb") as fh:
                mod = rt.load(fh.read())
            d_in = cupy.asarray(inputs[name])
            d_out = _filled((k["threads"], k["n_out"]), np.uint64)
            cupy.cuda.Device().synchronize()
            res = rt.launch(mod, k["entry"], tuple(k["grid"]), tuple(k["block"]), [d_in, d_out, np.uint32(k["n"])],
                            shared_mem=0, timeout_s=20.0)
        except Exception as exc:  # a poisoned runtime, a load failure: record and go on
            res = cr.LaunchOutcome("error", None, f"{type(exc).__name__}: {exc}")
        dev["corpus"][name] = {"status": res.status, "kernel_us": res.kernel_us, "message": res.message}
        if res.status == "ok":
            outs[name] = cupy.asnumpy(d_out)
            # a second launch on fresh buffers: the record must not depend on timing (races, waits)
            d_out2 = _filled((k["threads"], k["n_out"]), np.uint64)
            cupy.cuda.Device().synchronize()
            res2 = rt.launch(mod, k["entry"], tuple(k["grid"]), tuple(k["block"]),
                             [d_in, d_out2, np.uint32(k["n"])], shared_mem=0, timeout_s=20.0)
            same = res2.status == "ok" and bool((cupy.asnumpy(d_out2) == outs[name]).all())
            dev["corpus"][name]["repeat_identical"] = same
        print(f"corpus {name:22s} {res.status} {res.kernel_us} {res.message} "
              f"repeat_identical={dev['corpus'][name].get('repeat_identical')}", flush=True)
        np.savez_compressed(os.path.join(out, "corpus_out.npz"), **outs)
        with open(os.path.join(out, "device.json"), "w") as fh:
            json.dump(dev, fh, indent=1)
    print(f"corpus: {len(outs)}/{len(kernels)} ok in {time.monotonic() - t0:.1f} s", flush=True)
    np.savez_compressed(os.path.join(out, "corpus_out.npz"), **outs)
    with open(os.path.join(out, "device.json"), "w") as fh:
        json.dump(dev, fh, indent=1)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
