"""Run any PTX on the VM from Python, the way one runs it on a GPU with CuPy.

Why CuPy's shape: kernel authors already load compiled PTX with ``cupy.RawModule(path="k.ptx")``, then
``get_function(name)`` and ``kernel(grid, block, args, shared_mem=...)``; the same few lines (``path=`` or the
PTX text as ``code=``, where CuPy would take CUDA source) then run on
the VM with no GPU, with a per-thread trace and the VM's checks (bounds, alignment, async hazards,
deadlocks named by barrier and warp)::

    from mmacts.ptxvm import api as vm
    mod = vm.RawModule(code=ptx, arch="sm_100a")
    k = mod.get_function("my_kernel")
    x = vm.asarray(np.arange(256, dtype=np.float32)); y = vm.zeros(256, np.float32)
    k((2,), (128,), (x, y, np.uint32(256)), shared_mem=1024, cluster=(2, 1, 1))
    print(y.get())

A parameter passed by value that is no scalar (``.param .align 64 .b8 tmap[128]``: a struct, a
``__grid_constant__`` tensor map) takes a ``numpy.void`` of its size, e.g. ``np.frombuffer(b, f"V{len(b)}")[0]``.
Arrays live in one virtual device memory shared by every module (``asarray`` / ``zeros`` / ``empty``;
``.get()`` copies back). Scalars may be numpy scalars of the parameter's size or plain Python numbers,
converted to the parameter's declared type. A launch that fails raises :class:`LaunchError` with the VM's
one-line message (instruction, CTA, thread); a successful one returns its statistics.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from mmacts.ptxvm.host.tensormap import encode_im2col, encode_tiled
from mmacts.ptxvm.memory import DeviceArray
from mmacts.ptxvm.parse import Entry
from mmacts.ptxvm.ptxtypes import ptx_type
from mmacts.ptxvm.runtime import ARCH_CC, VmDeviceInfo, VmModule, VmOutcome, VmRuntime, load_module

__all__ = ["DeviceArray", "LaunchError", "RawKernel", "RawModule", "asarray", "asnumpy", "device", "empty", "reset",
           "tensormap_im2col", "tensormap_tiled", "zeros"]


class LaunchError(RuntimeError):
    """A launch that did not end ``ok``: ``outcome.status`` is ``error`` or ``timeout``."""

    def __init__(self, outcome: VmOutcome) -> None:
        super().__init__(outcome.message)
        self.outcome = outcome


_DEVICE: VmRuntime | None = None


def device() -> VmRuntime:
    """The virtual device whose global memory every module and array of this process shares."""
    global _DEVICE
    if _DEVICE is None:
        _DEVICE = VmRuntime(VmDeviceInfo("PTX VM", ARCH_CC["sm_100a"], "sm_100a"))
    return _DEVICE


def reset() -> None:
    """Drop every array of the virtual device (arrays made before no longer exist; a launch with one faults).
    Why: device memory is never freed otherwise, and a long session slows the VM's address lookups."""
    global _DEVICE
    _DEVICE = None


def asarray(a: Any) -> DeviceArray:
    """A device copy of ``a`` (like ``cupy.asarray``)."""
    return device().to_device(np.asarray(a))


def zeros(shape: int | Sequence[int], dtype: Any = np.float32) -> DeviceArray:
    return device().to_device(np.zeros(shape, dtype=dtype))


def empty(shape: int | Sequence[int], dtype: Any = np.float32) -> DeviceArray:
    """Uninitialised memory, filled with 0xFF bytes so that what the kernel never wrote is visible."""
    return device().empty((shape,) if isinstance(shape, int) else tuple(shape), dtype)


def asnumpy(a: DeviceArray) -> np.ndarray:
    return a.get()


_TMA_TYPES = {"u1": "UINT8", "i1": "UINT8", "u2": "UINT16", "i2": "UINT16", "f2": "FLOAT16", "u4": "UINT32",
              "i4": "INT32", "f4": "FLOAT32", "u8": "UINT64", "i8": "INT64", "f8": "FLOAT64"}


