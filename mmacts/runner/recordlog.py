"""``results.jsonl`` as the controlling process writes it: every record at once, fsync in batches.

Why not :func:`mmacts.core.records.append_jsonl` per case: it opens the file and fsyncs it for
every record, and an fsync costs 1-10 ms on the disks of the hosts we run on (5.8 ms on the CI
machine), more than the whole harness may spend on a case. Here:

- each record is one ``write`` of one complete line to a file kept open in append mode, flushed to
  the operating system before :meth:`RecordLog.append` returns: a killed run (``kill -9``, a
  crashed controller, ``os._exit``) keeps every record appended so far, as before;
- the fsync that makes the lines survive a crash of the *machine* is done by a daemon thread,
  at most ``every_s`` seconds after a record was written and at once when ``every_n`` records
  wait, so a slow disk never stalls a case; and by :meth:`close` / :meth:`sync` (session end,
  and before a process ends itself on purpose);
- the line format is ``append_jsonl``'s (sorted keys, ``default=str``), so readers see no difference.

Every wait is bounded: the background thread only ever waits ``every_s`` on an event.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from mmacts.core.records import repair_tail

EVERY_N = 64
"""fsync after this many records at most."""

EVERY_S = 0.5
"""... or when the oldest unsynced record is this old (seconds)."""


class RecordLog:
    """An append-only JSONL file with batched fsync (see the module docstring)."""

    def __init__(self, path: Path | str, every_n: int = EVERY_N, every_s: float = EVERY_S) -> None:
        self.path = Path(path)
        self.every_n = max(1, int(every_n))
        self.every_s = float(every_s)
        # a line cut by a kill of an earlier writer is repaired first: never glue a record to it
        self.repaired = repair_tail(self.path)
        self._fh = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 -- kept open on purpose
        self._lock = threading.Lock()
        self._pending = 0
        self.syncs = 0
        """fsyncs done (for tests and the benchmark)."""
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    # ----------------------------------------------------------------------------------- writing
    def append(self, record: dict[str, Any]) -> None:
        """Write ``record`` as one line and hand it to the OS. The fsync is the sync thread's: it
        runs within ``every_s``, at once when ``every_n`` records wait, never under the caller (an
        fsync took 2.5 s on a GPU host whose disk was busy)."""
        line = json.dumps(record, sort_keys=True, default=str) + "\n"
        with self._lock:
            if self._fh.closed:  # written after close (a late hook): never lose it
                self._fh = open(self.path, "a", encoding="utf-8")  # noqa: SIM115
            self._fh.write(line)
            self._fh.flush()
            self._pending += 1
            due = self._pending >= self.every_n
            if self._thread is None and self.every_s > 0 and not self._stop.is_set():
                self._start_thread()
            threaded = self._thread is not None and self._thread.is_alive()
        if due:
            if threaded:
                self._wake.set()
            else:
                self.sync()

    def sync(self) -> None:
        """fsync now (in the caller) if anything is unsynced."""
        with self._lock:
            if not self._pending or self._fh.closed:
                return
            fd = os.dup(self._fh.fileno())  # the file may be closed while this fsync runs
            self._pending = 0
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        with self._lock:
            self.syncs += 1

    def close(self) -> None:
        """Stop the sync thread, fsync what is left, close. Safe to call twice."""
        self._stop.set()
        self._wake.set()
        t = self._thread
        if t is not None and t is not threading.current_thread():
            t.join(timeout=2 * self.every_s + 5)
        self.sync()
        with self._lock:
            if not self._fh.closed:
                self._fh.close()

    @property
    def pending(self) -> int:
        """Records written but not yet fsync'd."""
        return self._pending

    # ---------------------------------------------------------------------------------- internals
    def _start_thread(self) -> None:
        def loop() -> None:
            while not self._stop.is_set():
                self._wake.wait(self.every_s)
                self._wake.clear()
                try:
                    self.sync()
                except (OSError, ValueError):  # the file went away under us: close() says the rest
                    pass

        self._thread = threading.Thread(target=loop, name="mmacts-record-sync", daemon=True)
        self._thread.start()
