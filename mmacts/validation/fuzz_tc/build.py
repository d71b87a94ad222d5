"""Build a tensor-core fuzz corpus for a GPU, store what the GPU answered, run the corpus on the VM.

    python -m mmacts.validation.fuzz_tc build BUILD [--seeds 1 2 3] [--count 70]  # here: PTX, cubins, inputs
    bash mmacts/validation/fuzz_tc/device.sh BUILD OUT                 # on the GPU (device_run.py, resumed)
    python -m mmacts.validation.fuzz_tc store BUILD OUT DEST           # here: validation/fuzz-tc/DEST
    python -m mmacts.validation.fuzz_tc vm [--seeds ...] [--count N]   # CPU fuzz: the VM must not crash
    python -m mmacts.validation.fuzz_tc vm --refusals [--seeds ...] [--count N]   # CPU: deformed launches refused
    python -m mmacts.validation.fuzz_tc replay [RECORD]                # VM vs a stored record, summary
    python -m mmacts.validation.fuzz_tc dry-run BUILD OUT              # device_run with the VM as device
"""

from __future__ import annotations

import gzip
import json
import shutil
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from mmacts.toolchain.assemble import assemble
from mmacts.validation.corpus.record import git_sha
from mmacts.validation.fuzz_tc import gen
from mmacts.validation.fuzz_tc import records as R

DEFAULT_SEEDS = (1, 2, 3)
DEFAULT_COUNT = 70


def build(path: str, seeds: list[int], count: int) -> dict[str, Any]:
    """Write ``path/manifest.json``, ``path/inputs.npz`` (``<id>/<key>``), ``path/ptx/<id>.ptx`` and
    ``path/cubin/<id>.cubin`` (ptxas from the nvidia wheels, sm_90a). Raises SystemExit naming the launch
    when ptxas refuses one (a generator bug: every drawn form is valid PTX)."""
    root = Path(path)
    (root / "ptx").mkdir(parents=True, exist_ok=True)
    (root / "cubin").mkdir(parents=True, exist_ok=True)
    entries, inputs = [], {}
    ptxas = None
    t0 = time.monotonic()
    for la in gen.launches(seeds, count):
        res = assemble(la.ptx, gen.ARCH)
        if not res.ok:
            raise SystemExit(f"ptxas refused fuzz launch {la.id} ({la.instrs[0]}): {res.first_error_line}")
        ptxas = res.ptxas_version
        (root / "ptx" / f"{la.id}.ptx").write_text(la.ptx)
        (root / "cubin" / f"{la.id}.cubin").write_bytes(res.cubin)
        for kind, key, v in la.args:
            if kind != "out":
                inputs[f"{la.id}/{key}"] = np.asarray(v)
        entries.append(la.manifest())
    np.savez_compressed(root / "inputs.npz", **inputs)
    man = {"gen_version": gen.GEN_VERSION, "arch": gen.ARCH, "ptx_version": gen.PTX_VERSION, "seeds": seeds,
           "count": count, "ptxas_version": ptxas, "launches": entries}
    (root / "manifest.json").write_text(json.dumps(man, indent=1))
    fam = Counter(e["family"] for e in entries)
    size = sum(f.stat().st_size for f in root.rglob("*") if f.is_file())
    print(f"fuzz-tc: {len(entries)} launches ({dict(fam)}) -> {root} ({size / 1e6:.1f} MB, "
          f"{time.monotonic() - t0:.0f} s)")
    return man


