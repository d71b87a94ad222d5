"""One connection API over the two stores: an embedded DuckDB file, or a PostgreSQL server.

``open_store(url)`` takes ``postgresql://...`` (or ``postgres://``), ``duckdb:///path`` or a plain
file path (DuckDB). SQL is written once with ``?`` placeholders and portable types; the few
places where the dialects differ ask ``store.dialect``.

DuckDB allows one writing process per file: a second ``mmacts db ingest`` on the same file waits
for the first (``lock_wait_s``) instead of failing. Many hosts ingesting at once: use PostgreSQL.
"""

from __future__ import annotations

import csv
import io
import os
import random
import re
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd

from mmacts.core.suites import REPO_ROOT

DEFAULT_DB = REPO_ROOT / "reports" / "mmacts.duckdb"
"""Where ``mmacts db`` keeps its DuckDB file when neither ``--db`` nor ``MMACTS_DB`` names a store."""


class StoreError(Exception):
    """The store cannot be used (missing driver, unreachable server, newer schema): one line, exit 2."""


def default_url() -> str:
    return os.environ.get("MMACTS_DB") or str(DEFAULT_DB)


def describe(url: str) -> str:
    """The URL without its password, for messages."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", url)


def is_postgres(url: str) -> bool:
    return url.startswith(("postgresql://", "postgres://"))


_COUNTS = {"runs", "cases", "results", "pass", "fail", "error", "crash", "timeout", "flake", "skip", "not_supported",
           "xfail", "observed", "bad", "changes"}


def _counts_as_ints(df: pd.DataFrame) -> pd.DataFrame:
    """Sums of counts come back as floats (DuckDB's HUGEINT) or Decimals (PostgreSQL's NUMERIC): make them ints."""
    for c in df.columns:
        if (c in _COUNTS or c.startswith("n_")) and len(df) and df[c].dtype.kind in "fO":
            try:
                df[c] = pd.to_numeric(df[c]).astype("Int64")
            except (TypeError, ValueError):
                pass
    return df


class Store:
    """A connection with the helpers ingest and the queries need."""

    def __init__(self, url: str, conn: Any, dialect: str) -> None:
        self.url, self.conn, self.dialect = url, conn, dialect
        self.known: dict[str, set[int]] = {"devices": set(), "cases": set()}
        """Dimension keys this connection wrote or saw committed (ingest skips them)."""

    # ------------------------------------------------------------------ SQL
    def _sql(self, sql: str) -> str:
        return sql.replace("?", "%s") if self.dialect == "postgres" else sql

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        """Run one statement; the rows it returns (empty for statements without a result)."""
        if self.dialect == "duckdb":
            cur = self.conn.execute(sql, list(params))
            try:
                return cur.fetchall()
            except Exception:  # a statement without a result set
                return []
        with self.conn.cursor() as cur:
            cur.execute(self._sql(sql), list(params) or None)
            return cur.fetchall() if cur.description is not None else []

    def frame(self, sql: str, params: Sequence[Any] = ()) -> pd.DataFrame:
        """A query's result as a DataFrame."""
        if self.dialect == "duckdb":
            return _counts_as_ints(self.conn.execute(sql, list(params)).df())
        with self.conn.cursor() as cur:
            cur.execute(self._sql(sql), list(params) or None)
            cols = [d.name for d in cur.description]
            return _counts_as_ints(pd.DataFrame(cur.fetchall(), columns=cols))

    @contextmanager
    def transaction(self) -> Iterator[Store]:
        """All or nothing: an exception (or a killed process) leaves the store as it was."""
        if self.dialect == "duckdb":
            self.conn.execute("BEGIN TRANSACTION")
            try:
                yield self
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")
        else:
            with self.conn.transaction():
                yield self

    def insert_frame(self, table: str, df: pd.DataFrame, *, on_conflict: str = "") -> int:
        """Append ``df``'s rows to ``table`` (columns by name); ``on_conflict`` e.g. ``(k) DO NOTHING``.

        Rows go through a staging table so that both stores can skip rows already present
        (``on_conflict``) and insert in key order (PostgreSQL: hosts inserting overlapping keys at
        once then wait for each other instead of deadlocking).
        """
        if df.empty:
            return 0
        cols = ", ".join(df.columns)
        tail = f" ON CONFLICT {on_conflict}" if on_conflict else ""
        order = f" ORDER BY {df.columns[0]}" if on_conflict else ""
        if self.dialect == "duckdb":
            name = f"_mmacts_stage_{table}"
            self.conn.register(name, df)
            try:
                self.conn.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM {name}{order}{tail}")
            finally:
                self.conn.unregister(name)
            return len(df)
        if not on_conflict:
            self._copy(table, df)
            return len(df)
        stage = f"_stage_{table}"
        self.execute(f"CREATE TEMP TABLE IF NOT EXISTS {stage} (LIKE {table}) ON COMMIT DELETE ROWS")
        self._copy(stage, df)
        self.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM {stage}{order}{tail}")
        self.execute(f"TRUNCATE {stage}")
        return len(df)

    def _copy(self, table: str, df: pd.DataFrame) -> None:
        buf = io.StringIO()
        df.to_csv(buf, index=False, header=False, na_rep="\\N", quoting=csv.QUOTE_MINIMAL,
                  lineterminator="\n")
        with self.conn.cursor() as cur:
            with cur.copy(f"COPY {table} ({', '.join(df.columns)}) FROM STDIN (FORMAT csv, NULL '\\N')") as cp:
                cp.write(buf.getvalue())

    def size_bytes(self) -> int | None:
        """What the store takes on disk (DuckDB: the file and its WAL; PostgreSQL: the database)."""
        if self.dialect == "postgres":
            return int(self.execute("SELECT pg_database_size(current_database())")[0][0])
        path = Path(self.url.removeprefix("duckdb://"))
        return sum(p.stat().st_size for p in (path, path.with_name(path.name + ".wal")) if p.exists())

    def close(self) -> None:
        try:
            self.conn.close()
        except Exception:
            pass

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _create_duckdb_file(duckdb: Any, p: Path) -> None:
    """Create an empty store at ``p`` atomically: built under a private name, then hard-linked into
    place, which fails if another process got there first (its store is used). Connecting to a
    missing path creates the file and then writes its headers, and a host starting at that moment
    found "exists, but it is not a valid DuckDB database file" (seen with three ingesters at once)."""
    tmp = p.with_name(f".{p.name}.{os.getpid()}.new")
    try:
        duckdb.connect(str(tmp)).close()
        os.link(tmp, p)
    except FileExistsError:
        pass
    except OSError:  # no hard links here: let connect create it (the race stays possible)
        pass
    finally:
        for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
            leftover.unlink(missing_ok=True)


