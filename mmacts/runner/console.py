"""What ``mmacts run`` says on the console: the truth at a glance.

- Before the run: which hardware suites ``auto`` (or ``model``) will run on the PTX VM, loudly
  ("model backend: not a hardware verdict"); ``--require-gpu`` refuses to start without a usable GPU.
- During the run: progress per suite (cases done / selected, counts by status, ETA), from
  ``results.jsonl`` as the test process appends it (the test process itself is kept quiet).
- After the run: one line per suite and one total line; ``observed`` is never counted as a pass,
  and ``--require-gpu`` fails (exit 7) when a hardware-suite case did not run on a GPU.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

from mmacts.backends import MODEL
from mmacts.backends.choice import choose
from mmacts.cases.status import NOT_RUN, ORDER
from mmacts.core.driver import as_driver
from mmacts.core.suites import load_driver
from mmacts.runner.select import cases

REQUIRE_GPU_EXIT = 7
"""``--require-gpu``: the run completed but some hardware-suite case did not run on a GPU."""



def hardware_suites(suites: Iterable[str]) -> list[str]:
    """Suites whose cases run kernels on a GPU (everything but the compile-only toolchain suite)."""
    return [s for s in suites if not as_driver(load_driver(s)).compile_only]


def gpu_plan(suites: list[str], backend: str) -> tuple[list[str], str | None]:
    """(suites the model will run although they are hardware suites, why) before the run starts: the same
    :func:`~mmacts.backends.choice.choose` the executor makes per case, asked per suite."""
    hw = hardware_suites(suites)
    if not hw:
        return [], None
    chosen = {s: choose(backend, as_driver(load_driver(s))) for s in hw}
    on_model = [s for s, c in chosen.items() if c.backend == MODEL]
    return on_model, (chosen[on_model[0]].on_model if on_model else None)


def model_banner(on_model: list[str], why: str | None) -> str:
    return (f"MODEL BACKEND: not a hardware verdict: {', '.join(on_model)} run on the PTX VM ({why}); "
            "their pass means the kernels, encoders and spec reading agree, not that a GPU does")


def _counts_text(c: Counter) -> str:
    keys = [k for k in ORDER if c.get(k)] + sorted(k for k in c if k not in ORDER and c[k])
    return ", ".join(f"{c[k]} {k}" for k in keys) or "nothing"


def _eta(done: int, total: int, elapsed: float) -> str:
    if done <= 0 or total <= done or elapsed <= 0:
        return "-"
    return _fmt_s(elapsed / done * (total - done))


def _fmt_s(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"


class Progress:
    """Tails ``results.jsonl`` in a thread and prints one progress line per suite (a TTY: one line
    rewritten in place; a log: a block every ``every`` seconds and when a suite finishes)."""

    def __init__(self, jsonl: Path, totals: dict[str, int], stream: TextIO | None = None,
                 every: float = 30.0) -> None:
        self.jsonl, self.totals, self.every = Path(jsonl), dict(totals), every
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.by_suite: dict[str, Counter] = {s: Counter() for s in totals}
        self.seen: set[str] = set()
        self.offset = 0
        self.clock = time.monotonic
        self.start = self.clock()
        self.began: dict[str, float] = {}
        """When each suite began: the arrival of the last record before its first (the run's start for the
        first suite): its cases' own pace gives its ETA, not the run's average (a slow suite, peers,
        left an ETA of ~2m standing for five minutes when the average came from fast suites)."""
        self._last_arrival: float | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._finished: set[str] = set()

    def _read(self) -> None:
        try:
            with open(self.jsonl, "rb") as fh:
                fh.seek(self.offset)
                data = fh.read()
        except OSError:
            return
        end = data.rfind(b"\n")
        if end < 0:
            return
        self.offset += end + 1
        now = self.clock()
        for line in data[:end].splitlines():
            try:
                rec = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                continue
            cid = rec.get("case_id") if isinstance(rec, dict) else None
            if not cid or cid in self.seen:
                continue
            self.seen.add(cid)
            suite = rec.get("suite") or "?"
            if suite not in self.began:
                self.began[suite] = self.start if self._last_arrival is None else self._last_arrival
            self._last_arrival = now
            self.by_suite.setdefault(suite, Counter())[rec.get("status") or "?"] += 1

    def lines(self) -> list[str]:
        now = self.clock()
        elapsed = now - self.start
        done_all = sum(sum(c.values()) for c in self.by_suite.values())
        total_all = sum(self.totals.values())
        out = []
        left_s, unknown = 0.0, []
        for suite, c in self.by_suite.items():
            n, total = sum(c.values()), self.totals.get(suite, 0)
            line = f"{suite} {n}/{total or '?'} ({_counts_text(c)})"
            if total > n and n:
                spent = now - self.began.get(suite, self.start)
                left_s += spent / n * (total - n)
                line += f", ETA {_eta(n, total, spent)}"
            out.append(line)
        unknown = [s for s, t in self.totals.items() if t and not sum(self.by_suite.get(s, Counter()).values())]
        eta = "-" if left_s <= 0 else _fmt_s(left_s)
        if unknown:  # no case of these has ended: their pace is unknown, and an ETA that hid them would lie
            eta = f"{eta if left_s > 0 else ''}{' + ' if left_s > 0 else ''}{', '.join(unknown)} not started"
        out.append(f"all {done_all}/{total_all}, {int(elapsed)}s, ETA {eta}")
        return out

    def tick(self, force: bool = False) -> None:
        self._read()
        newly = {s for s, c in self.by_suite.items() if self.totals.get(s) and sum(c.values()) >= self.totals[s]}
        finished, self._finished = newly - self._finished, self._finished | newly
        if self.tty:
            self.stream.write("\r\x1b[Kmmacts: " + " | ".join(self.lines()))
        elif force or finished:
            for line in self.lines():
                self.stream.write(f"mmacts: progress {line}\n")
        self.stream.flush()

    def _loop(self) -> None:
        last = time.monotonic()
        while not self._stop.wait(1.0 if self.tty else 2.0):
            due = time.monotonic() - last >= self.every
            self.tick(force=due)
            if due:
                last = time.monotonic()

    def __enter__(self) -> Progress:
        self._thread = threading.Thread(target=self._loop, name="mmacts-progress", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._read()
        if self.tty:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def selected_totals(suites: list[str], level: str, sel: Any, shard: str | None) -> dict[str, int]:
    """Cases per suite the run will run (the selection and shard applied; a resume counts all)."""
    from mmacts.runner.plugin import shard_of  # pytest and the executor: not at the CLI's start

    idx, n = (int(x) for x in shard.split("/")) if shard else (0, 0)
    totals: Counter = Counter({s: 0 for s in suites})
    for case in cases(suites, level, sel):
        if not n or shard_of(case.case_id, n) == idx:
            totals[case.suite] += 1
    return dict(totals)


def summary_lines(df: Any) -> list[str]:
    """One line per suite (with the backend that ran it) and a total; observed is its own status."""
    out = []
    if df is None or not len(df):
        return ["0 cases"]
    for suite, part in df.groupby("suite", dropna=False, sort=False):
        backends = Counter(part["backend"].dropna())
        ran = "/".join(sorted(backends)) or "-"
        loud = " (MODEL: not a hardware verdict)" if "model" in backends and suite not in ("compile",) else ""
        out.append(f"{suite} on {ran}{loud}: {_counts_text(Counter(part['status'].dropna()))}")
    c = Counter(df["status"].dropna())
    note = " (observed cases are recorded answers, not passes)" if c.get("observed") else ""
    out.append(f"total {len(df)} cases: {_counts_text(c)}{note}")
    return out


def not_on_gpu(df: Any, hw: Iterable[str]) -> tuple[int, Counter]:
    """``--require-gpu``: hardware-suite cases that did not run on a GPU (another backend, a skip, or a
    form this GPU cannot run: ``not-supported``)."""
    part = df[df["suite"].isin(list(hw))]
    bad = part[(part["backend"] != "cuda") | part["status"].isin(NOT_RUN)]
    return len(bad), Counter(bad["suite"].dropna())
