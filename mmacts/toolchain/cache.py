"""On-disk cache of compile results, keyed by (PTX hash, arch, ptxas version, flags).

Why: the compile layer assembles thousands of modules and ptxas is deterministic for a given
input and version, so a warm run should cost file reads only. Entries are written atomically
(temporary file + ``os.replace``) because xdist workers write concurrently, and each carries a
SHA-256 of its payload: a truncated or edited entry is detected on read, reported as a miss and
rebuilt, never trusted.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

CACHE_ENV = "MMACTS_CACHE_DIR"
DEFAULT_CACHE_DIR = ".mmacts-cache"
_FORMAT = 1


def cache_dir() -> Path:
    """The cache root: ``$MMACTS_CACHE_DIR`` if set, else ``.mmacts-cache`` in the working dir."""
    return Path(os.environ.get(CACHE_ENV) or DEFAULT_CACHE_DIR)


def cache_key(*parts: Any) -> str:
    """Stable hex key of the given JSON-able parts."""
    blob = json.dumps(parts, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()


def _checksum(payload: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


class DiskCache:
    """A folder of JSON entries ``<root>/<namespace>/<key[:2]>/<key>.json``."""

    def __init__(self, namespace: str, root: Path | None = None):
        self.root = (root if root is not None else cache_dir()) / namespace
        self.corrupt_seen = 0
        """How many corrupt entries this instance found (and dropped)."""

    def path(self, key: str) -> Path:
        """Where the entry for ``key`` lives."""
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The payload stored under ``key``, or ``None`` (absent, or corrupt and removed)."""
        p = self.path(key)
        try:
            raw = p.read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return None
        try:
            doc = json.loads(raw)
            payload = doc["payload"]
            ok = (doc.get("format") == _FORMAT and doc.get("key") == key
                  and doc["sha256"] == _checksum(payload))
        except (ValueError, KeyError, TypeError):
            ok = False
        if not ok:
            self.corrupt_seen += 1
            try:
                p.unlink()
            except FileNotFoundError:
                pass
            return None
        return payload

    def put(self, key: str, payload: dict[str, Any]) -> None:
        """Store ``payload`` under ``key`` atomically (tmp file in the same folder + rename)."""
        p = self.path(key)
        p.parent.mkdir(parents=True, exist_ok=True)
        doc = {"format": _FORMAT, "key": key, "sha256": _checksum(payload), "payload": payload}
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=p.parent)
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(doc, f)
            os.replace(tmp, p)
        except BaseException:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            raise


def b64(data: bytes) -> str:
    """Bytes -> ASCII for a JSON payload."""
    return base64.b64encode(data).decode()


def unb64(text: str) -> bytes:
    """ASCII from a JSON payload -> bytes."""
    return base64.b64decode(text.encode())
