"""Atomic file writes: a reader (or a killed run) never sees a half-written report."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def write_atomic(path: Path, writer: Callable[[Path], None]) -> None:
    """Call ``writer(tmp_path)`` then rename the temporary file over ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(fd)
    try:
        writer(Path(tmp))
        # mkstemp makes 0600 files; a report is for everyone who can read the folder (umask decides).
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_text_atomic(path: Path, text: str) -> None:
    """Atomically write ``text`` (UTF-8) to ``path``."""
    write_atomic(path, lambda p: p.write_text(text, encoding="utf-8"))
