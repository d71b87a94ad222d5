"""``libvmcuda``: a C library with the CUDA driver's signatures for the calls a host program makes to build a
launch's parameter blocks on the VM (``cuTensorMapEncodeTiled``, ``cuTensorMapEncodeIm2col``, and harmless stubs:
``cuInit``, ``cuDriverGetVersion``, ``cuGetErrorString``, ``cuGetErrorName``). A C++ host program -- CUTLASS's
own host code built with ``-DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL=1`` -- links it instead of libcuda and gets
the 128 bytes the VM reads, exactly those :mod:`mmacts.ptxvm.host.tensormap` writes.

Why C and not a ctypes shim: the host programs that need it are C++ binaries; and a second implementation written
apart from the Python one makes a wrong reading of the contract in either show up as a difference
(``test_libvmcuda.py``). Builds are cached by source hash (and compiler) under ``.mmacts-cache/libvmcuda/``
(``MMACTS_CACHE_DIR`` moves it), the way the CUTLASS peer caches its programs.

Stable interface (other code links against it): :func:`build` ``-> Path`` of ``libvmcuda.so``, :data:`HEADER`
(``vmcuda.h``; include it after or instead of ``<cuda.h>``), :func:`load` for ctypes (:func:`declare` puts the
same signatures on any library, the real libcuda included).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
from functools import cache
from pathlib import Path

HERE = Path(__file__).resolve().parent
HEADER = HERE / "vmcuda.h"
SOURCE = HERE / "vmcuda.c"
ROOT = HERE.parents[3]
FLAGS = ("-std=c11", "-O2", "-Wall", "-Wextra", "-shared", "-fPIC")


class Unavailable(RuntimeError):
    """No C compiler on this machine, or the library does not build."""


def compiler() -> str:
    """The system C compiler (``cc``, else ``gcc``); :class:`Unavailable` without one."""
    for name in ("cc", "gcc"):
        path = shutil.which(name)
        if path:
            return path
    raise Unavailable("libvmcuda needs a C compiler (cc or gcc) on PATH")


def _cache_root() -> Path:
    return Path(os.environ.get("MMACTS_CACHE_DIR", ROOT / ".mmacts-cache")) / "libvmcuda"


def build(source: Path | None = None) -> Path:
    """Compile (once per source hash and compiler) and return the path of ``libvmcuda.so``.

    ``source`` replaces ``vmcuda.c`` (tests build a copy with a planted fault; a ``vmcuda.h`` beside the copy is
    the one it includes, else :data:`HEADER`). The
    build goes to a temporary name first and is renamed into place, so parallel test workers never load half a
    file."""
    cc = compiler()
    src = SOURCE if source is None else Path(source)
    h = hashlib.sha256()
    h.update(f"{cc}|{FLAGS}".encode())
    header = src.parent / "vmcuda.h" if (src.parent / "vmcuda.h").exists() else HEADER
    for f in (header, src):
        h.update(f.read_bytes())
    out = _cache_root() / h.hexdigest()[:16] / "libvmcuda.so"
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(suffix=".so", dir=out.parent)
    os.close(fd)
    cmd = [cc, *FLAGS, f"-I{HERE}", str(src), "-o", tmp]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if r.returncode:
        os.unlink(tmp)
        raise Unavailable(f"building libvmcuda failed: {(r.stderr or r.stdout)[-2000:]}")
    os.replace(tmp, out)
    return out


def declare(lib: ctypes.CDLL) -> ctypes.CDLL:
    """Declare the driver signatures on ``lib`` (this library, or the real ``libcuda.so.1`` -- the hardware probe
    in ``validation/probes/tma-im2col`` calls both the same way)."""
    u32, u64, vp = ctypes.c_uint32, ctypes.c_uint64, ctypes.c_void_p
    p64, p32, pint = ctypes.POINTER(u64), ctypes.POINTER(u32), ctypes.POINTER(ctypes.c_int)
    common = [vp, ctypes.c_int, u32, vp, p64, p64]
    enums = [ctypes.c_int] * 4
    lib.cuTensorMapEncodeTiled.argtypes = [*common, p32, p32, *enums]
    lib.cuTensorMapEncodeIm2col.argtypes = [*common, pint, pint, u32, u32, p32, *enums]
    for fn in (lib.cuTensorMapEncodeTiled, lib.cuTensorMapEncodeIm2col, lib.cuDriverGetVersion,
               lib.cuGetErrorString, lib.cuGetErrorName, lib.cuInit):
        fn.restype = ctypes.c_int
    lib.cuDriverGetVersion.argtypes = [pint]
    lib.cuGetErrorString.argtypes = lib.cuGetErrorName.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    lib.cuInit.argtypes = [ctypes.c_uint]
    if hasattr(lib, "vmcudaLastRule"):
        lib.vmcudaLastRule.restype = ctypes.c_char_p
        lib.vmcudaLastRule.argtypes = []
    return lib


@cache
def _load(path: Path) -> ctypes.CDLL:
    return declare(ctypes.CDLL(str(path)))


def load(source: Path | None = None) -> ctypes.CDLL:
    """The built library opened with ctypes, argument and result types declared."""
    return _load(build(source))
