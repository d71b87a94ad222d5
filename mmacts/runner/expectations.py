"""Expectations (a baseline) per device / driver / toolchain, flakes and retries: CI gating for ``mmacts run``.

A baseline is a small CSV file (``#`` lines are comments), one line per case that does not pass::

    # mmacts expectations
    # made on: NVIDIA H200 sm_90 / driver 570.86 (CUDA 12.8) / ptxas 13.5.37 / backend cuda
    case_id,expect,reason,bug,device,driver,ptxas
    mma_sync.m16n8k32.mxf4.2X.ue8m0/e2m1xe2m1/bida0-tida0-bidb0-tidb0/exact,fail,"12 mismatches, first ...",,,,
    probes.final_rounding.*,flake,intermittent timeout,4711,,580.*,
    hopper.wgmma.m64n64k32.*,skip,hangs the GPU,4712,H100,575.*,

The last four columns are optional (a waiver): the bug it is tracked under and the device / driver /
ptxas it applies to (:data:`COLUMNS`, :meth:`Entry.applies`); a file of three columns is read as before.

``expect`` is ``fail``, ``error``, ``crash`` or ``timeout`` (a known failure with the status it ends with),
``flake`` (any outcome is accepted) or ``skip`` (not run; recorded as ``skip`` with the reason,
which is required). A ``*`` in ``case_id`` matches any text; an exact ID wins over a pattern.
Every case the file does not name is expected to pass (or end ``skip``/``not-supported``/``xfail``/``observed``).

``mmacts run --expectations FILE [--retries N]``: unexpected failures are re-run up to N times; one
that passes on a retry is recorded as ``flake`` with its attempts. The run exits 0 when every
result is what the file expects, 1 on an unexpected fail/error/crash/timeout and on an unexpected pass
(a fixed bug: update the baseline). ``mmacts expectations update RUN [--out FILE]`` writes the
baseline a run implies (keeping FILE's skips, flakes and the entries of cases the run did not select).
"""

from __future__ import annotations

import argparse
import csv
import io
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mmacts.backends import gpu
from mmacts.cases.status import BAD, FLAKE, PASSING, SKIP
from mmacts.core.records import append_jsonl, latest_by_case, read_jsonl
from mmacts.core.suites import suite_names
from mmacts.report import runinfo  # module attribute: tests patch runinfo._toolchain
from mmacts.report.atomic import write_text_atomic
from mmacts.runner.select import Selection, _usage, cases, check_exact_names, substring_hints, suite_cases

EXPECTS = (*BAD, FLAKE, SKIP)
HEADER = ("case_id", "expect", "reason")
SCOPE = ("device", "driver", "ptxas")
COLUMNS = (*HEADER, "bug", *SCOPE)
"""Every column an entry may have: after ``reason`` a waiver's bug id and the device / driver / ptxas it
applies to (each a part of what run.json records, ``*`` any text, case-insensitive; empty: any)."""
UNEXPECTED_FILE = "unexpected.csv"
WAIVED_FILE = "waived.csv"


class ExpectationsError(Exception):
    """A baseline that cannot be read: one line (``FILE:LINE: why``), exit 2."""


@dataclass(frozen=True)
class Entry:
    case_id: str
    expect: str
    reason: str = ""
    line: int = 0
    bug: str = ""
    device: str = ""
    driver: str = ""
    ptxas: str = ""

    @property
    def scope(self) -> dict[str, str]:
        """The device / driver / ptxas this entry is limited to (only those given)."""
        return {k: getattr(self, k) for k in SCOPE if getattr(self, k)}

    def applies(self, env: dict[str, str]) -> bool:
        """Whether this entry is about a run on ``env`` (:func:`env_of`): every scope value given is
        a part of the run's (``*`` any text, case-insensitive)."""
        for key, want in self.scope.items():
            pat = ".*".join(re.escape(p) for p in want.split("*"))
            if not re.search(pat, env.get(key) or "", re.IGNORECASE):
                return False
        return True

    def describe(self) -> str:
        """``CASE (line N; bug B; device D)``: how a report names an entry."""
        extra = [f"line {self.line}"] if self.line else []
        extra += [f"bug {self.bug}"] if self.bug else []
        extra += [f"{k} {v}" for k, v in self.scope.items()]
        return f"{self.case_id} ({'; '.join(extra)})" if extra else self.case_id


