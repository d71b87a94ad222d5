"""Where a run's wall time goes: phase marks for the benchmark (``MMACTS_TIMING=FILE``).

Off unless ``MMACTS_TIMING`` names a file: then every process of the run (the pytest
controller, each xdist worker) appends ``<epoch seconds> <who> <mark>`` lines to it, one
``write`` each (``O_APPEND``: lines of concurrent processes do not interleave). The marks:
``proc_start`` (when the process was created, from ``/proc``), ``configure`` (pytest
configured: interpreter, imports, plugins), ``collected``, ``first_case`` / ``last_case`` (the
controller's view: the first case started, the last record written), ``finish`` (session
end). ``benchmarks/bench_end_to_end.py`` turns them into the start-up breakdown.
"""

from __future__ import annotations

import os
import time

ENV = "MMACTS_TIMING"


def enabled() -> bool:
    return bool(os.environ.get(ENV))


PER_CASE_ENV = "MMACTS_TIMING_CASES"


def per_case() -> bool:
    """Also mark every case (``MMACTS_TIMING_CASES=1``): ``case_start`` (pytest begins the item),
    ``exec_start``/``exec_end`` (the executor), ``case_written`` (its record), for where a case's
    wall time goes outside the executor."""
    return bool(os.environ.get(ENV)) and os.environ.get(PER_CASE_ENV) == "1"


def mark(name: str, who: str = "", at: float | None = None) -> None:
    """Append one mark (no-op unless ``MMACTS_TIMING`` is set; never raises)."""
    path = os.environ.get(ENV)
    if not path:
        return
    line = f"{time.time() if at is None else at:.6f} {who or os.getpid()} {name}\n"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)
    except OSError:
        pass


def process_start() -> float | None:
    """Epoch time this process was created (Linux ``/proc``), else None."""
    try:
        with open("/proc/self/stat", encoding="ascii") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        ticks = int(fields[19])  # starttime: field 22 of stat, clock ticks after boot
        with open("/proc/uptime", encoding="ascii") as fh:
            uptime = float(fh.read().split()[0])  # 10 ms resolution (btime in /proc/stat: 1 s)
        return time.time() - (uptime - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return None


def read(path: str) -> list[tuple[float, str, str]]:
    """The marks of a file: (epoch, who, name), in time order."""
    out = []
    try:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) == 3:
                    out.append((float(parts[0]), parts[1], parts[2]))
    except OSError:
        return []
    return sorted(out)
