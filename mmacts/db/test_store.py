"""The results store against a real DuckDB file and a real PostgreSQL server: the same tests for both."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from mmacts.db import ingest, queries, schema
from mmacts.db.connect import open_store
from mmacts.db.simulate import Events, Fleet, tiny_cases
from mmacts.db.store import StoreError

EVENTS = Events(driver_break=8, driver_fix=18, ptxas_break=24, flaky_gpu=2, flaky_p=0.35)
DAYS, GPUS = 30, 3


def _count(url: str, table: str) -> int:
    with open_store(url, migrate=False) as s:
        return int(s.execute(f"SELECT COUNT(*) FROM {table}")[0][0])


def _fleet() -> Fleet:
    return Fleet(tiny_cases(60), DAYS, GPUS, events=EVENTS, n_driver_broken=4, n_ptxas_broken=3, n_flaky=3)


def _load_fleet(url: str) -> Fleet:
    fleet = _fleet()
    with open_store(url) as store:
        night: list = []
        for meta, df in fleet.runs():
            night.append(ingest.prepare(meta, df))
            if len(night) == GPUS:
                assert all(ingest.write_prepared(store, night))
                night = []
    return fleet


# ------------------------------------------------------------------------ schema
def test_migrations_apply_in_order_and_a_newer_store_is_refused(store_url, compile_run):
    with open_store(store_url, migrate=False) as s:
        assert schema.version(s) == 0
        assert schema.migrate(s, target=1) == [1]
        assert ingest.write_prepared(s, _as_written_before_v4(compile_run))  # a v1 store took runs
        assert schema.migrate(s) == list(range(2, schema.LATEST + 1))
        assert schema.migrate(s) == []
        assert schema.version(s) == schema.LATEST
        got = s.frame("SELECT case_id, status FROM results_v ORDER BY case_id")  # v2's view over v1's rows
    want = pd.read_parquet(compile_run / "results.parquet")
    assert sorted(got["case_id"]) == sorted(want["case_id"])
    with open_store(store_url) as s:
        s.execute("INSERT INTO schema_migrations VALUES (?, ?, ?)", (schema.LATEST + 1, "from the future", "now"))
    with pytest.raises(StoreError, match="newer|knows up to"):
        open_store(store_url)


def _as_written_before_v4(run_dir: Path) -> dict:
    """``run_dir`` prepared as an mmacts before migration 4 wrote it: no rollup column for the statuses
    that migration added (a store of schema < 4 has none)."""
    import json

    p = ingest.prepare(json.loads((run_dir / "run.json").read_text()), pd.read_parquet(run_dir / "results.parquet"))
    new = [schema.rollup_column(n) for n, _ in schema._V4_STATUSES]
    p["run_suite_stats"] = p["run_suite_stats"].drop(columns=new)
    return p


# ------------------------------------------------------------------------ ingest
def test_ingest_is_idempotent_and_keeps_every_column(store_url, compile_run):
    with open_store(store_url) as s:
        first = ingest.ingest_run(s, compile_run)
        second = ingest.ingest_run(s, compile_run)
        assert first.added and not second.added and "already" in second.note
        assert [o.added for o in ingest.ingest_runs(s, [compile_run, compile_run], workers=0)] == [False, False]
        got = s.frame("SELECT * FROM results_v ORDER BY case_id")
        runs = s.frame("SELECT * FROM runs")
    want = pd.read_parquet(compile_run / "results.parquet").sort_values("case_id").reset_index(drop=True)
    assert len(runs) == 1 and _count(store_url, "results") == len(want)
    assert got["case_id"].tolist() == want["case_id"].tolist()
    assert got["status"].tolist() == want["status"].tolist()
    assert got["sass_opcodes"].fillna("").tolist() == want["sass_opcodes"].fillna("").tolist()
    assert (got["ptxas"] == runs["ptxas"].iloc[0]).all()
    # a fresh connection knows nothing in memory: the store itself says the run is there
    with open_store(store_url) as s:
        assert not ingest.ingest_run(s, compile_run).added
    assert _count(store_url, "runs") == 1


def test_register_observations_are_what_observe_records(store_url, compile_run):
    from mmacts.ambiguity import load_register, record_observations
    from mmacts.ambiguity.observe import read_results

    with open_store(store_url) as s:
        ingest.ingest_run(s, compile_run)
        got = s.frame("SELECT entry_id, answer, n_cases FROM observations")
    reg = load_register()
    reg = dataclasses.replace(reg, entries=tuple(dataclasses.replace(e, observations=()) for e in reg.entries))
    import json

    meta = json.loads((compile_run / "run.json").read_text())
    rec = record_observations(reg, read_results(compile_run / "results.parquet"), meta)
    want = {(e.id, o.answer): o.cases for e in rec.entries for o in e.observations}
    assert want, "the compile run should answer some register entries"
    assert {(r.entry_id, r.answer): int(r.n_cases) for r in got.itertuples()} == want


def test_incomplete_and_foreign_directories_are_refused(store_url, compile_run, tmp_path):
    import shutil

    half = tmp_path / "half"
    shutil.copytree(compile_run, half)
    meta = (half / "run.json").read_text().replace('"complete": true', '"complete": false')
    (half / "run.json").write_text(meta)
    with open_store(store_url) as s:
        with pytest.raises(ingest.IngestError, match="did not complete"):
            ingest.ingest_run(s, half)
        with pytest.raises(ingest.IngestError, match="no run.json"):
            ingest.ingest_run(s, tmp_path)
        assert ingest.ingest_run(s, half, allow_incomplete=True).added
    assert _count(store_url, "runs") == 1


def test_a_killed_ingest_leaves_nothing(store_url, compile_run):
    env = dict(os.environ, **{ingest.PAUSE_ENV: "60"})
    p = subprocess.Popen([sys.executable, "-m", "mmacts.runner.cli", "db", "ingest", str(compile_run),
                          "--db", store_url], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = p.stdout.readline()  # printed inside the transaction, every row written, before commit
        assert "paused inside the transaction" in line, (line, p.stderr.read() if p.poll() is not None else "")
        p.kill()
        p.wait(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    deadline = time.monotonic() + 30
    while True:  # PostgreSQL notices the dead client (and drops its locks) within moments
        try:
            counts = [_count(store_url, t) for t in ("runs", "results", "cases", "observations", "run_suite_stats")]
            break
        except StoreError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    assert counts == [0, 0, 0, 0, 0]
    with open_store(store_url) as s:
        assert ingest.ingest_run(s, compile_run).added


def _write_run_dirs(root: Path, n: int) -> list[Path]:
    import json

    from mmacts.report.frame import to_frame

    fleet = Fleet(tiny_cases(30), n, 1, n_driver_broken=2, n_ptxas_broken=1, n_flaky=1)
    dirs = []
    for day in range(n):
        d = root / f"run{day:02d}"
        d.mkdir(parents=True)
        to_frame(fleet.results(day, 0).to_dict("records")).to_parquet(d / "results.parquet", index=False)
        (d / "run.json").write_text(json.dumps(fleet.run_meta(day, 0)))
        dirs.append(d)
    return dirs


def test_many_processes_ingesting_at_once(store_url, tmp_path):
    """Hosts start at once on an empty store (racing migrations) and ingest overlapping sets of runs
    in different orders: every run lands once, nothing fails."""
    dirs = _write_run_dirs(tmp_path / "runs", 10)
    procs = []
    n = 6 if store_url.startswith("postgresql") else 3  # DuckDB: one writer at a time, the others wait
    for k in range(n):
        order = dirs[k:] + dirs[:k] if k % 2 else list(reversed(dirs))
        procs.append(subprocess.Popen([sys.executable, "-m", "mmacts.runner.cli", "db", "ingest", *map(str, order),
                                       "--db", store_url], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outs = [p.communicate(timeout=240) for p in procs]
    for p, (_out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err[-2000:]
    added = sum(line.startswith("added") for out, _ in outs for line in out.splitlines())
    assert added == len(dirs)
    assert _count(store_url, "runs") == len(dirs)
    assert _count(store_url, "results") == 30 * len(dirs)
    assert _count(store_url, "schema_migrations") == schema.LATEST


# ------------------------------------------------------------------------ queries
def test_queries_on_a_simulated_fleet(store_url):
    fleet = _load_fleet(store_url)
    ids = fleet.cases["case_id"]
    with open_store(store_url, read_only=True) as s:
        h = queries.history(s)
        fl = queries.flaky(s)
        since = queries.parse_date("2026-01-06")
        rg = queries.regressions(s, since)
        label = f"node01:{fleet.gpu_name} #1"
        dev = queries.device(s, label)
        with pytest.raises(StoreError, match="devices match"):
            queries.device(s, "node01")
        with pytest.raises(StoreError, match="no device matches"):
            queries.device(s, "nonesuch")
    assert str(h["bucket"]["bucket"].iloc[0]) == "day"
    suite = h["suite"].assign(day=pd.to_datetime(h["suite"]["bucket"]).dt.day_of_year - 1)
    broken_suites = set(fleet.cases["suite"].iloc[fleet.driver_broken])
    before = suite[(suite["day"] < EVENTS.driver_break) & suite["suite"].isin(broken_suites)]
    during = suite[(suite["day"] >= EVENTS.driver_break) & (suite["day"] < EVENTS.driver_fix)
                   & suite["suite"].isin(broken_suites)]
    assert (before["n_bad"] <= len(fleet.flaky)).all()  # only the flaky cases fail before the driver upgrade
    assert (during["rate"] < 1).all()
    assert set(h["table"]["tbl"]) >= {"T35", "T54"}
    assert len(h["device"]["series"].unique()) == GPUS
    assert h["config"]["series"].str.contains("590.44.01").any()
    # flaky: the flaky cases on the flaky GPU, nothing else (driver/ptxas breaks change the config)
    flaky_ids = set(ids.iloc[fleet.flaky])
    assert set(fl["case_id"]) <= flaky_ids and len(fl) > 0
    assert (fl["device"] == f"node01:{fleet.gpu_name} #{EVENTS.flaky_gpu}").all()
    assert (fl["changes"] >= 2).all()
    # regressions: the driver-broken cases on every GPU at the driver upgrade, the ptxas-broken at ptxas's
    rg = rg[~rg["case_id"].isin(flaky_ids)]
    drv = rg[rg["case_id"].isin(set(ids.iloc[fleet.driver_broken]))]
    assert len(drv) == len(fleet.driver_broken) * GPUS
    assert (pd.to_datetime(drv["first_failing"]).dt.day_of_year - 1 == EVENTS.driver_break).all()
    assert drv["what_changed"].str.contains("driver 580.95.05 -> 590.44.01").all()
    assert not drv["still_failing"].any()
    px = rg[rg["case_id"].isin(set(ids.iloc[fleet.ptxas_broken]))]
    assert len(px) == len(fleet.ptxas_broken) * GPUS
    assert px["what_changed"].str.contains("ptxas 13.1.80 -> 13.5.37").all() and px["still_failing"].all()
    assert len(rg) == len(drv) + len(px)
    # one device: its runs, its register and probe answers
    assert len(dev["runs"]) == DAYS and dev["label"] == label
    assert len(dev["probes"]) > 0 and set(dev["probes"]["answer"]) <= {'{"answer": "quadrant 0"}',
                                                                       '{"answer": "quadrant 2"}'}
    assert set(dev["bad"]["case_id"]) >= set(ids.iloc[fleet.driver_broken])


def test_both_stores_answer_the_same(tmp_path, pg_server):
    """The same fleet in DuckDB and PostgreSQL: every query gives the same table."""
    import psycopg

    with psycopg.connect(pg_server.url, autocommit=True) as conn:
        conn.execute("CREATE DATABASE same_answers")
    urls = [str(tmp_path / "s.duckdb"), pg_server.url.replace("/postgres?", "/same_answers?")]
    got = []
    for url in urls:
        _load_fleet(url)
        with open_store(url, read_only=True) as s:
            h = queries.history(s)
            got.append({"suite": h["suite"], "table": h["table"], "config": h["config"], "flaky": queries.flaky(s),
                        "regressions": queries.regressions(s, queries.parse_date("2026-01-02")),
                        "device_bad": queries.device(s, "NVIDIA B200 #1")["bad"],
                        "device_register": queries.device(s, "NVIDIA B200 #1")["register"]})
    for name in got[0]:
        a, b = (g[name].reset_index(drop=True) for g in got)
        a, b = (x.astype(object).where(x.notna(), None).astype(str) for x in (a, b))
        for col in a.columns:  # timestamps and dates print alike; numbers to 9 digits
            if col in ("bucket", "first_seen", "last_seen", "first_failing", "last_passing", "first_bad", "last_bad"):
                a[col], b[col] = (x.str.slice(0, 19) for x in (a[col], b[col]))
            if a[col].map(_numeric).all() and b[col].map(_numeric).all():  # 60 (BIGINT) == 60.0 (HUGEINT)
                a[col], b[col] = (x.map(lambda v: v if v == "None" else f"{float(v):.9g}") for x in (a[col], b[col]))
        pd.testing.assert_frame_equal(a, b, check_dtype=False, obj=name)


def _numeric(v: str) -> bool:
    if v == "None":
        return True
    try:
        float(v)
        return True
    except ValueError:
        return False


def test_a_new_duckdb_store_appears_whole_and_never_replaces_one_that_exists(tmp_path):
    """Hosts starting at once on a missing store: the file is made under a private name and linked into
    place, so no host opens it half-written ("not a valid DuckDB database file", seen with three
    ingesters) and the second creator keeps the first one's store, data included."""
    import duckdb

    from mmacts.db.connect import _create_duckdb_file

    p = tmp_path / "store.duckdb"
    _create_duckdb_file(duckdb, p)
    con = duckdb.connect(str(p))
    con.execute("create table kept (x integer)")
    con.execute("insert into kept values (7)")
    con.close()
    _create_duckdb_file(duckdb, p)  # a second host that also found the path missing
    assert duckdb.connect(str(p), read_only=True).execute("select x from kept").fetchall() == [(7,)]
    assert sorted(f.name for f in tmp_path.iterdir()) == ["store.duckdb"]  # no private copy left behind
    bad = tmp_path / "not-a-store.duckdb"
    bad.write_text("hello")
    t0 = time.monotonic()
    with pytest.raises(StoreError, match="not a valid DuckDB database"):
        open_store(str(bad))
    assert time.monotonic() - t0 < 5  # a file that is not a store is still refused at once


