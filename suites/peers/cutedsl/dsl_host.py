"""Run with the Python of a venv holding ``nvidia-cutlass-dsl`` (not the project's): compile a CuTe DSL block-scaled
dense GEMM example for sm_100a on a machine with no GPU and no ``libcuda.so.1``, run the DSL's own host function
against a recording stand-in for the driver, and write what a launch would have used.

    python dsl_host.py EXAMPLE_PY OUT_DIR SPEC_JSON

writes ``OUT_DIR/kernel.ptx``, ``params.bin`` (the kernel parameters, byte for byte) and ``launch.json`` (entry,
parameter sizes, grid, block, dynamic shared memory, cluster, compile seconds, DSL version).

What needs a GPU in ``cute.compile`` and what this does instead (DSL 4.2):
* the device code: nothing. The pass pipeline ``cute-to-nvvm`` compiles with the DSL's own NVVM; given
  ``cubin-format=isa`` it leaves PTX (``assembly``) in the ``gpu.binary`` instead of a cubin.
* the host code: the MLIR ExecutionEngine links ``libmlir_cuda_runtime.so``, which needs ``libcuda.so.1`` and
  fails without it (the host function's only driver calls are ``cuFuncSetAttribute`` and ``cuLaunchKernelEx``).
  Here the engine links ``vmlaunch.c``'s library instead.
* ``JitExecutor.update_jit_cuda_modules`` loads the cubin through cuda-python (``cuModuleLoadData``): replaced by a
  stand-in ``CUfunction`` handle.
* ``cutlass.utils.HardwareInfo`` (max active clusters) queries the device: the spec gives the number.
Tensors are DLPack views of numpy arrays whose data pointers are the VM's addresses (never dereferenced here: the
host code only writes them into the kernel's parameters).

This file imports no project code (the DSL's venv has neither the project nor its dependencies).
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import os
import re
import sys
import time
import types

EXAMPLE, OUT, SPEC = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
os.environ.setdefault("CUTE_DSL_ARCH", SPEC.get("arch", "sm_100a"))
SHIM = ctypes.CDLL(SPEC["shim"], mode=ctypes.RTLD_GLOBAL)

import cuda.bindings.driver as cuda  # noqa: E402
import cutlass  # noqa: E402
import cutlass.cute as cute  # noqa: E402
import numpy as np  # noqa: E402
from cutlass.base_dsl import compiler as dsl_compiler  # noqa: E402
from cutlass.base_dsl import jit_executor  # noqa: E402
from cutlass.cute.runtime import from_dlpack  # noqa: E402

PIPELINE = "builtin.module(cute-to-nvvm{cubin-format=isa opt-level=3})"
PARAM_BYTES = {"u32": 4, "s32": 4, "b32": 4, "f32": 4, "u64": 8, "s64": 8, "b64": 8}


def load_example() -> types.ModuleType:
    """The example module; its ``run()`` needs torch (absent here), the kernel class does not."""
    sys.modules.setdefault("torch", types.ModuleType("torch"))
    sys.modules.setdefault("cutlass.torch", types.ModuleType("cutlass.torch"))
    spec = importlib.util.spec_from_file_location("cute_dsl_example", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def at(addr: int, shape: tuple[int, ...], dtype: type) -> np.ndarray:
    """A numpy array whose data pointer is ``addr``."""
    iface = {"shape": shape, "typestr": np.dtype(dtype).str, "data": (addr, False), "version": 3}
    return np.asarray(type("Buf", (), {"__array_interface__": iface})())


def matrix(addr: int, mn: int, k: int, l: int, dtype: type, np_dtype: type, divisibility: int):
    """(mn, k, l), k contiguous: the example's ``cutlass_torch.matrix`` + ``mark_compact_shape_dynamic``."""
    t = from_dlpack(at(addr, (l, mn, k), np_dtype).transpose(1, 2, 0), assumed_align=16)
    t.element_type = dtype
    t = t.mark_layout_dynamic(leading_dim=1)
    t.mark_compact_shape_dynamic(mode=1, stride_order=(2, 0, 1), divisibility=divisibility)
    return t