@dataclass
class Baseline:
    entries: dict[str, Entry] = field(default_factory=dict)
    patterns: list[tuple[re.Pattern[str], Entry]] = field(default_factory=list)
    made_on: str = ""
    path: str = ""
    stale: list[Entry] = field(default_factory=list)
    """Entries that match no case of this checkout's suites at any level (set by :func:`prepare_run`)."""
    def lookup(self, case_id: str) -> Entry | None:
        e = self.entries.get(case_id)
        if e is not None:
            return e
        for pat, entry in self.patterns:
            if pat.fullmatch(case_id):
                return entry
        return None

    def all_entries(self) -> list[Entry]:
        return sorted([*self.entries.values(), *(e for _, e in self.patterns)], key=lambda e: e.case_id)

    def for_env(self, env: dict[str, str]) -> tuple[Baseline, list[Entry]]:
        """(the baseline of the entries that apply to a run on ``env``, the entries that do not)."""
        out = Baseline(made_on=self.made_on, path=self.path)
        other: list[Entry] = []
        for cid, e in self.entries.items():
            if e.applies(env):
                out.entries[cid] = e
            else:
                other.append(e)
        for pat, e in self.patterns:
            if e.applies(env):
                out.patterns.append((pat, e))
            else:
                other.append(e)
        return out, sorted(other, key=lambda e: e.line)

    def matching_none(self, case_ids: Iterable[str]) -> list[Entry]:
        """Entries (exact or pattern) that match none of ``case_ids``: stale, or a typo; either
        way an entry that silently does nothing (a ``skip`` for a GPU-hanging case among them)."""
        ids = set(case_ids)
        stale = [e for cid, e in self.entries.items() if cid not in ids]
        stale += [e for pat, e in self.patterns if not any(pat.fullmatch(c) for c in ids)]
        return sorted(stale, key=lambda e: e.line)

    @property
    def has_extra_columns(self) -> bool:
        return any(e.bug or e.scope for e in self.all_entries())


def _pattern(case_id: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(p) for p in case_id.split("*")))


def parse(text: str, path: str = "<expectations>") -> Baseline:
    """Read a baseline; every problem is an :class:`ExpectationsError` naming the file and line."""
    base = Baseline(path=path)
    rows: list[tuple[int, list[str]]] = []
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("# made on:"):
            base.made_on = line.split(":", 1)[1].strip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            (row,) = list(csv.reader([line]))
        except (csv.Error, ValueError) as exc:
            raise ExpectationsError(f"{path}:{n}: not a CSV line ({exc})") from exc
        rows.append((n, [c.strip() for c in row]))
    names: tuple[str, ...] = COLUMNS
    if rows and tuple(rows[0][1][:2]) == HEADER[:2]:
        n, names = rows[0][0], tuple(rows[0][1])
        unknown = [c for c in names if c not in COLUMNS]
        if unknown or len(set(names)) != len(names):
            raise ExpectationsError(f"{path}:{n}: unknown or repeated column {(unknown or list(names))[0]!r} "
                                    f"(columns: {', '.join(COLUMNS)})")
        rows = rows[1:]
    seen: dict[tuple[str, tuple], int] = {}
    for n, row in rows:
        if len(row) < 2 or len(row) > len(names):
            raise ExpectationsError(f"{path}:{n}: expected 'case_id,expect,reason' (then optionally "
                                    f"{','.join(c for c in names if c not in HEADER) or 'nothing'}), "
                                    f"got {len(row)} fields")
        fields = dict(zip(names, row, strict=False))
        case_id, expect, reason = fields["case_id"], fields["expect"], fields.get("reason", "")
        if not case_id:
            raise ExpectationsError(f"{path}:{n}: empty case_id")
        if expect not in EXPECTS:
            raise ExpectationsError(f"{path}:{n}: expect {expect!r} is not one of {', '.join(EXPECTS)}")
        if expect == "skip" and not reason:
            raise ExpectationsError(f"{path}:{n}: a skip needs a reason (third field)")
        entry = Entry(case_id, expect, reason, n, **{k: fields.get(k, "") for k in ("bug", *SCOPE)})
        where = (case_id, tuple(sorted(entry.scope.items())))
        if where in seen:
            raise ExpectationsError(f"{path}:{n}: {case_id} is listed twice (first on line {seen[where]})")
        seen[where] = n
        if "*" in case_id or case_id in base.entries:  # one case for two devices: the second scope as a pattern
            base.patterns.append((_pattern(case_id), entry))
        else:
            base.entries[case_id] = entry
    return base


