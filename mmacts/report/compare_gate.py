"""``mmacts report compare BASE NEW``: what changed between two runs, and a verdict a CI job can gate on.

Every case present in either run is put in the categories it falls in (a case may be in several;
its ``change`` is the first, regressions first):

==================== ===============================================================================
newly failing        ``fail``/``error``/``crash``/``timeout`` in NEW, anything else in BASE (gates)
missing from new run in BASE, not in NEW                                  (gates, unless the runs
                     selected different cases: then the warning says so)
slower               a ``cuda`` timing past the noise floor: NEW/BASE above ``--slower`` *and* more than
                     ``--min-us`` (kernel time) or ``--min-run-s`` (whole-case time, when a run has no
                     kernel time) slower; never a model/compile-backend timing
SASS changed         both runs recorded SASS opcodes and they differ
newly flaky          ``flake`` in NEW (passed on a retry), not in BASE
newly skipped        ``skip`` or ``not-supported`` in NEW, run in BASE
status changed       any other change of status (e.g. ``fail`` -> ``error``)
newly passing        bad in BASE, judged and not bad in NEW
new in new run       in NEW, not in BASE
==================== ===============================================================================

Every case present in both runs whose status changed also has a ``transition`` (``pass -> timeout``,
``fail -> pass``, ...), counted per pair with what the pair means (:func:`transition_kind`: a bad
status turning good is an *improvement*, which a baseline still lists as a known failure; the
names live with the statuses in :mod:`mmacts.cases.status`), in
``compare.json`` and on the page: the practice of CTS runners, which report transitions, not only
new failures.

Exit code 1 when a gating category (``--fail-on``, default ``newly-failing,missing``) is not
empty, else 0; 2 for bad input. The console shows the two runs' metadata, any warning, the
regressions, then a few other changes; the whole table goes to ``compare.csv``, ``compare.html``
and ``compare.json`` (counts, warnings, verdict), whose paths are printed.
"""

from __future__ import annotations

import html
import json
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from mmacts.cases.status import BAD, FLAKE, NOT_RUN, transition_kind
from mmacts.report.atomic import write_atomic, write_text_atomic
from mmacts.report.html import _CSS
from mmacts.report.run_dir import ReportInputError, read_run

CATEGORIES: tuple[tuple[str, str], ...] = (
    ("newly-failing", "newly failing"),
    ("missing", "missing from new run"),
    ("slower", "slower"),
    ("sass-changed", "SASS changed"),
    ("newly-flaky", "newly flaky"),
    ("newly-skipped", "newly skipped"),
    ("status-changed", "status changed"),
    ("newly-passing", "newly passing"),
    ("new", "new in new run"),
)
LABEL = dict(CATEGORIES)
DEFAULT_FAIL_ON = ("newly-failing", "missing")
SELECTION_KEYS = ("suites", "level", "k", "rows", "arch", "shard")
"""run.json options that decide which cases a run selects."""


def parse_fail_on(text: str) -> tuple[str, ...]:
    keys = tuple(x.strip() for x in text.split(",") if x.strip())
    if keys == ("none",):
        return ()
    bad = [k for k in keys if k not in LABEL]
    if bad:
        raise ValueError(f"--fail-on: unknown category {bad[0]!r}; known: {', '.join(LABEL)} (or none)")
    return keys


def _selection(meta: dict[str, Any]) -> dict[str, Any]:
    opts = meta.get("options") or {}
    sel = {k: opts.get(k) or None for k in SELECTION_KEYS}
    if sel["suites"]:
        sel["suites"] = sorted(sel["suites"])
    return sel


def selection_warnings(mb: dict[str, Any], mn: dict[str, Any], only_base: int, only_new: int,
                       backends: tuple[set[str], set[str]]) -> list[str]:
    """Say when the two runs did not select the same cases (or ran them on different backends)."""
    out = []
    sb, sn = _selection(mb), _selection(mn)
    differ = [f"{k} {sb[k]!r} vs {sn[k]!r}" for k in SELECTION_KEYS if sb[k] != sn[k]]
    if differ:
        out.append("the runs selected different cases (" + "; ".join(differ) + f"): {only_base} only in BASE, "
                   f"{only_new} only in NEW")
    elif only_base or only_new:
        out.append(f"the runs have different cases for the same selection: {only_base} only in BASE, "
                   f"{only_new} only in NEW (another suite version, or a run that did not finish?)")
    bb, bn = backends
    if bb and bn and bb != bn:
        out.append(f"the runs used different backends ({', '.join(sorted(bb))} vs {', '.join(sorted(bn))}): "
                   f"a model result is not a hardware result")
    return out


