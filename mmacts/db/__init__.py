"""The results store: run directories -> DuckDB (a file, the default) or PostgreSQL, and the pages over it.

``store`` (connections), ``schema`` (migrations), ``ingest`` (runs in), ``queries`` (history, flaky,
regressions, device), ``pages`` (HTML), ``cli`` (``mmacts db``), ``simulate`` (a simulated fleet for the
tests and ``benchmarks/bench_db.py``), ``pgserver`` (a throwaway PostgreSQL for tests).
"""