def load(path: Path) -> Baseline:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ExpectationsError(f"cannot read expectations file {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise ExpectationsError(f"{path}: not a text file") from exc
    return parse(text, str(path))


def made_on(meta: dict[str, Any]) -> str:
    """``NVIDIA H200 sm_90 / driver 570.86 (CUDA 12.8) / ptxas 13.5.37 / backend cuda``: what a baseline is for."""
    g = meta.get("gpu") or {}
    gpu = f"{g.get('name')} {g.get('compute_capability') or ''}".strip() if g.get("usable") else "no GPU"
    driver = f"driver {g.get('kernel_driver') or '-'} (CUDA {g.get('driver') or '-'})" if g.get("usable") else ""
    ptxas = f"ptxas {(meta.get('toolchain') or {}).get('ptxas') or '-'}"
    backend = f"backend {(meta.get('options') or {}).get('backend') or '-'}"
    return " / ".join(x for x in (gpu, driver, ptxas, backend) if x)


def env_of(meta: dict[str, Any]) -> dict[str, str]:
    """What an entry's scope is matched against, from run.json: ``device`` (``NVIDIA B200 sm_100``,
    or ``no GPU``), ``driver`` (``580.65 CUDA 13.0``), ``ptxas`` (``13.5.37``)."""
    g = meta.get("gpu") or {}
    usable = bool(g.get("usable"))
    return {"device": f"{g.get('name') or ''} {g.get('compute_capability') or ''}".strip() if usable else "no GPU",
            "driver": f"{g.get('kernel_driver') or ''} CUDA {g.get('driver') or ''}".strip() if usable else "",
            "ptxas": str((meta.get("toolchain") or {}).get("ptxas") or "")}


def local_env() -> dict[str, str]:
    """:func:`env_of` for this machine, asked directly (the test process applies scoped skips before the
    CLI has written run.json)."""
    g = gpu.probe()
    return env_of({"gpu": {"usable": g.usable, "name": g.name, "compute_capability": g.sm,
                           "kernel_driver": g.kernel_driver, "driver": g.driver_version},
                   "toolchain": runinfo._toolchain()})


# ------------------------------------------------------------------------------------- judging
@dataclass(frozen=True)
class Verdict:
    case_id: str
    expected: str
    got: str
    message: str


def expected_status(baseline: Baseline | None, case_id: str) -> str:
    e = baseline.lookup(case_id) if baseline is not None else None
    return e.expect if e is not None else "pass"


def is_unexpected(expected: str, got: str) -> bool:
    """Does ``got`` contradict the baseline's ``expected`` (``pass`` when the file does not name the case)?"""
    if expected in ("flake", "skip"):
        return False
    if expected == "pass":
        return got in BAD
    # a known failure: the same status is expected; a pass (or a flake: it passed once) is news,
    # and so is another bad status; a case this run did not judge (skip/xfail/observed) is not
    return got != expected and (got in BAD or got in PASSING)


def judge(records: Iterable[dict[str, Any]], baseline: Baseline | None) -> list[Verdict]:
    """Every record that contradicts the baseline: regressions (unexpected fail/error/crash/timeout) first,
    then unexpected passes."""
    out = []
    for r in records:
        exp = expected_status(baseline, r["case_id"])
        if is_unexpected(exp, r.get("status") or ""):
            out.append(Verdict(r["case_id"], exp, r.get("status") or "", str(r.get("message") or "")))
    return sorted(out, key=lambda v: (v.got not in BAD, v.case_id))


def summary(verdicts: list[Verdict], flakes: list[dict[str, Any]], baseline: Baseline | None, run_dir: Path,
            limit: int = 15, info: dict[str, Any] | None = None) -> list[str]:
    """The short console summary of a gated run (lines without a prefix)."""
    lines = []
    info = info or {}
    if baseline is None:
        pass
    elif not verdicts:
        lines.append(f"expectations {baseline.path}: the run matches ({len(baseline.all_entries())} entries)")
    else:
        bad = [v for v in verdicts if v.got in BAD]
        fixed = [v for v in verdicts if v.got in PASSING]
        entries = [v for v in verdicts if v.got in ("stale", "not-applicable")]
        what = ", ".join(x for x in (f"{len(bad)} unexpected fail/error/crash/timeout" if bad else "",
                                     f"{len(fixed)} unexpected pass" if fixed else "",
                                     f"{len(entries)} entries that did nothing (--strict-expectations)"
                                     if entries else "") if x)
        lines.append(f"expectations {baseline.path}: {what}")
        for v in verdicts[:limit]:
            msg = v.message.splitlines()[0][:140] if v.message else ""
            lines.append(f"  {v.got.upper():8s} (expected {v.expected}) {v.case_id}" + (f": {msg}" if msg else ""))
        if len(verdicts) > limit:
            lines.append(f"  ... {len(verdicts) - limit} more")
        lines.append(f"  all of them: {run_dir / UNEXPECTED_FILE}")
        if fixed:
            lines.append(f"  a fixed bug? update the baseline: "
                         f"mmacts expectations update {run_dir} --out {baseline.path}")
    if baseline is not None and info.get("waived"):
        ws = info.get("waived_cases") or []
        lines.append(f"{info['waived']} waived (known, listed in {run_dir / WAIVED_FILE}): " + ", ".join(
            f"{w['case_id']} {w['got']}" + (f" (bug {w['bug']})" if w.get("bug") else "") for w in ws[:5])
            + (" ..." if info["waived"] > 5 else ""))
    if baseline is not None and not info.get("strict"):
        for key, why in (("matching_none", "match no case"), ("not_applicable", "are for a device, driver or "
                                                                "ptxas that did not run here")):
            got = info.get(key) or []
            if got:
                lines.append(f"warning: {len(got)} expectation entries {why}: {'; '.join(got[:3])}"
                             + (" ..." if len(got) > 3 else ""))
    if flakes:
        ids = ", ".join(f"{f['case_id']} ({f.get('attempts')} attempts)" for f in flakes[:5])
        lines.append(f"{len(flakes)} flake(s), passed on a retry: {ids}" + (" ..." if len(flakes) > 5 else ""))
    return lines


def write_unexpected(run_dir: Path, verdicts: list[Verdict]) -> Path:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["case_id", "expected", "got", "message"])
    for v in verdicts:
        w.writerow([v.case_id, v.expected, v.got, v.message])
    path = Path(run_dir) / UNEXPECTED_FILE
    write_text_atomic(path, buf.getvalue())
    return path


