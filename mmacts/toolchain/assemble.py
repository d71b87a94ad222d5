"""Assemble PTX with the wheel's ptxas, through the on-disk cache.

Why a wrapper: the compile suite's verdict on a case is "did ptxas accept it, and if not, what
was the first error". ptxas prints temporary file paths in its messages; they are replaced by
``<ptx>`` so a message is the same on every run and machine and can be compared or quoted in a
report.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mmacts.toolchain.cache import DiskCache, b64, cache_key, unb64
from mmacts.toolchain.locate import find_tool, ptxas_version


@dataclass(frozen=True)
class CompileResult:
    """Outcome of one ptxas run (or of its cached copy)."""

    ok: bool
    cubin: bytes
    """The assembled cubin; empty when ``ok`` is false."""
    first_error_line: str
    """The first ``error`` line ptxas printed, normalised (``<ptx>`` for the file); '' if ok."""
    log: str
    """ptxas stdout + stderr, normalised."""
    seconds: float
    """Wall time of the ptxas run that produced this result (the original run when cached)."""
    cached: bool
    ptxas_version: str
    arch: str
    flags: tuple[str, ...]


_PATH_RE = re.compile(r"ptxas\s+(\S+?\.ptx)(?=[,:\s])")


def normalise_log(text: str) -> str:
    """Replace temporary PTX paths by ``<ptx>`` and squeeze ``error   :`` spacing."""
    text = _PATH_RE.sub("ptxas <ptx>", text)
    return re.sub(r"\b(error|warning|fatal|info)\s+:", r"\1 :", text).strip()


def first_error(log: str) -> str:
    """The first line of ``log`` that reports an error (or a fatal error)."""
    lines = log.splitlines()
    for ln in lines:
        if re.search(r"\berror\s*:", ln):
            return ln.strip()
    for ln in lines:
        if "fatal" in ln:
            return ln.strip()
    return lines[0].strip() if lines else ""


def _run_ptxas(ptx: str, arch: str, flags: Sequence[str]) -> tuple[bool, bytes, str, float]:
    exe = find_tool("ptxas")
    with tempfile.TemporaryDirectory(prefix="mmacts-ptxas-") as tmp:
        src = Path(tmp) / "module.ptx"
        out = Path(tmp) / "module.cubin"
        src.write_text(ptx)
        t0 = time.perf_counter()
        res = subprocess.run(
            [str(exe), f"-arch={arch}", *flags, str(src), "-o", str(out)],
            capture_output=True, text=True, check=False,
        )
        dt = time.perf_counter() - t0
        log = normalise_log((res.stdout + res.stderr).replace(str(src), "<ptx>"))
        if res.returncode < 0:  # a crash is not a refusal: say so (the fuzzer found ptxas segfaulting)
            log = (log + "\n" if log else "") + f"ptxas error : ptxas crashed (signal {-res.returncode})"
        ok = res.returncode == 0 and out.is_file()
        cubin = out.read_bytes() if ok else b""
    return ok, cubin, log, dt


def assemble(
    ptx: str,
    arch: str,
    flags: Sequence[str] = (),
    *,
    cache: DiskCache | None = None,
    use_cache: bool = True,
) -> CompileResult:
    """Assemble ``ptx`` for ``arch`` (e.g. ``sm_100a``) with extra ptxas ``flags``.

    Results, refusals included (ptxas is deterministic), are cached under (sha256(ptx), arch, ptxas
    version, flags); a ptxas crash (a signal, said in the log and the first error line) is not an
    answer and is never cached (the fuzzer found ptxas 13.5.37 segfaulting on 9 of 12 runs of one
    valid kernel: validation/fuzz/ptxas-crash). ``cache`` picks a cache instance (default: the
    ``compile`` namespace under :func:`mmacts.toolchain.cache.cache_dir`).
    """
    version = ptxas_version()
    flags_t = tuple(flags)
    key = cache_key(hashlib.sha256(ptx.encode()).hexdigest(), arch, version, list(flags_t))
    store = cache if cache is not None else DiskCache("compile")
    if use_cache:
        hit = store.get(key)
        if hit is not None:
            try:
                return CompileResult(
                    ok=bool(hit["ok"]), cubin=unb64(hit["cubin"]),
                    first_error_line=hit["first_error_line"], log=hit["log"],
                    seconds=float(hit["seconds"]), cached=True, ptxas_version=version,
                    arch=arch, flags=flags_t,
                )
            except (KeyError, ValueError, TypeError):
                pass  # a well-formed but foreign payload: rebuild below
    ok, cubin, log, dt = _run_ptxas(ptx, arch, flags_t)
    err = "" if ok else first_error(log)
    if use_cache and "ptxas crashed" not in log:  # a crash is not ptxas's answer (it can pass next time)
        store.put(key, {"ok": ok, "cubin": b64(cubin), "first_error_line": err, "log": log,
                        "seconds": dt, "arch": arch, "flags": list(flags_t)})
    return CompileResult(ok=ok, cubin=cubin, first_error_line=err, log=log, seconds=dt,
                         cached=False, ptxas_version=version, arch=arch, flags=flags_t)


def cpu_count() -> int:
    """CPUs this process may use (for sizing process pools)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - non-Linux
        return os.cpu_count() or 1