def store(build_dir: str, out_dir: str, dest: str, extra_meta: dict[str, Any] | None = None) -> Path:
    """Write the commit-ready record folder ``dest`` (see :mod:`mmacts.validation.fuzz_tc.records`) from a build and
    the GPU's ``OUT``. Launches that did not end ``ok`` on the GPU keep their status and message in the
    manifest (and no outputs)."""
    b, o, d = Path(build_dir), Path(out_dir), Path(dest)
    dev = json.loads((o / "device.json").read_text())
    man = json.loads((b / "manifest.json").read_text())
    inp = np.load(b / "inputs.npz")
    out = np.load(o / "out.npz")
    d.mkdir(parents=True, exist_ok=True)
    arrays: dict[str, np.ndarray] = {}
    ptx: dict[str, str] = {}
    statuses: Counter[str] = Counter()
    for la in man["launches"]:
        lid = la["id"]
        st = dev["launches"].get(lid, {"status": "missing", "kernel_us": None, "message": "not in device.json"})
        la["silicon"] = st
        statuses[st["status"]] += 1
        ptx[lid] = (b / "ptx" / f"{lid}.ptx").read_text()
        for a in la["args"]:
            if a["kind"] == "out":
                if st["status"] == "ok":
                    arrays[f"out/{lid}/{a['key']}"] = out[f"{lid}/{a['key']}"]
            else:
                arrays[f"in/{lid}/{a['key']}"] = inp[f"{lid}/{a['key']}"]
    np.savez_compressed(d / "data.npz", **arrays)
    with gzip.open(d / "ptx.json.gz", "wt") as fh:
        json.dump(ptx, fh)
    (d / "manifest.json").write_text(json.dumps({k: v for k, v in man.items()}, indent=1))
    meta = {k: v for k, v in dev.items() if k != "launches"}
    meta.update(git_sha=git_sha(), gen_version=man["gen_version"], seeds=man["seeds"], count=man["count"],
                ptxas_version=man["ptxas_version"], ptx_version=man["ptx_version"], arch=man["arch"],
                launches=len(man["launches"]), statuses=dict(statuses))
    meta.update(extra_meta or {})
    (d / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    if (o / "device-run.log").is_file():
        shutil.copy(o / "device-run.log", d / "device-run.log")
    size = sum(f.stat().st_size for f in d.rglob("*") if f.is_file())
    print(f"stored {len(man['launches'])} launches ({dict(statuses)}) -> {d} ({size / 1e6:.2f} MB)")
    return d


def vm_fuzz(seeds: list[int], count: int, verbose: bool = False) -> dict[str, Any]:
    """Run generated launches on the VM (no GPU): count outcomes; a Python exception out of ``launch`` is a
    ``crash`` (a VM bug, issue 22 item 4), named with the launch and the exception."""
    counts: Counter[str] = Counter()
    notes: list[str] = []
    t0 = time.monotonic()
    for la in gen.launches(seeds, count):
        try:
            res, _ = R.run_on_vm(la.ptx, la.entry, la.grid, la.block, la.shared_mem, la.args)
            status, msg = res.status, res.message
        except Exception as exc:  # the fuzz mode exists to find these: report, never stop
            status, msg = "crash", f"{type(exc).__name__}: {exc}"
        counts[status] += 1
        if status != "ok":
            notes.append(f"{la.id} [{la.instrs[0]}]: {status}: {msg}")
        if verbose:
            print(f"{la.id:28s} {status} {msg}", flush=True)
    return {"counts": dict(counts), "notes": notes, "wall_s": round(time.monotonic() - t0, 2)}


def group_of(family: str, instrs: list[str] | tuple[str, ...], layout: dict[str, Any]) -> str:
    """A launch's group for summaries: family, types of its first K-step, and the wgmma descriptor regime
    (or the mma.sync accumulator type), so a disagreement points at a family of forms or fields."""
    types = ".".join(instrs[0].split(" [")[0].split(".")[-3:])
    extra = layout.get("regime", "") if family == "wgmma" else f"{len(instrs)}-step"
    return f"{family} {types} {extra} {'exact' if layout.get('exact') else 'random'}-data"


def replay_summary(record: Path, groups: Counter[str] | None = None,
                   failing: Counter[str] | None = None) -> tuple[int, list[str]]:
    """Run every launch of a record on the VM; ``(launches, failure messages)``. ``groups``/``failing``
    (when given) count launches and failing launches by :func:`group_of`."""
    fails = []
    recs = R.recorded_launches(record)
    for rec in recs:
        try:
            msg = R.compare(rec)
        except Exception as exc:
            msg = f"{rec.name}: Python exception out of the VM: {type(exc).__name__}: {exc}"
        g = group_of(rec.family, rec.instrs, rec.layout)
        if groups is not None:
            groups[g] += 1
        if msg:
            fails.append(msg)
            if failing is not None:
                failing[g] += 1
    return len(recs), fails


def vm_device_run(build_dir: str, out_dir: str) -> dict[str, Any]:
    """``device_run.py`` with the VM standing in for the GPU (same ``OUT`` files, device named as the VM):
    a dry run of the build -> store -> replay chain on a machine without a GPU. Never a silicon record."""
    b, o = Path(build_dir), Path(out_dir)
    o.mkdir(parents=True, exist_ok=True)
    man = json.loads((b / "manifest.json").read_text())
    inp = np.load(b / "inputs.npz")
    dev: dict[str, Any] = {"device": "PTX VM (dry run, not silicon)", "name": "ptxvm-dry-run",
                           "compute_capability": [9, 0], "launches": {}}
    outs = {}
    for la in man["launches"]:
        args = []
        for a in la["args"]:
            if a["kind"] == "out":
                args.append(("out", a["key"], (tuple(a["shape"]), np.dtype(a["dtype"]))))
            else:
                v = inp[f"{la['id']}/{a['key']}"]
                args.append((a["kind"], a["key"], v.dtype.type(v) if a["kind"] == "scalar" else v))
        ptx = (b / "ptx" / f"{la['id']}.ptx").read_text()
        res, got = R.run_on_vm(ptx, la["entry"], tuple(la["grid"]), tuple(la["block"]), la["shared_mem"], args)
        dev["launches"][la["id"]] = {"status": res.status, "kernel_us": None, "message": res.message,
                                     "repeat_identical": True}
        if res.status == "ok":
            outs.update({f"{la['id']}/{k}": v for k, v in got.items()})
    np.savez_compressed(o / "out.npz", **outs)
    (o / "device.json").write_text(json.dumps(dev, indent=1))
    return dev
