"""The runtime's failure paths: no GPU / no driver must give one clean line, never raise."""

from __future__ import annotations

import sys
import types

import pytest

from mmacts.backends import cuda_runtime as cr


def _fake_cupy(monkeypatch, runtime_obj):
    cupy = types.ModuleType("cupy")
    cuda = types.ModuleType("cupy.cuda")
    cuda.runtime = runtime_obj
    cupy.cuda = cuda
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    monkeypatch.setitem(sys.modules, "cupy.cuda", cuda)


class _InsufficientDriver:
    class CUDARuntimeError(RuntimeError):
        pass

    def getDeviceCount(self):  # noqa: N802 -- CuPy's spelling
        raise self.CUDARuntimeError("cudaErrorInsufficientDriver: CUDA driver version is insufficient")


class _NoDevice:
    def getDeviceCount(self):  # noqa: N802
        return 0


class _Hopper:
    def getDeviceCount(self):  # noqa: N802
        return 1

    def getDeviceProperties(self, i):  # noqa: N802
        return {"name": b"NVIDIA H100 80GB HBM3", "major": 9, "minor": 0}

    def driverGetVersion(self):  # noqa: N802
        return 13000

    def runtimeGetVersion(self):  # noqa: N802
        return 13000


def test_insufficient_driver_is_one_line(monkeypatch):
    _fake_cupy(monkeypatch, _InsufficientDriver())
    msg = cr.probe()
    assert isinstance(msg, str) and msg.startswith("no usable GPU: ")
    assert "cudaErrorInsufficientDriver" in msg and "\n" not in msg
    with pytest.raises(cr.NoUsableGPU, match="no usable GPU"):
        cr.require_device()


def test_no_device(monkeypatch):
    _fake_cupy(monkeypatch, _NoDevice())
    assert cr.probe() == "no usable GPU: 0 CUDA device(s) visible, device 0 requested"


def test_device_info(monkeypatch):
    _fake_cupy(monkeypatch, _Hopper())
    info = cr.probe()
    assert isinstance(info, cr.DeviceInfo)
    assert info.compute_capability == (9, 0) and info.arch == "sm_90" and "H100" in info.name


def test_cupy_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)  # import raises ImportError
    msg = cr.probe()
    assert msg.startswith("no usable GPU: cupy unavailable")


class _Never:
    ptr = 1


def test_timeout_poisons_runtime(monkeypatch):
    """A launch whose completion event never fires ends as 'timeout' and poisons the runtime."""
    from cupy_backends.cuda.api import runtime as cuda_rt

    monkeypatch.setattr(cuda_rt, "eventQuery", lambda ptr: cr.CUDA_ERROR_NOT_READY)
    rt = object.__new__(cr.Runtime)
    rt.poisoned = ""

    import time
    t0 = time.monotonic()
    out = cr.Runtime._wait(rt, _Never(), _Never(), time.monotonic() + 0.05, "k")
    assert out.status == "timeout" and time.monotonic() - t0 < 1.0
    assert rt.poisoned
    again = cr.Runtime.launch(rt, None, "k", (1,), (1,), ())
    assert again.status == "timeout" and "poisoned" in again.message


def test_sticky_error_poisons_the_runtime_but_an_ordinary_one_does_not() -> None:
    """A sticky CUDA error must end the worker (faults.end_if_poisoned reads ``poisoned``)."""
    from mmacts.backends.cuda_runtime import Runtime

    rt = object.__new__(Runtime)  # no GPU here: exercise the error path only
    rt.poisoned = ""
    out = rt._error("k: CUDARuntimeError: cudaErrorInvalidValue", RuntimeError("cudaErrorInvalidValue"))
    assert out.status == "error" and rt.poisoned == ""
    out = rt._error("k: CUDARuntimeError: cudaErrorIllegalAddress",
                    RuntimeError("cudaErrorIllegalAddress: an illegal memory access was encountered"))
    assert out.status == "error" and "IllegalAddress" in rt.poisoned


