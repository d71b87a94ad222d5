"""The questions a dashboard keeper asks the store, as DataFrames (the pages and the CLI print them).

Every query runs unchanged on DuckDB and PostgreSQL. The history reads the per-run rollups
(``run_suite_stats``, ``run_table_stats``), whose size grows with runs, not cases; ``flaky`` and
``regressions`` scan ``results`` once for bad statuses and then read the history of only the
(case, device) pairs that ever went bad.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

import pandas as pd

from mmacts.cases.status import transition_kind
from mmacts.db.schema import BAD_CODES, BAD_SUM, JUDGED_CODES, JUDGED_SUM, STATUS_NAME, version
from mmacts.db.store import Store, StoreError

_BAD = "(" + ", ".join(map(str, BAD_CODES)) + ")"
_JUDGED = "(" + ", ".join(map(str, JUDGED_CODES)) + ")"


def parse_date(text: str | None) -> _dt.datetime | None:
    """``2026-11-01`` or an ISO timestamp (UTC) -> naive UTC datetime; None stays None."""
    if not text:
        return None
    try:
        t = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise StoreError(f"not a date: {text!r} (use YYYY-MM-DD)") from exc
    return (t.astimezone(_dt.timezone.utc).replace(tzinfo=None)) if t.tzinfo else t


def _names(df: pd.DataFrame, *cols: str) -> pd.DataFrame:
    for c in cols:
        if c in df.columns:
            df[c] = df[c].map(lambda v: STATUS_NAME.get(int(v), str(v)) if pd.notna(v) else None)
    return df


def _window(since: _dt.datetime | None, until: _dt.datetime | None, col: str = "ru.started_at") -> tuple[str, list]:
    where, params = [], []
    if since is not None:
        where.append(f"{col} >= ?")
        params.append(since)
    if until is not None:
        where.append(f"{col} < ?")
        params.append(until)
    return (" AND ".join(where) or "TRUE"), params


def _device_filter(device: str | None) -> tuple[str, list]:
    """SQL (`` AND ...`` on ``r.device_key``) and its parameter keeping the devices whose label contains
    ``device``; nothing when no device is named."""
    if not device:
        return "", []
    return " AND r.device_key IN (SELECT device_key FROM devices WHERE label LIKE ?)", [f"%{device}%"]


def summary(store: Store) -> dict[str, Any]:
    n = store.execute("SELECT COUNT(*), MIN(started_at), MAX(started_at) FROM runs")[0]
    return {"store": store.url if store.dialect == "duckdb" else "postgresql", "schema_version": version(store),
            "runs": int(n[0]), "first_run": n[1], "last_run": n[2],
            "results": int(store.execute("SELECT COUNT(*) FROM results")[0][0]),
            "cases": int(store.execute("SELECT COUNT(*) FROM cases")[0][0]),
            "devices": int(store.execute("SELECT COUNT(*) FROM devices")[0][0]),
            "observations": int(store.execute("SELECT COUNT(*) FROM observations")[0][0]),
            "size_bytes": store.size_bytes()}


# --------------------------------------------------------------------------- history
def pick_bucket(store: Store, since: _dt.datetime | None, until: _dt.datetime | None, bucket: str) -> str:
    if bucket != "auto":
        return bucket
    where, params = _window(since, until)
    lo, hi = store.execute(f"SELECT MIN(started_at), MAX(started_at) FROM runs ru WHERE {where}", params)[0]
    if lo is None:
        return "day"
    span = (pd.Timestamp(hi) - pd.Timestamp(lo)).days
    return "day" if span <= 92 else "week"


def _bucket_sql(bucket: str) -> str:
    if bucket == "day":
        return "CAST(ru.started_at AS DATE)"
    if bucket in ("week", "month"):
        return f"CAST(date_trunc('{bucket}', ru.started_at) AS DATE)"
    raise StoreError(f"bucket must be day, week, month or auto, not {bucket!r}")


def history(store: Store, since: _dt.datetime | None = None, until: _dt.datetime | None = None,
            bucket: str = "auto", device: str | None = None) -> dict[str, pd.DataFrame]:
    """Pass rates and kernel times per time bucket: per suite, spec table, device and configuration."""
    bucket = pick_bucket(store, since, until, bucket)
    b = _bucket_sql(bucket)
    where, params = _window(since, until)
    if device:
        where += " AND d.label LIKE ?"
        params = [*params, f"%{device}%"]
    dj = "JOIN devices d ON d.device_key = s.device_key"
    judged = JUDGED_SUM
    suite = store.frame(
        f"SELECT {b} AS bucket, s.suite, SUM(s.n_pass) AS n_pass, SUM({judged}) AS n_judged, "
        f"SUM({BAD_SUM}) AS n_bad, SUM(s.n_cases) AS n_cases, "
        f"percentile_cont(0.5) WITHIN GROUP (ORDER BY s.kernel_us_median) AS kernel_us "
        f"FROM run_suite_stats s JOIN runs ru ON ru.run_key = s.run_key {dj} WHERE {where} "
        f"GROUP BY 1, 2 ORDER BY 1, 2", params)
    table = store.frame(
        f"SELECT {b} AS bucket, s.tbl, SUM(s.n_pass) AS n_pass, SUM(s.n_judged) AS n_judged "
        f"FROM run_table_stats s JOIN runs ru ON ru.run_key = s.run_key {dj} WHERE {where} "
        f"GROUP BY 1, 2 ORDER BY 1, 2", params)
    per_device = store.frame(
        f"SELECT {b} AS bucket, d.label AS series, SUM(s.n_pass) AS n_pass, SUM({judged}) AS n_judged, "
        f"percentile_cont(0.5) WITHIN GROUP (ORDER BY s.kernel_us_median) AS kernel_us "
        f"FROM run_suite_stats s JOIN runs ru ON ru.run_key = s.run_key {dj} WHERE {where} "
        f"GROUP BY 1, 2 ORDER BY 1, 2", params)
    per_config = store.frame(
        f"SELECT {b} AS bucket, COALESCE(ru.gpu_name, 'no GPU') || ' | driver ' || "
        f"COALESCE(NULLIF(ru.kernel_driver, ''), '?') || ' (CUDA ' || COALESCE(NULLIF(ru.driver, ''), '?') || ')"
        f" | ptxas ' || COALESCE(ru.ptxas, '?') AS series, "
        f"SUM(s.n_pass) AS n_pass, SUM({judged}) AS n_judged, "
        f"percentile_cont(0.5) WITHIN GROUP (ORDER BY s.kernel_us_median) AS kernel_us "
        f"FROM run_suite_stats s JOIN runs ru ON ru.run_key = s.run_key {dj} WHERE {where} "
        f"GROUP BY 1, 2 ORDER BY 1, 2", params)
    runs = store.frame(
        f"SELECT ru.started_at, ru.host, ru.gpu_name, ru.kernel_driver, ru.driver, ru.ptxas, ru.git_sha, "
        f"ru.level, ru.backend, ru.shard, ru.batch, ru.n_cases, SUM({BAD_SUM}) AS n_bad "
        f"FROM runs ru JOIN run_suite_stats s ON s.run_key = ru.run_key {dj} WHERE {where} "
        f"GROUP BY ru.run_key, ru.started_at, ru.host, ru.gpu_name, ru.kernel_driver, ru.driver, ru.ptxas, "
        f"ru.git_sha, ru.level, ru.backend, ru.shard, ru.batch, ru.n_cases "
        f"ORDER BY ru.started_at DESC, ru.run_key LIMIT 100", params)
    for f in (suite, table, per_device, per_config):
        f["bucket"] = pd.to_datetime(f["bucket"])  # DuckDB gives datetime64, PostgreSQL dates
        f["rate"] = f["n_pass"].astype(float) / f["n_judged"].where(f["n_judged"] > 0)
    return {"bucket": pd.DataFrame({"bucket": [bucket]}), "suite": suite, "table": table,
            "device": per_device, "config": per_config, "runs": runs}


# ----------------------------------------------------------------------------- flaky
def flaky(store: Store, since: _dt.datetime | None = None, min_changes: int = 2,
          device: str | None = None) -> pd.DataFrame:
    """Cases whose status changed at least ``min_changes`` times across the runs of one device
    with one driver + ptxas (pass -> fail -> pass is two): flake candidates."""
    where, params = _window(since, None)
    dev, dev_params = _device_filter(device)
    params = [*params, *dev_params]
    sql = f"""
    WITH bad AS (
        SELECT DISTINCT r.case_key, r.device_key, r.config_key FROM results r
        JOIN runs ru ON ru.run_key = r.run_key WHERE r.status IN {_BAD} AND {where}{dev}),
    seq AS (
        SELECT r.case_key, r.device_key, r.config_key, r.status, ru.started_at,
               LAG(r.status) OVER (PARTITION BY r.case_key, r.device_key, r.config_key ORDER BY ru.started_at)
                   AS prev,
               FIRST_VALUE(r.status) OVER (PARTITION BY r.case_key, r.device_key, r.config_key
                   ORDER BY ru.started_at DESC) AS last_status
        FROM results r
        JOIN bad b ON b.case_key = r.case_key AND b.device_key = r.device_key AND b.config_key = r.config_key
        JOIN runs ru ON ru.run_key = r.run_key WHERE r.status IN {_JUDGED} AND {where}),
    agg AS (
        SELECT case_key, device_key, config_key, last_status, COUNT(*) AS runs,
               SUM(CASE WHEN status = 0 THEN 1 ELSE 0 END) AS n_pass,
               SUM(CASE WHEN status IN {_BAD} THEN 1 ELSE 0 END) AS n_bad,
               SUM(CASE WHEN prev IS NOT NULL AND prev <> status THEN 1 ELSE 0 END) AS changes,
               MIN(started_at) AS first_seen, MAX(started_at) AS last_seen
        FROM seq GROUP BY case_key, device_key, config_key, last_status)
    SELECT c.case_id, c.suite, dv.label AS device, cf.kernel_driver, cf.driver, cf.ptxas, a.runs, a.n_pass,
           a.n_bad, a.changes, a.last_status, a.first_seen, a.last_seen
    FROM agg a JOIN cases c ON c.case_key = a.case_key JOIN devices dv ON dv.device_key = a.device_key
    JOIN configs cf ON cf.config_key = a.config_key
    WHERE a.changes >= ? ORDER BY a.changes DESC, c.case_id, dv.label, cf.kernel_driver, cf.driver, cf.ptxas"""
    params = [*params, *params[: len(params) - (1 if device else 0)], min_changes]
    df = store.frame(sql, params)
    df["flake_rate"] = df["n_bad"].astype(float) / df["runs"]
    return _names(df, "last_status")


# ----------------------------------------------------------------------- transitions
def transitions(store: Store, since: _dt.datetime | None = None, until: _dt.datetime | None = None,
                device: str | None = None) -> pd.DataFrame:
    """Status changes between consecutive runs of each case on each device, counted per
    ``from -> to`` pair (``times``: changes, ``cases``: distinct cases), with what the pair means
    (:func:`mmacts.cases.status.transition_kind`: fail -> pass an improvement, pass -> timeout a
    regression, ...): the store's view of what ``report compare`` says of two runs."""
    where, params = _window(since, until)
    dev, dev_params = _device_filter(device)
    params = [*params, *dev_params]
    sql = f"""
    WITH seq AS (
        SELECT r.case_key, r.status,
               LAG(r.status) OVER (PARTITION BY r.case_key, r.device_key ORDER BY ru.started_at) AS prev
        FROM results r JOIN runs ru ON ru.run_key = r.run_key WHERE {where}{dev})
    SELECT prev, status, COUNT(*) AS times, COUNT(DISTINCT case_key) AS cases
    FROM seq WHERE prev IS NOT NULL AND prev <> status GROUP BY prev, status ORDER BY times DESC, prev, status"""
    df = _names(store.frame(sql, params), "prev", "status")
    if df.empty:
        return pd.DataFrame(columns=["transition", "times", "cases", "meaning"])
    df["transition"] = df["prev"].astype(str) + " -> " + df["status"].astype(str)
    df["meaning"] = [transition_kind(a, b) for a, b in zip(df["prev"], df["status"], strict=True)]
    df["times"], df["cases"] = df["times"].astype(int), df["cases"].astype(int)
    return df[["transition", "times", "cases", "meaning"]].reset_index(drop=True)