def _time_us(df: pd.DataFrame, side: str, use_kernel: pd.Series) -> pd.Series:
    return df[f"kernel_us_{side}"].where(use_kernel, df[f"run_s_{side}"] * 1e6)


def classify(db: pd.DataFrame, dn: pd.DataFrame, *, slower: float = 1.5, min_us: float = 5.0,
             min_run_s: float = 0.05) -> pd.DataFrame:
    """One row per case of either run with a boolean column per category, ``change`` (the first)
    and ``also`` (the others)."""
    cols = ["case_id", "suite", "status", "backend", "sass_opcodes", "kernel_us", "run_s", "message"]
    j = db[cols].merge(dn[cols], on="case_id", how="outer", suffixes=("_base", "_new"))
    j["suite"] = j["suite_new"].fillna(j["suite_base"])
    j = j.drop(columns=["suite_base", "suite_new"])
    sb = j["status_base"].astype("object").fillna("absent")
    sn = j["status_new"].astype("object").fillna("absent")
    both = (sb != "absent") & (sn != "absent")
    judged_ok = ~sn.isin([*BAD, *NOT_RUN, "absent"])
    flags: dict[str, pd.Series] = {}
    flags["newly-failing"] = both & ~sb.isin(BAD) & sn.isin(BAD)
    flags["missing"] = (sb != "absent") & (sn == "absent")
    # timings: hardware only, both runs judged not bad, past the ratio and the absolute floor
    use_kernel = j["kernel_us_base"].notna() & j["kernel_us_new"].notna()
    tb, tn = _time_us(j, "base", use_kernel), _time_us(j, "new", use_kernel)
    floor = use_kernel.map({True: min_us, False: min_run_s * 1e6})
    hw = (j["backend_base"].astype("object") == "cuda") & (j["backend_new"].astype("object") == "cuda")
    slow = hw & both & ~sb.isin(BAD) & judged_ok & (tb > 0) & (tn > tb * slower) & ((tn - tb) > floor)
    flags["slower"] = slow.fillna(False).astype(bool)
    sass_b = j["sass_opcodes_base"].astype("object").fillna("")
    sass_n = j["sass_opcodes_new"].astype("object").fillna("")
    flags["sass-changed"] = both & (sass_b != "") & (sass_n != "") & (sass_b != sass_n)
    flags["newly-flaky"] = both & (sn == FLAKE) & ~sb.isin([FLAKE, *BAD])
    flags["newly-skipped"] = both & sn.isin(NOT_RUN) & ~sb.isin(NOT_RUN)
    flags["newly-passing"] = both & sb.isin(BAD) & judged_ok
    flags["new"] = (sb == "absent") & (sn != "absent")
    named = pd.concat([flags[k] for k in flags], axis=1).any(axis=1)
    flags["status-changed"] = both & (sb != sn) & ~named
    j["time_base_us"], j["time_new_us"] = tb.where(hw), tn.where(hw)
    j["ratio"] = (tn / tb).where(hw & (tb > 0)).astype("float64").round(3)  # object dtype when no times (pandas 2.1)
    for key, _ in CATEGORIES:
        j[key] = flags[key].astype(bool).to_numpy()
    keys = [k for k, _ in CATEGORIES]
    j["change"] = [next((LABEL[k] for k in keys if row[k]), "") for row in j[keys].to_dict("records")]
    j["also"] = [", ".join(LABEL[k] for k in keys if row[k] and LABEL[k] != ch)
                 for row, ch in zip(j[keys].to_dict("records"), j["change"], strict=True)]
    return j


