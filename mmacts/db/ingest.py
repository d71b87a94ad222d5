"""``mmacts db ingest RUN...``: run directories -> the store.

One run is one transaction: its ``runs`` row, the cases, devices and configs it introduces,
one ``results`` row per case, the per-run rollups and its register observations are committed
together or not at all (a killed ingest leaves nothing of that run). The ``runs`` row goes in
first with ``ON CONFLICT DO NOTHING``: a run that is there already (this host ingested it before,
or another host is ingesting it right now and commits first) is skipped, so ingesting the same
run twice adds nothing. Dimension rows use deterministic keys (hashes of what they name), so
hosts need no shared sequence; PostgreSQL deadlocks or serialization failures are retried.
"""

from __future__ import annotations

import datetime as _dt
import fnmatch
import functools
import hashlib
import json
import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mmacts.ambiguity import load_register
from mmacts.ambiguity.observe import _answer
from mmacts.cases.status import NOT_RUN
from mmacts.db.schema import BAD_CODES, JUDGED_CODES, ROLLUP_STATUSES, STATUS_CODE, rollup_column
from mmacts.db.store import Store
from mmacts.report.frame import to_frame
from mmacts.report.run_dir import ReportInputError, read_meta, run_records

CASE_COLUMNS = ("suite", "instruction", "spec_rows", "arch", "level", "expect", "compare_mode")
RESULT_COLUMNS = ("backend", "executor", "mismatches", "max_abs_err", "max_ulp_err", "first_mismatch",
                  "compile_s", "run_s", "kernel_us", "sass_opcodes", "ptxas_version", "observation", "message")
RETRIES = 8
PAUSE_ENV = "MMACTS_DB_TEST_PAUSE_S"
"""Test hook: sleep this long inside the transaction, before commit (the kill test kills it there)."""


class IngestError(Exception):
    """A run directory that cannot be ingested: one line."""


@functools.lru_cache(maxsize=1 << 20)
def key64(*parts: Any) -> int:
    """A signed 64-bit key from what a row names (stable across hosts, no sequence needed)."""
    h = hashlib.sha1("\x1f".join("" if p is None else str(p) for p in parts).encode()).digest()
    return int.from_bytes(h[:8], "big", signed=True)


def run_identity(meta: dict[str, Any]) -> str:
    """What makes a run that run: host, first start, first command and options (kept by --resume)."""
    ident = {k: meta.get(k) for k in ("host", "start", "command", "options")}
    return hashlib.sha256(json.dumps(ident, sort_keys=True, default=str).encode()).hexdigest()[:32]


def _utc(ts: str | None) -> _dt.datetime | None:
    if not ts:
        return None
    t = _dt.datetime.fromisoformat(str(ts).replace("Z", "+00:00"))
    return (t.astimezone(_dt.timezone.utc) if t.tzinfo else t).replace(tzinfo=None)


def _str(v: Any) -> str | None:
    try:
        if v is None or pd.isna(v):
            return None
    except (TypeError, ValueError):  # a list or dict: not a missing value
        pass
    return str(v)


@dataclass
class Outcome:
    source: str
    run_uid: str
    added: bool
    cases: int
    note: str = ""


# ---------------------------------------------------------------- the register's matches
_MATCHES: dict[str, tuple[str, ...]] = {}
_ENTRIES: list[tuple[str, re.Pattern]] | None = None


def _entry_regex(patterns: tuple[str, ...]) -> re.Pattern:
    """One regex for ``observe.pattern_matches`` over all of an entry's ``decided_by`` items: the
    item itself, a dotted extension of it (``probes.neab`` names ``probes.neab.<path>``), or a glob."""
    alts = [f"(?:{re.escape(p)}(?:\\..*)?\\Z)|(?:{fnmatch.translate(p)})" for p in patterns]
    return re.compile("|".join(alts) or "(?!)", re.DOTALL)