# ------------------------------------------------------------------------ transitions
def test_status_transitions_match_the_fleet_run_by_run(store_url, tmp_path, capsys):
    """Every change of a case's status between consecutive runs on one GPU, counted per pair, as the
    simulated fleet produced it (the driver breaks and is fixed, ptxas breaks, one GPU flakes)."""
    from collections import Counter

    from mmacts.db.cli import main

    fleet = _fleet()
    last: dict[tuple[str, str], str] = {}
    want: Counter = Counter()
    with open_store(store_url) as store:
        for meta, df in fleet.runs():  # in start order per GPU
            assert ingest.write_prepared(store, [ingest.prepare(meta, df)]) == [True]
            for cid, dev, st in zip(df["case_id"], df["device"], df["status"], strict=True):
                prev = last.get((cid, dev))
                if prev is not None and prev != st:
                    want[f"{prev} -> {st}"] += 1
                last[(cid, dev)] = st
    with open_store(store_url, read_only=True) as s:
        got = queries.transitions(s)
    assert dict(zip(got["transition"], got["times"], strict=True)) == dict(want)
    kinds = dict(zip(got["transition"], got["meaning"], strict=True))
    assert kinds["fail -> pass"].startswith("improvement") and kinds["pass -> timeout"] == "regression"
    assert main(["transitions", "--db", store_url, "--out", str(tmp_path / "pages")]) == 0
    assert "pass -> fail" in capsys.readouterr().out and (tmp_path / "pages" / "transitions.csv").is_file()