def _connect_duckdb(path: str, read_only: bool, lock_wait_s: float) -> Any:
    try:
        import duckdb
    except ImportError as exc:
        raise StoreError("the DuckDB store needs the duckdb package: pip install 'mmacts[db]'") from exc
    p = Path(path).expanduser()
    if read_only and not p.exists():
        raise StoreError(f"{p}: no such store (ingest a run first: mmacts db ingest RUN)")
    if not read_only:
        p.parent.mkdir(parents=True, exist_ok=True)
        if not p.exists():
            _create_duckdb_file(duckdb, p)
    deadline = time.monotonic() + lock_wait_s
    while True:
        try:
            return duckdb.connect(str(p), read_only=read_only)
        except duckdb.IOException as exc:
            if "lock" not in str(exc).lower() or time.monotonic() > deadline:
                raise StoreError(f"{p}: {str(exc).splitlines()[0]}") from exc
            time.sleep(0.2 + random.random() * 0.3)  # another process writes: wait for it
        except duckdb.Error as exc:
            raise StoreError(f"{p}: {str(exc).splitlines()[0]}") from exc


def _connect_postgres(url: str) -> Any:
    try:
        import psycopg
    except ImportError as exc:
        raise StoreError("the PostgreSQL store needs psycopg 3: pip install 'mmacts[db]'") from exc
    try:
        return psycopg.connect(url, autocommit=True, application_name="mmacts")
    except psycopg.Error as exc:
        raise StoreError(f"cannot connect to {describe(url)}: {str(exc).strip().splitlines()[0]}") from exc


def open_store(url: str | None = None, *, read_only: bool = False, migrate: bool = True,
               lock_wait_s: float = 300.0) -> Store:
    """Connect, and (unless ``read_only`` or ``migrate=False``) bring the schema to this version."""
    from mmacts.db import schema

    url = url or default_url()
    if is_postgres(url):
        store = Store(url, _connect_postgres(url), "postgres")
    else:
        path = url.removeprefix("duckdb://")
        store = Store(path, _connect_duckdb(path, read_only, lock_wait_s), "duckdb")
    try:
        if migrate and not read_only:
            schema.migrate(store)
        elif schema.check_version(store) == 0 and read_only:
            raise StoreError(f"{describe(url)}: an empty store (ingest a run first: mmacts db ingest RUN)")
    except BaseException:
        store.close()
        raise
    return store