# ------------------------------------------------------------------------------------- retries
def retry_unexpected(run_dir: Path, run_again: Callable[[list[str]], int], retries: int,
                     baseline: Baseline | None) -> list[dict[str, Any]]:
    """Re-run unexpected failures up to ``retries`` times (``run_again(extra_pytest_args)`` runs the
    test process once more); append each case's final record with ``attempts``: ``flake`` when it
    passed on a retry, else its last result. Returns the flakes."""
    if retries <= 0:
        return []
    jsonl = Path(run_dir) / "results.jsonl"
    latest = {r["case_id"]: r for r in latest_by_case(read_jsonl(jsonl))}
    todo = sorted(cid for cid, r in latest.items()
                  if (r.get("status") in BAD and not r.get("attempts")
                      and is_unexpected(expected_status(baseline, cid), r["status"])))
    if not todo:
        return []
    history = {cid: [latest[cid]] for cid in todo}
    ids_file = Path(run_dir) / ".retry-ids"
    for attempt in range(2, retries + 2):
        print(f"mmacts: retry {attempt - 1} of {retries}: {len(todo)} unexpected failure(s)", file=sys.stderr)
        ids_file.write_text("\n".join(todo) + "\n")
        seen = sum(1 for _ in read_jsonl(jsonl))
        run_again([f"--mmacts-only={ids_file}"])
        new = {r["case_id"]: r for r in list(read_jsonl(jsonl))[seen:] if r.get("case_id") in history}
        for cid, r in new.items():
            history[cid].append(r)
        todo = [cid for cid in todo if history[cid][-1].get("status") in BAD
                and is_unexpected(expected_status(baseline, cid), history[cid][-1]["status"])]
        if not todo:
            break
    ids_file.unlink(missing_ok=True)
    flakes = []
    for attempts in history.values():
        last = attempts[-1]
        trail = ", ".join(f"{i}: {a.get('status')}" for i, a in enumerate(attempts, 1))
        if last.get("status") not in BAD:
            first = attempts[0]
            first_msg = str(first.get("message") or "").splitlines()[0][:300] if first.get("message") else ""
            rec = dict(last, status="flake", attempts=len(attempts),
                       message=f"flake: passed on attempt {len(attempts)} of {len(attempts)} ({trail}); "
                               f"attempt 1 was {first.get('status')}: {first_msg}")
            flakes.append(rec)
        else:
            rec = dict(last, attempts=len(attempts),
                       message=f"{last.get('message') or ''} [{len(attempts)} attempts: {trail}]")
        append_jsonl(jsonl, rec)
    return flakes


