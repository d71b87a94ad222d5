"""Run a tensor-core fuzz build on a GPU: numpy + CuPy (+ ``mmacts.backends.cuda_runtime``) only.

    PYTHONPATH=$PWD python3 mmacts/validation/fuzz_tc/device_run.py BUILD OUT

Run as a script (not ``-m``) so nothing of ``mmacts.ptxvm`` or of the generator is imported on the GPU
machine; the build carries cubins, so no ptxas is needed there. ``BUILD`` comes from
``python -m mmacts.validation.fuzz_tc build BUILD``. Every output buffer is filled with 0xFF bytes before its launch
(what the VM's ``rt.empty`` does), so words a kernel leaves unwritten compare too. Each launch runs
twice on fresh buffers: a record must not depend on timing. Writes ``OUT/out.npz`` (``<id>/<key>``) and
``OUT/device.json`` (status, kernel time, repeat check per launch; device and versions), rewritten as it
goes so a killed run keeps what it finished.

A kernel that faults or hangs poisons the CUDA context (every later launch would fail behind it), so the
script records that launch and exits with status 3; run it again with the same OUT and it resumes after
the launches already recorded (``until python3 ... ; do :; done`` with a bound: see the README).
"""

from __future__ import annotations

import json
import os
import sys
import time

import numpy as np

from mmacts.backends import cuda_runtime as cr


def main(build: str, out: str) -> None:
    import cupy

    os.makedirs(out, exist_ok=True)
    info = cr.probe()
    if isinstance(info, str):
        print(f"device_run: {info}", file=sys.stderr)
        sys.exit(2)
    print("device:", info, flush=True)
    rt = cr.Runtime(0, timeout_s=30.0)
    dev = {"device": repr(info), "name": info.name, "compute_capability": list(info.compute_capability),
           "driver_version": info.driver_version, "runtime_version": info.runtime_version,
           "cupy": cupy.__version__, "numpy": np.__version__, "python": sys.version.split()[0], "launches": {}}
    with open(os.path.join(build, "manifest.json")) as fh:
        launches = json.load(fh)["launches"]
    data = np.load(os.path.join(build, "inputs.npz"))
    outs: dict[str, np.ndarray] = {}
    done_path = os.path.join(out, "device.json")
    if os.path.isfile(done_path):  # resume after a poisoned context: keep what earlier processes recorded
        with open(done_path) as fh:
            dev["launches"] = {k: v for k, v in json.load(fh)["launches"].items() if v["status"] != "not run"}
        with np.load(os.path.join(out, "out.npz")) as old:
            outs = {k: old[k] for k in old.files}
        print(f"resuming: {len(dev['launches'])} launches recorded already", flush=True)
    t0 = time.monotonic()

    def save() -> None:
        np.savez_compressed(os.path.join(out, "out.npz"), **outs)
        with open(os.path.join(out, "device.json"), "w") as fh:
            json.dump(dev, fh, indent=1)

    for n, la in enumerate(launches):
        lid = la["id"]
        if lid in dev["launches"]:
            continue
        if rt.poisoned:  # a hung or faulted kernel: stop here; a new process resumes after it
            save()
            print(f"context poisoned ({rt.poisoned}): exit 3, run again to resume", flush=True)
            sys.exit(3)
        got: list[dict[str, np.ndarray]] = []
        try:
            with open(os.path.join(build, "cubin", f"{lid}.cubin"), "rb") as fh:
                mod = rt.load(fh.read())
            for _ in range(2):
                args, bufs = [], {}
                for a in la["args"]:
                    if a["kind"] == "out":
                        d = rt.empty(tuple(a["shape"]), np.dtype(a["dtype"]))
                        bufs[a["key"]] = d
                        args.append(d)
                    elif a["kind"] == "scalar":
                        v = data[f"{lid}/{a['key']}"]
                        args.append(v.dtype.type(v))
                    else:
                        args.append(rt.to_device(data[f"{lid}/{a['key']}"]))
                cupy.cuda.Device().synchronize()
                res = rt.launch(mod, la["entry"], tuple(la["grid"]), tuple(la["block"]), args,
                                shared_mem=la["shared_mem"], timeout_s=20.0)
                if res.status != "ok":
                    break
                got.append({k: rt.to_host(d) for k, d in bufs.items()})
        except Exception as exc:  # a load failure, a poisoned runtime: record and go on
            res = cr.LaunchOutcome("error", None, f"{type(exc).__name__}: {exc}")
        st = {"status": res.status, "kernel_us": res.kernel_us, "message": res.message}
        if res.status == "ok" and len(got) == 2:
            st["repeat_identical"] = all(np.array_equal(got[0][k].view(np.uint8), got[1][k].view(np.uint8))
                                         for k in got[0])
            for k, v in got[0].items():
                outs[f"{lid}/{k}"] = v
        dev["launches"][lid] = st
        print(f"{n + 1}/{len(launches)} {lid:28s} {res.status} {res.kernel_us} {res.message} "
              f"repeat_identical={st.get('repeat_identical')}", flush=True)
        if n % 50 == 49:
            save()
    ok = sum(1 for s in dev["launches"].values() if s["status"] == "ok")
    dev["wall_s"] = round(time.monotonic() - t0, 2)
    print(f"fuzz-tc: {ok}/{len(launches)} ok in {dev['wall_s']} s", flush=True)
    save()


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    main(sys.argv[1], sys.argv[2])
