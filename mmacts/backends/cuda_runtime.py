"""Generic CuPy runtime: load a module (cubin or PTX), launch, time, with BOUNDED completion.

Why a deadline and not a plain synchronize: a conformance suite runs instructions whose
behaviour is unknown; a kernel that never finishes must become a case with status
``timeout``, not a run that hangs forever. Launches go to a private non-blocking stream and
the host polls a completion event until a deadline. After a timeout the context is
considered poisoned (the hung grid still occupies the GPU): every later launch through the
same :class:`Runtime` returns ``timeout`` at once with the reason, and the caller should end
the process.

CuPy may import on a machine with no GPU or no driver (it then raises
``cudaErrorInsufficientDriver`` / ``cudaErrorNoDevice`` at first use). :func:`probe` turns
every such failure into one line, ``no usable GPU: <reason>``, which the cuda backend
reports as the skip reason of every case.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mmacts.backends.cuda_errors import is_sticky_cuda_error


@dataclass(frozen=True)
class DeviceInfo:
    """What the report records about the GPU."""

    name: str
    compute_capability: tuple[int, int]
    driver_version: int
    runtime_version: int
    index: int = 0
    count: int = 1
    """How many CUDA devices are visible."""

    @property
    def arch(self) -> str:
        """``sm_90`` style name of the compute capability."""
        return f"sm_{self.compute_capability[0]}{self.compute_capability[1]}"


class NoUsableGPU(RuntimeError):
    """CuPy is missing, no driver answers, or no device is present."""


def probe(index: int = 0) -> DeviceInfo | str:
    """The device, or the string ``no usable GPU: <reason>``; never raises."""
    try:
        import cupy  # noqa: F401
        from cupy.cuda import runtime
    except Exception as exc:  # ImportError, or CuPy failing to find its libraries
        return f"no usable GPU: cupy unavailable ({type(exc).__name__}: {exc})"
    try:
        count = runtime.getDeviceCount()
        if count <= index:
            return f"no usable GPU: {count} CUDA device(s) visible, device {index} requested"
        props = runtime.getDeviceProperties(index)
        name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
        return DeviceInfo(
            name=name,
            compute_capability=(int(props["major"]), int(props["minor"])),
            driver_version=int(runtime.driverGetVersion()),
            runtime_version=int(runtime.runtimeGetVersion()),
            index=index,
            count=int(count),
        )
    except Exception as exc:  # cudaErrorInsufficientDriver, cudaErrorNoDevice, ...
        return f"no usable GPU: {type(exc).__name__}: {exc}".strip()


def require_device(index: int = 0) -> DeviceInfo:
    """:func:`probe` that raises :class:`NoUsableGPU` with the one-line reason."""
    info = probe(index)
    if isinstance(info, str):
        raise NoUsableGPU(info)
    return info


@dataclass
class LaunchOutcome:
    """Status of one launch: ``ok`` / ``timeout`` / ``error`` and the event-timed duration."""

    status: str
    kernel_us: float | None = None
    message: str = ""


CUDA_ERROR_NOT_READY = 600
"""cudaErrorNotReady: the event query's "still running" answer."""


class PoisonedRuntime(RuntimeError):
    """The process's context hung or took a sticky error: end the process, start a fresh one."""