def test_a_poisoned_runtime_refuses_loads_and_allocations() -> None:
    """On a poisoned context a module load can block behind the hung grid (seen on an H100): refuse first."""
    import pytest as _pytest

    from mmacts.backends.cuda_runtime import PoisonedRuntime, Runtime

    rt = object.__new__(Runtime)
    rt.poisoned = "k did not complete before its deadline"
    for call in (lambda: rt.load("ptx"), lambda: rt.empty((1,), "uint32"), lambda: rt.to_device(None)):
        with _pytest.raises(PoisonedRuntime, match="poisoned"):
            call()


def test_a_faulted_kernel_is_an_error_at_once_not_a_timeout(monkeypatch):
    """cudaEventQuery answering an error (here 700, illegal address) ends the wait immediately."""
    import time

    from cupy_backends.cuda.api import runtime as cuda_rt

    monkeypatch.setattr(cuda_rt, "eventQuery", lambda ptr: 700)
    rt = object.__new__(cr.Runtime)
    rt.poisoned = ""
    t0 = time.monotonic()
    out = cr.Runtime._wait(rt, _Never(), _Never(), time.monotonic() + 30, "k")
    assert out.status == "error" and "IllegalAddress" in out.message and time.monotonic() - t0 < 1.0
    assert rt.poisoned, "an illegal address is sticky: the worker must be replaced"


def test_the_report_probe_reads_the_same_device_query(monkeypatch):
    """gpu.probe (reports, backend choice) is built on cuda_runtime.probe: one place asks CuPy."""
    from mmacts.backends import gpu

    monkeypatch.delenv("MMACTS_NO_GPU", raising=False)
    monkeypatch.setattr(gpu, "nvidia_present", lambda: True)  # a machine with a driver: the error is kept
    for runtime_obj, usable in ((_Hopper(), True), (_InsufficientDriver(), False)):
        _fake_cupy(monkeypatch, runtime_obj)
        gpu.probe.cache_clear()
        try:
            st = gpu.probe()
        finally:
            gpu.probe.cache_clear()
        assert st.usable is usable
        if usable:
            assert (st.name, st.sm, st.driver_version, st.runtime_version, st.count) == (
                "NVIDIA H100 80GB HBM3", "sm_90", "13.0", "13.0", 1)
        else:
            assert "cudaErrorInsufficientDriver" in st.reason and not st.reason.startswith("no usable GPU")


def test_modules_load_from_memory_without_a_temporary_file(monkeypatch) -> None:
    """cuModuleLoadData on the image itself (PTX with its NUL end): no temporary file per module."""
    import tempfile

    function = pytest.importorskip("cupy.cuda.function")
    from mmacts.backends.cuda_runtime import Runtime

    loaded: list[bytes] = []

    class FakeModule:
        def load(self, data: bytes) -> None:
            loaded.append(data)

    def no_file(*a, **k):
        raise AssertionError("a temporary file was written")

    monkeypatch.setattr(function, "Module", FakeModule)
    monkeypatch.setattr(tempfile, "mkstemp", no_file)
    rt = object.__new__(Runtime)
    rt.poisoned = None
    assert isinstance(rt.load(b"\x7fELF cubin"), FakeModule)
    assert isinstance(rt.load(".version 9.0"), FakeModule)
    assert loaded == [b"\x7fELF cubin", b".version 9.0"]


def test_a_loaded_module_outlives_its_caller(monkeypatch) -> None:
    """A dropped CuPy Module is unloaded, and cuModuleUnload waits for a hung grid of it: the runtime
    keeps every module it loaded (the GPU fault test hung in the spin scenario without this)."""
    import gc
    import weakref

    function = pytest.importorskip("cupy.cuda.function")
    from mmacts.backends.cuda_runtime import Runtime

    class FakeModule:
        def load(self, data: bytes) -> None:
            pass

    monkeypatch.setattr(function, "Module", FakeModule)
    monkeypatch.setattr(cr, "_LOADED", [])
    rt = object.__new__(Runtime)
    rt.poisoned = None
    ref = weakref.ref(rt.load(b"cubin"))
    gc.collect()
    assert ref() is not None