def _entries_for(case_id: str) -> tuple[str, ...]:
    """IDs of the register entries whose ``decided_by`` names ``case_id``."""
    global _ENTRIES
    if _ENTRIES is None:
        try:
            _ENTRIES = [(e.id, _entry_regex(tuple(e.decided_by))) for e in load_register().entries]
        except Exception:  # no register in this checkout: runs still ingest, without observations
            _ENTRIES = []
    got = _MATCHES.get(case_id)
    if got is None:
        got = tuple(eid for eid, rx in _ENTRIES if rx.match(case_id))
        _MATCHES[case_id] = got
    return got


@dataclass
class CaseList:
    """What depends only on a run's case list (IDs, their attributes): computed once per distinct
    list and reused, since a fleet runs the same selection night after night."""

    case_keys: np.ndarray
    cases: pd.DataFrame          # dimension rows
    case_tables: pd.DataFrame    # (case_key, tbl)
    ref_rows: np.ndarray         # row index per (row, table) pair
    ref_tbl: np.ndarray          # table code per pair
    tbl_names: list[str]
    obs_rows: np.ndarray         # row index per (row, register entry) pair
    obs_entries: np.ndarray      # entry id per pair


_CASE_LISTS: dict[str, tuple[tuple, CaseList]] = {}


def _table_of(ref: str) -> str:
    m = _TABLE.match(ref)
    return m.group(1) if m else "prose (S...)"


_TABLE = re.compile(r"^(T\d+)\.")


def _fingerprint(df: pd.DataFrame, cols: list[str]) -> str:
    """A digest of the columns' contents (arrow buffers where the strings are arrow-backed)."""
    import pyarrow as pa

    h = hashlib.sha1()
    for c in cols:
        arr = pa.array(df[c].array)
        h.update(f"{c}:{arr.type}:{arr.offset}:{len(arr)}:{arr.null_count};".encode())
        for b in arr.buffers():
            h.update(b"-" if b is None else memoryview(b))
    return h.hexdigest()


def case_list(df: pd.DataFrame) -> CaseList:
    cols = ["case_id", *CASE_COLUMNS]
    h = _fingerprint(df, cols)
    hit = _CASE_LISTS.get(h)
    if hit is not None:
        return hit[1]
    ident = tuple(tuple(df[c].astype(object).where(df[c].notna(), None).tolist()) for c in cols)
    ids = [str(c) for c in ident[0]]
    keys = np.array([key64("case", c) for c in ids], dtype=np.int64)
    cases = pd.DataFrame({"case_key": keys, "case_id": ids,
                          **{c: pd.Series(ident[1 + i], dtype=object) for i, c in enumerate(CASE_COLUMNS)}})
    names: dict[str, int] = {}
    rows, tbls = [], []
    for i, spec in enumerate(ident[1 + CASE_COLUMNS.index("spec_rows")]):
        seen = set()
        for ref in str(spec or "").split():
            t = _table_of(ref)
            if t not in seen:
                seen.add(t)
                rows.append(i)
                tbls.append(names.setdefault(t, len(names)))
    tbl_names = list(names)
    ref_rows, ref_tbl = np.array(rows, dtype=np.int64), np.array(tbls, dtype=np.int64)
    case_tables = pd.DataFrame({"case_key": keys[ref_rows], "tbl": [tbl_names[t] for t in tbls]})
    orow, oent = [], []
    for i, c in enumerate(ids):
        for e in _entries_for(c):
            orow.append(i)
            oent.append(e)
    got = CaseList(keys, cases.drop_duplicates("case_key"), case_tables.drop_duplicates(), ref_rows, ref_tbl,
                   tbl_names, np.array(orow, dtype=np.int64), np.array(oent, dtype=object))
    if len(_CASE_LISTS) > 16:
        _CASE_LISTS.clear()
    _CASE_LISTS[h] = (ident, got)
    return got


