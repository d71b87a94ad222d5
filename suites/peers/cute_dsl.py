"""CuTe DSL block-scaled dense GEMM (``nvidia-cutlass-dsl``) as a peer: what runs without a GPU, and what stops it
on the VM (issue 23, item 2: "CuTe DSL block-scaled examples where the wheel can emit PTX without a GPU").

Optional: the DSL lives in a venv of its own (it is not a project dependency). Configure
* ``MMACTS_CUTE_DSL_PYTHON``: the Python of a venv with ``nvidia-cutlass-dsl`` (4.2.1 tried);
* ``MMACTS_CUTE_DSL_EXAMPLE``: ``examples/python/CuTeDSL/blackwell/dense_blockscaled_gemm_persistent.py`` of the
  CUTLASS checkout matching the DSL's version (the ``nvidia-cutlass`` wheel ships no DSL Blackwell examples).

Found (DSL 4.2.1, this machine: no GPU, no ``libcuda.so.1``): the DSL **can** emit the kernel's PTX and its exact
parameter block. ``cutedsl/dsl_host.py`` compiles the example with the pipeline ``cute-to-nvvm{cubin-format=isa}``
(PTX instead of a cubin, from the DSL's own NVVM), links the JIT-compiled host code against ``cutedsl/vmlaunch.c``
(the host code's only driver calls are ``cuFuncSetAttribute`` and ``cuLaunchKernelEx``; the DSL's
``libmlir_cuda_runtime.so`` needs ``libcuda.so.1``), skips the cubin load (cuda-python ``cuModuleLoadData``) and
gives ``max_active_clusters`` instead of querying the device; the host function then runs and "launches".

Tensor maps: the DSL's host code encodes every TMA descriptor itself (no ``cuTensorMapEncodeTiled`` call: the 128
bytes are assembled in the JIT-compiled host code), in the hardware's ``CUtensorMap`` layout, which the VM reads
(``validation/probes/tmap-bytes/LAYOUT.md``). :func:`run_dense_blockscaled` still checks the maps before launching
and names any bit the VM does not know (AMB-TMAP-HW-SM100-FIELDS) instead of running.
Its PTX (DSL 4.2.1) has no ``tcgen05.wait::ld`` at all, in NVVM's own output as well (the example never calls
``cute.arch.fence_view_async_tmem_load``): the epilogue loops ``tcgen05.ld ... 32x32b.x32`` into the same registers,
storing them to shared memory in between. Overwriting a read but unwaited destination register is open
(AMB-TCGEN05-LD-NO-WAIT-OVERWRITE); the VM's default refuses it as the anti-dependency of 9.7.16.6.4.5, so the peer
runs under the reading register-read-completes (:data:`READINGS`), named in its verdict. So run, C equals the exact
product (256 x 256 x 512, 384 x 256 x 768, 512 x 512 x 1024 tried).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mmacts.ptxvm import api as vm
from mmacts.ptxvm.errors import VmUnsupported
from mmacts.ptxvm.host import libvmcuda
from mmacts.ptxvm.ops_bulk import TensorMap
from suites.peers import cutlass_examples as CE
from suites.peers.cutlass_peer import Unavailable, _cache_root

HERE = Path(__file__).resolve().parent / "cutedsl"
HOST = HERE / "dsl_host.py"
SHIM = HERE / "vmlaunch.c"
MAP_BYTES = 128
READINGS: tuple[tuple[str, str], ...] = (("AMB-TCGEN05-LD-NO-WAIT-OVERWRITE", "register-read-completes"),)
"""The open readings the kernel needs: its epilogue loops ``tcgen05.ld`` into the same registers with no
``tcgen05.wait::ld`` anywhere (the example never calls ``fence_view_async_tmem_load``)."""


@dataclass(frozen=True)
class Config:
    """The example's configuration (its ``run()`` defaults for nvfp4): e2m1 x e2m1, ue4m3 per 16, fp32 C."""

    mma_tiler: tuple[int, int] = (128, 128)
    cluster: tuple[int, int] = (1, 1)
    max_active_clusters: int = 4
    sf_vec: int = 16
    c_dtype: str = "Float32"


def configured() -> tuple[str, Path]:
    """(DSL venv python, example file), or :class:`Unavailable` naming what is missing."""
    py, ex = os.environ.get("MMACTS_CUTE_DSL_PYTHON"), os.environ.get("MMACTS_CUTE_DSL_EXAMPLE")
    if not py or not Path(py).exists():
        raise Unavailable("CuTe DSL peer: set MMACTS_CUTE_DSL_PYTHON to the python of a venv with nvidia-cutlass-dsl")
    if not ex or not Path(ex).exists():
        raise Unavailable("CuTe DSL peer: set MMACTS_CUTE_DSL_EXAMPLE to dense_blockscaled_gemm_persistent.py of the "
                          "CUTLASS checkout matching the DSL version")
    return py, Path(ex)


def shim() -> Path:
    """``vmlaunch.c`` built (once per source hash) into a shared library."""
    cc = libvmcuda.compiler()
    out = _cache_root() / f"cutedsl-vmlaunch-{hashlib.sha256(SHIM.read_bytes()).hexdigest()[:16]}.so"
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(suffix=".so", dir=out.parent)
    os.close(fd)
    r = subprocess.run([cc, "-std=c11", "-O2", "-Wall", "-shared", "-fPIC", str(SHIM), "-o", tmp],
                       capture_output=True, text=True, timeout=120)
    if r.returncode:
        os.unlink(tmp)
        raise Unavailable(f"building vmlaunch failed: {r.stderr[-1000:]}")
    os.replace(tmp, out)
    return out