def applying(baseline: Baseline | None, run: dict[str, Any]) -> Baseline | None:
    """The entries of ``baseline`` that apply to ``run`` (run.json): a failure waived only on another
    device is unexpected here, and so is retried like any other."""
    return None if baseline is None else baseline.for_env(env_of(run))[0]


def waived(records: Iterable[dict[str, Any]], baseline: Baseline) -> list[dict[str, Any]]:
    """The cases that did not pass and that the baseline expected so: listed apart in every report
    (a waiver is a decision someone made; it must stay visible, with its bug and reason)."""
    out = []
    for r in records:
        got = str(r.get("status") or "")
        e = baseline.lookup(r["case_id"])
        if e is None or got not in (*BAD, "flake", "skip") or is_unexpected(e.expect, got):
            continue
        if got == "skip" and e.expect != "skip":
            continue  # skipped for another reason (no GPU): not the entry's doing
        out.append({"case_id": r["case_id"], "got": got, "expect": e.expect, "bug": e.bug,
                    "reason": e.reason, "entry": e.case_id if "*" in e.case_id else ""})
    return sorted(out, key=lambda w: w["case_id"])


def gate(run_dir: Path, baseline: Baseline, run: dict[str, Any] | None = None,
         strict: bool = False) -> tuple[list[Verdict], dict[str, Any]]:
    """Judge a finished run against the entries of ``baseline`` that apply to it (their device /
    driver / ptxas scope matches ``run``); write unexpected.csv and waived.csv; what run.json records.

    Entries for another device, driver or ptxas did not apply here ("a waiver whose device never
    ran"): they are named in ``not_applicable``; with ``strict`` each is an unexpected result too,
    as is an entry that matches no case (``matching_none``, found before the run by prepare_run)."""
    records = latest_by_case(read_jsonl(Path(run_dir) / "results.jsonl"))
    applying, elsewhere = baseline.for_env(env_of(run or {}))
    verdicts = judge(records, applying)
    stale = list(getattr(baseline, "stale", []))
    if strict:
        verdicts += [Verdict(e.case_id, e.expect, "stale", f"entry on line {e.line} matches no case")
                     for e in stale]
        verdicts += [Verdict(e.case_id, e.expect, "not-applicable", f"entry on line {e.line} is for "
                             + ", ".join(f"{k} {v}" for k, v in e.scope.items()) + ", which did not run here")
                     for e in elsewhere]
    write_unexpected(run_dir, verdicts)
    waive = waived(records, applying)
    write_waived(run_dir, waive)
    info = {"file": baseline.path, "made_on": baseline.made_on, "entries": len(baseline.all_entries()),
            "unexpected": len(verdicts), "unexpected_fail": sum(v.got in BAD for v in verdicts),
            "unexpected_pass": sum(v.got in PASSING for v in verdicts),
            "strict": strict, "waived": len(waive), "waived_cases": waive[:500],
            "not_applicable": [e.describe() for e in elsewhere], "matching_none": [e.describe() for e in stale]}
    return verdicts, info