def tensormap_tiled(a: DeviceArray, box: Sequence[int], *, swizzle: str | int = "NONE", oob_fill: str | int = "NONE",
                    data_type: str | int | None = None, element_strides: Sequence[int] | None = None,
                    interleave: str | int = "NONE", l2_promotion: str | int = "NONE",
                    by_value: bool = False) -> DeviceArray | np.void:
    """A tiled tensor map of the whole C-order device array ``a`` (``cuTensorMapEncodeTiled``'s contract and
    errors: :class:`mmacts.ptxvm.host.TensorMapError`), as a 128-byte device buffer whose address a kernel hands to
    ``cp.async.bulk.tensor`` (pointer form), or with ``by_value=True`` as the ``numpy.void`` a ``__grid_constant__``
    parameter takes. ``box`` (and ``element_strides``) follow ``a.shape``'s axis order (outermost first); the
    kernel's coordinates are innermost first, as in PTX. ``data_type`` defaults from ``a.dtype`` (give
    ``"BFLOAT16"`` or ``"TFLOAT32"`` explicitly). The VM's ``cp.async.bulk.tensor`` reads a map in global memory
    or in the kernel parameter space (a ``__grid_constant__`` parameter, addressed by name or through
    ``cvta.param``, as nvcc emits it)."""
    dt, dims, strides = _tma_shape(a, data_type)
    m = encode_tiled(dt, len(dims), a.base, dims, strides, list(reversed(box)),
                     None if element_strides is None else list(reversed(element_strides)), interleave, swizzle,
                     l2_promotion, oob_fill)
    return np.frombuffer(m.tobytes(), dtype="V128")[0] if by_value else asarray(m)


def _tma_shape(a: DeviceArray, data_type: str | int | None) -> tuple[str | int, list[int], list[int]]:
    """The driver's view of the C-order array ``a``: data type, globalDim and globalStrides, innermost first."""
    dt = data_type if data_type is not None else _TMA_TYPES.get(a.dtype.str[1:])
    if dt is None:
        raise TypeError(f"no tensor-map data type for {a.dtype}; pass data_type=")
    strides = [a.dtype.itemsize * int(np.prod(a.shape[k + 1:])) for k in range(len(a.shape))]
    return dt, list(reversed(a.shape)), list(reversed(strides[:-1]))


def tensormap_im2col(a: DeviceArray, lower_corner: Sequence[int], upper_corner: Sequence[int],
                     channels_per_pixel: int, pixels_per_column: int, *, swizzle: str | int = "NONE",
                     oob_fill: str | int = "NONE", data_type: str | int | None = None,
                     element_strides: Sequence[int] | None = None, interleave: str | int = "NONE",
                     l2_promotion: str | int = "NONE", by_value: bool = False) -> DeviceArray | np.void:
    """An im2col tensor map (``cuTensorMapEncodeIm2col``) of the C-order N[D][H]WC device array ``a``, for
    ``cp.async.bulk.tensor.Nd...im2col [smem], [map, {c, w, [h, [d,]] n}], [mbar], {offsets}`` (PTX 5.5.4).
    The corners follow ``a.shape``'s spatial order (D, H, W; e.g. ``(-pad, -pad)`` and ``(pad - (R - 1),
    pad - (S - 1))`` for a padded R x S convolution); the driver's W-first order is made here. Returned as
    :func:`tensormap_tiled` returns its map."""
    dt, dims, strides = _tma_shape(a, data_type)
    m = encode_im2col(dt, len(dims), a.base, dims, strides, list(reversed(lower_corner)),
                      list(reversed(upper_corner)), channels_per_pixel, pixels_per_column,
                      None if element_strides is None else list(reversed(element_strides)), interleave, swizzle,
                      l2_promotion, oob_fill)
    return np.frombuffer(m.tobytes(), dtype="V128")[0] if by_value else asarray(m)


class RawModule:
    """A PTX module on the VM (``cupy.RawModule(code=...)``). ``arch`` defaults to the module's ``.target``;
    ``max_steps`` bounds one launch (scheduler steps) so that a runaway kernel ends as ``timeout``; ``profile``
    the VM's options (e.g. ``{"readings": {"AMB-K96-SHAPES": "also-m128"}}``: which reading of an open register
    entry the VM takes where its default refuses)."""

    def __init__(self, code: str | None = None, *, path: str | None = None, arch: str | None = None,
                 max_steps: int = 3_000_000, profile: dict[str, Any] | None = None) -> None:
        if (code is None) == (path is None):
            raise ValueError("RawModule needs exactly one of code= and path=")
        if path is not None:
            with open(path, encoding="utf-8") as f:
                code = f.read()
        assert code is not None
        vm = load_module(code, arch, max_steps=max_steps, profile=profile)
        vm.rt = device()
        self.vm = vm
        self.arch = arch or vm.module.target

    @property
    def entries(self) -> list[str]:
        return list(self.vm.module.entries)

    def get_function(self, name: str) -> RawKernel:
        if name not in self.vm.module.entries:
            raise KeyError(f"the module has no entry {name!r} (entries: {', '.join(self.entries) or 'none'})")
        return RawKernel(self, name)