def transitions(diff: pd.DataFrame) -> pd.DataFrame:
    """Cases whose status changed, counted per ``base -> new`` pair, with the pair's meaning."""
    both = diff[diff["status_base"].notna() & diff["status_new"].notna()
                & (diff["status_base"].astype(str) != diff["status_new"].astype(str))]
    if both.empty:
        return pd.DataFrame(columns=["transition", "cases", "meaning"])
    pairs = both["status_base"].astype(str) + " -> " + both["status_new"].astype(str)
    counts = pairs.value_counts()
    return pd.DataFrame([(t, int(n), transition_kind(*t.split(" -> "))) for t, n in counts.items()],
                        columns=["transition", "cases", "meaning"])


def _pick(m: dict[str, Any]) -> dict[str, Any]:
    g = m.get("gpu") or {}
    opts = m.get("options") or {}
    sel = " ".join(f"{k}={v}" for k, v in _selection(m).items() if v and k != "suites")
    return {"git": m.get("git_sha"), "start": m.get("start"), "gpu": g.get("name") or "none",
            "cc": g.get("compute_capability"),
            "driver": f"{g.get('kernel_driver') or '?'} (CUDA {g.get('driver') or '?'})",
            "ptxas": (m.get("toolchain") or {}).get("ptxas"), "backend": opts.get("backend"),
            "suites": ",".join(opts.get("suites") or []) or None, "selection": sel or None,
            "complete": m.get("complete")}


def compare_runs(base: Path, new: Path, *, slower: float = 1.5, min_us: float = 5.0, min_run_s: float = 0.05,
                 fail_on: tuple[str, ...] = DEFAULT_FAIL_ON) -> dict[str, Any]:
    """Everything ``mmacts report compare`` shows and writes."""
    mb, db = read_run(base)
    mn, dn = read_run(new)
    j = classify(db, dn, slower=slower, min_us=min_us, min_run_s=min_run_s)
    only_base, only_new = int(j["missing"].sum()), int(j["new"].sum())
    backends = (set(db["backend"].dropna()) - {"<NA>"}, set(dn["backend"].dropna()) - {"<NA>"})
    warnings = selection_warnings(mb, mn, only_base, only_new, backends)
    same_selection = _selection(mb) == _selection(mn)
    gating = [k for k in fail_on if not (k == "missing" and not same_selection)]
    counts = {k: int(j[k].sum()) for k, _ in CATEGORIES}
    regressions = {k: counts[k] for k in gating if counts[k]}
    order = {k: i for i, (k, _) in enumerate(CATEGORIES)}
    j["regression"] = j[gating].any(axis=1) if gating else False
    first = [next((k for k, lab in CATEGORIES if lab == c), "") for c in j["change"]]
    j["_rank"] = [(0 if reg else 1, order.get(k, 99)) for reg, k in zip(j["regression"], first, strict=True)]
    diff = j[j["change"] != ""].sort_values(["_rank", "case_id"]).reset_index(drop=True)
    moved = diff["status_base"].notna() & diff["status_new"].notna() & (
        diff["status_base"].astype(str) != diff["status_new"].astype(str))
    diff["transition"] = (diff["status_base"].astype(str) + " -> " + diff["status_new"].astype(str)).where(moved, "")
    keep = ["case_id", "change", "also", "regression", "transition", "suite", "status_base", "status_new",
            "backend_base",
            "backend_new", "sass_opcodes_base", "sass_opcodes_new", "time_base_us", "time_new_us", "ratio",
            "message_base", "message_new"]
    meta = pd.DataFrame({"base": _pick(mb), "new": _pick(mn)})
    return {"diff": diff[keep], "meta": meta, "counts": counts, "regressions": regressions,
            "transitions": transitions(diff),
            "warnings": warnings, "gating": gating, "fail_on": list(fail_on), "cases": (len(db), len(dn)),
            "base": str(base), "new": str(new)}