def write_waived(run_dir: Path, rows: list[dict[str, Any]]) -> Path:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    cols = ["case_id", "got", "expect", "bug", "reason", "entry"]
    w.writerow(cols)
    for r in rows:
        w.writerow([r[c] for c in cols])
    path = Path(run_dir) / WAIVED_FILE
    write_text_atomic(path, buf.getvalue())
    return path


# ------------------------------------------------------------------------------------- update
_ATTEMPTS = re.compile(r" \[\d+ attempts: [^\]]*\]$")


def from_run(records: Iterable[dict[str, Any]], meta: dict[str, Any], old: Baseline | None,
             source: str) -> tuple[str, int]:
    """The baseline a run implies, as CSV text (sorted by case ID: diffs stay small)."""
    recs = {r["case_id"]: r for r in records}
    entries: dict[tuple[str, tuple], Entry] = {}

    def key(e: Entry) -> tuple[str, tuple]:
        return e.case_id, tuple(sorted(e.scope.items()))

    kept_elsewhere: list[Entry] = []
    if old is not None:  # entries for another device / driver / ptxas: this run says nothing about them
        old, kept_elsewhere = old.for_env(env_of(meta))
    for e in kept_elsewhere:
        entries[key(e)] = e
    for e in old.all_entries() if old is not None else []:
        in_run = "*" not in e.case_id and e.case_id in recs
        if e.expect in ("skip", "flake") or "*" in e.case_id or not in_run:
            entries[key(e)] = e  # skips and flakes stay until a person removes them; so do other selections'
    for cid, r in recs.items():
        st = str(r.get("status") or "")
        known = old.lookup(cid) if old is not None else None
        if known is not None and (known.expect in ("skip", "flake") or ("*" in known.case_id and known.expect == st)):
            continue
        reason = " ".join(_ATTEMPTS.sub("", str(r.get("message") or "")).split())[:160]
        carry = {k: getattr(known, k) for k in ("bug", *SCOPE)} if known is not None and known.expect == st else {}
        if st in BAD:
            new = Entry(cid, st, reason, **carry)
            entries[key(new)] = new
        elif st == "flake":
            new = Entry(cid, "flake", reason)
            entries[key(new)] = new
        elif st == "skip" and str(r.get("message") or "").startswith("expectations: "):
            new = Entry(cid, "skip", str(r["message"])[len("expectations: "):])
            entries[key(new)] = new
    buf = io.StringIO()
    buf.write("# mmacts expectations: cases that do not pass on this device / driver / toolchain\n")
    buf.write(f"# made on: {made_on(meta)}\n")
    opts = meta.get("options") or {}
    buf.write(f"# from: {source} (level {opts.get('level')}, suites {','.join(opts.get('suites') or [])}, "
              f"{meta.get('start')})\n")
    buf.write("# expect: fail|error|timeout (known failure) | flake (any outcome) | skip (not run; reason required)\n")
    w = csv.writer(buf, lineterminator="\n")
    wide = any(e.bug or e.scope for e in entries.values())  # the waiver columns only where a waiver has them
    w.writerow(COLUMNS if wide else HEADER)
    for e in sorted(entries.values(), key=lambda e: (e.case_id, sorted(e.scope.items()))):
        w.writerow([e.case_id, e.expect, e.reason, *((e.bug, *(getattr(e, k) for k in SCOPE)) if wide else ())])
    return buf.getvalue(), len(entries)


