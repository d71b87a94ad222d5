"""One owner per run directory: the lock that keeps two processes from running one run at once.

Why: a resume started while the run it completes was still going (its CLI alive, or only its
test process left behind) ran every missing case twice, both appending to one ``results.jsonl``
(779 records for 433 cases), and on a GPU host both would share the GPU.

How: ``RUN/run.lock`` is held with ``flock`` for as long as the run's CLI *or its test process*
lives (the test process inherits the locked descriptor, see :meth:`RunLock.inheritable_fd`). The
kernel drops an ``flock`` when the last process holding it ends, however it ends (``kill -9``
included), so a lock whose owners are dead is free again without anyone judging staleness, and
two resumes racing for it cannot both win. The file's content (pid, host, start, command) is only
for the message a refused resume prints. Where ``flock`` is not supported (some network or FUSE
file systems) the content is the lock: a lock of this host whose pid is dead is taken over, one
whose pid lives (or of another host, whose pids cannot be checked) is refused.
"""

from __future__ import annotations

import errno
import json
import os
import socket
import time
from pathlib import Path

try:
    import fcntl
except ImportError:  # not POSIX: the content is the lock
    fcntl = None  # type: ignore[assignment]

LOCK_FILE = "run.lock"


class RunLocked(Exception):
    """The run directory is owned by a live process: one line for the user."""


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    except OSError:
        return False
    return True


def _describe(owner: dict, run_dir: Path) -> str:
    who = f"pid {owner.get('pid', '?')} on host {owner.get('host', '?')}"
    since = owner.get("since")
    when = f" since {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(since))}" if since else ""
    return (f"{run_dir} is being run by {who}{when}; wait for it to end or stop it "
            f"(a lock of a process that died is taken over by itself)")


class RunLock:
    """The lock of one run directory, held by this process from :meth:`acquire` to :meth:`release`."""

    def __init__(self, run_dir: Path | str) -> None:
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / LOCK_FILE
        self._fd: int | None = None

    def acquire(self, command: list[str] | None = None) -> RunLock:
        """Take the lock or raise :class:`RunLocked` naming the owner."""
        for _ in range(100):
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                if self._take(fd, command):
                    self._fd = fd
                    return self
            except BaseException:
                os.close(fd)
                raise
            os.close(fd)  # the file was removed by its releasing owner after we opened it: again
        raise RunLocked(f"{self.run_dir}: could not take {LOCK_FILE} (it keeps being replaced)")

    def _same_file(self, fd: int) -> bool:
        try:
            return os.path.samestat(os.fstat(fd), os.stat(self.path))
        except FileNotFoundError:
            return False

    def _take(self, fd: int, command: list[str] | None) -> bool:
        """Lock ``fd`` (False: it is a file its releasing owner has just unlinked; RunLocked: a
        live owner), then write who we are."""
        if fcntl is not None and self._flock(fd):
            if not self._same_file(fd):
                return False
        else:
            owner = self._read(fd)
            if owner and self._live(owner):
                raise RunLocked(_describe(owner, self.run_dir))
        me = {"pid": os.getpid(), "host": socket.gethostname(), "boot": boot_id(), "since": time.time(),
              "command": command or []}
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(me) + "\n").encode(), 0)
        return True

    def _flock(self, fd: int) -> bool:
        """True: locked now. False: flock is unsupported here (fall back on the content).
        RunLocked: a live process holds it."""
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError as exc:
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise RunLocked(_describe(self._read(fd) or {}, self.run_dir)) from None
            return False  # ENOLCK, EOPNOTSUPP, ...

    @staticmethod
    def _read(fd: int) -> dict | None:
        try:
            raw = os.pread(fd, 4096, 0)
            owner = json.loads(raw or b"null")
        except (OSError, ValueError):
            return None
        return owner if isinstance(owner, dict) else None

    @staticmethod
    def _live(owner: dict) -> bool:
        if owner.get("host") != socket.gethostname():
            return True  # another host's pid cannot be checked from here
        pid = owner.get("pid")
        return isinstance(pid, int) and pid != os.getpid() and _pid_alive(pid)

    def note_child(self, pid: int) -> None:
        """Add the test process's pid to the content (for messages, and for tests that kill it)."""
        if self._fd is None:
            return
        owner = self._read(self._fd) or {}
        owner["child"] = pid
        data = (json.dumps(owner) + "\n").encode()
        try:
            os.ftruncate(self._fd, 0)
            os.pwrite(self._fd, data, 0)
        except OSError:
            pass

    def inheritable_fd(self) -> tuple[int, ...]:
        """The descriptor a test process is started with (``Popen(pass_fds=...)``): the lock then
        lives while the test process does, even should this process die first."""
        return () if self._fd is None else (self._fd,)

    def release(self) -> None:
        """Give the lock up and remove the file (under the lock: a process that opened it just
        before sees, once it holds the lock, that the file is no longer there and starts again).
        Safe to call twice."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            if self._same_file(fd):
                os.unlink(self.path)
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_UN)
        except OSError:
            pass
        finally:
            os.close(fd)


def boot_id() -> str:
    """This boot of this machine ('' where unknown): a lock left by the same host under another boot
    means the machine went down while the run was going (a GPU hang that needed a reset, a power
    loss), not that someone stopped the run (see ``faults.record_lost_inflight``)."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def owner_of(run_dir: Path | str) -> dict | None:
    """The process that last took the lock of ``run_dir`` (content only; None if none)."""
    try:
        owner = json.loads((Path(run_dir) / LOCK_FILE).read_text() or "null")
    except (OSError, ValueError):
        return None
    return owner if isinstance(owner, dict) else None