def sf_image(codes: np.ndarray, k: int, vs: int) -> np.ndarray:
    """SF codes (mn, k / vs) placed as the example's storage (l, mn/128, sf_k/4, 32, 4, 4) orders them."""
    mn, sf_k = codes.shape
    rk = -(-sf_k // 4)
    r, f = np.arange(mn)[:, None], np.arange(sf_k)[None, :]
    off = (r % 32) * 16 + ((r // 32) % 4) * 4 + f % 4 + (f // 4) * 512 + (r // 128) * rk * 512
    img = np.zeros(-(-mn // 128) * rk * 512, np.uint8)
    img[off] = codes
    return img


def capture(m: int, n: int, k: int, addrs: dict[str, int], cfg: Config, work: Path) -> dict[str, Any]:
    """Compile the example and run its host code (DSL venv, subprocess): PTX, parameter bytes, launch shape."""
    py, ex = configured()
    spec = {"m": m, "n": n, "k": k, "l": 1, "sf_vec": cfg.sf_vec, "mma_tiler": list(cfg.mma_tiler),
            "cluster": list(cfg.cluster), "max_active_clusters": cfg.max_active_clusters,
            "ab_dtype": "Float4E2M1FN", "sf_dtype": "Float8E4M3FN", "c_dtype": cfg.c_dtype, "addrs": addrs,
            "shim": str(shim())}
    work.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    r = subprocess.run([py, str(HOST), str(ex), str(work), json.dumps(spec)], capture_output=True, text=True,
                       timeout=900, env=env)
    if r.returncode:
        raise Unavailable(f"CuTe DSL host (rc {r.returncode}): {(r.stderr + r.stdout)[-1500:]}")
    out = json.loads((work / "launch.json").read_text())
    out["ptx"] = (work / "kernel.ptx").read_text()
    out["params"] = (work / "params.bin").read_bytes()
    return out


def foreign_maps(params: bytes, sizes: list[int], bases: dict[str, int]) -> list[str]:
    """The 128-byte parameters that hold one of our buffers' addresses (bytes 0-7, where the hardware layout keeps it)
    but that the VM refuses to read (bits it does not know: another layout, or an sm_100 field it cannot observe)."""

    out, off = [], 0
    for i, size in enumerate(sizes):
        p = params[off:off + size]
        off += size
        if size != MAP_BYTES:
            continue
        owner = [name for name, base in bases.items() if int.from_bytes(p[:8], "little") == base]
        if not owner:
            continue
        try:
            TensorMap.decode(np.frombuffer(p, np.uint8))
        except VmUnsupported as e:
            out.append(f"param {i} (map of {owner[0]}: {e})")
    return out


def run_dense_blockscaled(m: int, n: int, k: int, *, seed: int = 0, cfg: Config | None = None,
                          max_steps: int = 200_000_000,
                          readings: tuple[tuple[str, str], ...] = READINGS) -> CE.Result:
    """The DSL example's kernel on the VM for M x N x K against the exact product (fp32 C), or why it cannot run.
    ``readings``: the open register readings the VM is told (default :data:`READINGS`); the message names them, so
    a verdict says what it rests on."""
    ex = CE.Example("cute-dsl", "", "sm_100a")
    cfg = cfg or Config()
    x = CE.make_inputs(ex, m, n, k, cfg.sf_vec, seed)
    vm.reset()
    bufs = {"a": vm.asarray(CE._pack4(x.a)), "b": vm.asarray(CE._pack4(x.b)),
            "sfa": vm.asarray(sf_image(x.sfa, k, cfg.sf_vec)), "sfb": vm.asarray(sf_image(x.sfb, k, cfg.sf_vec)),
            "c": vm.zeros(m * n, np.float32)}
    bases = {name: b.base for name, b in bufs.items()}
    work = _cache_root() / "cutedsl-runs" / f"{m}x{n}x{k}-{os.getpid()}"
    cap = capture(m, n, k, bases, cfg, work)
    stats: dict[str, Any] = {"dsl": cap["dsl"], "grid": cap["grid"], "block": cap["block"], "cluster": cap["cluster"],
                             "smem": cap["smem"], "compile_s": cap["compile_s"], "forms": CE.ptx_forms(cap["ptx"])}
    foreign = foreign_maps(cap["params"], cap["sizes"], bases)
    if foreign:
        return CE.Result(False, "not-supported: the DSL's host code encodes its TMA descriptors itself, with "
                         "hardware CUtensorMap bits the VM does not know: " + "; ".join(foreign), -1, stats)
    note = "; VM reading " + ", ".join(f"{e} {r}" for e, r in readings) if readings else ""
    args, off = [], 0
    for size in cap["sizes"]:
        args.append(np.frombuffer(cap["params"][off:off + size], f"V{size}")[0])
        off += size
    kern = vm.RawModule(code=cap["ptx"], arch="sm_100a", max_steps=max_steps,
                        profile={"readings": dict(readings)} if readings else None).get_function(cap["entry"])
    try:
        out = kern(tuple(cap["grid"]), tuple(cap["block"]), tuple(args), shared_mem=cap["smem"],
                   cluster=tuple(cap["cluster"]))
    except vm.LaunchError as e:
        return CE.Result(False, f"VM {e.outcome.status}: {e.outcome.message}{note}", -1, stats)
    stats.update(steps=out.steps, thread_instructions=out.thread_instructions, wall_s=round(out.wall_s, 3))
    want = CE.accumulator(ex, x).astype(np.float32)
    bad = bufs["c"].get().reshape(m, n) != want
    if bad.any():
        return CE.Result(False, f"C (fp32): {CE._first(bad)}{note}", int(bad.sum()), stats)
    return CE.Result(True, f"C equals the exact product ({m}x{n}, fp32){note}", 0, stats)
