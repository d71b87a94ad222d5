"""Run the mutant registry, print the mutation score, write ``coverage.json``.

``mmacts selftest --mutants [--fast] [-n N] [-k NAME] [--write-coverage]``. Every mutant runs in its own
forked process (a planted fault can never leak into the next one); ``-n`` processes at once.

``coverage.json`` (committed; ``mmacts list`` and index.html read it, they never re-run mutants): per
mutant whether it was caught and by which cases, and per spec row the mutants of that row's reading
and the cases citing the row that failed under them. A row counts as *covered by a failing mutant*
only when such a case exists; rows that cases merely cite are listed as covered by citation only.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import sys
import time
from collections.abc import Sequence
from typing import Any

import mmacts.backends.execute  # noqa: F401 -- imported once in the parent: forked mutant processes start warm
import mmacts.ptxvm  # noqa: F401 -- likewise
from mmacts.core.driver import as_driver
from mmacts.core.suites import load_driver
from mmacts.mutants import registry  # module attribute: tests replace registry.all_mutants
from mmacts.mutants.engine import Mutant, MutantResult, _driver, cases_for, run_cases, run_mutant
from mmacts.report.mutant_features import COVERAGE_PATH, feature_coverage, load_coverage

_MUTANTS: list[Mutant] = []


def _run_index(i: int) -> MutantResult:
    m = _MUTANTS[i]
    try:
        return run_mutant(m)
    except Exception as exc:  # a mutant that cannot be planted is a broken mutant, never a kill
        return MutantResult(m.name, m.family, m.rows, False, f"broken: {type(exc).__name__}: {exc}"[:300])


def run_all(mutants: Sequence[Mutant], jobs: int = 1, progress: bool = True) -> list[MutantResult]:
    global _MUTANTS
    _MUTANTS = list(mutants)
    _warm({m.suite for m in _MUTANTS})
    idx = list(range(len(_MUTANTS)))
    out: list[MutantResult] = []
    if jobs <= 1:
        ctx = mp.get_context("fork")
        with ctx.Pool(1, maxtasksperchild=1) as pool:
            for r in pool.imap(_run_index, idx):
                out.append(r)
                if progress:
                    _line(r)
        return out
    ctx = mp.get_context("fork")
    with ctx.Pool(jobs, maxtasksperchild=1) as pool:
        for r in pool.imap(_run_index, idx):
            out.append(r)
            if progress:
                _line(r)
    return out


def _warm(suites: set[str]) -> None:
    """Enumerate once in the parent (the VM and the executor are imported with this module), so every forked
    mutant process starts warm."""
    for s in sorted(suites):
        _driver(s).cases("standard")


def _line(r: MutantResult) -> None:
    mark = "killed  " if r.killed else "SURVIVED"
    print(f"  {mark} {r.name:<48} {r.how:<12} {r.seconds:6.2f}s", flush=True)


def verify_killers(mutants: Sequence[Mutant], results: list[MutantResult]) -> list[str]:
    """Run every case that caught a mutant once WITHOUT any mutant: a case that does not pass by itself
    proves nothing, so the kills resting only on such cases are withdrawn. Returns those case ids."""
    by_name = {m.name: m for m in mutants}
    want: dict[str, dict[str, Any]] = {}
    for r in results:
        m = by_name[r.name]
        if not r.killers or m.kernel:
            continue
        for c in cases_for(m):
            if c.case_id in r.killers:
                want.setdefault(m.suite, {})[c.case_id] = c
    bad: set[str] = set()
    noisy: set[str] = set()
    for suite, cases in want.items():
        for cid, rec in run_cases(suite, list(cases.values())).items():
            if rec["status"] in ("fail", "error", "timeout"):  # a probe's 'observed' is its clean state
                bad.add(cid)
            elif rec["status"] == "observed" and int(rec.get("mismatches") or 0) > 0:
                noisy.add(cid)  # an observation that differs unmutated cannot show a mutant
    for r in results:
        if r.how == "observed":
            r.killers = {k: v for k, v in r.killers.items() if k not in noisy}
            if not r.killers:
                r.killed, r.how = False, "survived (its observations differ unmutated)"
                continue
        if r.killers and not set(r.killers) - bad and not by_name[r.name].kernel:
            r.killed, r.how, r.killers = False, "survived (its killers fail unmutated)", {}
        else:
            r.killers = {k: v for k, v in r.killers.items() if k not in bad}
    return sorted(bad)


def score_text(results: Sequence[MutantResult]) -> str:
    killed = sum(r.killed for r in results)
    lines = [f"mutation score: {killed}/{len(results)} killed"]
    fams: dict[str, list[MutantResult]] = {}
    for r in results:
        fams.setdefault(r.family, []).append(r)
    for fam, rs in sorted(fams.items()):
        how: dict[str, int] = {}
        for r in rs:
            how[r.how.split(":")[0]] = how.get(r.how.split(":")[0], 0) + 1
        lines.append(f"  {fam:<14} {sum(r.killed for r in rs)}/{len(rs)}  "
                     + ", ".join(f"{k} {v}" for k, v in sorted(how.items())))
    surv = [r for r in results if not r.killed]
    if surv:
        lines.append("survivors:")
        for r in surv:
            lines.append(f"  {r.name}: {r.how}; " + "; ".join(f"{k} -> {v}" for k, v in list(r.verdicts.items())[:2]))
    return "\n".join(lines)


def coverage_data(results: Sequence[MutantResult], cited: dict[str, int] | None = None) -> dict[str, Any]:
    """The ``coverage.json`` document: mutants, and per spec row what proves a case citing it can fail."""
    rows: dict[str, dict[str, Any]] = {}
    for r in results:
        for row in r.rows:
            e = rows.setdefault(row, {"mutants": [], "killing_mutants": [], "failing_cases": []})
            e["mutants"].append(r.name)
            hits = sorted(cid for cid, cites in r.killers.items() if row in cites)
            if hits:
                e["killing_mutants"].append(r.name)
                e["failing_cases"] = sorted(set(e["failing_cases"]) | set(hits))[:20]
    for e in rows.values():
        e["covered"] = bool(e["failing_cases"])
    doc: dict[str, Any] = {
        "schema": 1,
        "written_by": "mmacts selftest --mutants --write-coverage",
        "date": time.strftime("%Y-%m-%d"),
        "score": {"killed": sum(r.killed for r in results), "total": len(results)},
        "mutants": [{"name": r.name, "family": r.family, "rows": list(r.rows), "killed": r.killed, "how": r.how,
                     "killers": sorted(r.killers)[:10]} for r in results],
        "rows": dict(sorted(rows.items())),
    }
    if cited is not None:
        doc["citation_only"] = sorted(row for row in cited if not rows.get(row, {}).get("covered"))

    doc["features"] = feature_coverage(doc["mutants"])  # per feature: can-fail / observed-only / none
    return doc


CITING_SUITES: tuple[str, ...] = ("tcgen05_blockscale", "mma_sync_blockscale", "descriptors", "hopper_validation")
"""The suites whose cases' cited rows a killed mutant can prove: the hardware suites that judge by a comparison
(not the probes' observations, not the peers' self-judged runs) and the descriptors suite. A new suite joins the
mutation report by being named here (mutation is opt-in; a suite runs without it)."""


def cited_rows(level: str = "standard") -> dict[str, int]:
    """Spec row -> number of cases citing it over the hardware suites and the descriptors suite."""
    out: dict[str, int] = {}
    for name in CITING_SUITES:
        drv = load_driver(name)
        if as_driver(drv).compile_only:
            continue
        for c in drv.cases(level):
            for r in c.spec_rows:
                out[r] = out.get(r, 0) + 1
    return out


def merged(old: dict[str, Any], new: Sequence[MutantResult]) -> list[MutantResult]:
    """The results of ``old`` (a coverage.json document) with ``new`` replacing those of the same name, and
    old mutants no longer in the registry dropped; cited rows of old killers are re-read from the cases."""
    current = {m.name: m for m in registry.all_mutants()}
    names = list(current)
    rows_of: dict[str, tuple[str, ...]] = {}
    for suite in CITING_SUITES:
        for c in load_driver(suite).cases("standard"):
            rows_of[c.case_id] = c.spec_rows
    by_name = {r.name: r for r in new}
    # A mutant's entry keeps 10 killers; the rows it proved are in the old rows table. Without them a merge
    # dropped rows whose citing killers were past the first 10 (T42.4/.6/.7 lost their can-fail status once).
    proved: dict[str, dict[str, set[str]]] = {}
    for row, e in old.get("rows", {}).items():
        for name in e.get("killing_mutants", []):
            for case_id in e.get("failing_cases", []):
                proved.setdefault(name, {}).setdefault(case_id, set()).add(row)
    for m in old.get("mutants", []):
        if m["name"] not in by_name and m["name"] in names:
            killers = {k: rows_of.get(k, ()) for k in m.get("killers", [])}
            for case_id, rows in proved.get(m["name"], {}).items():
                killers[case_id] = tuple(sorted(set(killers.get(case_id, rows_of.get(case_id, ()))) | rows))
            by_name[m["name"]] = MutantResult(m["name"], m["family"], current[m["name"]].rows, m["killed"],
                                              m["how"], {}, killers)
    return [by_name[n] for n in names if n in by_name]


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="mmacts selftest --mutants")
    ap.add_argument("--fast", action="store_true", help="the CI subset only")
    ap.add_argument("-n", type=int, default=1, help="mutants run at once (one process each)")
    ap.add_argument("-k", default="", help="only mutants whose name contains this")
    ap.add_argument("--write-coverage", action="store_true", help=f"write {COVERAGE_PATH.name} (needs the full set)")
    ap.add_argument("--merge", action="store_true",
                    help=f"with -k: replace these mutants' results in {COVERAGE_PATH.name}, keep the others")
    args = ap.parse_args(argv)
    ms = registry.fast_mutants() if args.fast else registry.all_mutants()
    if args.k:
        ms = [m for m in ms if args.k in m.name]

    idle = [m.name for m in ms if not cases_for(m)]
    if idle:  # e.g. the peers suite's killers where Triton/CUTLASS are not installed
        print(f"skipped {len(idle)} mutants that select no case here (suites not available): {', '.join(idle)}")
        ms = [m for m in ms if m.name not in idle]
        if args.write_coverage:
            print("--write-coverage needs every mutant to run (install the peers extra)", file=sys.stderr)
            return 2
    t0 = time.perf_counter()
    print(f"running {len(ms)} mutants on the model backend (PTX VM), {args.n} at a time", flush=True)
    results = run_all(ms, jobs=args.n)
    broken = verify_killers(ms, results)
    if broken:
        print(f"cases that do not pass without a mutant (their kills withdrawn): {broken}")
    print(score_text(results))
    print(f"({time.perf_counter() - t0:.1f}s)")
    if args.merge:
        old = load_coverage()
        if old is None:
            print(f"--merge needs an existing {COVERAGE_PATH.name}", file=sys.stderr)
            return 2
        results = merged(old, results)
        doc = coverage_data(results, cited_rows())
        COVERAGE_PATH.write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n", encoding="utf-8")
        print(f"merged into {COVERAGE_PATH}: {doc['score']['killed']}/{doc['score']['total']} killed")
        return 0 if all(r.killed for r in results) else 1
    if args.write_coverage:
        if args.fast or args.k:
            print("--write-coverage needs the full registry (no --fast / -k)", file=sys.stderr)
            return 2
        doc = coverage_data(results, cited_rows())
        COVERAGE_PATH.write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n", encoding="utf-8")
        print(f"wrote {COVERAGE_PATH}")
    return 0 if all(r.killed for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