# ----------------------------------------------------------------------- regressions
def regressions(store: Store, since: _dt.datetime, device: str | None = None) -> pd.DataFrame:
    """Per (case, device): the first run since ``since`` where a case that passed before started
    failing, the last run where it passed, and what changed between the two (driver, ptxas, git)."""
    dev, dev_params = _device_filter(device)
    params: list[Any] = [since, *dev_params]
    sql = f"""
    WITH cand AS (
        SELECT DISTINCT r.case_key, r.device_key FROM results r JOIN runs ru ON ru.run_key = r.run_key
        WHERE r.status IN {_BAD} AND ru.started_at >= ?{dev}),
    seq AS (
        SELECT r.case_key, r.device_key, r.status, r.message, ru.run_key, ru.started_at,
               LAG(r.status) OVER (PARTITION BY r.case_key, r.device_key ORDER BY ru.started_at) AS prev_status,
               LAG(ru.run_key) OVER (PARTITION BY r.case_key, r.device_key ORDER BY ru.started_at) AS prev_run,
               FIRST_VALUE(r.status) OVER (PARTITION BY r.case_key, r.device_key ORDER BY ru.started_at DESC)
                   AS latest_status
        FROM results r JOIN cand ON cand.case_key = r.case_key AND cand.device_key = r.device_key
        JOIN runs ru ON ru.run_key = r.run_key WHERE r.status IN {_JUDGED}),
    starts AS (
        SELECT seq.*, ROW_NUMBER() OVER (PARTITION BY case_key, device_key ORDER BY started_at) AS nth
        FROM seq WHERE status IN {_BAD} AND (prev_status IS NULL OR prev_status NOT IN {_BAD})
              AND started_at >= ?)
    SELECT c.case_id, c.suite, dv.label AS device, s.started_at AS first_failing, s.status,
           s.latest_status, s.message, p.started_at AS last_passing,
           p.kernel_driver AS driver_before, f.kernel_driver AS driver_after,
           p.driver AS cuda_before, f.driver AS cuda_after,
           p.ptxas AS ptxas_before, f.ptxas AS ptxas_after, p.git_sha AS git_before, f.git_sha AS git_after,
           f.host, f.run_uid
    FROM starts s JOIN cases c ON c.case_key = s.case_key JOIN devices dv ON dv.device_key = s.device_key
    JOIN runs f ON f.run_key = s.run_key LEFT JOIN runs p ON p.run_key = s.prev_run
    WHERE s.nth = 1 ORDER BY s.started_at, c.case_id, dv.label"""
    df = store.frame(sql, [*params, since])

    def changed(r: pd.Series) -> str:
        if pd.isna(r["last_passing"]):
            return "no earlier passing run (new case or new device)"
        parts = [f"{what} {r[a]} -> {r[b]}" for what, a, b in (
            ("driver", "driver_before", "driver_after"), ("CUDA", "cuda_before", "cuda_after"),
            ("ptxas", "ptxas_before", "ptxas_after"), ("git", "git_before", "git_after")) if r[a] != r[b]]
        return "; ".join(parts) or "nothing recorded changed (same driver, ptxas and git)"

    df["what_changed"] = df.apply(changed, axis=1) if len(df) else pd.Series(dtype="object")
    df["still_failing"] = df["latest_status"].isin(BAD_CODES) if len(df) else pd.Series(dtype="bool")
    return _names(df, "status", "latest_status")