@dataclass
class Runtime:
    """One device context with a private stream and a poisoned flag (see module docstring)."""

    device: int = 0
    timeout_s: float = 20.0
    poisoned: str = ""
    _stream: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        import cupy

        info = probe(self.device)
        if isinstance(info, str):
            raise NoUsableGPU(info)
        self.info = info
        cupy.cuda.Device(self.device).use()
        self._stream = cupy.cuda.Stream(non_blocking=True)

    # -- modules -------------------------------------------------------------------------------
    def load(self, image: bytes | str, *, kind: str | None = None) -> Any:
        """Load a cubin (bytes) or PTX (str) with the driver; returns a CuPy module (``get_function``).

        PTX is JIT-compiled by the driver, which needs a driver at least as new as the PTX
        ISA version; cubins from the wheel's ptxas avoid that dependency.
        """
        self.check_usable()
        if kind is None:
            kind = "ptx" if isinstance(image, str) else "cubin"
        data = image.encode() if isinstance(image, str) else image
        try:
            from cupy.cuda.function import Module
        except ImportError:  # pragma: no cover -- a CuPy without the low-level module class
            Module = None  # noqa: N806
        if Module is not None and hasattr(Module, "load"):
            # cuModuleLoadData from memory: no temporary file per module (14 loads of a Hopper run took
            # ~8 ms each through RawModule(path=...) on an H100 host). Python bytes end in a NUL, which
            # PTX text needs; a bad image raises here, not at launch.
            mod = Module()
            mod.load(data)
            # kept for the life of the process: a dropped Module is unloaded (cuModuleUnload), and that
            # waits for a grid of the module still running -- a hung kernel would hang its worker at the
            # first garbage collection (the GPU fault test did, on an H100). RawModule was kept by CuPy.
            _LOADED.append(mod)
            return mod
        return self._load_file(data, kind)

    @staticmethod
    def _load_file(data: bytes, kind: str) -> Any:
        """Load through a temporary file (``cupy.RawModule(path=...)``), the older CuPy way."""
        import cupy

        fd, path = tempfile.mkstemp(suffix=f".{kind}", prefix="mmacts-module-")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            mod = cupy.RawModule(path=path)
            mod.get_function  # noqa: B018 -- attribute access only
            # Force the load now (CuPy loads lazily) so a bad image fails here, not at launch.
            mod.module  # noqa: B018
            return mod
        finally:
            os.unlink(path)

    def check_usable(self) -> None:
        """Refuse work on a poisoned context: a module load or an allocation there can block
        behind the hung grid or raise the sticky error again (seen on an H100)."""
        if self.poisoned:
            raise PoisonedRuntime(f"context poisoned: {self.poisoned}")

    # -- data ----------------------------------------------------------------------------------
    def to_device(self, array: np.ndarray) -> Any:
        import cupy

        self.check_usable()
        with self._stream:
            return cupy.asarray(np.ascontiguousarray(array))

    def empty(self, shape: Sequence[int], dtype: Any) -> Any:
        """An output buffer filled with 0xFF bytes, so a word the kernel never writes is visible
        (all ones; a NaN in a float buffer), as the PTX VM fills it. A memset, not ``fill``: ``fill``
        is a CuPy kernel that NVRTC compiles on first use in every process (cold kernel cache on a
        fresh host: about a second before the first launch)."""
        import cupy

        self.check_usable()
        with self._stream:
            out = cupy.empty(tuple(shape), dtype=dtype)
            if out.nbytes:
                out.data.memset_async(0xFF, out.nbytes, stream=self._stream)
            return out

    def to_host(self, array: Any) -> np.ndarray:
        return array.get(stream=self._stream)

    # -- launch --------------------------------------------------------------------------------
    def launch(self, module: Any, entry: str, grid: tuple[int, ...], block: tuple[int, ...],
               args: Sequence[Any], *, shared_mem: int = 0, timeout_s: float | None = None) -> LaunchOutcome:
        """Launch ``entry`` and wait for it with a deadline; never blocks past the deadline."""
        import cupy

        if self.poisoned:
            return LaunchOutcome("timeout", None, f"context poisoned by an earlier hang: {self.poisoned}")
        deadline = time.monotonic() + (self.timeout_s if timeout_s is None else timeout_s)
        fn = module.get_function(entry)
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        try:
            start.record(self._stream)
            fn(grid, block, tuple(args), stream=self._stream, shared_mem=shared_mem)
            end.record(self._stream)
        except Exception as exc:
            return self._error(f"launch failed: {type(exc).__name__}: {exc}", exc)
        return self._wait(start, end, deadline, entry)

    def _error(self, message: str, exc: BaseException) -> LaunchOutcome:
        """An error outcome; a sticky CUDA error also poisons the runtime, so the worker is replaced."""
        if is_sticky_cuda_error(exc):
            self.poisoned = message
        return LaunchOutcome("error", None, message)

    def _wait(self, start: Any, end: Any, deadline: float, entry: str) -> LaunchOutcome:
        import cupy
        from cupy_backends.cuda.api import runtime as cr

        sleep = 1e-5
        while True:
            # cudaEventQuery itself, not CuPy's Event.done: ``done`` maps every non-success status
            # to False, so a kernel that faulted (illegal address) looked like one still running
            # until the deadline (seen on an H100, driver 580).
            try:
                status = cr.eventQuery(end.ptr)
            except Exception as exc:
                return self._error(f"{entry}: {type(exc).__name__}: {exc}", exc)
            if status == 0:  # cudaSuccess
                break
            if status != CUDA_ERROR_NOT_READY:  # an asynchronous fault surfaces here
                exc = cr.CUDARuntimeError(status)
                return self._error(f"{entry}: {type(exc).__name__}: {exc}", exc)
            if time.monotonic() > deadline:
                self.poisoned = f"{entry} did not complete before its deadline"
                return LaunchOutcome("timeout", None, self.poisoned)
            time.sleep(sleep)
            sleep = min(sleep * 2, 5e-3)
        try:
            us = cupy.cuda.get_elapsed_time(start, end) * 1e3
        except Exception as exc:
            return self._error(f"{entry}: {type(exc).__name__}: {exc}", exc)
        return LaunchOutcome("ok", us)


