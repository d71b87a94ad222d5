"""Scores of the generated (operator-level) mutation, read from the committed results: the per-module table
that ``python -m mmacts.mutants.generated report``, ``mmacts list`` and index.html show.

Here, on the report floor, because the reports and the CLI read these files and a reader must not import the tool
that wrote them (issue 25): ``mmacts.mutants.generated`` runs cosmic-ray and writes ``generated/<target>.json`` and
``generated/survivors.yaml``; this module only reads them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

OUT_DIR = Path(__file__).resolve().parents[1] / "mutants" / "generated"
REPO = Path(__file__).resolve().parents[2]
"""Where a record's ``module`` path is read from to see whether the mutated lines are still there."""
"""Where ``mmacts.mutants.generated`` commits its results."""
SURVIVORS = OUT_DIR / "survivors.yaml"
UNIT_ONLY = OUT_DIR / "unit_only.yaml"
"""Per target, why the mutants that only a unit test killed are out of the suites' reach (a hole: what a
GPU case would have to do to see them, or why none can: host-side validation, a refusal of undefined
behaviour, a form the suite does not run)."""


def survivor_key(m: dict[str, Any]) -> str:
    """A survivor's identity across runs: the operator, the source line and what it became (occurrences
    renumber when the module changes; two mutants of one operator on one line differ in the new line)."""
    diff = str(m.get("diff", "")).splitlines()
    new = [ln[1:].strip() for ln in diff if ln.startswith("+") and not ln.startswith("+++")]
    return f"{m['operator']} @ {mutated_line(m) or m['line']} => {new[0] if new else '?'}"


def load_survivors(path: Path = SURVIVORS) -> dict[str, dict[str, Any]]:
    """``generated/survivors.yaml``: target -> {key: {line, operator, diff, reason}}."""
    import yaml

    if not path.exists():
        return {}
    return yaml.safe_load(path.read_text(encoding="utf-8")) or {}


REPORT_COLUMNS = ("target", "module", "listed", "static", "tried", "by suite", "by unit test only", "justified",
                  "known holes", "unexplained", "not judged", "source changed")
"""``report``'s columns: the mutants cosmic-ray lists for the module; those only of annotations or a
signature's bare ``*`` (``is_static``: equivalent, never run; 0 where a full run ran them); those run (all, or
a seeded sample); killed by a suite case (a case a Blackwell GPU runs); killed only by a unit test beside the
module (a hole of the suites); survivors with a reason in survivors.yaml: equivalent (justified), or a hole no
case and no unit test reaches yet (a reason starting ``hole:``, saying what would kill it); survivors without
a reason (the finding);
mutants not judged (cosmic-ray could not apply the mutation, or the whole check ran past ``--timeout`` on a
busy machine); mutants whose source line is no longer in the module as it is now (``source changed``: the
module was refactored since the run, so that part of the score describes the code as it was -- re-run the target
to score the code as it is)."""


def mutated_line(m: dict[str, Any]) -> str:
    """The source line a mutant changed, as it read before the change (stripped; empty if the diff has none)."""
    diff = str(m.get("diff", "")).splitlines()
    old = [ln[1:].strip() for ln in diff if ln.startswith("-") and not ln.startswith("---")]
    return old[0] if old else ""


def source_changed(doc: dict[str, Any], root: Path = REPO) -> int:
    """How many of ``doc``'s mutants changed a line the module no longer has (all of them if the module is gone)."""
    path = root / doc["module"]
    lines = {ln.strip() for ln in path.read_text(encoding="utf-8").splitlines()} if path.is_file() else set()
    return sum(1 for r in doc.get("results") or [] if mutated_line(r) not in lines)


def summarize(doc: dict[str, Any], survivors: dict[str, Any], root: Path = REPO) -> dict[str, Any]:
    """One row of the score table from a committed ``generated/<target>.json`` and the target's survivors.
    A mutant killed with no ``killed_by`` (the mutated module no longer imports, so the check crashed before
    judging) counts as the suite's: every suite case would end ``error`` with it."""
    res = doc.get("results") or []
    reasons = {k: str((v or {}).get("reason") or "") for k, v in (survivors or {}).items()}
    survived = [r for r in res if r["outcome"] == "survived"]
    explained = [reasons.get(survivor_key(r), "") for r in survived]
    holes = sum(1 for x in explained if x.startswith("hole:"))
    justified = sum(1 for x in explained if x and not x.startswith("hole:"))
    killed = [r for r in res if r["outcome"] == "killed"]
    unit = sum(1 for r in killed if r.get("killed_by") == "unit-test")
    return {"target": doc["target"], "module": doc["module"], "listed": doc["mutants_listed"],
            "static": int(doc.get("static", 0)), "tried": len(res),
            "by suite": len(killed) - unit, "by unit test only": unit, "justified": justified,
            "known holes": holes, "unexplained": len(survived) - justified - holes,
            "not judged": sum(1 for r in res if r["outcome"] not in ("killed", "survived")),
            "source changed": source_changed(doc, root)}


def report_rows(out_dir: Path = OUT_DIR, order: Sequence[str] = (), root: Path = REPO) -> list[dict[str, Any]]:
    """The score table: one row per committed ``generated/*.json``, the targets in ``order`` first (the tool's
    order), then the rest by name."""
    surv = load_survivors(out_dir / SURVIVORS.name)
    docs = {d["target"]: d for d in (json.loads(f.read_text(encoding="utf-8")) for f in out_dir.glob("*.json"))}
    order = [t for t in order if t in docs] + sorted(set(docs) - set(order))
    return [summarize(docs[t], surv.get(t) or {}, root) for t in order]


def totals(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The table's sum row."""
    out: dict[str, Any] = {"target": "total", "module": f"{len(rows)} modules"}
    out.update({c: sum(int(r[c]) for r in rows) for c in REPORT_COLUMNS[2:]})
    return out


def markdown_table(rows: Sequence[dict[str, Any]]) -> str:
    """The score table as README prints it (``test_generated.py`` compares the two)."""
    lines = ["| " + " | ".join(REPORT_COLUMNS) + " |", "|" + "---|" * len(REPORT_COLUMNS)]
    for r in [*rows, totals(rows)] if rows else []:
        lines.append("| " + " | ".join(f"`{r[c]}`" if c == "module" and r["target"] != "total" else str(r[c])
                                       for c in REPORT_COLUMNS) + " |")
    return "\n".join(lines)


def summary_line(rows: Sequence[dict[str, Any]]) -> str:
    """One sentence for ``mmacts list`` and index.html."""
    if not rows:
        return "generated mutation: no results (mmacts/mutants/generated/*.json) yet"
    t = totals(rows)
    return (f"generated mutation (cosmic-ray) of {len(rows)} modules: {t['tried']} mutants tried, {t['by suite']} "
            f"killed by a suite case, {t['by unit test only']} by a unit test only, {t['justified']} justified "
            f"equivalent, {t['known holes']} known holes, {t['unexplained']} unexplained"
            + (f"; {t['source changed']} on lines the code no longer has (re-run those targets)"
               if t["source changed"] else ""))


def unit_only_unnoted(rows: Sequence[dict[str, Any]], out_dir: Path = OUT_DIR) -> list[str]:
    """Targets with mutants only a unit test killed and no note in ``unit_only.yaml`` saying why."""
    import yaml

    path = out_dir / UNIT_ONLY.name
    notes = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}) if path.exists() else {}
    return [r["target"] for r in rows if r["by unit test only"] and not str(notes.get(r["target"]) or "")]
