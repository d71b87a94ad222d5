"""The oracle's answers kept on disk between runs, keyed by everything that computes them.

Why: a fleet runs the same cases with the same seeds on every GPU of every host, night after
night, and on a GPU host the reference's answers were most of a case's host time (the wgmma
numeric model over 4096 dot products, the exact GEMMs: ~5 ms a case on an H100 host, more than the
kernel, its launch and the comparison together). The answer of a case is a pure function of the
code that computes it and of the case's inputs, so it is computed once and read back after.

What keeps a cached answer from being a stale or foreign one -- the key is a hash of:

- the *code*: every file under ``mmacts/``, ``reference/`` and ``suites/`` (test files aside; data
  files, the spec catalog and the register included), read once per process. Any edit to any of
  them is a new key, so the cache never has to know which module an answer depends on;
- the case: every field of the :class:`~mmacts.cases.model.Case` (form, runtime, recipe, seed ...);
- the *inputs* the kernel was given, byte for byte (arrays with dtype and shape, scalars,
  dataclasses, containers): the answer follows the data actually launched, never a case name;
- numpy's and ml_dtypes' versions (the reference computes with them) and a format version.

Inputs the key cannot describe (an object of another type) are computed and not stored. A file
that does not load, or whose payload digest does not match, is recomputed. Files are written
under a private name and renamed into place, so concurrent workers never read half a file.

Only for drivers that ask (``worth_caching(case)``: the answer costs more than hashing its
inputs; today the Hopper validation suite's model and exact answers), and only when the run asks:
the CLI's ``mmacts run`` turns it on (``--no-answer-cache`` turns it off); an
:class:`~mmacts.backends.execute.Executor` made in code (self-tests, the mutants engine, the
kernel-fault checks) has none, so a fault planted in the reference in memory -- which the code
digest cannot see -- always meets a freshly computed answer.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from mmacts.cases.model import Case
from mmacts.core.driver import Expectation, as_driver

FORMAT = 3
"""Bump when the file layout or the key's recipe changes (3: SHA-256 instead of BLAKE2b)."""


def _hasher() -> Any:
    """The hash of keys, code and payloads: SHA-256, which CPUs with SHA extensions compute in
    hardware. Why not BLAKE2b: on the H100 host's CPU it hashed 0.33 GB/s against SHA-256's 1.21 GB/s
    (here 1.5 and 2.2); hashing a case's inputs (~0.35 MB for a wgmma case) was then the largest part
    of a case's executor time on a warm run."""
    return hashlib.sha256()

REPO_ROOT = Path(__file__).resolve().parents[2]
CODE_DIRS = ("mmacts", "reference", "suites")


class _Undescribed(Exception):
    """Inputs hold an object the key cannot describe byte for byte."""


def code_digest(root: Path = REPO_ROOT, dirs: tuple[str, ...] = CODE_DIRS) -> str:
    """Hash of every file under ``root/dirs`` (paths and bytes; test files and bytecode aside)."""
    h = _hasher()
    for d in dirs:
        for p in sorted((root / d).rglob("*")):
            if p.is_dir() or "__pycache__" in p.parts or p.name.startswith("test_") or p.suffix == ".pyc":
                continue
            h.update(str(p.relative_to(root)).encode() + b"\0")
            h.update(p.read_bytes())
            h.update(b"\0")
    return h.hexdigest()


def _describe(obj: Any, head: list[str], arrays: list[memoryview]) -> None:
    """Describe ``obj`` unambiguously: type tags and lengths go to ``head``, array bytes to ``arrays`` (in
    order; their dtype and shape in ``head`` say how many bytes each is). Raises :class:`_Undescribed`."""
    if isinstance(obj, np.ndarray):
        if obj.dtype.hasobject:
            raise _Undescribed("object array")
        data = np.ascontiguousarray(obj)
        head.append(f"A{data.dtype.str}{data.shape}")
        arrays.append(memoryview(data.reshape(-1).view(np.uint8)))
    elif isinstance(obj, np.generic):
        head.append(f"S{obj.dtype.str}{obj.tobytes().hex()}")
    elif obj is None or isinstance(obj, bool | int | float | str | bytes):
        text = repr(obj)
        head.append(f"P{type(obj).__name__}{len(text)}:{text}")
    elif isinstance(obj, dict):
        head.append(f"D{len(obj)}")
        for k in sorted(obj, key=repr):
            _describe(k, head, arrays)
            _describe(obj[k], head, arrays)
    elif isinstance(obj, list | tuple):
        head.append(f"L{type(obj).__name__}{len(obj)}")
        for x in obj:
            _describe(x, head, arrays)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        head.append(f"C{type(obj).__module__}.{type(obj).__qualname__}")
        for f in dataclasses.fields(obj):
            _describe(f.name, head, arrays)
            _describe(getattr(obj, f.name), head, arrays)
    else:
        raise _Undescribed(type(obj).__name__)


def _feed(h: Any, obj: Any) -> None:
    """Feed ``obj`` into the hash: its description, then its arrays' bytes (no copies)."""
    head: list[str] = []
    arrays: list[memoryview] = []
    _describe(obj, head, arrays)
    h.update("\x1f".join(head).encode() + b"\x1e")
    for a in arrays:
        h.update(a)


def _versions() -> str:
    try:
        import ml_dtypes

        mld = ml_dtypes.__version__
    except ImportError:  # pragma: no cover -- a dependency of the reference
        mld = "-"
    return f"numpy {np.__version__}; ml_dtypes {mld}; format {FORMAT}"