_RUNTIME: Runtime | None = None

_LOADED: list[Any] = []
"""Every module loaded from memory in this process (see :meth:`Runtime.load`: never unloaded)."""


def runtime(device: int = 0) -> Runtime:
    """The process-wide :class:`Runtime` (one context, one stream, one poisoned flag)."""
    global _RUNTIME
    if _RUNTIME is None:
        _RUNTIME = Runtime(device)
    return _RUNTIME


@dataclass
class LoadedModule:
    """A loaded module bound to the process runtime: what ``Driver.launch`` receives."""

    rt: Runtime
    raw: Any

    def launch(self, entry: str, grid: tuple[int, ...], block: tuple[int, ...], args: Sequence[Any],
               *, shared_mem: int = 0, timeout_s: float | None = None) -> LaunchOutcome:
        return self.rt.launch(self.raw, entry, grid, block, args, shared_mem=shared_mem, timeout_s=timeout_s)


def load_module(image: bytes | str) -> LoadedModule:
    """Load a cubin (bytes) or PTX (str) into the process runtime."""
    rt = runtime()
    return LoadedModule(rt, rt.load(image))


def as_module(module: Any) -> LoadedModule:
    """Accept a :class:`LoadedModule`, a cubin (bytes) or PTX (str) from a backend."""
    if isinstance(module, LoadedModule | RecordingModule):
        return module
    if hasattr(module, "launch") and hasattr(module, "rt"):  # the PTX VM (mmacts.ptxvm.VmModule)
        return module
    if isinstance(module, bytes | str):
        return load_module(module)
    if hasattr(module, "get_function"):
        return LoadedModule(runtime(), module)
    raise TypeError(f"cannot launch from a {type(module).__name__}")


# ---------------------------------------------------------------------------------------------
# Launch bundles: record the launches a driver makes on a machine without a GPU, execute them
# elsewhere with nothing but numpy + CuPy, and replay the outputs through the same driver code.
# Why: the GPU machines lack most of the package's dependencies and GPU time is scarce; the
# bundle keeps the device-side code tiny and lets the host run the real ``launch`` twice.