def test_migration_4_gives_an_old_store_the_new_statuses_without_losing_rows(store_url, compile_run):
    """A store written before ``crash`` / ``not-supported`` / ``flake`` existed (schema 3): its rows
    stay, its flakes (stored as ``other``) become ``flake``, the rollups gain the new columns, and
    runs with the new statuses ingest into it afterwards."""
    with open_store(store_url, migrate=False) as s:
        assert schema.migrate(s, target=3) == [1, 2, 3]
        s.execute("INSERT INTO runs (run_key, run_uid, config_key, started_at, ingested_at) "
                  "VALUES (1, 'old', 1, TIMESTAMP '2026-01-01 00:00:00', TIMESTAMP '2026-01-01 00:00:00')")
        s.execute("INSERT INTO cases (case_key, case_id, suite) VALUES (1, 'a', 'x'), (2, 'b', 'x'), (3, 'c', 'x')")
        s.execute("INSERT INTO results (run_key, case_key, device_key, config_key, status, message) VALUES "
                  "(1, 1, 1, 1, 0, ''), (1, 2, 1, 1, 7, 'flake: passed on attempt 2 of 2 (1: fail, 2: pass)'), "
                  "(1, 3, 1, 1, 2, 'worker crashed: the test process died (signal 11)')")
        s.execute("INSERT INTO run_suite_stats (run_key, device_key, suite, n_cases, n_pass, n_fail, n_error, "
                  "n_timeout, n_skip, n_xfail, n_observed) VALUES (1, 1, 'x', 3, 1, 0, 1, 0, 0, 0, 0)")
        assert schema.migrate(s) == list(range(4, schema.LATEST + 1))
        got = dict(s.execute("SELECT c.case_id, st.name FROM results r JOIN cases c ON c.case_key = r.case_key "
                             "JOIN statuses st ON st.code = r.status"))
        stats = s.frame("SELECT * FROM run_suite_stats")
        names = {n for (n,) in s.execute("SELECT name FROM statuses")}
    assert got == {"a": "pass", "b": "flake", "c": "error"}  # an old crash stays what it was recorded as
    assert names == {n for n, *_ in schema.STATUSES}
    assert (int(stats["n_flake"][0]), int(stats["n_crash"][0]), int(stats["n_not_supported"][0])) == (1, 0, 0)
    assert int(stats["n_pass"][0]) == 1 and int(stats["n_error"][0]) == 1
    with open_store(store_url) as s:  # a run of this mmacts goes in, with the statuses it knows
        meta, df = _new_statuses_run(compile_run)
        assert ingest.write_prepared(s, ingest.prepare(meta, df))
        codes = dict(s.execute("SELECT c.case_id, st.name FROM results r JOIN cases c ON c.case_key = r.case_key "
                               "JOIN statuses st ON st.code = r.status WHERE r.run_key <> 1"))
        per_suite = s.frame("SELECT SUM(n_crash) AS crash, SUM(n_not_supported) AS ns FROM run_suite_stats "
                            "WHERE run_key <> 1")
    assert sorted(codes.values())[:2] == ["crash", "not-supported"]
    assert (int(per_suite["crash"][0]), int(per_suite["ns"][0])) == (1, 1)


def _new_statuses_run(run_dir: Path) -> tuple[dict, pd.DataFrame]:
    """``run_dir``'s run with another identity, its first case a crash and its second not supported."""
    import json

    meta = json.loads((run_dir / "run.json").read_text())
    meta["start"] = "2026-02-02T00:00:00+00:00"
    df = pd.read_parquet(run_dir / "results.parquet")
    df.loc[0, "status"], df.loc[1, "status"] = "crash", "not-supported"
    return meta, df
