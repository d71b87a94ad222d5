"""``python -m mmacts.validation.fuzz``: differential fuzzing of the PTX VM against silicon (issue 22).

    python -m mmacts.validation.fuzz replay [--record DIR] [--only NAME,...] [--kind random|unit] [-v]
    python -m mmacts.validation.fuzz crash [--seeds 100000-100499]   # CPU only: fresh kernels, the VM must never crash
    python -m mmacts.validation.fuzz show NAME [--record DIR]        # a recorded kernel: first differing slot, operands
    python3 -m mmacts.validation.fuzz device OUT --seeds 1-2400 [--unit] [--jobs N]     # on a GPU host
    python -m mmacts.validation.fuzz store OUT DEST                  # here: a device run -> validation/fuzz/DEST

``replay`` exits 1 when a kernel differs that ``mmacts.validation.fuzz.known`` does not explain; ``crash`` exits 1
when a generated program makes the VM fail with anything but a named refusal. Bad input: one line, exit 2.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from mmacts.validation.fuzz import record as rec_mod
from mmacts.validation.fuzz import records as R
from mmacts.validation.fuzz.generate import kernel
from mmacts.validation.fuzz.known import KNOWN
from mmacts.validation.fuzz.vm import run_vm


def _die(msg: str) -> None:
    print(f"mmacts.validation.fuzz: {msg}", file=sys.stderr)
    raise SystemExit(2)


def _records(path: str | None) -> list:
    dirs = [Path(path)] if path else R.record_dirs()
    if path and not (Path(path) / "meta.json").is_file():
        _die(f"{path} is not a fuzz record folder (no meta.json)")
    if not dirs:
        _die("no fuzz record under validation/fuzz/ (record one: README, 'Differential fuzzing')")
    return [k for d in dirs for k in R.fuzz_records(d)]


def cmd_replay(a: argparse.Namespace) -> int:
    kernels = _records(a.record)
    if a.kind:
        kernels = [k for k in kernels if k.kind == a.kind]
    if a.only:
        want = set(a.only.split(","))
        kernels = [k for k in kernels if k.name in want]
        if not kernels:
            _die(f"--only {a.only}: no such kernel in the record")
    counts = {"match": 0, "refused": 0, "known": 0, "differ": 0}
    ti = 0
    t0 = time.perf_counter()
    last = t0
    for i, k in enumerate(kernels, 1):
        run = run_vm(k.ptx, k.inputs(), len(k.classes), entry=k.entry, grid=k.grid, block=k.block,
                     n_param=k.n_param)
        ti += run.thread_instructions
        verdict, msg = R.compare(k, run)
        key = f"{k.record}/{k.name}"
        if verdict == "differ" and key in KNOWN:
            verdict = "known"
        counts[verdict] += 1
        if verdict == "differ" or (a.verbose and verdict != "match"):
            print(f"{verdict.upper():8s} {msg}")
        if time.perf_counter() - last > 15:
            last = time.perf_counter()
            print(f"... {i}/{len(kernels)} kernels, {counts}", file=sys.stderr, flush=True)
    wall = time.perf_counter() - t0
    print(f"{len(kernels)} kernels: {counts['match']} bit-identical, {counts['refused']} refused by name, "
          f"{counts['known']} known deviations (mmacts.validation.fuzz.known), {counts['differ']} differ; "
          f"{wall:.1f} s, {len(kernels) / wall:.0f} kernels/s, {ti / wall / 1e6:.2f} M thread-instructions/s")
    return 1 if counts["differ"] else 0


def cmd_crash(a: argparse.Namespace) -> int:
    try:
        seeds = rec_mod.parse_seeds(a.seeds)
    except ValueError as exc:
        _die(str(exc))
    bad = 0
    counts: dict[str, int] = {}
    t0 = time.perf_counter()
    for s in seeds:
        k = kernel(s)
        run = run_vm(k.ptx, k.inputs(), k.n_out)
        kind = "ok" if run.status == "ok" else ("refused" if run.refused else run.status)
        counts[kind] = counts.get(kind, 0) + 1
        if kind not in ("ok", "refused"):
            bad += 1
            print(f"seed {s}: {run.status}: {run.message}")
    print(f"{len(seeds)} kernels on the VM: {counts}; {time.perf_counter() - t0:.1f} s")
    return 1 if bad else 0


def cmd_show(a: argparse.Namespace) -> int:
    k = next((x for x in _records(a.record) if x.name == a.name), None)
    if k is None:
        _die(f"no kernel {a.name!r} in the record (names look like seed12 or unit340)")
    print(k.ptx)
    run = run_vm(k.ptx, k.inputs(), len(k.classes), entry=k.entry, grid=k.grid, block=k.block, n_param=k.n_param)
    verdict, msg = R.compare(k, run)
    print(f"// verdict: {verdict} {msg}")
    if run.out is not None and verdict == "differ":
        diff = run.out != k.silicon
        slot = int(np.flatnonzero(diff.any(axis=0))[0])
        for t in np.flatnonzero(diff[:, slot])[:8]:
            print(f"// thread {t}: VM {int(run.out[t, slot]):#x} silicon {int(k.silicon[t, slot]):#x}")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m mmacts.validation.fuzz", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("replay", help="run the recorded kernels on the VM and compare")
    r.add_argument("--record")
    r.add_argument("--only")
    r.add_argument("--kind", choices=("random", "unit"))
    r.add_argument("-v", "--verbose", action="store_true")
    c = sub.add_parser("crash", help="fresh kernels on the VM: no crash allowed")
    c.add_argument("--seeds", default="100000-100499")
    s = sub.add_parser("show", help="one recorded kernel")
    s.add_argument("name")
    s.add_argument("--record")
    d = sub.add_parser("device", help="on a GPU host: generate, assemble, run, write OUT")
    d.add_argument("out")
    d.add_argument("--seeds", default="1-2400")
    d.add_argument("--unit", action="store_true")
    d.add_argument("--jobs", type=int, default=8)
    st = sub.add_parser("store", help="a device run's OUT -> a record folder")
    st.add_argument("out")
    st.add_argument("dest")
    try:
        a = p.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0) and 2
    if a.cmd == "replay":
        return cmd_replay(a)
    if a.cmd == "crash":
        return cmd_crash(a)
    if a.cmd == "show":
        return cmd_show(a)
    if a.cmd == "device":
        try:
            seeds = rec_mod.parse_seeds(a.seeds)
        except ValueError as exc:
            _die(str(exc))
        rec_mod.device(a.out, seeds, a.jobs, a.unit)
        return 0
    if not (Path(a.out) / "device.json").is_file():
        _die(f"{a.out} holds no device.json (the folder a device run wrote)")
    rec_mod.store(a.out, a.dest)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
