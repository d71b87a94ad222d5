"""A throwaway PostgreSQL server for tests and the benchmark: ``initdb`` + ``pg_ctl`` on a Unix
socket in a temporary directory (no TCP port), removed when done.

It needs the server binaries (Debian: ``apt-get install postgresql``; they live in
``/usr/lib/postgresql/<version>/bin``). PostgreSQL refuses to run as root: as root the cluster
runs as ``nobody`` through ``runuser`` (util-linux), or as ``MMACTS_PG_USER``.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path


def pg_bin() -> Path | None:
    """The directory holding initdb/pg_ctl/postgres, newest version first; None if absent."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).resolve().parent
    cands = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: [int(x) if x.isdigit() else 0 for x in Path(p).parent.parent.name.split(".")])
    return Path(cands[-1]).parent if cands else None


def unavailable_reason() -> str | None:
    """Why a throwaway server cannot be started here (None: it can)."""
    if pg_bin() is None:
        return "no PostgreSQL server binaries (initdb/pg_ctl; Debian: apt-get install postgresql)"
    if os.geteuid() == 0 and not shutil.which("runuser"):
        return "running as root and no runuser to start PostgreSQL as an unprivileged user"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg 3 is not installed (pip install 'mmacts[db]')"
    return None


class TempPostgres:
    """``with TempPostgres() as pg: pg.url`` -> ``postgresql://...`` of a fresh, empty cluster."""

    def __init__(self, fsync: bool = False) -> None:
        self.fsync = fsync
        self.dir: Path | None = None
        self.url = ""

    def _as_user(self, argv: list[str]) -> list[str]:
        if os.geteuid() != 0:
            return argv
        return ["runuser", "-u", os.environ.get("MMACTS_PG_USER", "nobody"), "--", *argv]

    def _run(self, argv: list[str]) -> None:
        res = subprocess.run(self._as_user(argv), capture_output=True, text=True, timeout=120)
        if res.returncode != 0:
            raise RuntimeError(f"{Path(argv[0]).name} failed ({res.returncode}): {(res.stderr or res.stdout)[-800:]}")

    def start(self) -> TempPostgres:
        why = unavailable_reason()
        if why:
            raise RuntimeError(why)
        bindir = pg_bin()
        assert bindir is not None
        self.dir = Path(tempfile.mkdtemp(prefix="mmacts-pg-"))
        if os.geteuid() == 0:
            pw = pwd.getpwnam(os.environ.get("MMACTS_PG_USER", "nobody"))
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
        data, sock = self.dir / "data", self.dir
        self._run([str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "mmacts", "--no-sync",
                   "-E", "UTF8", "--locale=C"])
        opts = f"-k {sock} -c listen_addresses='' -c max_connections=60"
        if not self.fsync:
            opts += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        self._run([str(bindir / "pg_ctl"), "-D", str(data), "-l", str(self.dir / "server.log"), "-o", opts,
                   "-w", "-t", "60", "start"])
        self.url = f"postgresql://mmacts@/postgres?host={sock}"
        return self

    def stop(self) -> None:
        if self.dir is None:
            return
        bindir = pg_bin()
        try:
            if bindir is not None and (self.dir / "data" / "postmaster.pid").exists():
                self._run([str(bindir / "pg_ctl"), "-D", str(self.dir / "data"), "-m", "immediate", "-w", "stop"])
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def __enter__(self) -> TempPostgres:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
