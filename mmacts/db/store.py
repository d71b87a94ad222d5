"""One connection API over the two stores: an embedded DuckDB file, or a PostgreSQL server.

``mmacts.db.connect.open_store(url)`` takes ``postgresql://...`` (or ``postgres://``), ``duckdb:///path`` or a plain
file path (DuckDB). SQL is written once with ``?`` placeholders and portable types; the few
places where the dialects differ ask ``store.dialect``.

DuckDB allows one writing process per file: a second ``mmacts db ingest`` on the same file waits
for the first (``lock_wait_s``) instead of failing. Many hosts ingesting at once: use PostgreSQL.
"""

from __future__ import annotations

import csv
import io
import os
import re
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
