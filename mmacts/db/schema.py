"""The store's schema, one for DuckDB and PostgreSQL, as numbered migrations.

``schema_migrations`` records each migration applied. ``migrate`` applies the missing ones in
one transaction per migration; on PostgreSQL under an advisory lock, so hosts starting at once
on an empty database do not race (on DuckDB one process writes a file at a time anyway). A store
written by a newer mmacts (a migration this checkout does not know) is refused, never altered.

Layout (a star: one narrow fact table, small dimensions, per-run rollups):

- ``runs``: one row per ingested run directory (run.json: host, GPU, driver, ptxas, git sha,
  options, shard, scheduler batch, start/end); ``run_key`` is a hash of the run's identity, so
  ingesting a run twice finds it there and adds nothing.
- ``cases``: one row per case ID (suite, instruction, spec rows, arch, level, ...: what the ID
  names, as first seen); ``case_tables``: the spec tables (``T54``, ``prose (S...)``) it cites.
- ``devices``: ``host`` + the record's device label (``NVIDIA H100 80GB HBM3 #0``); ``configs``:
  driver, kernel driver, CUDA runtime and ptxas (what a device runs with).
- ``results``: one row per (run, case): status code (``statuses``), backend, errors, timings,
  SASS opcodes, observation, message.
- ``run_suite_stats`` / ``run_table_stats``: per run and device, counts per status per suite and
  pass/judged per spec table, median kernel time: the history page reads these, not ``results``.
- ``observations``: the ambiguity-register answers of each run (entry, device, answer, reading).
- view ``results_v``: results with names instead of keys, for people querying the store by hand.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mmacts.cases.status import BY_NAME
from mmacts.db.store import Store, StoreError
from mmacts.report.runinfo import now

_V1_STATUSES = (("pass", 0, True, False), ("fail", 1, True, True), ("error", 2, True, True),
                ("timeout", 3, True, True), ("skip", 4, False, False), ("xfail", 5, False, False),
                ("observed", 6, False, False), ("other", 7, False, False))
"""The statuses migration 1 wrote (frozen: a migration must do the same on every store, whatever
this checkout's vocabulary)."""
_V4_STATUSES = (("crash", 8), ("not-supported", 9), ("flake", 10))
"""Added by migration 4: ``crash`` and ``not-supported`` were new; ``flake`` was stored as ``other``."""
_OTHER = ("other", 7, False, False)
STATUSES = (*((n, c, BY_NAME[n].judged, BY_NAME[n].bad) for n, c, _, _ in _V1_STATUSES if n in BY_NAME),
            *((n, c, BY_NAME[n].judged, BY_NAME[n].bad) for n, c in _V4_STATUSES), _OTHER)
"""(name, code, judged, bad): every status of :mod:`mmacts.cases.status` with its code (codes never
change once written), and ``other`` for a status this mmacts does not know; ``judged`` statuses count
in a pass rate, ``bad`` ones are failures."""
ROLLUP_STATUSES = ("pass", "fail", "error", "crash", "timeout", "skip", "not-supported", "xfail", "observed",
                   "flake")
"""The statuses ``run_suite_stats`` counts, one column ``n_<name>`` each (``-`` as ``_``)."""


def rollup_column(name: str) -> str:
    """``n_not_supported`` for ``not-supported``: the rollup column of a status."""
    return "n_" + name.replace("-", "_")


JUDGED_SUM = "(" + " + ".join(f"s.{rollup_column(n)}" for n in ROLLUP_STATUSES if BY_NAME[n].judged) + ")"
"""SQL over ``run_suite_stats s``: the cases a pass rate counts (:data:`mmacts.cases.status.JUDGED`)."""
BAD_SUM = "(" + " + ".join(f"s.{rollup_column(n)}" for n in ROLLUP_STATUSES if BY_NAME[n].bad) + ")"
"""SQL over ``run_suite_stats s``: the failures (:data:`mmacts.cases.status.BAD`)."""
STATUS_CODE = {name: code for name, code, _, _ in STATUSES}
STATUS_NAME = {code: name for name, code, _, _ in STATUSES}
BAD_CODES = tuple(code for _, code, _, bad in STATUSES if bad)
JUDGED_CODES = tuple(code for _, code, judged, _ in STATUSES if judged)


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    common: tuple[str, ...]
    postgres: tuple[str, ...] = field(default=())
    duckdb: tuple[str, ...] = field(default=())

    def statements(self, dialect: str) -> tuple[str, ...]:
        return self.common + (self.postgres if dialect == "postgres" else self.duckdb)


_V1 = (
    """CREATE TABLE statuses (code SMALLINT PRIMARY KEY, name TEXT NOT NULL UNIQUE,
           judged BOOLEAN NOT NULL, bad BOOLEAN NOT NULL)""",
    "INSERT INTO statuses VALUES " + ", ".join(f"({c}, '{n}', {str(j).upper()}, {str(b).upper()})"
                                               for n, c, j, b in _V1_STATUSES),
    """CREATE TABLE runs (
           run_key BIGINT PRIMARY KEY, run_uid TEXT NOT NULL UNIQUE,
           host TEXT, gpu_name TEXT, compute_capability TEXT, gpu_count INTEGER,
           driver TEXT, kernel_driver TEXT, cuda_runtime TEXT, ptxas TEXT, nvdisasm TEXT,
           config_key BIGINT NOT NULL, git_sha TEXT, level TEXT, backend TEXT, suites TEXT, k TEXT,
           shard TEXT, batch TEXT, scheduler TEXT, command TEXT,
           started_at TIMESTAMP NOT NULL, ended_at TIMESTAMP, complete BOOLEAN, n_cases INTEGER,
           meta TEXT, source TEXT, ingested_at TIMESTAMP NOT NULL)""",
    """CREATE TABLE configs (config_key BIGINT PRIMARY KEY, driver TEXT, kernel_driver TEXT,
           cuda_runtime TEXT, ptxas TEXT)""",
    """CREATE TABLE devices (device_key BIGINT PRIMARY KEY, host TEXT NOT NULL, device TEXT NOT NULL,
           label TEXT NOT NULL)""",
    """CREATE TABLE cases (case_key BIGINT PRIMARY KEY, case_id TEXT NOT NULL UNIQUE, suite TEXT,
           instruction TEXT, spec_rows TEXT, arch TEXT, level TEXT, expect TEXT, compare_mode TEXT)""",
    """CREATE TABLE case_tables (case_key BIGINT NOT NULL, tbl TEXT NOT NULL, PRIMARY KEY (case_key, tbl))""",
    """CREATE TABLE results (
           run_key BIGINT NOT NULL, case_key BIGINT NOT NULL, device_key BIGINT NOT NULL,
           config_key BIGINT NOT NULL, status SMALLINT NOT NULL, backend TEXT, executor TEXT,
           mismatches BIGINT, max_abs_err DOUBLE PRECISION, max_ulp_err DOUBLE PRECISION,
           first_mismatch TEXT, compile_s DOUBLE PRECISION, run_s DOUBLE PRECISION,
           kernel_us DOUBLE PRECISION, sass_opcodes TEXT, ptxas_version TEXT, observation TEXT,
           message TEXT)""",
    """CREATE TABLE run_suite_stats (
           run_key BIGINT NOT NULL, device_key BIGINT NOT NULL, suite TEXT NOT NULL,
           n_cases INTEGER NOT NULL, n_pass INTEGER NOT NULL, n_fail INTEGER NOT NULL,
           n_error INTEGER NOT NULL, n_timeout INTEGER NOT NULL, n_skip INTEGER NOT NULL,
           n_xfail INTEGER NOT NULL, n_observed INTEGER NOT NULL,
           kernel_us_median DOUBLE PRECISION, run_s_sum DOUBLE PRECISION,
           PRIMARY KEY (run_key, device_key, suite))""",
    """CREATE TABLE run_table_stats (
           run_key BIGINT NOT NULL, device_key BIGINT NOT NULL, tbl TEXT NOT NULL,
           n_pass INTEGER NOT NULL, n_judged INTEGER NOT NULL, PRIMARY KEY (run_key, device_key, tbl))""",
    """CREATE TABLE observations (
           run_key BIGINT NOT NULL, entry_id TEXT NOT NULL, device_key BIGINT NOT NULL,
           case_id TEXT NOT NULL, backend TEXT, answer TEXT, reading TEXT, n_cases INTEGER NOT NULL)""",
)

_V2_VIEW = """CREATE VIEW results_v AS
    SELECT ru.started_at, ru.run_uid, d.host, d.device, c.case_id, c.suite, s.name AS status,
           ru.kernel_driver, ru.driver, ru.ptxas, ru.git_sha, r.backend, r.executor, r.mismatches,
           r.max_abs_err, r.max_ulp_err, r.first_mismatch, r.compile_s, r.run_s, r.kernel_us,
           r.sass_opcodes, r.observation, r.message
    FROM results r JOIN runs ru ON ru.run_key = r.run_key JOIN cases c ON c.case_key = r.case_key
    JOIN devices d ON d.device_key = r.device_key JOIN statuses s ON s.code = r.status"""

_V4 = (
    "INSERT INTO statuses VALUES " + ", ".join(
        f"({c}, '{n}', {str(BY_NAME[n].judged).upper()}, {str(BY_NAME[n].bad).upper()})" for n, c in _V4_STATUSES),
    # an old store's flakes were stored as 'other'; their message says what they were
    "UPDATE results SET status = 10 WHERE status = 7 AND message LIKE 'flake: passed on attempt%'",
    # no NOT NULL: DuckDB 1.1 (the floor) cannot add a column with a constraint; DEFAULT fills old rows with 0
    *(f"ALTER TABLE run_suite_stats ADD COLUMN {rollup_column(n)} INTEGER DEFAULT 0"
      for n, _ in _V4_STATUSES),
    """UPDATE run_suite_stats SET n_flake = (SELECT COUNT(*) FROM results r JOIN cases c ON c.case_key = r.case_key
           WHERE r.run_key = run_suite_stats.run_key AND r.device_key = run_suite_stats.device_key
           AND c.suite = run_suite_stats.suite AND r.status = 10)""",
)
"""Migration 4: an old store keeps every row; its crashes stay the ``error`` they were recorded as
(the run said so then), its flakes become ``flake`` (counted in the new ``n_flake``), and the
per-suite rollups gain a column per new status (``n_crash``, ``n_not_supported``: 0 for old runs)."""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "runs, cases, devices, results, rollups, observations", _V1),
    Migration(
        2, "results_v view; PostgreSQL indexes for per-case, per-device and per-run lookups",
        (_V2_VIEW,),
        postgres=("CREATE INDEX results_case_idx ON results (case_key, device_key)",
                  "CREATE INDEX results_run_idx ON results (run_key)",
                  "CREATE INDEX results_bad_idx ON results (status) WHERE status IN (1, 2, 3)",
                  "CREATE INDEX observations_device_idx ON observations (device_key)",
                  "CREATE INDEX runs_started_idx ON runs (started_at)"),
    ),
    Migration(3, "PostgreSQL: a partial index for one device's probe answers (mmacts db device)", (),
              postgres=("CREATE INDEX results_observed_idx ON results (device_key) WHERE observation IS NOT NULL",)),
    Migration(4, "statuses crash, not-supported and flake; their counts in run_suite_stats", _V4, postgres=(
        "DROP INDEX results_bad_idx",
        "CREATE INDEX results_bad_idx ON results (status) WHERE status IN " + str(BAD_CODES))),
)
LATEST = MIGRATIONS[-1].version
_PG_LOCK = 7_366_173_001  # advisory lock id: "mmacts schema"