# ---------------------------------------------------------------------------- device
def devices_matching(store: Store, pattern: str) -> pd.DataFrame:
    exact = store.frame("SELECT device_key, host, device, label FROM devices WHERE label = ? OR device = ?",
                        [pattern, pattern])
    if len(exact) == 1:
        return exact
    return store.frame("SELECT device_key, host, device, label FROM devices WHERE LOWER(label) LIKE LOWER(?) "
                       "ORDER BY label", [f"%{pattern}%"])


def device(store: Store, pattern: str) -> dict[str, Any]:
    """Everything one GPU (``host:device label``) ever answered."""
    found = devices_matching(store, pattern)
    if found.empty:
        known = store.frame("SELECT label FROM devices ORDER BY label LIMIT 30")["label"].tolist()
        raise StoreError(f"no device matches {pattern!r}; devices: {', '.join(known) or 'none'}")
    if len(found) > 1:
        raise StoreError(f"{len(found)} devices match {pattern!r}: {', '.join(found['label'].head(20))}; "
                         f"name one (host:device)")
    key = int(found["device_key"].iloc[0])
    label = str(found["label"].iloc[0])
    runs = store.frame(
        "SELECT ru.started_at, ru.run_uid, ru.gpu_name, ru.compute_capability, ru.kernel_driver, ru.driver, "
        "ru.cuda_runtime, ru.ptxas, ru.git_sha, ru.level, ru.backend, ru.shard, ru.batch, SUM(s.n_cases) AS cases, "
        "SUM(s.n_pass) AS pass, SUM(s.n_fail) AS fail, SUM(s.n_error) AS error, SUM(s.n_crash) AS crash, "
        "SUM(s.n_timeout) AS timeout, SUM(s.n_flake) AS flake, SUM(s.n_skip) AS skip, "
        "SUM(s.n_not_supported) AS not_supported, SUM(s.n_xfail) AS xfail, SUM(s.n_observed) AS observed "
        "FROM run_suite_stats s JOIN runs ru ON ru.run_key = s.run_key WHERE s.device_key = ? "
        "GROUP BY ru.run_key, ru.started_at, ru.run_uid, ru.gpu_name, ru.compute_capability, ru.kernel_driver, "
        "ru.driver, ru.cuda_runtime, ru.ptxas, ru.git_sha, ru.level, ru.backend, ru.shard, ru.batch "
        "ORDER BY ru.started_at", [key])
    suites = store.frame(
        "SELECT s.suite, COUNT(DISTINCT s.run_key) AS runs, SUM(s.n_cases) AS results, SUM(s.n_pass) AS pass, "
        f"SUM({BAD_SUM}) AS bad, SUM(s.n_observed) AS observed, "
        "percentile_cont(0.5) WITHIN GROUP (ORDER BY s.kernel_us_median) AS kernel_us_median "
        "FROM run_suite_stats s WHERE s.device_key = ? GROUP BY s.suite ORDER BY s.suite", [key])
    register = store.frame(
        "SELECT o.entry_id, o.answer, MAX(o.reading) AS reading, ru.kernel_driver, ru.driver, ru.ptxas, "
        "COUNT(DISTINCT o.run_key) AS runs, SUM(o.n_cases) AS cases, MIN(ru.started_at) AS first_seen, "
        "MAX(ru.started_at) AS last_seen, MIN(o.case_id) AS example_case "
        "FROM observations o JOIN runs ru ON ru.run_key = o.run_key WHERE o.device_key = ? "
        "GROUP BY o.entry_id, o.answer, ru.kernel_driver, ru.driver, ru.ptxas "
        "ORDER BY o.entry_id, MIN(ru.started_at), o.answer, ru.kernel_driver, ru.driver, ru.ptxas", [key])
    probes = store.frame(
        "SELECT c.case_id, r.observation AS answer, COUNT(*) AS runs, MIN(ru.started_at) AS first_seen, "
        "MAX(ru.started_at) AS last_seen FROM results r JOIN cases c ON c.case_key = r.case_key "
        "JOIN runs ru ON ru.run_key = r.run_key WHERE r.device_key = ? AND r.observation IS NOT NULL "
        "GROUP BY c.case_id, r.observation ORDER BY c.case_id, MIN(ru.started_at), r.observation", [key])
    bad = store.frame(
        f"""WITH d AS (SELECT r.case_key, r.status, r.message, ru.started_at,
                   ROW_NUMBER() OVER (PARTITION BY r.case_key ORDER BY ru.started_at DESC) AS nth
            FROM results r JOIN runs ru ON ru.run_key = r.run_key
            WHERE r.device_key = ? AND r.case_key IN (
                SELECT case_key FROM results WHERE device_key = ? AND status IN {_BAD}))
        SELECT c.case_id, c.suite, COUNT(*) AS runs,
               SUM(CASE WHEN d.status IN {_BAD} THEN 1 ELSE 0 END) AS bad,
               MIN(CASE WHEN d.status IN {_BAD} THEN d.started_at END) AS first_bad,
               MAX(CASE WHEN d.status IN {_BAD} THEN d.started_at END) AS last_bad,
               MAX(CASE WHEN d.nth = 1 THEN d.status END) AS latest_status,
               MAX(CASE WHEN d.nth = 1 THEN d.message END) AS latest_message
        FROM d JOIN cases c ON c.case_key = d.case_key GROUP BY c.case_id, c.suite
        ORDER BY MAX(CASE WHEN d.status IN {_BAD} THEN d.started_at END) DESC, c.case_id""", [key, key])
    return {"label": label, "runs": runs, "suites": suites, "register": register, "probes": probes,
            "bad": _names(bad, "latest_status")}