def sf_tensor(addr: int, mn: int, k: int, l: int, vs: int, dtype: type):
    """The example's SF tensor: storage (l, mn/128, sf_k/4, 32, 4, 4) seen as (32, 4, mn/128, 4, sf_k/4, l)."""
    sf_k = -(-k // vs)
    arr = at(addr, (l, -(-mn // 128), -(-sf_k // 4), 32, 4, 4), np.int8).transpose(3, 4, 1, 5, 2, 0)
    t = from_dlpack(arr, assumed_align=16)
    t.element_type = dtype
    return t.mark_layout_dynamic(leading_dim=3)


CAPTURED: dict[str, str] = {}
_ENGINE = dsl_compiler.Compiler.jit
_FUNC = ctypes.c_void_p(0x1)


def _jit(self, module, opt_level=2, shared_libs=()):
    """After the pass pipeline: keep the PTX; link the host code against the recording stand-in."""
    m = re.search(r'assembly = "((?:[^"\\]|\\.)*)"', str(module), re.S)
    if not m:
        raise RuntimeError("no PTX (assembly) in the compiled module's gpu.binary")
    text = m.group(1).replace("\\\\", "\\5C")
    CAPTURED["ptx"] = re.sub(r"\\([0-9A-Fa-f]{2})", lambda x: chr(int(x.group(1), 16)), text).rstrip("\0")
    libs = [p for p in shared_libs if "cuda_runtime" not in os.path.basename(p)]
    return _ENGINE(self, module, opt_level, [SPEC["shim"], *libs])


def _modules(self, kernel_symbols):
    """No cubin to load: the host function gets a stand-in CUfunction (its argument is a pointer to the handle)."""
    if kernel_symbols:
        self.cuda_modules = jit_executor.CudaModules([], [ctypes.c_void_p(ctypes.addressof(_FUNC))])
    return self


def param_sizes(ptx: str) -> tuple[str, list[int]]:
    entry = re.search(r"\.entry\s+(\w+)\s*\((.*?)\)", ptx, re.S)
    sizes = []
    for p in entry.group(2).split(","):
        arr = re.search(r"\.b8\s+\w+\[(\d+)\]", p)
        sizes.append(int(arr.group(1)) if arr else PARAM_BYTES[re.search(r"\.param\s+\.(\w+)", p).group(1)])
    return entry.group(1), sizes


def main() -> None:
    dsl_compiler.Compiler.jit = _jit
    jit_executor.JitExecutor.update_jit_cuda_modules = _modules
    ex = load_example()
    m, n, k, l, vs = (SPEC[x] for x in ("m", "n", "k", "l", "sf_vec"))
    a = SPEC["addrs"]
    ab, sf, c = (getattr(cutlass, SPEC[x]) for x in ("ab_dtype", "sf_dtype", "c_dtype"))
    c_np = {"Float32": np.float32, "Float16": np.float16, "BFloat16": np.float16}[SPEC["c_dtype"]]
    args = (matrix(a["a"], m, k, l, ab, np.int8, 2), matrix(a["b"], n, k, l, ab, np.int8, 2),
            sf_tensor(a["sfa"], m, k, l, vs, sf), sf_tensor(a["sfb"], n, k, l, vs, sf),
            matrix(a["c"], m, n, l, c, c_np, 1))
    gemm = ex.Sm100BlockScaledPersistentDenseGemmKernel(vs, tuple(SPEC["mma_tiler"]), tuple(SPEC["cluster"]))
    stream = cuda.CUstream(0)
    t0 = time.perf_counter()
    compiled = cute.compile(gemm, *args, SPEC["max_active_clusters"], stream, pipeline=PIPELINE)
    seconds = time.perf_counter() - t0
    entry, sizes = param_sizes(CAPTURED["ptx"])
    if SHIM.vml_set_sizes(len(sizes), (ctypes.c_int * len(sizes))(*sizes)):
        sys.exit(f"parameter sizes {sizes} exceed the recorder")
    compiled(*args, stream)
    if not SHIM.vml_launched():
        sys.exit("the DSL's host function did not launch the kernel")
    SHIM.vml_blob.restype = ctypes.POINTER(ctypes.c_ubyte)
    SHIM.vml_shape.restype = ctypes.POINTER(ctypes.c_uint)
    shape = list(SHIM.vml_shape()[:10])
    with open(os.path.join(OUT, "kernel.ptx"), "w") as f:
        f.write(CAPTURED["ptx"])
    with open(os.path.join(OUT, "params.bin"), "wb") as f:
        f.write(bytes(SHIM.vml_blob()[: sum(sizes)]))
    from importlib.metadata import version

    with open(os.path.join(OUT, "launch.json"), "w") as f:
        json.dump({"entry": entry, "sizes": sizes, "grid": shape[0:3], "block": shape[3:6], "smem": shape[6],
                   "cluster": shape[7:10], "compile_s": round(seconds, 2),
                   "dsl": version("nvidia-cutlass-dsl")}, f)


if __name__ == "__main__":
    main()