def observation_rows(df: pd.DataFrame, cl: CaseList, device_keys: np.ndarray) -> pd.DataFrame:
    """The register answers in a run, as ``python -m mmacts.ambiguity.observe`` records them:
    model-backend and skipped rows are left out; one row per entry, device and answer."""
    cols = ["entry_id", "device_key", "case_id", "backend", "answer", "reading", "n_cases"]
    if not len(cl.obs_rows):
        return pd.DataFrame(columns=cols)
    rows = np.unique(cl.obs_rows)
    part = df.iloc[rows]

    def col(c: str) -> np.ndarray:
        return part[c].astype(object).where(part[c].notna(), None).to_numpy()

    case_id, status, message, observation, backend = (col(c) for c in
                                                       ("case_id", "status", "message", "observation", "backend"))
    keep = (backend != "model") & ~np.isin(status.astype(str), NOT_RUN)
    # answers as observe._answer gives them: "status" or "status: message", or a probe's observation JSON
    ans = np.array([f"{st or ''}: {m}" if m else f"{st or ''}" for st, m in zip(status, message, strict=True)],
                   dtype=object)
    reading = np.full(len(rows), "", dtype=object)
    for i in np.flatnonzero(np.array([o is not None and o != "" for o in observation], dtype=bool)):
        try:
            ans[i], reading[i] = _answer({"status": status[i], "message": message[i], "observation": observation[i]})
        except ValueError:
            ans[i] = f"unreadable observation: {observation[i]}"
    pos = np.searchsorted(rows, cl.obs_rows)
    grouped: dict[tuple, list] = {}
    dk = device_keys[rows].tolist()
    kl, al, rl, cl_, bl = keep.tolist(), ans.tolist(), reading.tolist(), case_id.tolist(), backend.tolist()
    for j, eid in zip(pos.tolist(), cl.obs_entries.tolist(), strict=True):
        if not kl[j]:
            continue
        k = (eid, dk[j], al[j])
        g = grouped.get(k)
        if g is None:
            grouped[k] = [eid, dk[j], cl_[j], bl[j], al[j], rl[j], 1]
        else:
            g[-1] += 1
    return pd.DataFrame(list(grouped.values()), columns=cols)