class AnswerCache:
    """Answers of :meth:`Driver.expected` on disk under ``root`` (see the module docstring)."""

    def __init__(self, root: Path | str, *, code: str | None = None) -> None:
        self.root = Path(root)
        self._code = code
        self._cases: dict[int, tuple[Case, bytes]] = {}
        self.hits = 0
        self.misses = 0
        self.unstored = 0
        """Answers computed but not stored (inputs the key cannot describe, a write that failed)."""

    @property
    def code(self) -> str:
        """The code digest (computed at first use: once per process)."""
        if self._code is None:
            self._code = code_digest()
        return self._code

    def key(self, case: Case, inputs: Any) -> str | None:
        """The answer's key, or None when the inputs cannot be described byte for byte."""
        h = _hasher()
        h.update(f"{self.code}|{_versions()}|".encode())
        try:
            h.update(self._case_head(case))
            _feed(h, inputs)
        except _Undescribed:
            return None
        return h.hexdigest()

    def _case_head(self, case: Case) -> bytes:
        """The case's description (arrays-free), made once per case object: its ~40 fields cost more
        to walk than the inputs. The entry holds the case, so its id cannot be reused meanwhile."""
        got = self._cases.get(id(case))
        if got is None or got[0] is not case:
            head: list[str] = []
            arrays: list[memoryview] = []
            _describe(case, head, arrays)
            if arrays:
                raise _Undescribed("a case holding arrays")
            got = self._cases[id(case)] = (case, "\x1f".join(head).encode() + b"\x1e")
        return got[1]

    def path(self, case: Case, key: str) -> Path:
        return self.root / case.suite / key[:2] / f"{key}.answer"

    def expected(self, driver: Any, case: Case, inputs: Any) -> Expectation:
        """``driver.expected(case, inputs)``, read from the cache when this exact answer is there.

        Only answers a driver says are worth keeping (``worth_caching(case)`` True) are looked up: most
        answers cost less than hashing their inputs (a published file's bits, a probe's observation,
        whose inputs took up to 50 ms to hash on a 2-core machine), so a driver without the hook is never
        cached."""
        if not as_driver(driver).worth_caching(case):
            return driver.expected(case, inputs)
        key = self.key(case, inputs)
        if key is not None:
            got = self._read(self.path(case, key))
            if got is not None:
                self.hits += 1
                return got
        exp = driver.expected(case, inputs)
        self.misses += 1
        if key is None or not self._write(self.path(case, key), exp):
            self.unstored += 1
        return exp

    # ------------------------------------------------------------------------------ files
    # One file per answer: a magic line, a JSON header line (expectation fields, arrays' names, dtypes and
    # shapes, and a digest of header and payload), then the arrays' raw bytes. A zip (np.savez) cost
    # ~0.3 ms a read here, most of the cache's time per case.
    MAGIC = b"MMACTS-ANSWER 1\n"

    @staticmethod
    def _digest(header: dict[str, Any], payload: bytes | memoryview) -> str:
        h = _hasher()
        h.update(json.dumps(header, sort_keys=True).encode())
        h.update(payload)
        return h.hexdigest()

    def _write(self, path: Path, exp: Expectation) -> bool:
        arrays: dict[str, np.ndarray] = {"want": np.asarray(exp.want)}
        tol = exp.tolerance
        if isinstance(tol, np.ndarray):
            arrays["tolerance"] = tol
            tol_meta: Any = "array"
        elif tol is None or isinstance(tol, int | float):
            tol_meta = None if tol is None else float(tol)
        else:
            return False
        if any(a.dtype.hasobject for a in arrays.values()):
            return False
        blobs = [np.ascontiguousarray(a) for a in arrays.values()]
        header: dict[str, Any] = {
            "mode": exp.mode, "note": exp.note, "control": exp.control, "tolerance": tol_meta,
            "arrays": [[name, b.dtype.str, list(b.shape)] for name, b in zip(arrays, blobs, strict=True)]}
        payload = b"".join(b.tobytes() for b in blobs)
        header["digest"] = self._digest(header, payload)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".answer", dir=path.parent)
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(self.MAGIC + json.dumps(header, sort_keys=True).encode() + b"\n" + payload)
                os.replace(tmp, path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError:
            return False
        return True

    def _read(self, path: Path) -> Expectation | None:
        try:
            data = path.read_bytes()
        except OSError:
            return None
        if not data.startswith(self.MAGIC):
            return None
        end = data.find(b"\n", len(self.MAGIC))
        try:
            header = json.loads(data[len(self.MAGIC):end])
            payload = memoryview(data)[end + 1:]
            digest = header.pop("digest")
            if end < 0 or digest != self._digest(header, payload):
                return None  # half a file from a killed writer, a damaged disk: recompute
            arrays, pos = {}, 0
            for name, dtype, shape in header["arrays"]:
                dt = np.dtype(dtype)
                n = dt.itemsize * int(np.prod(shape, dtype=np.int64))
                arrays[name] = np.frombuffer(payload[pos:pos + n], dtype=dt).reshape(shape).copy()
                pos += n
            if pos != len(payload) or "want" not in arrays:
                return None
        except (ValueError, KeyError, TypeError):
            return None
        tol = arrays.get("tolerance") if header.get("tolerance") == "array" else header.get("tolerance")
        return Expectation(arrays["want"], header["mode"], tol, header.get("note", ""), header.get("control", ""))