class _RecRuntime:
    """Stands in for :class:`Runtime`: arrays stay numpy; outputs come from a replay table."""

    def __init__(self, replay: dict[int, np.ndarray] | None) -> None:
        self.replay = replay or {}
        self.outputs: list[np.ndarray] = []

    def to_device(self, array: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(array)

    def empty(self, shape: Sequence[int], dtype: Any) -> np.ndarray:
        out = np.zeros(tuple(shape), dtype=dtype)
        self.outputs.append(out)
        return out

    def to_host(self, array: np.ndarray) -> np.ndarray:
        for i, o in enumerate(self.outputs):
            if o is array:
                return self.replay.get(i, array)
        return array


@dataclass
class RecordingModule:
    """A module that records launches (``replay=None``) or answers them from device outputs."""

    cubin: bytes
    replay: dict[int, np.ndarray] | None = None
    status: LaunchOutcome | None = None
    launches: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.rt = _RecRuntime(self.replay)

    def launch(self, entry: str, grid: tuple[int, ...], block: tuple[int, ...], args: Sequence[Any],
               *, shared_mem: int = 0, timeout_s: float | None = None) -> LaunchOutcome:
        spec = []
        for a in args:
            if isinstance(a, np.ndarray):
                idx = next((i for i, o in enumerate(self.rt.outputs) if o is a), None)
                spec.append(("out", idx, a) if idx is not None else ("in", None, a))
            else:
                spec.append(("scalar", None, np.asarray(a)))
        self.launches.append({"entry": entry, "grid": grid, "block": block, "shared_mem": shared_mem,
                              "args": spec})
        return self.status or LaunchOutcome("ok", None)


def save_bundle(path: str, name: str, rec: RecordingModule) -> dict[str, Any]:
    """Write ``<name>.cubin`` and ``<name>.npz`` under ``path``; returns the manifest entry."""
    arrays: dict[str, np.ndarray] = {}
    launches = []
    for li, la in enumerate(rec.launches):
        args = []
        for ai, (kind, idx, arr) in enumerate(la["args"]):
            key = f"l{li}a{ai}"
            arrays[key] = arr
            args.append({"kind": kind, "key": key, "out": idx})
        launches.append({"entry": la["entry"], "grid": list(la["grid"]), "block": list(la["block"]),
                         "shared_mem": la["shared_mem"], "args": args})
    with open(os.path.join(path, f"{name}.cubin"), "wb") as fh:
        fh.write(rec.cubin)
    np.savez(os.path.join(path, f"{name}.npz"), **arrays)
    return {"name": name, "launches": launches}


def execute_bundle(path: str, entry: dict[str, Any], timeout_s: float = 60.0) -> tuple[dict[str, np.ndarray],
                                                                                      list[dict[str, Any]]]:
    """Run one saved module's launches on the GPU (numpy + CuPy only); outputs by out-index."""
    rt = runtime()
    with open(os.path.join(path, f"{entry['name']}.cubin"), "rb") as fh:
        mod = rt.load(fh.read())
    data = np.load(os.path.join(path, f"{entry['name']}.npz"))
    outs: dict[str, np.ndarray] = {}
    stats = []
    for la in entry["launches"]:
        dev_args, out_dev = [], {}
        for a in la["args"]:
            arr = data[a["key"]]
            if a["kind"] == "scalar":
                dev_args.append(arr.dtype.type(arr))
            elif a["kind"] == "out":
                d = rt.empty(arr.shape, arr.dtype)
                out_dev[a["out"]] = d
                dev_args.append(d)
            else:
                dev_args.append(rt.to_device(arr))
        res = rt.launch(mod, la["entry"], tuple(la["grid"]), tuple(la["block"]), dev_args,
                        shared_mem=la["shared_mem"], timeout_s=timeout_s)
        stats.append({"status": res.status, "kernel_us": res.kernel_us, "message": res.message})
        if res.status == "ok":
            for idx, d in out_dev.items():
                outs[str(idx)] = rt.to_host(d)
    return outs, stats