# ---------------------------------------------------------------- one run -> frames
def prepare(meta: dict[str, Any], df: pd.DataFrame, source: str = "") -> dict[str, Any]:
    """Everything one run writes, as rows and frames (no store needed: benchmarks time this apart)."""
    df = df.reset_index(drop=True)
    g = meta.get("gpu") or {}
    tc = meta.get("toolchain") or {}
    opts = meta.get("options") or {}
    host = str(meta.get("host") or "unknown")
    uid = run_identity(meta)
    run_key = key64("run", uid)
    config = {"driver": _str(g.get("driver")), "kernel_driver": _str(g.get("kernel_driver")),
              "cuda_runtime": _str(g.get("cuda_runtime")), "ptxas": _str(tc.get("ptxas"))}
    config_key = key64("config", *config.values())
    started = _utc(meta.get("start"))
    if started is None:
        raise IngestError(f"{source}: run.json has no start time")
    sched = meta.get("scheduler") or {}
    run = {
        "run_key": run_key, "run_uid": uid, "host": host, "gpu_name": _str(g.get("name")),
        "compute_capability": _str(g.get("compute_capability")), "gpu_count": g.get("count"),
        **config, "nvdisasm": _str(tc.get("nvdisasm")), "config_key": config_key,
        "git_sha": _str(meta.get("git_sha")), "level": _str(opts.get("level")),
        "backend": _str(opts.get("backend")), "suites": " ".join(opts.get("suites") or []),
        "k": _str(opts.get("k")), "shard": _str(opts.get("shard")),
        "batch": _str(sched.get("batch")), "scheduler": _str(sched.get("kind")),
        "command": " ".join(map(str, meta.get("command") or [])), "started_at": started,
        "ended_at": _utc(meta.get("end")), "complete": bool(meta.get("complete")), "n_cases": len(df),
        "meta": json.dumps(meta, sort_keys=True, default=str), "source": source,
        "ingested_at": _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None, microsecond=0),
    }
    cl = case_list(df)
    n = len(df)
    # devices: a handful per run
    dev_codes, dev_names = pd.factorize(df["device"].fillna("").astype(str))
    dev_names = [str(d) for d in dev_names] or [""]
    dev_code_keys = np.array([key64("device", host, d) for d in dev_names], dtype=np.int64)
    dev_keys = dev_code_keys[dev_codes] if n else np.zeros(0, dtype=np.int64)
    dev_frame = pd.DataFrame({"device_key": dev_code_keys, "host": host, "device": dev_names,
                              "label": [f"{host}:{d or '(no device)'}" for d in dev_names]})
    st_codes, st_names = pd.factorize(df["status"].fillna("other").astype(str))
    st_map = np.array([STATUS_CODE.get(str(s), STATUS_CODE["other"]) for s in st_names] or [0], dtype=np.int16)
    status = st_map[st_codes] if n else np.zeros(0, dtype=np.int16)
    results = pd.DataFrame({"run_key": np.full(n, run_key, dtype=np.int64), "case_key": cl.case_keys,
                            "device_key": dev_keys, "config_key": np.full(n, config_key, dtype=np.int64),
                            "status": status, **{c: df[c].array for c in RESULT_COLUMNS}}, copy=False)
    if results["mismatches"].dtype.kind not in "iu":
        results["mismatches"] = pd.to_numeric(results["mismatches"], errors="coerce").astype("Int64")
    # rollups the history page reads: per device and suite, per device and spec table
    su_codes, su_names = pd.factorize(df["suite"].fillna("unknown").astype(str))
    ns, nd = max(len(su_names), 1), max(len(dev_names), 1)
    cell = dev_codes.astype(np.int64) * ns + su_codes
    counts = np.zeros((nd * ns, max(STATUS_CODE.values()) + 1), dtype=np.int64)
    np.add.at(counts, (cell, status.astype(np.int64)), 1)
    kern = pd.to_numeric(df["kernel_us"], errors="coerce").to_numpy(dtype=float)
    runs_s = pd.to_numeric(df["run_s"], errors="coerce").to_numpy(dtype=float)
    present = np.flatnonzero(counts.sum(axis=1))
    med = pd.Series(kern).groupby(cell).median()
    rsum = pd.Series(runs_s).groupby(cell).sum(min_count=1)
    suite_stats = pd.DataFrame({
        "run_key": run_key, "device_key": dev_code_keys[present // ns],
        "suite": [str(su_names[c % ns]) for c in present], "n_cases": counts[present].sum(axis=1),
        **{rollup_column(name): counts[present, STATUS_CODE[name]] for name in ROLLUP_STATUSES},
        "kernel_us_median": med.reindex(present).to_numpy(), "run_s_sum": rsum.reindex(present).to_numpy()})
    nt = max(len(cl.tbl_names), 1)
    tcell = dev_codes[cl.ref_rows].astype(np.int64) * nt + cl.ref_tbl
    tstat = status[cl.ref_rows]
    judged = np.isin(tstat, JUDGED_CODES)
    n_judged = np.bincount(tcell[judged], minlength=nd * nt)
    n_pass = np.bincount(tcell[tstat == STATUS_CODE["pass"]], minlength=nd * nt)
    tp = np.flatnonzero(n_judged)
    table_stats = pd.DataFrame({"run_key": run_key, "device_key": dev_code_keys[tp // nt],
                                "tbl": [cl.tbl_names[c % nt] for c in tp], "n_pass": n_pass[tp],
                                "n_judged": n_judged[tp]})
    obs = observation_rows(df, cl, dev_keys)
    obs.insert(0, "run_key", run_key)
    return {"run": run, "config": {"config_key": config_key, **config}, "devices": dev_frame,
            "cases": cl.cases, "case_tables": cl.case_tables,
            "results": results, "run_suite_stats": suite_stats, "run_table_stats": table_stats,
            "observations": obs, "bad": int(np.isin(status, BAD_CODES).sum())}


# ---------------------------------------------------------------- frames -> the store
_CASE_FILL = ("(case_key) DO UPDATE SET suite = excluded.suite, instruction = excluded.instruction, "
              "spec_rows = excluded.spec_rows, arch = excluded.arch, level = excluded.level, "
              "expect = excluded.expect, compare_mode = excluded.compare_mode "
              "WHERE cases.suite IS NULL AND excluded.suite IS NOT NULL")
"""A case first seen only as a crash record (no suite, no spec rows) gets them from a later run."""


def write_prepared(store: Store, p: dict[str, Any] | list[dict[str, Any]]) -> bool | list[bool]:
    """Write prepared runs in one transaction; per run, False if it was there already.

    A batch commits together (a killed ingest leaves none of its runs, never part of one); each
    run's ``runs`` row is inserted first, and a run found there already contributes nothing.
    """
    batch = p if isinstance(p, list) else [p]
    for attempt in range(RETRIES):
        try:
            added = _write_batch(store, batch)
            return added if isinstance(p, list) else added[0]
        except Exception as exc:
            if not _retryable(store, exc) or attempt == RETRIES - 1:
                raise
            time.sleep(0.05 * 2 ** attempt)
    raise AssertionError("unreachable")  # pragma: no cover


def _write_batch(store: Store, batch: list[dict[str, Any]]) -> list[bool]:
    added = [False] * len(batch)
    with store.transaction():
        # in key order: hosts ingesting overlapping batches wait for each other, never deadlock
        for i in sorted(range(len(batch)), key=lambda i: batch[i]["run"]["run_key"]):
            run = batch[i]["run"]
            cols = list(run)
            got = store.execute(f"INSERT INTO runs ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))}) "
                                "ON CONFLICT (run_key) DO NOTHING RETURNING run_key", [run[c] for c in cols])
            added[i] = bool(got)
        new = [p for p, a in zip(batch, added, strict=True) if a]
        if not new:
            return added
        for cfg in {p["config"]["config_key"]: p["config"] for p in new}.values():
            store.execute(f"INSERT INTO configs ({', '.join(cfg)}) VALUES ({', '.join('?' * len(cfg))}) "
                          "ON CONFLICT (config_key) DO NOTHING", list(cfg.values()))
        # dimension rows this connection saw committed need no second look (a fleet's nights
        # repeat one case list); the rest go in with ON CONFLICT, safe against other hosts
        known = store.known

        def fresh(name: str, key: str) -> pd.DataFrame:
            parts = [p[name][~p[name][key].isin(known[name])] for p in new]
            parts = [f for f in parts if len(f)]
            return pd.concat(parts, ignore_index=True).drop_duplicates(key) if parts else new[0][name].iloc[:0]

        devices, cases = fresh("devices", "device_key"), fresh("cases", "case_key")
        store.insert_frame("devices", devices, on_conflict="(device_key) DO NOTHING")
        store.insert_frame("cases", cases, on_conflict=_CASE_FILL)
        if len(cases):
            tables = pd.concat([p["case_tables"] for p in new], ignore_index=True)
            store.insert_frame("case_tables", tables[tables["case_key"].isin(cases["case_key"])].drop_duplicates(),
                               on_conflict="(case_key, tbl) DO NOTHING")
        for name in ("results", "run_suite_stats", "run_table_stats", "observations"):
            frames = [p[name] for p in new if len(p[name])]
            if frames:
                store.insert_frame(name, frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True))
        pause = float(os.environ.get(PAUSE_ENV) or 0)
        if pause:
            print(f"mmacts db: paused inside the transaction of run {new[0]['run']['run_uid']}", flush=True)
            time.sleep(pause)
    known["devices"].update(devices["device_key"].tolist())
    known["cases"].update(cases["case_key"][cases["suite"].notna()].tolist())
    return added


def _retryable(store: Store, exc: Exception) -> bool:
    if store.dialect != "postgres":
        return False
    return getattr(exc, "sqlstate", None) in ("40P01", "40001", "23505")  # deadlock, serialization, race


def read_run_dir(run_dir: Path, allow_incomplete: bool = False) -> tuple[dict[str, Any], pd.DataFrame]:
    """run.json and the results table: results.parquet of a complete run (what write_reports made
    from the jsonl, last record per case), else the jsonl."""
    try:
        meta = read_meta(run_dir)
        if meta.get("complete") is not True and not allow_incomplete:
            raise IngestError(f"{run_dir}: the run did not complete; finish it first "
                              f"(mmacts run --resume {run_dir}) or pass --allow-incomplete")
        pq = Path(run_dir) / "results.parquet"
        if meta.get("complete") is True and pq.is_file():
            try:
                return meta, pd.read_parquet(pq)
            except Exception:
                pass  # fall back to the jsonl
        return meta, to_frame(run_records(run_dir))
    except ReportInputError as exc:
        raise IngestError(str(exc)) from exc


def _read_and_prepare(args: tuple[str, bool]) -> tuple[str, dict[str, Any] | None, str, bool]:
    run_dir, allow_incomplete = args
    try:
        meta, df = read_run_dir(Path(run_dir), allow_incomplete)
        return run_dir, prepare(meta, df, str(Path(run_dir).resolve())), "", bool(meta.get("merged_from"))
    except IngestError as exc:
        return run_dir, None, str(exc), False


def ingest_runs(store: Store, run_dirs: list[Path | str], allow_incomplete: bool = False, batch_rows: int = 120_000,
                workers: int | None = None) -> Iterator[Outcome | IngestError]:
    """Ingest run directories; yields an Outcome (or the IngestError) per directory, in order.

    Reading and preparing runs (CPU) happens in worker processes while this one writes; runs are
    committed in batches of about ``batch_rows`` case rows.
    """
    dirs = [str(d) for d in run_dirs]
    workers = workers if workers is not None else min(len(dirs) - 1, os.cpu_count() or 1, 4)
    items = [(d, allow_incomplete) for d in dirs]
    pool = None
    if workers > 0:
        import concurrent.futures
        import multiprocessing

        pool = concurrent.futures.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
        prepared = pool.map(_read_and_prepare, items, chunksize=1)
    else:
        prepared = map(_read_and_prepare, items)
    try:
        pending: list[tuple[str, dict[str, Any], bool]] = []
        rows = 0

        def flush() -> Iterator[Outcome]:
            added = write_prepared(store, [p for _, p, _ in pending])
            for (d, p, merged), a in zip(pending, added, strict=True):
                note = "" if a else "already in the store"
                if merged:
                    note = (note + "; " if note else "") + "a merged run: ingest its shards or this, not both"
                yield Outcome(d, p["run"]["run_uid"], a, int(p["run"]["n_cases"]), note)
            pending.clear()

        for d, p, err, merged in prepared:
            if p is None:
                yield from flush() if pending else ()
                rows = 0
                yield IngestError(err)
                continue
            pending.append((d, p, merged))
            rows += int(p["run"]["n_cases"])
            if rows >= batch_rows:
                yield from flush()
                rows = 0
        if pending:
            yield from flush()
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)


def ingest_run(store: Store, run_dir: Path, allow_incomplete: bool = False) -> Outcome:
    """Ingest one run directory (IngestError if it cannot be read)."""
    got = next(ingest_runs(store, [run_dir], allow_incomplete, workers=0))
    if isinstance(got, IngestError):
        raise got
    return got
