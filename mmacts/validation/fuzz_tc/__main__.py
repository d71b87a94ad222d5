"""``python -m mmacts.validation.fuzz_tc build|store|vm|replay`` (see :mod:`mmacts.validation.fuzz_tc.build`)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path

from mmacts.validation.fuzz_tc import build as B
from mmacts.validation.fuzz_tc import records as R
from mmacts.validation.fuzz_tc import refuse


def _bad(msg: str) -> int:
    print(f"mmacts.validation.fuzz_tc: {msg}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m mmacts.validation.fuzz_tc", description=B.__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    pb = sub.add_parser("build", help="PTX, cubins, inputs and a manifest for device_run.py")
    pb.add_argument("build_dir")
    for q in (pb, sub.add_parser("vm", help="run generated launches on the VM; exit 1 on a crash")):
        q.add_argument("--seeds", type=int, nargs="+", default=list(B.DEFAULT_SEEDS))
        q.add_argument("--count", type=int, default=B.DEFAULT_COUNT, help="launches per seed")
        if q is not pb:
            q.add_argument("--refusals", action="store_true",
                           help="deform each launch into a form the VM must refuse (mmacts.validation.fuzz_tc.refuse)")
    ps = sub.add_parser("store", help="write a commit-ready record from a build and the GPU's outputs")
    ps.add_argument("build_dir")
    ps.add_argument("out_dir")
    ps.add_argument("dest")
    pd = sub.add_parser("dry-run", help="device_run.py with the VM as the device (tests the chain; not silicon)")
    pd.add_argument("build_dir")
    pd.add_argument("out_dir")
    pr = sub.add_parser("replay", help="run a stored record on the VM and summarise")
    pr.add_argument("record", nargs="?")
    pr.add_argument("--not-yet", action="store_true",
                    help="also print each failing launch as a NOT_YET entry for test_replay.py (triage aid)")
    a = p.parse_args(argv)
    if getattr(a, "count", 1) < 1 or any(s < 0 for s in getattr(a, "seeds", [])):
        return _bad("--count must be >= 1 and seeds >= 0")
    if a.cmd == "build":
        B.build(a.build_dir, a.seeds, a.count)
        return 0
    if a.cmd == "vm" and a.refusals:
        r = refuse.run_mutations(a.seeds, a.count)
        for f in r["findings"]:
            print(f)
        for name, row in r["table"].items():
            print(f"{name:32s} {row}")
        return 1 if r["findings"] else 0
    if a.cmd == "vm":
        r = B.vm_fuzz(a.seeds, a.count)
        for n in r["notes"]:
            print(n)
        print(f"fuzz-tc vm: {r['counts']} in {r['wall_s']} s")
        return 1 if r["counts"].get("crash") else 0
    if a.cmd == "store":
        for what, path, need in (("BUILD", a.build_dir, "manifest.json"), ("OUT", a.out_dir, "device.json")):
            if not (Path(path) / need).is_file():
                return _bad(f"{what} {path} has no {need}")
        B.store(a.build_dir, a.out_dir, a.dest, json.loads(os.environ.get("MMACTS_RECORD_META", "{}")))
        return 0
    if a.cmd == "dry-run":
        if not (Path(a.build_dir) / "manifest.json").is_file():
            return _bad(f"BUILD {a.build_dir} has no manifest.json")
        dev = B.vm_device_run(a.build_dir, a.out_dir)
        print(f"dry run: {len(dev['launches'])} launches on the VM -> {a.out_dir}")
        return 0
    recs = [Path(a.record)] if a.record else R.record_dirs()
    if not recs or not all((r / "meta.json").is_file() for r in recs):
        return _bad(f"no fuzz-tc record at {a.record or R.FUZZ_ROOT}")
    bad = 0
    for r in recs:
        groups: Counter[str] = Counter()
        failing: Counter[str] = Counter()
        n, fails = B.replay_summary(r, groups, failing)
        for f in fails:
            print(f)
        if a.not_yet:
            for f in fails:
                head, _, rest = f.partition(": ")
                first = rest.splitlines()[1].strip() if len(rest.splitlines()) > 1 else rest.splitlines()[0]
                print(f"    {head.split(' (')[0]!r}: {('silicon differs: ' + first)!r},")
        for g in sorted(groups):
            print(f"  {g:40s} {groups[g] - failing[g]:4d}/{groups[g]:<4d} identical")
        print(f"{r.name}: {n - len(fails)}/{n} launches bit-identical on the VM")
        bad += len(fails)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
