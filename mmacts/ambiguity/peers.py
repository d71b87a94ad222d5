"""Fill the register's ``peers`` field from a run of the ``peers`` suite.

Why by code: what Triton's kernels and CUTLASS's host-computed layouts say about an open reading is
evidence, and evidence must come from a run, not from memory. Each peers case names the register
entries it exercises (its message ends ``register: AMB-..., ...``); per entry and peer this writes
how many cases agreed (``pass``), disagreed (``fail``, or ``xfail`` explained by an entry) or did not
exercise the point (``observed``; an ``xfail`` counts only against the entry that explains it), the first
disagreement, the peer version and the run. A later run
of the same peer replaces the earlier line: the field says what the newest peer run found.

    python -m mmacts.ambiguity.peers RUN/results.parquet [--meta RUN/run.json] [--register FILE]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from mmacts.ambiguity import register as R
from mmacts.cases.status import NOT_RUN
from mmacts.core.records import read_jsonl

_LINKS = re.compile(r"register: (AMB-[A-Z0-9-]+(?:, AMB-[A-Z0-9-]+)*)")


def peer_of(case_id: str) -> str:
    parts = case_id.split(".")
    return parts[1] if len(parts) > 1 else "?"


def summarise(rows: list[dict[str, Any]], versions: dict[str, str], run: str) -> dict[str, list[dict[str, Any]]]:
    """entry id -> one peers line per peer, from result rows of the peers suite."""
    acc: dict[tuple[str, str], dict[str, Any]] = {}
    for r in rows:
        if r.get("suite") != "peers":
            continue
        m = _LINKS.search(str(r.get("message") or ""))
        if not m:
            continue
        peer = peer_of(str(r["case_id"]))
        explained = re.match(r"explained by (AMB-[A-Z0-9-]+)", str(r.get("message") or ""))
        for eid in m.group(1).split(", "):
            if r.get("status") == "xfail" and explained and explained.group(1) != eid:
                continue  # the disagreement is the named entry's, not every entry the case touches
            a = acc.setdefault((eid, peer), {"cases": 0, "agree": 0, "disagree": 0, "observed": 0, "first": None,
                                             "example": r["case_id"]})
            status = r.get("status")
            if status in (*NOT_RUN, "error", "crash", "timeout"):
                continue
            a["cases"] += 1
            if status == "pass":
                a["agree"] += 1
            elif status in ("fail", "xfail"):
                a["disagree"] += 1
                if a["first"] is None:
                    a["first"] = f"{r['case_id']}: {str(r.get('message') or '')[:300]}"
            else:
                a["observed"] += 1
    name = {"triton": "Triton", "gluon": "Gluon", "cutlass": "CUTLASS"}
    pkg = {"triton": "triton", "gluon": "triton", "cutlass": "nvidia-cutlass"}
    out: dict[str, list[dict[str, Any]]] = {}
    for (eid, peer), a in sorted(acc.items()):
        if not a["cases"]:
            continue
        line: dict[str, Any] = {"peer": name.get(peer, peer), "version": versions.get(pkg.get(peer, peer), "unknown"),
                                "run": run, "cases": a["cases"], "agree": a["agree"], "disagree": a["disagree"],
                                "observed": a["observed"], "example": a["example"]}
        if a["first"]:
            line["first_disagreement"] = a["first"]
        out.setdefault(eid, []).append(line)
    return out


def apply(reg: R.Register, found: dict[str, list[dict[str, Any]]]) -> R.Register:
    """The register with each named entry's lines for the peers in ``found`` replaced."""
    known = {e.id for e in reg.entries}
    missing = sorted(set(found) - known)
    if missing:
        raise R.RegisterError(f"peers cases name unknown register entries: {', '.join(missing)}")
    entries = []
    for e in reg.entries:
        new = found.get(e.id)
        if new is None:
            entries.append(e)
            continue
        peers_now = {p["peer"] for p in new}
        kept = [p for p in e.peers if p["peer"] not in peers_now]
        entries.append(replace(e, peers=tuple(kept + new)))
    return replace(reg, entries=tuple(entries))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mmacts.ambiguity.peers", description=__doc__.split("\n")[0])
    ap.add_argument("results", help="results.parquet (or .jsonl) of a run that includes the peers suite")
    ap.add_argument("--meta", default=None, help="run.json of that run (default: beside the results)")
    ap.add_argument("--register", default=None, help="register file (default: the package's)")
    a = ap.parse_args(argv)
    res = Path(a.results)
    if not res.exists():
        print(f"mmacts: error: {res} does not exist", file=sys.stderr)
        return 2
    if res.suffix == ".parquet":
        import pandas as pd

        rows = pd.read_parquet(res).to_dict("records")
    else:
        rows = list(read_jsonl(res))
    meta_path = Path(a.meta) if a.meta else res.parent / "run.json"
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    versions = meta.get("packages", {})
    run = str(meta.get("run_id") or res.parent.name)
    found = summarise(rows, versions, run)
    path = Path(a.register) if a.register else R.REGISTER_PATH
    reg = R.load_register(path)
    new = apply(reg, found)
    path.write_text(R.dump_register(new), encoding="utf-8")
    print(f"peers: {sum(len(v) for v in found.values())} lines on {len(found)} register entries -> {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
