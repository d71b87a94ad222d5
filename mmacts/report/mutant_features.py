"""Coverage per tcgen05 / mma.sync FEATURE, not only per spec row: for each feature the suites claim to check
(each tcgen05.ld/st shape, shift, the collector operations and .ws buffers, the output-lane mask, cta_group::2
ownership, scale-factor specials, the comparator's signed zeros), which planted mutants break it and whether one
of them made a suite case FAIL (``can-fail``), or was seen only by an observation because the spec leaves the
answer open (``observed-only``, a register entry decides it), or nothing plants a fault there (``none``).

Why a second view: a row cited by a case is not a feature that can fail (issue 26 found seven features whose
rows were cited and whose misbehaviour no case noticed). ``coverage.json`` carries it as ``features``
(``mmacts.mutants.run.coverage_data``); ``python -m mmacts.report.mutant_features`` prints it.

Here, on the report floor, with where the document lives (:data:`COVERAGE_PATH`) and how it is read
(:func:`load_coverage`): the mutation run (``mmacts.mutants``, a tool on the top floor) writes it, the reports and
the CLI read it, and a reader must not import the tool that wrote its input (issue 25).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

COVERAGE_PATH = Path(__file__).resolve().parents[1] / "mutants" / "coverage.json"
"""Written by ``mmacts selftest --mutants --write-coverage`` (:mod:`mmacts.mutants.run`), committed."""


def load_coverage(path: Path | None = None) -> dict[str, Any] | None:
    """The mutation coverage document, or ``None`` where no mutation run wrote one yet."""
    p = path or COVERAGE_PATH
    if not p.exists():
        return None
    return json.loads(p.read_text(encoding="utf-8"))


def _prefix(*names: str) -> Callable[[str], bool]:
    return lambda n: any(n == p or (p.endswith(".") and n.startswith(p)) or n.startswith(p + ".") for p in names)


SHAPES = ("32x32b", "16x64b", "16x128b", "16x256b", "16x32bx2")
FEATURES: tuple[tuple[str, str, Callable[[str], bool]], ...] = (
    *((f"ldst.{s}", f"tcgen05.ld/st .{s}, every .num", _prefix(f"ldst-vm.{s}")) for s in SHAPES),
    ("ldst.wait-and-shape", "tcgen05.wait::ld/::st and the read-back shape of the MMA kernel",
     _prefix("kernel.missing-wait-ld", "kernel.missing-wait-st", "kernel.wrong-ld-shape")),
    ("shift.down", "tcgen05.shift.down direction and rows", _prefix("shift-vm")),
    ("collector.a", "collector::a fill/use/lastuse (A from the buffer, not memory)",
     _prefix("collector-vm.use-reads-memory")),
    ("collector.ws-buffers", "tcgen05.mma.ws collector buffers b0-b3", _prefix("collector-vm.ws-buffers-as-b0")),
    ("disable-output-lane", "the disable-output-lane mask's bit order", _prefix("dplace-vm.dol-msb-first")),
    ("cta_group2.ownership", "cta_group::2: whose SFB / cluster rank / D half", _prefix(
        "sf-vm.cg2-leader-sfb", "kernel.wrong-cluster-rank", "dplace-vm.layoutB-half", "dplace-host.layoutB-half")),
    ("sf.ue4m3-nan", "UE4M3 scale 0x7F (NaN) in both instruction families", lambda n: "ue4m3-7f" in n),
    ("smem.base-offset", "shared-memory descriptor base offset, every swizzle with one",
     _prefix("swizzle-host.base-offset-added")),
    ("comparator.signed-zero", "the comparator's -0/+0 rule, when a case asks for signed zeros and when not",
     _prefix("comparator.signed-zero-strict", "comparator.signed-zero-ignored")),
)
"""(key, what, which mutant names break it)."""


def feature_coverage(mutants: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per feature: its mutants, which of them a failing case caught, which only an observation, the status."""
    out: dict[str, dict[str, Any]] = {}
    for key, what, hit in FEATURES:
        ms = [m for m in mutants if hit(m["name"])]
        fail = sorted(m["name"] for m in ms if m.get("killed") and m.get("how") in ("fail", "kernel-error", "refusal"))
        obs = sorted(m["name"] for m in ms if m.get("killed") and m.get("how") == "observed")
        status = "can-fail" if fail else ("observed-only" if obs else "none")
        out[key] = {"what": what, "mutants": sorted(m["name"] for m in ms), "caught_by_fail": fail,
                    "caught_by_observation": obs, "status": status}
    return out


