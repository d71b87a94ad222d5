"""Open a store: connect to DuckDB or PostgreSQL, then bring its schema to this version.

Why a module of its own: opening runs the migrations of :mod:`mmacts.db.schema`, which itself works on a
:class:`~mmacts.db.store.Store`; with ``open_store`` beside ``Store`` the two modules imported each other.
Here the arrows point one way: ``connect`` -> ``schema`` -> ``store``.
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path
from typing import Any

from mmacts.db import schema
from mmacts.db.store import Store, StoreError, default_url, describe, is_postgres


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
