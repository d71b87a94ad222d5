"""Make and store silicon records (issue 12: differential validation of the PTX VM against silicon).

    python -m mmacts.validation.corpus.record build BUILD [--level full]       # here: PTX, cubins, inputs
    python -m mmacts.validation.corpus.record build BUILD --group cluster      # the cluster kernels alone
    PYTHONPATH=$PWD python3 mmacts/validation/corpus/device_run.py BUILD OUT    # on the GPU
    python -m mmacts.validation.corpus.record store BUILD OUT DEST              # here: validation/silicon/DEST

``build`` writes ``BUILD/corpus`` (one cubin per corpus kernel, ``inputs.npz``, ``manifest.json``) and
``BUILD/hopper`` (the hopper_validation launches as ``suites.hopper_validation.bundle build`` records
them through the driver's real ``launch``, plus each module's PTX). ``store`` joins the build with
what the GPU returned into a small, commit-ready folder that :mod:`mmacts.validation.corpus.records` reads.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from mmacts.backends.cuda_runtime import RecordingModule, save_bundle
from mmacts.toolchain.assemble import assemble
from mmacts.toolchain.locate import ptxas_version
from mmacts.validation.corpus.cluster_kernels import cluster_corpus
from mmacts.validation.corpus.kernels import Kernel, corpus
from suites.hopper_validation.driver import DRIVER as HOPPER


def build_corpus(path: Path, kernels: list[Kernel] | None = None) -> None:
    path.mkdir(parents=True, exist_ok=True)
    entries, inputs = [], {}
    for k in corpus() if kernels is None else kernels:
        ptx = k.ptx()
        res = assemble(ptx, "sm_90a")
        if not res.ok:
            raise SystemExit(f"ptxas refused corpus kernel {k.name}: {res.first_error_line}")
        (path / f"{k.name}.ptx").write_text(ptx)
        (path / f"{k.name}.cubin").write_bytes(res.cubin)
        inputs[k.name] = k.inputs()
        entries.append({"name": k.name, "entry": k.name, "grid": list(k.grid), "block": list(k.block),
                        "threads": k.threads, "n": k.n, "cluster": list(k.cluster), "n_in": k.n_in, "n_out": k.n_out,
                        "group": k.group,
                        "seed": k.seed, "doc": k.doc.strip(), "ptxas_version": res.ptxas_version})
    np.savez_compressed(path / "inputs.npz", **inputs)
    (path / "manifest.json").write_text(json.dumps({"kernels": entries}, indent=1))
    print(f"corpus: {len(entries)} kernels -> {path}")


def record_hopper(level: str) -> list[dict]:
    """The hopper_validation launches, grouped by kernel form as ``bundle build`` groups them: per module
    its PTX, cubin (``None`` when ptxas is absent) and the :class:`RecordingModule` that saw its launches."""
    groups: dict[tuple, list] = defaultdict(list)
    for c in HOPPER.cases(level):
        groups[c.form_key].append(c)
    mods = []
    for i, (_, cases) in enumerate(sorted(groups.items(), key=lambda kv: kv[1][0].case_id)):
        ptx = HOPPER.module_ptx(cases[0])
        rec = RecordingModule(b"")
        HOPPER.launch(cases, [HOPPER.make_inputs(c) for c in cases], rec)
        mods.append({"name": f"m{i:02d}", "cases": [c.case_id for c in cases], "ptx": ptx, "rec": rec})
    return mods


def build_hopper(path: Path, level: str) -> None:
    path.mkdir(parents=True, exist_ok=True)
    manifest = []
    for m in record_hopper(level):
        res = assemble(m["ptx"], "sm_90a")
        if not res.ok:
            raise SystemExit(f"ptxas refused {m['cases'][0]}: {res.first_error_line}")
        m["rec"].cubin = res.cubin
        entry = save_bundle(str(path), m["name"], m["rec"])
        entry["cases"] = m["cases"]
        (path / f"{m['name']}.ptx").write_text(m["ptx"])
        manifest.append(entry)
    (path / "manifest.json").write_text(json.dumps({"level": level, "modules": manifest}, indent=1))
    print(f"hopper: {len(manifest)} modules, {sum(len(m['cases']) for m in manifest)} cases -> {path}")


def build(path: str, level: str, group: str | None = None) -> None:
    """The whole corpus and the hopper_validation launches; with ``group="cluster"`` only the cluster kernels
    (recorded apart, so older records stay what they were) and no hopper launches."""
    if group is None:
        build_corpus(Path(path) / "corpus")
        build_hopper(Path(path) / "hopper", level)
        return
    if group != "cluster":
        raise SystemExit(f"unknown corpus group {group!r} (known: cluster)")
    build_corpus(Path(path) / "corpus", cluster_corpus())
    (Path(path) / "hopper").mkdir(parents=True, exist_ok=True)
    (Path(path) / "hopper" / "manifest.json").write_text(json.dumps({"level": "none", "modules": []}))


def git_sha() -> str:
    """This checkout's commit ('unknown' outside git): what a stored record says it was made from."""
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True,
                              cwd=Path(__file__).resolve().parent).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def store(build_dir: str, out_dir: str, dest: str, extra_meta: dict | None = None) -> None:
    """Write the commit-ready record folder ``dest`` from a build and the GPU's outputs."""
    b, o, d = Path(build_dir), Path(out_dir), Path(dest)
    dev = json.loads((o / "device.json").read_text())
    (d / "corpus").mkdir(parents=True, exist_ok=True)
    (d / "hopper").mkdir(parents=True, exist_ok=True)
    # corpus
    cman = json.loads((b / "corpus" / "manifest.json").read_text())
    cin = np.load(b / "corpus" / "inputs.npz")
    cout = np.load(o / "corpus_out.npz")
    arrays = {}
    for k in cman["kernels"]:
        st = dev["corpus"][k["name"]]
        k.update(status=st["status"], kernel_us=st["kernel_us"], message=st["message"],
                 repeat_identical=st.get("repeat_identical"))
        shutil.copy(b / "corpus" / f"{k['name']}.ptx", d / "corpus" / f"{k['name']}.ptx")
        arrays[f"{k['name']}.in"] = cin[k["name"]]
        if k["name"] in cout.files:
            arrays[f"{k['name']}.out"] = cout[k["name"]]
    np.savez_compressed(d / "corpus" / "data.npz", **arrays)
    (d / "corpus" / "manifest.json").write_text(json.dumps(cman, indent=1))
    # hopper
    hman = json.loads((b / "hopper" / "manifest.json").read_text())
    hout = np.load(o / "hopper_out.npz")
    harr = {}
    for m in hman["modules"]:
        data = np.load(b / "hopper" / f"{m['name']}.npz")
        shutil.copy(b / "hopper" / f"{m['name']}.ptx", d / "hopper" / f"{m['name']}.ptx")
        stats = dev["hopper"].get(m["name"], [])
        for li, la in enumerate(m["launches"]):
            la["silicon"] = stats[li] if li < len(stats) else {"status": "missing"}
            for a in la["args"]:
                arr = data[a["key"]]
                if a["kind"] == "out":
                    a["shape"], a["dtype"] = list(arr.shape), str(arr.dtype)
                    key = f"{m['name']}.{a['key']}"
                    if key in hout.files:
                        harr[f"out/{key}"] = hout[key]
                else:
                    harr[f"in/{m['name']}.{a['key']}"] = arr
    np.savez_compressed(d / "hopper" / "data.npz", **harr)
    (d / "hopper" / "manifest.json").write_text(json.dumps(hman, indent=1))
    meta = {k: v for k, v in dev.items() if k not in ("corpus", "hopper")}
    meta.update(ptxas_version=ptxas_version(), git_sha=git_sha(), ptx_version="8.4", arch="sm_90a",
                corpus_kernels=len(cman["kernels"]), hopper_modules=len(hman["modules"]),
                hopper_launches=sum(len(m["launches"]) for m in hman["modules"]), level=hman["level"])
    meta.update(extra_meta or {})
    (d / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(f"stored -> {d}")


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "build":
        build(sys.argv[2], sys.argv[sys.argv.index("--level") + 1] if "--level" in sys.argv else "full",
              sys.argv[sys.argv.index("--group") + 1] if "--group" in sys.argv else None)
    elif cmd == "store":
        extra = json.loads(os.environ.get("MMACTS_RECORD_META", "{}"))
        store(sys.argv[2], sys.argv[3], sys.argv[4], extra)
    else:
        raise SystemExit(__doc__)