def _line(row: dict[str, Any], width: int = 150) -> str:
    st = f"{row['status_base'] if pd.notna(row['status_base']) else '-'} -> " \
         f"{row['status_new'] if pd.notna(row['status_new']) else '-'}"
    extra = ""
    if row["change"] == "slower" and pd.notna(row["ratio"]):
        extra = f"  {row['time_base_us']:.1f} -> {row['time_new_us']:.1f} us ({row['ratio']:.2f}x)"
    elif row["change"] == "SASS changed":
        extra = f"  {row['sass_opcodes_base']} -> {row['sass_opcodes_new']}"
    else:
        msg = row["message_new"] if pd.notna(row["message_new"]) else ""
        extra = f"  {str(msg).splitlines()[0]}" if msg else ""
    also = f" [+{row['also']}]" if row["also"] else ""
    return f"  {row['change']:22s}{st:22s}{row['case_id']}{also}{extra}"[:width]


def console(result: dict[str, Any], files: list[Path], per_category: int = 15, others: int = 10) -> list[str]:
    """What ``compare`` prints on stdout (warnings go to stderr separately)."""
    diff, counts = result["diff"], result["counts"]
    with pd.option_context("display.width", 200, "display.max_colwidth", 50):
        lines = [result["meta"].to_string(na_rep="-"), ""]
    nb, nn = result["cases"]
    lines.append(f"{nb} cases in BASE, {nn} in NEW")
    regs = result["regressions"]
    gated = ", ".join(LABEL[k] for k in result["gating"]) or "nothing (--fail-on none)"
    if regs:
        lines.append("REGRESSIONS: " + ", ".join(f"{v} {LABEL[k]}" for k, v in regs.items()))
        for key in regs:
            part = diff[(diff["change"] == LABEL[key]) | diff["also"].str.contains(LABEL[key], regex=False)]
            for row in part.head(per_category).to_dict("records"):
                lines.append(_line(row))
            if len(part) > per_category:
                lines.append(f"  ... {len(part) - per_category} more {LABEL[key]}")
    else:
        lines.append(f"no regressions (gated on: {gated})")
    if "missing" in result["fail_on"] and "missing" not in result["gating"]:
        lines.append("  (missing cases do not gate: the runs selected different cases)")
    rest = {k: v for k, v in counts.items() if v and k not in regs}
    if rest:
        lines.append("other changes: " + ", ".join(f"{v} {LABEL[k]}" for k, v in rest.items()))
        part = diff[~diff["regression"].astype(bool)]
        for row in part.head(others).to_dict("records"):
            lines.append(_line(row))
        if len(part) > others:
            lines.append(f"  ... {len(part) - others} more")
    elif not regs:
        lines.append("no changes")
    tr = result.get("transitions")
    if tr is not None and len(tr):
        lines.append("status transitions: " + ", ".join(f"{r.cases} {r.transition} ({r.meaning.split(' (')[0]})"
                                                        for r in tr.itertuples()))
    lines.append(f"whole table ({len(diff)} changed cases):")
    lines += [f"  {p}" for p in files]
    return lines


def _arrow(a: Any, b: Any) -> str:
    a, b = ("-" if pd.isna(x) or x == "" else str(x) for x in (a, b))
    return a if a == b else f"{a} → {b}"