@dataclasses.dataclass
class RawKernel:
    """One entry of a :class:`RawModule`; call it like a CuPy ``RawKernel``."""

    module: RawModule
    name: str
    last: VmOutcome | None = None

    @property
    def entry(self) -> Entry:
        return self.module.vm.module.entries[self.name]

    @property
    def params(self) -> list[tuple[str, str, int]]:
        """(name, type, bytes) of each kernel parameter, in order."""
        return [(p.name, p.type, p.size) for p in self.entry.params]

    def __call__(self, grid: int | Sequence[int], block: int | Sequence[int], args: Sequence[Any], *,
                 shared_mem: int = 0, cluster: int | Sequence[int] | None = None, trace: Any = None) -> VmOutcome:
        """Launch over ``grid`` x ``block`` with ``args``; ``cluster`` gives cluster dimensions at launch time
        (a kernel with ``.reqnctapercluster`` must be launched with those or none); ``trace`` a
        :class:`~mmacts.ptxvm.trace.Tracer`. Raises :class:`LaunchError` unless the launch ends ``ok``."""
        vm = self.module.vm
        vm.rt = device()  # the current device (a module made before reset() sees the new arrays)
        launch_vm = vm
        if cluster is not None:
            launch_vm = self._with_cluster(_dim3(cluster))
        packed = [_arg(p.name, p.type, p.size, a) for p, a in zip(self.entry.params, args, strict=False)]
        if len(args) != len(self.entry.params):
            raise TypeError(f"{self.name} takes {len(self.entry.params)} arguments "
                            f"({', '.join(p.name for p in self.entry.params)}), {len(args)} given")
        old_trace = launch_vm.trace
        launch_vm.trace = trace
        try:
            out = launch_vm.launch(self.name, _dim3(grid), _dim3(block), packed, shared_mem=int(shared_mem))
        finally:
            launch_vm.trace = old_trace
        self.last = out
        if out.status != "ok":
            raise LaunchError(out)
        return out

    def _with_cluster(self, cluster: tuple[int, int, int]) -> VmModule:
        """The module with this entry's cluster shape set as the launch gives it (as the driver's cluster
        launch attribute does; ``%is_explicit_cluster`` then reads true)."""
        vm = self.module.vm
        entry = self.entry
        req = entry.directives.get("reqnctapercluster")
        if req and tuple(req) + (1,) * (3 - len(req)) != cluster:
            raise ValueError(f"{self.name} declares .reqnctapercluster {', '.join(map(str, req))}; the launch asks for "
                          f"cluster {cluster}")
        e2 = dataclasses.replace(entry, directives={**entry.directives, "reqnctapercluster": cluster,
                                                    "explicitcluster": ()})
        m2 = dataclasses.replace(vm.module, entries={**vm.module.entries, self.name: e2})
        return VmModule(vm.ptx, m2, vm.rt, vm.profile, vm.trace, vm.max_steps)


def _dim3(d: int | Sequence[int]) -> tuple[int, int, int]:
    t = (int(d),) if isinstance(d, int | np.integer) else tuple(int(x) for x in d)
    if not 1 <= len(t) <= 3 or any(x < 1 for x in t):
        raise ValueError(f"a grid, block or cluster shape is 1 to 3 positive integers, not {d!r}")
    return (t + (1, 1, 1))[:3]  # type: ignore[return-value]


def _arg(name: str, ty: str, size: int, a: Any) -> Any:
    """A kernel argument as the VM's parameter block takes it: device arrays as pointers, numpy scalars of
    the parameter's size as they are, Python numbers converted to the parameter's declared type."""
    if isinstance(a, DeviceArray):
        return a
    if isinstance(a, np.ndarray) and a.ndim == 0 or isinstance(a, np.generic):
        return np.asarray(a)
    if isinstance(a, bool | int | float):
        t = ptx_type(ty)
        if t.kind == "f":
            return np.asarray(a, dtype=t.dtype)
        if isinstance(a, float):
            raise TypeError(f"parameter {name} (.{ty}) is an integer; {a!r} was given")
        if t.bits > 64:
            raise TypeError(f"parameter {name} (.{ty}): pass a numpy array of {size} bytes' worth as a scalar")
        lo, hi = (-(1 << (t.bits - 1)), (1 << t.bits) - 1)
        if not lo <= a <= hi:
            raise OverflowError(f"parameter {name} (.{ty}): {a} does not fit {t.bits} bits")
        return np.asarray(a & ((1 << t.bits) - 1), dtype=t.udtype)
    if isinstance(a, np.ndarray):
        raise TypeError(f"parameter {name}: a host array was passed; copy it to the VM with asarray()")
    raise TypeError(f"parameter {name} (.{ty}): cannot pass a {type(a).__name__}")
