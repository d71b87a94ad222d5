"""Coverage per tcgen05 / mma.sync FEATURE, not only per spec row: for each feature the suites claim to check
(each tcgen05.ld/st shape, shift, the collector operations and .ws buffers, the output-lane mask, cta_group::2
ownership, scale-factor specials, the comparator's signed zeros), which planted mutants break it and whether one
of them made a suite case FAIL (``can-fail``), or was seen only by an observation because the spec leaves the
answer open (``observed-only``, a register entry decides it), or nothing plants a fault there (``none``).

Why a second view: a row cited by a case is not a feature that can fail (issue 26 found seven features whose
rows were cited and whose misbehaviour no case noticed). ``coverage.json`` carries it as ``features``
(``run.coverage_data``); ``python -m mmacts.mutants.features`` prints it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from typing import Any


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


def table(doc: dict[str, Any]) -> str:
    """The per-feature lines of a ``coverage.json`` document."""
    feats = doc.get("features") or feature_coverage(doc.get("mutants", []))
    lines = [f"{'feature':<24} {'status':<14} mutants (fail / observed / all)  what"]
    for key, e in feats.items():
        n = f"{len(e['caught_by_fail'])} / {len(e['caught_by_observation'])} / {len(e['mutants'])}"
        lines.append(f"{key:<24} {e['status']:<14} {n:<31} {e['what']}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    from mmacts.mutants.run import COVERAGE_PATH, load_coverage

    args = list(sys.argv[1:] if argv is None else argv)
    doc = load_coverage() if not args else json.loads(open(args[0], encoding="utf-8").read())
    if doc is None:
        print(f"no mutation results ({COVERAGE_PATH.name}) yet: run mmacts selftest --mutants --write-coverage")
        return 2
    print(table(doc))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