def _html_table(diff: pd.DataFrame, limit: int = 2000) -> str:
    """The changed cases, one compact row each (every column is in compare.csv)."""
    rows = []
    for r in diff.head(limit).to_dict("records"):
        time = (f"{r['time_base_us']:.1f} → {r['time_new_us']:.1f} us ({r['ratio']:.2f}x)"
                if pd.notna(r["ratio"]) else "")
        msg = r["message_new"] if pd.notna(r["message_new"]) else (r["message_base"] if pd.notna(r["message_base"])
                                                                    else "")
        change = r["change"] + (f" (+ {r['also']})" if r["also"] else "")
        cells = [r["case_id"], change, _arrow(r["status_base"], r["status_new"]),
                 _arrow(r["sass_opcodes_base"], r["sass_opcodes_new"]), time, str(msg)[:400]]
        cls = " class='fail'" if r["regression"] else ""
        rows.append(f"<tr{cls}>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in cells) + "</tr>")
    head = "".join(f"<th>{h}</th>" for h in ("case", "change", "status", "SASS", "time (cuda)", "message"))
    more = (f"<p>the first {limit} are shown; every one is in compare.csv</p>" if len(diff) > limit else "")
    return f"{more}<table class='wide'><tr>{head}</tr>{''.join(rows)}</table>"


def page(result: dict[str, Any]) -> str:
    """compare.html: metadata, warnings, counts (regressions first), then every changed case."""
    diff = result["diff"]
    warn = "".join(f"<p class='banner'>warning: {html.escape(w)}</p>" for w in result["warnings"])
    regs = result["regressions"]
    verdict = ("<p class='fail'>REGRESSIONS: " + html.escape(", ".join(f"{v} {LABEL[k]}" for k, v in regs.items()))
               + "</p>") if regs else "<p class='pass'>no regressions</p>"
    counts = pd.DataFrame([(LABEL[k], v, "yes" if k in result["gating"] else "")
                           for k, v in result["counts"].items() if v], columns=["change", "cases", "gates"])
    table = _html_table(diff) if len(diff) else "<p>no changes</p>"
    return ("<!doctype html><html><head><meta charset='utf-8'><title>mmacts compare</title>"
            f"<style>{_CSS}</style></head><body><h1>mmacts compare</h1>"
            f"<p>BASE {html.escape(result['base'])}<br>NEW {html.escape(result['new'])}</p>"
            f"{result['meta'].to_html(na_rep='')}{warn}{verdict}"
            + (counts.to_html(index=False) if len(counts) else "")
            + (f"<h2>Status transitions</h2>{result['transitions'].to_html(index=False)}"
               if len(result.get("transitions", [])) else "")
            + f"<h2>{len(diff)} changed cases</h2>{table}</body></html>")


def write(result: dict[str, Any], out: Path) -> list[Path]:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    csv_p, html_p, json_p = out / "compare.csv", out / "compare.html", out / "compare.json"
    write_atomic(csv_p, lambda f: result["diff"].to_csv(f, index=False))
    write_text_atomic(html_p, page(result))
    summary = {k: result[k] for k in ("base", "new", "counts", "regressions", "warnings", "gating", "fail_on")}
    summary["cases"] = {"base": result["cases"][0], "new": result["cases"][1]}
    summary["transitions"] = {r.transition: {"cases": r.cases, "meaning": r.meaning}
                              for r in result["transitions"].itertuples()}
    summary["exit"] = 1 if result["regressions"] else 0
    write_text_atomic(json_p, json.dumps(summary, indent=2))
    return [csv_p, html_p, json_p]


def add_arguments(c: Any) -> None:
    c.add_argument("base", type=Path)
    c.add_argument("new", type=Path)
    c.add_argument("--out", type=Path, default=None, help="where compare.csv/html/json go (default: NEW)")
    c.add_argument("--slower", type=float, default=1.5, help="time ratio NEW/BASE that counts as slower (1.5)")
    c.add_argument("--min-us", type=float, default=5.0,
                   help="...and the kernel time must grow by more than this many microseconds (5)")
    c.add_argument("--min-run-s", type=float, default=0.05,
                   help="...or, without kernel times, the case time by more than this many seconds (0.05)")
    c.add_argument("--fail-on", default=",".join(DEFAULT_FAIL_ON),
                   help=f"categories that make the exit code 1 (default {','.join(DEFAULT_FAIL_ON)}; "
                        f"known: {', '.join(LABEL)}; none)")


def run(args: Any) -> int:
    """The ``compare`` subcommand (ReportInputError/OSError are turned into exit 2 by the caller)."""
    try:
        fail_on = parse_fail_on(args.fail_on)
    except ValueError as exc:
        raise ReportInputError(str(exc)) from exc
    if args.slower < 1.0 or args.min_us < 0 or args.min_run_s < 0:
        raise ReportInputError("--slower must be >= 1, --min-us and --min-run-s >= 0")
    result = compare_runs(args.base, args.new, slower=args.slower, min_us=args.min_us, min_run_s=args.min_run_s,
                          fail_on=fail_on)
    for w in result["warnings"]:
        print(f"mmacts report: warning: {w}", file=sys.stderr)
    files = write(result, args.out or args.new)
    print("\n".join(console(result, files)))
    return 1 if result["regressions"] else 0