def _has_table(store: Store, name: str) -> bool:
    return bool(store.execute(
        "SELECT 1 FROM information_schema.tables WHERE table_name = ? AND table_schema = "
        + ("current_schema()" if store.dialect == "postgres" else "'main'"), (name,)))


def version(store: Store) -> int:
    """The store's schema version (0: empty)."""
    if not _has_table(store, "schema_migrations"):
        return 0
    return int(store.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations")[0][0])


def check_version(store: Store) -> int:
    v = version(store)
    if v > LATEST:
        raise StoreError(f"the store has schema version {v}; this mmacts knows up to {LATEST}: upgrade mmacts")
    return v


def migrate(store: Store, target: int | None = None) -> list[int]:
    """Apply the migrations the store lacks (up to ``target``); the versions applied."""
    target = LATEST if target is None else target
    if check_version(store) >= target:
        return []
    applied = []
    with store.transaction():
        if store.dialect == "postgres":
            store.execute(f"SELECT pg_advisory_xact_lock({_PG_LOCK})")
        store.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
                      "name TEXT NOT NULL, applied_at TEXT NOT NULL)")
    for m in MIGRATIONS:
        if m.version > target:
            break
        with store.transaction():
            if store.dialect == "postgres":
                store.execute(f"SELECT pg_advisory_xact_lock({_PG_LOCK})")  # another host may be migrating
            if store.execute("SELECT 1 FROM schema_migrations WHERE version = ?", (m.version,)):
                continue
            for stmt in m.statements(store.dialect):
                store.execute(stmt)
            store.execute("INSERT INTO schema_migrations VALUES (?, ?, ?)", (m.version, m.name, now()))
            applied.append(m.version)
    return applied
