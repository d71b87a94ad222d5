"""Run the Hopper validation suite through a launch bundle (host -> GPU -> host).

    python -m suites.hopper_validation.bundle build DIR [--level L]   # host: inputs + cubins
    python -m suites.hopper_validation.bundle execute DIR OUT         # GPU: the saved cubins, through CuPy
    python -m suites.hopper_validation.bundle analyse DIR OUT         # host: decode + compare

``execute`` runs nothing but numpy, CuPy and ``mmacts.backends.cuda_runtime`` (no ptxas, no PTX
generation: it launches the cubins ``build`` saved); ``build`` and ``analyse`` run the driver's real
``launch`` with a recording / replaying module, so the GPU outputs go through exactly the code the
``cuda`` backend runs. Every import is at module level: the GPU host has the checkout and the project's
dependencies (the ``cuda`` backend runs this driver there), and CuPy itself is imported by
``cuda_runtime`` only when a launch needs it, so this module imports on a machine without a GPU or CuPy.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter, defaultdict

import numpy as np

from mmacts.backends import cuda_runtime as cr
from mmacts.compare.compare import compare
from mmacts.toolchain.assemble import assemble
from mmacts.toolchain.sass import sass
from suites.hopper_validation.driver import DRIVER


def build(path: str, level: str) -> None:
    os.makedirs(path, exist_ok=True)
    groups: dict[tuple, list] = defaultdict(list)
    for c in DRIVER.cases(level):
        groups[c.form_key].append(c)
    manifest = []
    for i, (_, cases) in enumerate(sorted(groups.items(), key=lambda kv: kv[1][0].case_id)):
        ptx = DRIVER.module_ptx(cases[0])
        res = assemble(ptx, "sm_90a")
        if not res.ok:
            raise SystemExit(f"ptxas refused {cases[0].case_id}: {res.first_error_line}")
        rec = cr.RecordingModule(res.cubin)
        DRIVER.launch(cases, [DRIVER.make_inputs(c) for c in cases], rec)
        entry = cr.save_bundle(path, f"m{i:02d}", rec)
        entry["cases"] = [c.case_id for c in cases]
        entry["sass"] = sass(res.cubin).summary()
        manifest.append(entry)
    with open(os.path.join(path, "manifest.json"), "w") as fh:
        json.dump({"level": level, "modules": manifest}, fh, indent=1)
    print(f"{len(manifest)} modules, {sum(len(m['cases']) for m in manifest)} cases -> {path}")


def execute(path: str, out: str) -> None:
    info = cr.probe()
    print("device:", info, flush=True)
    with open(os.path.join(path, "manifest.json")) as fh:
        manifest = json.load(fh)
    os.makedirs(out, exist_ok=True)
    allouts, stats = {}, {}
    for m in manifest["modules"]:
        outs, st = cr.execute_bundle(path, m)
        stats[m["name"]] = st
        for k, v in outs.items():
            allouts[f"{m['name']}_{k}"] = v
        print(m["name"], st, flush=True)
    np.savez_compressed(os.path.join(out, "outputs.npz"), **allouts)
    with open(os.path.join(out, "device.json"), "w") as fh:
        json.dump({"device": repr(info), "stats": stats}, fh, indent=1)


def analyse(path: str, out: str) -> list[dict]:
    with open(os.path.join(path, "manifest.json")) as fh:
        manifest = json.load(fh)
    with open(os.path.join(out, "device.json")) as fh:
        dev = json.load(fh)
    outs = np.load(os.path.join(out, "outputs.npz"))
    by_id = {c.case_id: c for c in DRIVER.cases(manifest["level"])}
    rows = []
    for m in manifest["modules"]:
        cases = [by_id[cid] for cid in m["cases"]]
        st = dev["stats"][m["name"]][0]
        replay = {int(k.split("_", 1)[1]): outs[k] for k in outs.files if k.startswith(m["name"] + "_")}
        outcome = cr.LaunchOutcome(st["status"], st["kernel_us"], st["message"])
        rec = cr.RecordingModule(b"", replay=replay, status=outcome)
        inputs = [DRIVER.make_inputs(c) for c in cases]
        results = DRIVER.launch(cases, inputs, rec)
        for c, x, r in zip(cases, inputs, results, strict=True):
            if r.status != "ok":
                rows.append({"case_id": c.case_id, "status": r.status, "message": str(r.extra)})
                continue
            exp = DRIVER.expected(c, x)
            cmp = compare(r.got, exp)
            n = int(np.asarray(exp.want).size)
            rows.append({"case_id": c.case_id, "status": cmp.status, "mismatches": cmp.mismatches, "n": n,
                         "mode": exp.mode, "first": cmp.first_mismatch, "kernel_us": st["kernel_us"],
                         "sass": m["sass"]})
    for r in rows:
        print(f"{r['status']:8s} {r.get('mismatches', '')!s:>5}/{r.get('n', '')!s:<5} {r.get('mode', ''):28s} "
              f"{r['case_id']}  {r.get('first', '') or ''}")
    print(Counter(r["status"] for r in rows))
    return rows


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "build":
        lvl = sys.argv[sys.argv.index("--level") + 1] if "--level" in sys.argv else "full"
        build(sys.argv[2], lvl)
    elif cmd == "execute":
        execute(sys.argv[2], sys.argv[3])
    elif cmd == "analyse":
        analyse(sys.argv[2], sys.argv[3])
    else:
        raise SystemExit(__doc__)
