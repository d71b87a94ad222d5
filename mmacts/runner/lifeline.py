"""A run's test processes die with the process that started them.

Why: ``kill -9`` of ``mmacts run`` left its test process running (an orphan). A resume started
next ran beside it: 779 records for 433 cases, and on a GPU host both would share the GPU. The
CLI cannot clean up after a ``kill -9``, so the child watches its parent:

- on Linux, ``prctl(PR_SET_PDEATHSIG, SIGKILL)``: the kernel kills this process the moment its
  parent ends, however the parent ends;
- everywhere, a daemon thread that polls the parent pid (``os.getppid()`` changes when the
  parent dies and the process is re-parented), for systems without prctl and for the window
  before prctl was set (the parent may have died between ``fork`` and here).

``MMACTS_PARENT_PID`` names the parent the CLI meant; a process whose parent is already another
ends at once. A test process started by hand (no such variable) is left alone.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
import threading

PARENT_ENV = "MMACTS_PARENT_PID"
WORKERS_ENV = "MMACTS_LIFELINE"
"""Set (to 1) in a test process that has a lifeline: its xdist workers take one on their controller."""
EXIT_ORPHANED = 128 + signal.SIGKILL
"""Exit status when this process finds its parent gone (as if the kernel had killed it)."""

PR_SET_PDEATHSIG = 1
POLL_S = 0.5


def _set_pdeathsig() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _orphaned(parent: int) -> None:
    os._exit(EXIT_ORPHANED)


def die_with_parent(parent: int | None = None) -> bool:
    """Arrange to end when ``parent`` (default: the current parent) ends. Returns whether the
    kernel does it (prctl); the polling thread runs in any case."""
    if parent is None:
        parent = os.getppid()
    kernel = _set_pdeathsig()
    if os.getppid() != parent:  # it died before prctl took effect
        _orphaned(parent)

    def watch() -> None:
        ev = threading.Event()
        while not ev.wait(POLL_S):
            if os.getppid() != parent:
                _orphaned(parent)

    threading.Thread(target=watch, name="mmacts-lifeline", daemon=True).start()
    return kernel


def from_environment() -> bool:
    """The test process's entry: die with the CLI named by ``MMACTS_PARENT_PID`` (if set)."""
    # read once and removed: a process this one starts (a nested run in a test) must not take the
    # CLI for its parent; xdist workers learn from WORKERS_ENV to watch their own parent
    raw = os.environ.pop(PARENT_ENV, "")
    if not raw.isdigit():
        return False
    os.environ[WORKERS_ENV] = "1"
    return die_with_parent(int(raw))
