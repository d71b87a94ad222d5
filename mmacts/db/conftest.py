"""Fixtures for the store's tests: a real DuckDB file and a real PostgreSQL server (a throwaway
cluster started here, on a Unix socket in a temporary directory, removed at the end).

Where a store cannot be had the tests using it skip with the reason; with ``MMACTS_REQUIRE_DB=1``
(CI) they fail instead, so that CI cannot pass without having run them.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path

import pytest

REQUIRE = os.environ.get("MMACTS_REQUIRE_DB") == "1"


def unavailable(what: str, why: str) -> None:
    if REQUIRE:
        pytest.fail(f"{what} unavailable ({why}) and MMACTS_REQUIRE_DB=1", pytrace=False)
    pytest.skip(f"{what} unavailable: {why}")


@pytest.fixture(scope="session")
def pg_server():
    from mmacts.db.pgserver import TempPostgres, unavailable_reason

    why = unavailable_reason()
    if why:
        unavailable("PostgreSQL", why)
    pg = TempPostgres()
    try:
        pg.start()
    except RuntimeError as exc:
        unavailable("PostgreSQL", str(exc).splitlines()[0])
    yield pg
    pg.stop()


_DB_NUMBER = itertools.count()


@pytest.fixture(params=["duckdb", "postgres"])
def store_url(request, tmp_path) -> str:
    """A fresh, empty store of each kind: a DuckDB file, or a new database on the test server."""
    if request.param == "duckdb":
        try:
            import duckdb  # noqa: F401
        except ImportError:
            unavailable("DuckDB", "the duckdb package is not installed (pip install 'mmacts[db]')")
        return str(tmp_path / "store.duckdb")
    pg = request.getfixturevalue("pg_server")
    import psycopg

    name = f"t{os.getpid()}_{next(_DB_NUMBER)}"
    with psycopg.connect(pg.url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return pg.url.replace("/postgres?", f"/{name}?")


@pytest.fixture(scope="session")
def compile_run(tmp_path_factory) -> Path:
    """A real run directory: a few compile cases (seconds), with register observations."""
    out = tmp_path_factory.mktemp("runs")
    res = subprocess.run([sys.executable, "-m", "mmacts.runner.cli", "run", "--suite", "compile", "--level", "smoke",
                          "--backend", "compile", "-k", "T39 or T40", "--out", str(out)],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    return Path(res.stdout.strip().splitlines()[-1])
