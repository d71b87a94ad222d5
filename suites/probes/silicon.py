"""Recording the numeric probes on silicon: every probe on every path a GPU runs, and what they recover.

``python -m suites.probes.silicon build --dir D`` assembles the kernels here (pinned ptxas);
``python -m suites.probes.silicon run --cubins D --out OUT`` on the GPU machine runs every
probe on every path that GPU runs (twice, to check repeatability), writes ``results.jsonl``
(one record per probe case, the columns ``record_observations`` reads) and
``recovery.json``, and prints a summary.

Why apart from ``hardware`` (the launches): this records through the suite's driver, and the driver
launches through ``hardware``; in one module the two imported each other (issue 25). The commands were
``python -m suites.probes.hardware build|run`` before.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mmacts.backends import assembler, cuda_runtime
from suites.probes import driver as drv
from suites.probes.catalog import PROBES
from suites.probes.hardware import evaluate_on_gpu, module_ptx_for, paths_for
from suites.probes.recover import recover


def build(out_dir: Path) -> dict[str, Any]:  # pragma: no cover - needs ptxas
    """Assemble every path's module here (with the project's pinned ptxas) into ``out_dir``.

    The GPU machine then needs no toolchain: ``run --cubins`` loads these files.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    meta: dict[str, Any] = {"ptxas": assembler.ptxas_version(), "paths": {}}
    for path in ("mma_sync.sm_90a", "wgmma.sm_90a", "mma_sync.sm_120a"):
        res = assembler.assemble(module_ptx_for(path), path.split(".")[1])
        if not res.ok:
            meta["paths"][path] = {"error": res.first_error_line}
            continue
        (out_dir / f"{path}.cubin").write_bytes(res.cubin)
        meta["paths"][path] = {"sass": assembler.sass_summary(res.cubin)}
    (out_dir / "meta.json").write_text(json.dumps(meta, indent=1))
    return meta


def run(cubins: Path, out: Path) -> int:  # pragma: no cover - needs a GPU

    out.mkdir(parents=True, exist_ok=True)
    info = cuda_runtime.probe()
    if isinstance(info, str):
        print(info, file=sys.stderr)
        return 2
    meta = json.loads((cubins / "meta.json").read_text())
    ptxas = meta["ptxas"]
    run_id = f"probes-{_dt.datetime.now(_dt.timezone.utc).strftime('%Y%m%dT%H%M%SZ')}"
    records: list[dict[str, Any]] = []
    recoveries: dict[str, Any] = {}
    vectors = [v for p in PROBES for v in p.vectors()]
    for path in paths_for(info.compute_capability):
        arch = path.split(".")[1]
        cubin = cubins / f"{path}.cubin"
        if not cubin.exists():
            print(f"{path}: no cubin ({meta['paths'].get(path)})", file=sys.stderr)
            continue
        sass = meta["paths"][path]["sass"]
        module = cuda_runtime.load_module(cubin.read_bytes())
        values, kernel_us, status = evaluate_on_gpu(path, module, vectors)
        again, _, status2 = evaluate_on_gpu(path, module, vectors)  # repeatability
        repeat_equal = bool(np.array_equal(drv.bits(values), drv.bits(again)))
        measured, pos = {}, 0
        for p in PROBES:
            nv = len(p.vectors())
            measured[p.name] = values[pos:pos + nv]
            pos += nv
        rec = recover(measured)
        hyp = drv.hypothesis_values(path)
        recoveries[path] = {
            "features": rec.features, "direct": rec.direct, "answers": rec.answers, "survivors": rec.survivors,
            "consistent": rec.consistent, "hypothesis": drv.PATH_MODELS.get(path), "sass": sass,
            "kernel_us": kernel_us, "status": status, "repeat_bitwise_equal": repeat_equal,
            "agree_with_hypothesis": {p: [int(np.sum(drv.bits(measured[p]) == drv.bits(hyp[p]))), len(measured[p])]
                                      for p in measured},
            "details": rec.details,
        }
        common = {"suite": "probes", "device": info.name, "backend": "cuda", "arch": arch, "ptxas_version": ptxas,
                  "driver": str(info.driver_version), "run": run_id, "date": _dt.date.today().isoformat(),
                  "sass_opcodes": sass, "kernel_us": kernel_us}
        ok = status == "ok" and status2 == "ok"
        for p in PROBES:
            answer, details = drv.answer_for(p, measured[p.name])
            records.append(dict(common, case_id=drv.case_id(p.name, path), status="pass" if ok else "error",
                                message=status, observation=json.dumps(
                                    {"answer": answer, "details": details,
                                     "measured_bits": [f"{x:08x}" for x in drv.bits(measured[p.name])]}, default=str)))
        records.append(dict(common, case_id=drv.case_id("recover", path), status="pass" if ok else "error",
                            message=status, observation=json.dumps(
                                {"answer": drv.summarise(rec.features), "features": rec.features,
                                 "survivors": rec.survivors}, default=str)))
    with open(out / "results.jsonl", "w") as fh:
        for r in records:
            fh.write(json.dumps(r, default=str) + "\n")
    run_meta = {"device": info.name, "cc": info.compute_capability, "driver": info.driver_version,
                "runtime": info.runtime_version, "ptxas": ptxas, "run": run_id,
                "date": _dt.datetime.now(_dt.timezone.utc).isoformat()}
    (out / "recovery.json").write_text(json.dumps({"meta": run_meta, "paths": recoveries}, indent=1, default=str))
    for path, r in recoveries.items():
        print(path, json.dumps(r["features"], default=str), "survivors", r["survivors"],
              "repeat", r["repeat_bitwise_equal"])
        print("   answers", json.dumps(r["answers"]))
        print("   agree with hypothesis", json.dumps(r["agree_with_hypothesis"]))
    return 0


def main(argv: Sequence[str] | None = None) -> int:  # pragma: no cover
    ap = argparse.ArgumentParser(prog="python -m suites.probes.silicon")
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="assemble the probe kernels here into DIR")
    b.add_argument("--dir", required=True)
    r = sub.add_parser("run", help="run every probe on this GPU from prebuilt cubins")
    r.add_argument("--cubins", required=True)
    r.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    if args.cmd == "build":
        print(json.dumps(build(Path(args.dir)), indent=1))
        return 0
    return run(Path(args.cubins), Path(args.out))


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