STATUS_MEANING = {
    "can-fail": "a planted mutant of it made a suite case fail",
    "observed-only": "its mutants changed only an observation (the spec leaves the answer open; a register "
                     "entry decides it), no case can fail",
    "none": "no planted mutant of it was caught (or none exists)",
}
"""What each status says, worded once for ``mmacts list`` and index.html."""


def features_of(doc: Mapping[str, Any] | None) -> dict[str, dict[str, Any]]:
    """Per-feature coverage of a ``coverage.json`` document: recomputed from its mutants' outcomes when it has
    them (the stored ``features`` can be older than ``FEATURES``), else the stored block; {} without a doc."""
    if not doc:
        return {}
    if doc.get("mutants"):
        return feature_coverage(doc["mutants"])
    return dict(doc.get("features") or {})


def example_case(key: str, entry: Mapping[str, Any], mutants: Sequence[Mapping[str, Any]]) -> str:
    """A case that caught one of the feature's mutants the way its status says (failed, or observed): one
    naming the feature's last word (``16x64b``: a mutant of one shape can also break another shape's case)
    when there is one, else the first."""
    names = entry.get("caught_by_fail") or entry.get("caught_by_observation") or []
    killers = {m.get("name"): m.get("killers") or [] for m in mutants}
    found = sorted(c for n in names for c in killers.get(n, []))
    word = key.rsplit(".", 1)[-1]
    return next((c for c in found if word in c), found[0] if found else "")


def rows(doc: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """One line per feature: key, status, counts (caught by a failing case / by an observation only / all its
    mutants), an example catching case, and what the feature is."""
    mutants = (doc or {}).get("mutants") or []
    return [{"feature": key, "status": e["status"], "fail": len(e["caught_by_fail"]),
             "observed": len(e["caught_by_observation"]), "mutants": len(e["mutants"]),
             "example case": example_case(key, e, mutants), "what": e["what"]}
            for key, e in features_of(doc).items()]


def summary(doc: Mapping[str, Any] | None) -> str:
    """'N features a failing mutant proves can fail, M observed only (keys), K none (keys)'."""
    rs = rows(doc)
    by = {s: [r["feature"] for r in rs if r["status"] == s] for s in STATUS_MEANING}
    return (f"{len(by['can-fail'])} of {len(rs)} features a failing mutant proves can fail, "
            + ", ".join(f"{len(by[s])} {s}" + (f" ({' '.join(by[s])})" if by[s] else "")
                        for s in ("observed-only", "none")))


def table(doc: dict[str, Any]) -> str:
    """The per-feature lines of a ``coverage.json`` document."""
    feats = features_of(doc)
    lines = [f"{'feature':<24} {'status':<14} mutants (fail / observed / all)  what"]
    for key, e in feats.items():
        n = f"{len(e['caught_by_fail'])} / {len(e['caught_by_observation'])} / {len(e['mutants'])}"
        lines.append(f"{key:<24} {e['status']:<14} {n:<31} {e['what']}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    doc = load_coverage() if not args else json.loads(open(args[0], encoding="utf-8").read())
    if doc is None:
        print(f"no mutation results ({COVERAGE_PATH.name}) yet: run mmacts selftest --mutants --write-coverage")
        return 2
    print(table(doc))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