def main(argv: list[str]) -> int:
    """``mmacts expectations update RUN [--out FILE]`` and ``mmacts expectations check FILE``."""
    p = argparse.ArgumentParser(prog="mmacts expectations")
    sub = p.add_subparsers(dest="cmd", required=True)
    u = sub.add_parser("update", help="write the baseline a finished run implies")
    u.add_argument("run", type=Path)
    u.add_argument("--out", type=Path, default=None,
                   help="baseline file to write (its skips and flakes are kept); default: print it")
    c = sub.add_parser("check", help="read a baseline and say what it holds")
    c.add_argument("file", type=Path)
    try:
        args = p.parse_args(argv)
    except SystemExit as exc:
        return 0 if exc.code in (0, None) else 2
    try:
        if args.cmd == "check":
            b = load(args.file)
            counts: dict[str, int] = {}
            for e in b.all_entries():
                counts[e.expect] = counts.get(e.expect, 0) + 1
            print(f"{args.file}: {len(b.all_entries())} entries "
                  f"({', '.join(f'{v} {k}' for k, v in sorted(counts.items())) or 'every case expected to pass'})"
                  + (f"; made on {b.made_on}" if b.made_on else ""))
            return 0
        from mmacts.report.run_dir import ReportInputError, read_meta, run_records  # pandas: not at the CLI's start

        try:
            meta = read_meta(args.run)
            if meta.get("complete") is not True:
                raise ReportInputError(f"{args.run}: the run did not complete; finish it first "
                                       f"(mmacts run --resume {args.run})")
            records = run_records(args.run)
        except ReportInputError as exc:
            raise ExpectationsError(str(exc)) from exc
        old = load(args.out) if args.out is not None and args.out.exists() else None
        text, n = from_run(records, meta, old, str(args.run))
        if args.out is None:
            sys.stdout.write(text)
            return 0
        try:
            write_text_atomic(args.out, text)
        except OSError as exc:
            raise ExpectationsError(f"cannot write {args.out}: {exc.strerror or exc}") from exc
        print(f"mmacts: {n} entries", file=sys.stderr)
        print(args.out)
        return 0
    except ExpectationsError as exc:
        print(f"mmacts expectations: error: {exc}", file=sys.stderr)
        return 2




# ------------------------------------------------------------------------------------- mmacts run
def prepare_run(suites: list[str], level: str, ns: argparse.Namespace, expect_file: str | None,
                retries: int, strict: bool = False) -> tuple[Any, Baseline | None]:
    """Check a run's selection and baseline before anything is started or written (bad input: UsageError).
    ``strict`` (``--strict-expectations``): an entry that matches no case of any suite at any level is
    such bad input (a stale ``skip`` would silently leave a GPU-hanging case in the run)."""
    sel = Selection.from_args(ns)
    check_exact_names(suites, level, sel)
    if retries < 0:
        raise _usage(f"--retries must be 0 or more, got {retries}")
    baseline = None
    if expect_file:
        try:
            baseline = load(Path(expect_file))
        except ExpectationsError as exc:
            raise _usage(str(exc)) from exc
        baseline.stale = baseline.matching_none(all_case_ids())
        if strict and baseline.stale:
            e = baseline.stale[0]
            raise _usage(f"{baseline.path}:{e.line}: {e.case_id} matches no case of any suite at any level"
                         + (f" (and {len(baseline.stale) - 1} more entries)" if len(baseline.stale) > 1 else "")
                         + "; --strict-expectations refuses entries that do nothing")
    if sel.k or sel.rows or sel.arch:
        selected = list(cases(suites, level, sel))  # what list shows; pytest selects the same
        if not selected:
            raise _usage(f"{sel.describe()} selects no case (suites {', '.join(suites)}, level {level})")
        for hint in substring_hints(sel.k, selected):
            print(f"mmacts: note: {hint}", file=sys.stderr)
    return sel, baseline


def all_case_ids() -> list[str]:
    """Every case ID of every suite of this checkout (the full level holds the others' cases)."""
    out = []
    for name in suite_names():
        out += [c.case_id for c in suite_cases(name, "full")]
    return out


def check_made_on(baseline: Baseline | None, run: dict[str, Any]) -> None:
    """Warn when the baseline was made on another device, driver, toolchain or backend."""
    if baseline is not None and baseline.made_on and baseline.made_on != made_on(run):
        print(f"mmacts: warning: {baseline.path} was made on {baseline.made_on}; this run: {made_on(run)}",
              file=sys.stderr)
