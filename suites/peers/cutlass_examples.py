"""CUTLASS's own Blackwell block-scaled GEMM examples, run on the PTX VM as peers (issue 23, item 2).

Why: the suite's kernels and Triton's agree with the VM, but the kernels that ship are CUTLASS's. Each example
here runs **as shipped**: its ``.cu`` file from the ``nvidia-cutlass`` wheel is included, unmodified and in place,
by ``cutlass/example_host.cu`` (sparse examples: ``cutlass/example_sparse_host.cu``; its ``main`` renamed) and
built with the wheel's nvcc into

* the example's PTX (``--keep``: the PTX of ``cutlass::device_kernel<GemmKernel>`` for the example's own types),
* a host program that builds the example's ``Gemm::Arguments`` for M, N, K and the addresses the VM allocated,
  lowers them with ``GemmKernel::to_underlying_arguments`` and writes the ``Params`` bytes, grid, block, cluster,
  dynamic shared memory and, from the example's ``Sm1xxBlkScaledConfig`` layouts, every scale factor's offset.

The tensor maps inside ``Params`` come from CUTLASS's own ``cuTensorMapEncodeTiled`` calls: built with
``CUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL`` the host program calls the driver function directly, and links
``libvmcuda`` (:mod:`mmacts.ptxvm.host.libvmcuda`) instead of libcuda, found at run time through
``LD_LIBRARY_PATH`` (so a change to libvmcuda does not rebuild the examples). The CUDA runtime (the wheel's
libcudart) is linked for the example's own ``main``, which is never called.

Data are exact by construction (two-significant-bit e2m1 values, power-of-two scale factors in {1/2, 1, 2}), so
every partial sum is exact in fp32; D is compared bit for bit with a float64 model of the example's epilogue.
Builds take minutes (CUDA front end on CUTLASS's templates): they are cached by source hash under
``.mmacts-cache/peers/`` like :mod:`suites.peers.cutlass_peer`'s programs.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np

from mmacts.cases.model import Case, level_rank
from mmacts.cases.status import NOT_SUPPORTED
from mmacts.ptxvm import api as vm
from mmacts.ptxvm import mufu
from mmacts.ptxvm.host import libvmcuda
from mmacts.ptxvm.ops_more import UE8M0_REGISTER
from reference import gemm as G
from reference import sparse as S
from suites.peers.cutlass_peer import SRC, Unavailable, _cache_root, cutlass_version, toolchain
from suites.peers.fields import ExampleForm, ExampleRuntime, GroupedRuntime

NORM_CONSTANT = 1.25
"""72b's ``norm_constant`` (``st``): not a power of two, so ``amax * st / 6`` is never a power of two for the data
here (amax has few significant bits) and the kernel's ``rcp.approx(6)`` cannot move a scale factor across a
power of two; ``st / SFD`` stays exact (``SFD`` is one)."""
NORM_UE4M3 = 67 / 64
"""79d's norm constant (ue4m3 scale factors): 67 is prime and above 31, so ``amax * st / 6`` is never a tie between
two ue4m3 values (those have five significant bits) and ``acc * st / SFD`` never a tie between two e2m1 values;
1.25 would make ``st / SFD`` a power of two for SFD = 1.25 * 2^k and put exact ties where rcp.approx decides."""


@dataclass(frozen=True)
class Example:
    """One shipped example: its file under ``examples/``, the PTX target, what its epilogue writes."""

    name: str
    path: str
    arch: str
    a_fmt: str = "e2m1"
    b_fmt: str = "e2m1"
    sf_fmt: str = "ue4m3"  # nvfp4: ue4m3 per 16; mx types: ue8m0 per 32
    kind: str = "mxf4nvf4"
    out: str = "bf16"  # D's type; "e2m1" with generated scale factors (LinCombBlockScaleFactor)
    sfd_fmt: str = "ue8m0"  # the generated scale factors' type (79d: ue4m3)
    host: str = "example_host.cu"  # the harness that builds Arguments (grouped_host.cu: ptr-array grouped GEMM)
    entry: str = ""  # a word the kernel's mangled name must hold where the PTX has several (79d: two schedules)
    build_as: str = ""  # another example's name whose build (same .cu) this one shares
    ue8m0_zero: bool = False  # converts ue8m0 code 0x00 to bf16 in a discarded half: run under both readings
    norm: float = NORM_CONSTANT  # the epilogue's norm_constant
    readings: tuple[tuple[str, str], ...] = ()  # (register entry, reading) the VM is told to take (its profile)
    register: tuple[str, ...] = ()  # register entries the example's verdict informs (the case message names them)

    @property
    def grouped(self) -> bool:
        return self.host == "grouped_host.cu"

    @property
    def sparse(self) -> bool:
        return self.host == "example_sparse_host.cu"

    @property
    def chunk(self) -> int:
        """Logical K per sparsity-metadata index: 8 (pairwise 4:8) for mxf4*, 4 (2:4) otherwise."""
        return 8 if self.kind.startswith("mxf4") else 4

    @property
    def sfd(self) -> bool:
        return self.out == "e2m1"

    def source(self) -> Path:
        return Path(toolchain()["cutlass"]).parent / "examples" / self.path


EXAMPLES: dict[str, Example] = {
    e.name: e
    for e in (
        Example("72b", "72_blackwell_narrow_precision_gemm/72b_blackwell_nvfp4_nvfp4_gemm.cu", "sm_100a", out="e2m1"),
        Example("72a", "72_blackwell_narrow_precision_gemm/72a_blackwell_nvfp4_bf16_gemm.cu", "sm_100a"),
        Example("72c", "72_blackwell_narrow_precision_gemm/72c_blackwell_mixed_mxfp8_bf16_gemm.cu", "sm_100a",
                a_fmt="e4m3", sf_fmt="ue8m0", kind="mxf8f6f4"),
        Example("79a", "79_blackwell_geforce_gemm/79a_blackwell_geforce_nvfp4_bf16_gemm.cu", "sm_120a"),
        Example("79b", "79_blackwell_geforce_gemm/79b_blackwell_geforce_nvfp4_nvfp4_gemm.cu", "sm_120a", out="e2m1",
                ue8m0_zero=True),
        Example("79c", "79_blackwell_geforce_gemm/79c_blackwell_geforce_mixed_mxfp8_mxfp6_bf16_gemm.cu", "sm_120a",
                a_fmt="e4m3", b_fmt="e3m2", sf_fmt="ue8m0", kind="mxf8f6f4"),
        Example("79d", "79_blackwell_geforce_gemm/79d_blackwell_geforce_nvfp4_grouped_gemm.cu", "sm_120a", out="e2m1",
                sfd_fmt="ue4m3", host="grouped_host.cu", entry="Cooperative", norm=NORM_UE4M3),
        Example("79d.pingpong", "79_blackwell_geforce_gemm/79d_blackwell_geforce_nvfp4_grouped_gemm.cu", "sm_120a",
                out="e2m1", sfd_fmt="ue4m3", host="grouped_host.cu", entry="Pingpong", build_as="79d",
                norm=NORM_UE4M3),
        Example("89", "89_sm103_fp4_ultra_gemm/89_sm103_fp4_ultra_gemm.cu", "sm_103a",
                readings=(("AMB-K96-SHAPES", "also-m128"),),
                register=("AMB-K96-SHAPES", "AMB-SF-FIGURES-K96", "AMB-ABSOLUTE-LBO-CHUNKS")),
        Example("84a", "84_blackwell_narrow_precision_sparse_gemm/84a_blackwell_nvfp4_bf16_sparse_gemm.cu", "sm_100a",
                host="example_sparse_host.cu", entry="GemmUniversal"),
        Example("84b", "84_blackwell_narrow_precision_sparse_gemm/84b_blackwell_mixed_mxfp8_bf16_sparse_gemm.cu",
                "sm_100a", a_fmt="e4m3", sf_fmt="ue8m0", kind="mxf8f6f4", host="example_sparse_host.cu",
                entry="GemmUniversal"),
    )
}
HOST_HEADERS = ("example_io.hpp",)
"""What the single-problem host harnesses include from ``cutlass/`` (offsets, addresses, the launch shape and
Params writer); hashed into every build key."""
# -DNDEBUG as CUTLASS's CMake Release build gives the examples (device asserts would call __assertfail).
BUILD_FLAGS = ("-std=c++17", "-O2", "-DNDEBUG", "--expt-relaxed-constexpr",
               "-DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL=1")


# ------------------------------------------------------------------------------------------------ build
def _nvcc_version(nvcc: str) -> str:
    r = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=60)
    return r.stdout.strip().splitlines()[-1] if r.stdout.strip() else "?"


def build_key(ex: Example) -> str:
    """Hash of everything the build reads that can change: CUTLASS version, nvcc, flags, the example, the harness."""
    tc = toolchain()
    h = hashlib.sha256()
    h.update(f"cutlass={cutlass_version()}|nvcc={_nvcc_version(tc['nvcc'])}|flags={BUILD_FLAGS}|{ex.name}|{ex.path}|{ex.arch}|sfd={ex.sfd}".encode())
    h.update(ex.source().read_bytes())
    for name in (ex.host, *HOST_HEADERS):
        h.update(name.encode() + (SRC / name).read_bytes())
    return h.hexdigest()[:16]


def _build_dir(ex: Example) -> Path:
    if ex.build_as:
        return _build_dir(EXAMPLES[ex.build_as])
    return _cache_root() / f"cutlass-{cutlass_version()}" / f"example{ex.name}-{build_key(ex)}"


def is_built(ex: Example) -> bool:
    d = _build_dir(ex)
    return (d / "kernel.ptx").exists() and (d / "host").exists()


def build(ex: Example) -> Path:
    """Build (cached) the example's host program and PTX; returns the folder holding ``host`` and ``kernel.ptx``."""
    if ex.build_as:
        return build(EXAMPLES[ex.build_as])
    d = _build_dir(ex)
    if is_built(ex):
        return d
    d.mkdir(parents=True, exist_ok=True)
    with open(d / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # parallel workers and test runs: one builds, the others wait for it
        if not is_built(ex):
            _build_into(ex, d)
    return d


def _build_into(ex: Example, d: Path) -> None:
    tc = toolchain()
    keep = d / f"keep-{os.getpid()}"
    keep.mkdir(exist_ok=True)
    inc = Path(tc["cutlass"]).parent
    lib = Path(tc["nvcc"]).parent.parent / "lib"
    virt = ex.arch.replace("sm_", "compute_")
    vmcuda = _libvmcuda_dir()
    cmd = [
        tc["nvcc"], *BUILD_FLAGS, "-ccbin", tc["gxx"], "-gencode", f"arch={virt},code={virt}", "--keep",
        "--keep-dir", str(keep), f"-I{inc / 'include'}", f"-I{inc / 'tools/util/include'}",
        f"-I{inc / 'examples/common'}", f'-DMMACTS_EXAMPLE="{ex.source()}"', f'-DMMACTS_EXAMPLE_NAME="{ex.name}"',
        f"-DMMACTS_SFD={int(ex.sfd)}", str(SRC / ex.host), "-o", str(d / f"host.{os.getpid()}"),
        f"-L{vmcuda}", "-lvmcuda", f"-L{lib}", "-l:libcudart.so.13", f"-Xlinker=-rpath={lib}",
    ]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, cwd=d)
    if r.returncode:
        err = "\n".join(ln for ln in (r.stderr + r.stdout).splitlines() if "error" in ln)[:2000]
        raise Unavailable(f"building CUTLASS example {ex.name} failed: {err or r.stderr[-2000:]}")
    ptx = keep / f"{Path(ex.host).stem}.ptx"
    (d / "build.json").write_text(json.dumps({"seconds": round(time.perf_counter() - t0, 1), "cmd": cmd}))
    ptx.replace(d / "kernel.ptx")
    (d / f"host.{os.getpid()}").replace(d / "host")
    shutil.rmtree(keep, ignore_errors=True)


def _libvmcuda_dir() -> Path:
    try:
        return libvmcuda.build().parent
    except libvmcuda.Unavailable as e:
        raise Unavailable(str(e)) from e


# ------------------------------------------------------------------------------------------------ host side
def host_sizes(d: Path, m: int, n: int, k: int, out: Path) -> dict[str, Any]:
    """The example's tensor sizes for M, N, K (SF tensors are padded to CUTLASS's 128 x 4 atoms)."""
    _host(d, ["sizes", str(m), str(n), str(k), str(out)], out)
    return json.loads((out / "meta.json").read_text())


def host_params(d: Path, m: int, n: int, k: int, out: Path, addrs: list[int]) -> tuple[dict[str, Any], bytes]:
    """``Params`` bytes (tensor maps encoded by libvmcuda) and the launch shape."""
    _host(d, ["params", str(m), str(n), str(k), str(out), *(f"{a:x}" for a in addrs)], out)
    return json.loads((out / "meta.json").read_text()), (out / "params.bin").read_bytes()


def _host(d: Path, args: list[str], out: Path) -> None:
    """Run the host program with libvmcuda on the library path. CUTLASS reports a refused tensor map on stderr
    and (built with NDEBUG) goes on with an empty one: that is an error here."""
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "LD_LIBRARY_PATH": os.pathsep.join(filter(None, [str(_libvmcuda_dir()),
                                                                           os.environ.get("LD_LIBRARY_PATH")]))}
    r = subprocess.run([str(d / "host"), *args], capture_output=True, text=True, timeout=300, env=env)
    if r.returncode or "Failed to initialize the TMA descriptor" in r.stderr:
        raise Unavailable(f"{d.name} host {args[0]} failed (rc {r.returncode}): {(r.stderr + r.stdout)[-800:]}")


def sf_offsets(out: Path, which: str, rows: int, blocks: int) -> np.ndarray:
    """(rows, blocks) element offsets of one SF tensor, as the example's layout function placed them."""
    return np.fromfile(out / f"{which}.bin", dtype=np.int32).reshape(rows, blocks)


# ------------------------------------------------------------------------------------------------ data, reference
_E2M1 = np.array([0.0, 0.5, -0.5, 1.0, -1.0, 1.5, -1.5, 2.0, -2.0, 3.0, -3.0, 4.0, -4.0, 6.0, -6.0])
_SCALES = (0.5, 1.0, 2.0)


def _codes(values: np.ndarray, fmt: str) -> np.ndarray:
    t = {"e2m1": ml_dtypes.float4_e2m1fn, "e4m3": ml_dtypes.float8_e4m3fn, "ue4m3": ml_dtypes.float8_e4m3fn,
         "e3m2": ml_dtypes.float6_e3m2fn}[fmt]
    return values.astype(t).view(np.uint8) & {"e2m1": 0x0F, "e3m2": 0x3F}.get(fmt, 0xFF)


def _sf_codes(values: np.ndarray, fmt: str) -> np.ndarray:
    if fmt == "ue8m0":
        return (np.log2(values).astype(np.int64) + 127).astype(np.uint8)
    return _codes(values, "ue4m3")


def _pack4(codes: np.ndarray) -> np.ndarray:
    """Two 4-bit codes per byte along the last axis, the even element in the low nibble (CUTLASS's subbyte order)."""
    return (codes[..., 0::2] | (codes[..., 1::2] << 4)).astype(np.uint8)


def _pack6(codes: np.ndarray) -> np.ndarray:
    """Four 6-bit codes per three bytes along the last axis, element i at bits 6i..6i+5 of the little-endian
    bit stream (CUTLASS's subbyte order for ``float_e3m2_t``, which the TMA's packed 6-bit type reads)."""
    c = codes.astype(np.uint32).reshape(*codes.shape[:-1], -1, 4)
    v = c[..., 0] | (c[..., 1] << 6) | (c[..., 2] << 12) | (c[..., 3] << 18)
    return np.stack([v & 0xFF, (v >> 8) & 0xFF, v >> 16], axis=-1).reshape(*codes.shape[:-1], -1).astype(np.uint8)


def pack(codes: np.ndarray, fmt: str) -> np.ndarray:
    """An operand's codes as the example's global memory holds them (K contiguous)."""
    return {"e2m1": _pack4, "e3m2": _pack6}.get(fmt, lambda c: c.astype(np.uint8))(codes)


@dataclass
class Inputs:
    a: np.ndarray  # (M, K) codes; sparse examples: (M, K / 2), the stored values
    b: np.ndarray  # (N, K) codes
    sfa: np.ndarray  # (M, K / vs) codes
    sfb: np.ndarray  # (N, K / vs) codes
    meta: np.ndarray | None = None  # sparse examples: (M, K / chunk) 4-bit metadata, one per chunk


SPARSE_INDEX = (0b0100, 0b1000, 0b1100, 0b1001, 0b1101, 0b1110)
"""The six position pairs (first < second) a 2:4 / pairwise 4:8 chunk can keep: the metadata values CUTLASS's
compressor writes (the two positions in increasing order, the first in bits [1:0]). 0b0110, listed by the spec
too, keeps the same positions as 0b1001 in the other order and is left out."""


def make_inputs(ex: Example, m: int, n: int, k: int, vs: int, seed: int) -> Inputs:
    """Exact by construction: e2m1 values (at most two significant bits; e4m3 takes the same values) and scale
    factors in {1/2, 1, 2}: every product is a multiple of 2^-4 below 2^8, so fp32 partial sums are exact.
    Sparse examples: K/2 stored values per row and a random metadata index per chunk."""
    rng = np.random.default_rng(seed)
    a = _codes(rng.choice(_E2M1, size=(m, k // 2 if ex.sparse else k)), ex.a_fmt)
    b = _codes(rng.choice(_E2M1, size=(n, k)), ex.b_fmt)
    sfa = _sf_codes(rng.choice(_SCALES, size=(m, k // vs)), ex.sf_fmt)
    sfb = _sf_codes(rng.choice(_SCALES, size=(n, k // vs)), ex.sf_fmt)
    meta = rng.choice(SPARSE_INDEX, size=(m, k // ex.chunk)).astype(np.uint8) if ex.sparse else None
    return Inputs(a, b, sfa, sfb, meta)


def accumulator(ex: Example, x: Inputs) -> np.ndarray:
    """The exact block-scaled product (``reference.gemm``, the oracle side), float64 (M, N). A sparse A is
    expanded by ``reference.sparse`` (the oracle's reading of 9.7.16.10.8), with one scale factor per
    ``vs`` logical K (AMB-SPARSE-SF-COUNT's dense-count: CUTLASS's sparse SF vector is twice the dense one)."""
    if ex.sparse:
        return S.sparse_block_scaled_gemm(x.a, x.meta, x.b.T, x.sfa, x.sfb.T, kind=ex.kind, a_fmt=ex.a_fmt,
                                          b_fmt=ex.b_fmt, scale_fmt=ex.sf_fmt).astype(np.float64)
    return G.block_scaled_gemm(x.a, x.b.T, x.sfa, x.sfb.T, kind=ex.kind, a_fmt=ex.a_fmt, b_fmt=ex.b_fmt,
                               scale_fmt=ex.sf_fmt).astype(np.float64)


def _rne_e2m1(x: np.ndarray) -> np.ndarray:
    """fp32 values -> e2m1 codes, round to nearest even, saturating at +-6 (``cvt.rn.satfinite.e2m1x2.f32``)."""
    grid = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])
    mag = np.minimum(np.abs(x), 6.0)
    hi = np.clip(np.searchsorted(grid, mag, side="left"), 0, 7)
    lo = np.maximum(hi - 1, 0)
    d_lo, d_hi = mag - grid[lo], grid[hi] - mag
    pick = np.where(d_lo < d_hi, lo, np.where(d_hi < d_lo, hi, np.where(lo % 2 == 0, lo, hi)))
    pick = np.where(mag == grid[hi], hi, pick)
    return (pick | np.where(np.signbit(x), 8, 0)).astype(np.uint8)


def expected_sfd(acc: np.ndarray, vs: int) -> tuple[np.ndarray, np.ndarray]:
    """72b's epilogue (``LinCombBlockScaleFactor``, alpha 1, beta 0): per ``vs`` columns, SFD = amax * st / 6
    rounded up to a power of two (``cvt.rp.satfinite.ue8m0x2``), D = e2m1(acc * (st / SFD)) with the product
    rounded to fp32 (``mul.f32``). Returns (D codes (M, N), SFD codes (M, N / vs)); raises if the data put a
    scale factor on a power-of-two boundary, where the kernel's approximate 1/6 would decide it."""
    m, n = acc.shape
    amax = np.abs(acc).reshape(m, n // vs, vs).max(axis=2)
    if (amax == 0).any():
        raise ValueError("a zero block: its ue8m0 scale factor is 2^-127, outside what this check models")
    e = np.log2(amax * NORM_CONSTANT / 6.0)
    if (np.abs(e - np.round(e)) < 1e-5).any():
        raise ValueError("a scale factor falls on a power of two: not exact by construction")
    sf_exp = np.ceil(e).astype(np.int64)
    scale = (NORM_CONSTANT * np.exp2(-sf_exp.astype(np.float64))).astype(np.float32)
    prod = acc.astype(np.float32) * np.repeat(scale, vs, axis=1)
    return _rne_e2m1(prod.astype(np.float64)), (sf_exp + 127).astype(np.uint8)


def _rcp_bounds(x: np.ndarray) -> tuple[np.ndarray, ...]:
    """fp32 ``rcp.approx.ftz`` within the ISA's bound: the correctly rounded reciprocal and its two neighbours."""
    with np.errstate(divide="ignore"):
        r = (np.float32(1.0) / x.astype(np.float32)).astype(np.float32)
    return (np.nextafter(r, np.float32(-np.inf)), r, np.nextafter(r, np.float32(np.inf)))


def expected_sfd_ue4m3(acc: np.ndarray, vs: int, norm: float = NORM_CONSTANT) -> tuple[np.ndarray, np.ndarray]:
    """79d's epilogue (SM120 ``LinCombBlockScaleFactor`` with ue4m3 scale factors, alpha 1, beta 0), in fp32 as the
    kernel computes it: ``nsd = norm * rcp(6)``; per ``vs`` columns ``SFD = ue4m3_rn_satfinite(amax * nsd)``;
    ``D = e2m1(acc * min(norm * rcp(SFD), FLT_MAX))``. Both reciprocals are ``rcp.approx.ftz`` (1 ulp): the model
    is evaluated for every rcp within the bound and raises where the answer depends on which one the hardware
    gives (no exact verdict then). Returns (D codes (M, N), SFD codes (M, N / vs))."""
    m, n = acc.shape
    f32 = np.float32
    accf = acc.astype(f32)
    if not np.array_equal(accf.astype(np.float64), acc):
        raise ValueError("the accumulator is not exact in fp32")
    amax = np.abs(accf).reshape(m, n // vs, vs).max(axis=2)
    big = np.finfo(f32).max
    outs: set[tuple[bytes, bytes]] = set()
    res: tuple[np.ndarray, np.ndarray] | None = None
    for r6 in _rcp_bounds(np.array([6.0], f32)):
        nsd = f32(f32(norm) * r6[0])
        pv = (amax * nsd).astype(f32)
        q = np.minimum(pv, f32(448.0)).astype(ml_dtypes.float8_e4m3fn)
        qf = q.astype(f32)
        for rq in _rcp_bounds(qf):
            with np.errstate(invalid="ignore", over="ignore"):
                scale = np.minimum((f32(norm) * rq).astype(f32), big)
                prod = (accf * np.repeat(scale, vs, axis=1)).astype(f32)
            d = _rne_e2m1(prod.astype(np.float64))
            sf = q.view(np.uint8)
            outs.add((d.tobytes(), sf.tobytes()))
            res = (d, sf.copy())
    if len(outs) != 1:
        raise ValueError("an output depends on which rcp.approx within 1 ulp the hardware gives")
    assert res is not None
    return res


def expected_bf16(acc: np.ndarray) -> np.ndarray:
    """bf16 D (alpha 1, beta 0): the exact accumulator rounded once, to nearest even; as uint16 bit patterns."""
    return acc.astype(np.float32).astype(ml_dtypes.bfloat16).view(np.uint16)


# ------------------------------------------------------------------------------------------------ rcp.approx
def rcp_table() -> tuple[str | None, str]:
    """The ``rcp.approx`` table the VM reads for 72b's ``st * rcp.approx(6)``, and how it was chosen.

    With a silicon recording (``mmacts.ptxvm.mufu.TABLE_PATH`` or ``$MMACTS_RCP_TABLE``) it is used. Without one
    a stand-in holding the correctly rounded reciprocal is written to the cache: the data here keep every
    ``amax * st / 6`` more than 1e-5 (relative) from a power of two (:func:`expected_sfd` checks), far beyond
    the ISA's 1-ulp bound on rcp.approx's error, so D and SFD are the same for every conforming rcp.approx;
    the case's message says the stand-in was used."""
    real = os.environ.get("MMACTS_RCP_TABLE") or (str(mufu.TABLE_PATH) if mufu.TABLE_PATH.exists() else None)
    if real:
        return real, f"rcp.approx from the recorded table {Path(real).name}"
    path = _cache_root() / "rcp-correctly-rounded.npz"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        hw = mufu.correct_rcp_bits(np.arange(mufu.N_MANT))
        rules = {v: {"normal": "scale", "tiny": "flush", "subnormal": "flush", "zero": "inf", "inf": "zero",
                     "nan": "canonical"} for v in mufu.VARIANTS}
        complete = {v: {c: False for c in mufu.CLASSES} for v in mufu.VARIANTS}
        for v in mufu.VARIANTS:
            complete[v]["normal"] = True
        tmp = path.with_name(f"{path.stem}.{os.getpid()}.npz")
        mufu.write_table(tmp, hw, rules, {}, complete, {"device": "stand-in: correctly rounded (no silicon)"})
        tmp.replace(path)
    return str(path), ("rcp.approx: no silicon table, correctly rounded stand-in (the data keep SFD 1e-5 from "
                       "every power of two: any rcp within the ISA's 1 ulp gives the same result)")


# ------------------------------------------------------------------------------------------------ run
FAULTS = ("none", "sfa_rows", "meta_nibbles")
"""Planted faults: ``sfa_rows`` writes SFA through the layout of the next row (rows rotated by one inside each
32-row group), the mistake a wrong reading of CUTLASS's 128 x 4 SF atom would make; ``meta_nibbles`` (sparse
examples) packs the two metadata indices of each E byte high nibble first, the other reading of how chunk
indices share a byte. Either must make the case fail."""


@dataclass
class Result:
    ok: bool
    message: str
    mismatches: int
    stats: dict[str, Any]


def _sf_image(size: int, offs: np.ndarray, codes: np.ndarray) -> np.ndarray:
    img = np.zeros(size, np.uint8)
    img[offs.reshape(-1)] = codes.reshape(-1)
    return img


def _sparse_a_image(ex: Example, x: Inputs, sizes: dict[str, Any], work: Path) -> np.ndarray:
    """Compressed A as the example's ``fill_layoutA`` places it: the offsets the host program wrote for each
    (row, stored column) in elements (two e2m1 per byte, the even element in the low nibble)."""
    m, half = x.a.shape
    offs = np.fromfile(work / "a.bin", dtype=np.int32).reshape(m, half)
    codes = np.zeros(sizes["a_size"] + sizes["a_size"] % 2, np.uint8)
    codes[offs.reshape(-1)] = x.a.reshape(-1)
    return _pack4(codes) if ex.a_fmt == "e2m1" else codes[:sizes["a_size"]]


def _metadata_image(ex: Example, x: Inputs, sizes: dict[str, Any], work: Path, *, swap_nibbles: bool = False
                    ) -> np.ndarray:
    """The metadata tensor E in the example's ``fill_layoutE`` byte order, by the project's reading of how the
    4-bit indices share a byte: one byte holds the indices of ``e_logical / chunk`` = 2 consecutive chunks of a
    row, the earlier chunk in the low nibble (CUTLASS's subbyte order, as for e2m1 data). Row r of a 128-row
    E atom is then one 16-byte smem row that ``tcgen05.cp.128x128b`` puts in TMEM lane r, where the VM reads
    it as AMB-SPARSE-META-TMEM's lane-row-nibble."""
    m, nch = x.meta.shape
    per_byte = sizes["e_logical"] // ex.chunk
    if sizes["chunk"] != ex.chunk or per_byte != 2:
        raise Unavailable(f"example {ex.name}: {sizes['chunk']}-wide chunks, {sizes['e_logical']} K per E byte: "
                          f"not the 2:4 / pairwise 4:8 packing modelled here")
    offs = np.fromfile(work / "e.bin", dtype=np.int32).reshape(m, nch // per_byte)
    lo, hi = x.meta[:, 0::2], x.meta[:, 1::2]
    if swap_nibbles:
        lo, hi = hi, lo
    img = np.zeros(sizes["e_size"], np.uint8)
    img[offs.reshape(-1)] = (lo | (hi << 4)).reshape(-1)
    return img


def _entry(ptx: str, word: str = "") -> str:
    """The ``cutlass::device_kernel`` entry (the one whose name holds ``word`` where the PTX has several)."""
    names = re.findall(r"^\s*(?:\.visible\s+|\.weak\s+)*\.entry\s+([\w$]+)", ptx, re.M)
    kern = [x for x in names if "device_kernel" in x and word in x]
    if len(kern) != 1:
        raise Unavailable(f"expected one cutlass::device_kernel entry in the PTX, found {kern or names}")
    return kern[0]


def ptx_forms(ptx: str) -> list[str]:
    """The block-scaled and tensor-memory instruction forms the kernel uses (for the case record)."""
    pat = (r"\b((?:tcgen05|mma|cp\.async\.bulk\.tensor|clusterlaunchcontrol|cvt\.r[pn]\.satfinite|tensormap)"
           r"\.[\w:.]+)")
    return sorted(set(re.findall(pat, ptx)))


def run_example(name: str, m: int, n: int, k: int, *, seed: int = 0, fault: str = "none",
                max_steps: int = 200_000_000) -> Result:
    """Build (cached), run example ``name`` on the VM for M x N x K and compare with the exact model."""
    ex = EXAMPLES[name]
    d = build(ex)
    work = d / f"run-{m}x{n}x{k}-{os.getpid()}"
    sizes = host_sizes(d, m, n, k, work)
    vs = sizes["sf_vec"]
    x = make_inputs(ex, m, n, k, vs, seed)
    sfa_offs = sf_offsets(work, "sfa", m, k // vs)
    sfd_offs = sf_offsets(work, "sfd", m, n // sizes["sfd_vec"]) if ex.sfd else None
    if fault == "sfa_rows":
        sfa_offs = sfa_offs.reshape(m // 32, 32, -1)[:, np.r_[1:32, 0], :].reshape(m, -1)
    vm.reset()
    a_img = _sparse_a_image(ex, x, sizes, work) if ex.sparse else pack(x.a, ex.a_fmt)
    a_d, b_d = vm.asarray(a_img), vm.asarray(pack(x.b, ex.b_fmt))
    sfa_d = vm.asarray(_sf_image(sizes["sfa_size"], sfa_offs, x.sfa))
    sfb_d = vm.asarray(_sf_image(sizes["sfb_size"], sf_offsets(work, "sfb", n, k // vs), x.sfb))
    c_d = vm.zeros(m * n, np.float32 if ex.sfd else np.uint16)
    d_d = vm.empty(m * n // 2, np.uint8) if ex.sfd else vm.empty(m * n, np.uint16)
    sfd_d = vm.empty(sizes.get("sfd_size", 16), np.uint8)
    ws_d = vm.zeros(max(int(sizes["workspace"]), 16), np.uint8)
    if ex.sparse:  # the sparse host program takes A, B, E, SFA, SFB, C, D, workspace
        e_d = vm.asarray(_metadata_image(ex, x, sizes, work, swap_nibbles=fault == "meta_nibbles"))
        bufs = (a_d, b_d, e_d, sfa_d, sfb_d, c_d, d_d, ws_d)
    else:
        norm_d = vm.asarray(np.array([NORM_CONSTANT], np.float32))
        bufs = (a_d, b_d, sfa_d, sfb_d, c_d, d_d, sfd_d, norm_d, ws_d)
    meta, params = host_params(d, m, n, k, work, [p.base for p in bufs])
    shutil.rmtree(work, ignore_errors=True)
    outs: set[bytes] = set()
    for reading in UE8M0_ZERO_READINGS if ex.ue8m0_zero else ("",):
        d_d.host[...] = 0
        sfd_d.host[...] = 0
        stats, fail = _launch(ex, d, meta, params, max_steps, ue8m0_zero=reading)
        if fail:
            return fail
        outs.add(d_d.get().tobytes() + sfd_d.get().tobytes())
    r = _judge(ex, x, vs, d_d.get(), sfd_d.get(), sfd_offs, stats)
    if len(outs) > 1:
        return Result(False, f"D or SFD differs between the readings {UE8M0_ZERO_READINGS} of AMB-CVT-UE8M0-EDGES "
                             f"(code 0x00 to bf16): no verdict", -1, stats)
    if ex.ue8m0_zero:
        r.message += f"; the same under both readings {'/'.join(UE8M0_ZERO_READINGS)} of AMB-CVT-UE8M0-EDGES"
    return r


GROUPED_SMS = 2
"""The persistent grid of 79d (``hw_info.sm_count``, the example's ``--max_sm_count``): fewer CTAs than tiles, so
one CTA walks tiles of several groups and rewrites its tensor maps on the device at each change of group."""


def _grouped_host(d: Path, mode: str, out: Path, lines: list[str]) -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    (out / "in.txt").write_text("\n".join(lines) + "\n")
    _host(d, [mode, str(out)], out)
    return json.loads((out / "meta.json").read_text())


def run_grouped(name: str, problems: tuple[tuple[int, int, int], ...], *, seed: int = 0, fault: str = "none",
                max_steps: int = 400_000_000, sms: int = GROUPED_SMS) -> Result:
    """Build (cached), run the grouped example ``name`` (79d) on the VM for ``problems`` (one M, N, K per group)
    and compare every group's D and SFD with the exact model. Every problem shape, operand pointer, stride and SF
    layout is read by the kernel from device memory (the example's ``host_problem_shapes_available = false``)."""
    ex = EXAMPLES[name]
    d = build(ex)
    work = d / f"run-grouped-{len(problems)}-{os.getpid()}"
    head = [f"{len(problems)} {sms}", *(f"{m} {n} {k}" for m, n, k in problems)]
    sizes = _grouped_host(d, "sizes", work, head)
    vs, svs = sizes["sf_vec"], sizes["sfd_vec"]
    vm.reset()
    xs, bufs, sfd_offs = [], [], []
    for g, ((m, n, k), gs) in enumerate(zip(problems, sizes["groups"], strict=True)):
        x = make_inputs(ex, m, n, k, vs, seed + g)
        sfa_offs = sf_offsets(work, f"sfa{g}", m, k // vs)
        if fault == "sfa_rows":
            sfa_offs = sfa_offs.reshape(m // 32, 32, -1)[:, np.r_[1:32, 0], :].reshape(m, -1)
        bufs.append((vm.asarray(pack(x.a, ex.a_fmt)), vm.asarray(pack(x.b, ex.b_fmt)),
                     vm.asarray(_sf_image(gs["sfa_size"], sfa_offs, x.sfa)),
                     vm.asarray(_sf_image(gs["sfb_size"], sf_offsets(work, f"sfb{g}", n, k // vs), x.sfb)),
                     vm.zeros(m * n, np.uint16), vm.empty(m * n // 2, np.uint8), vm.empty(gs["sfd_size"], np.uint8)))
        xs.append(x)
        sfd_offs.append(sf_offsets(work, f"sfd{g}", m, n // svs))
    norm_d = vm.asarray(np.array([ex.norm], np.float32))
    ws_d = vm.zeros(max(int(sizes["workspace"]), 16), np.uint8)
    arena_d = vm.zeros(max(int(sizes["arena"]), 16), np.uint8)
    addrs = [f"{norm_d.base:x} {ws_d.base:x} {arena_d.base:x}", *(" ".join(f"{b.base:x}" for b in row) for row in bufs)]
    meta = _grouped_host(d, "params", work, head + addrs)
    params = (work / "params.bin").read_bytes()
    arena = np.frombuffer((work / "arena.bin").read_bytes(), np.uint8)
    arena_d.host.reshape(-1).view(np.uint8)[: arena.size] = arena
    shutil.rmtree(work, ignore_errors=True)
    stats, fail = _launch(ex, d, meta, params, max_steps)
    stats["groups"] = [list(p) for p in problems]
    if fail:
        return fail
    results = [_judge(ex, x, vs, row[5].get(), row[6].get(), offs, stats)
               for x, row, offs in zip(xs, bufs, sfd_offs, strict=True)]
    bad = [(g, r) for g, r in enumerate(results) if not r.ok]
    if bad:
        return Result(False, "; ".join(f"group {g}: {r.message}" for g, r in bad),
                      -1 if any(r.mismatches < 0 for _, r in bad) else sum(r.mismatches for _, r in bad), stats)
    return Result(True, f"{len(problems)} groups: " + "; ".join(r.message for r in results), 0, stats)


UE8M0_ZERO_READINGS = ("clamp", "shift")
"""Readings of AMB-CVT-UE8M0-EDGES for ``cvt.rn.bf16x2.ue8m0x2`` of code 0x00 (``ops_more.UE8M0_ZERO_BF16``): the
SM120 SFD epilogue (79b) converts its scale factor's reciprocal paired with a constant 0x00 and keeps only the other
half, so it runs under each and the outputs must agree."""


def _launch(ex: Example, d: Path, meta: dict[str, Any], params: bytes, max_steps: int, ue8m0_zero: str = ""
            ) -> tuple[dict[str, Any], Result | None]:
    """One launch of the example's kernel with the host program's Params: the record's stats, and a failed
    Result where the VM stopped it (its status and message name the cause). ``ue8m0_zero`` names the reading
    the VM takes for ue8m0 code 0x00 (empty: refused)."""
    ptx = (d / "kernel.ptx").read_text()
    readings = {**dict(ex.readings), **({UE8M0_REGISTER: ue8m0_zero} if ue8m0_zero else {})}
    profile = {"readings": readings} if readings else None
    kern = vm.RawModule(code=ptx, arch=ex.arch, max_steps=max_steps, profile=profile).get_function(
        _entry(ptx, ex.entry))
    stats: dict[str, Any] = {"cutlass": cutlass_version(), "example": ex.name, "grid": meta["grid"],
                             "block": meta["block"], "cluster": meta["cluster"], "smem": meta["smem"],
                             "forms": ptx_forms(ptx)}
    saved = {v: os.environ.get(v) for v in ("MMACTS_RCP_TABLE",)}
    table, stats["rcp"] = rcp_table() if ex.sfd else (None, "")
    if table:
        os.environ["MMACTS_RCP_TABLE"] = table
    try:
        out = kern(tuple(meta["grid"]), tuple(meta["block"]), (np.frombuffer(params, f"V{len(params)}")[0],),
                   shared_mem=meta["smem"], cluster=tuple(meta["cluster"]))
    except vm.LaunchError as e:
        o = e.outcome
        stats.update(steps=o.steps, thread_instructions=o.thread_instructions, wall_s=round(o.wall_s, 3))
        return stats, Result(False, f"VM {o.status}: {o.message}", -1, stats)
    finally:
        for v, was in saved.items():
            if was is None:
                os.environ.pop(v, None)
            else:
                os.environ[v] = was
    stats.update(steps=out.steps, thread_instructions=out.thread_instructions, wall_s=round(out.wall_s, 3))
    return stats, None


def _first(bad: np.ndarray) -> str:
    i = tuple(int(v) for v in np.argwhere(bad)[0])
    return f"{int(bad.sum())} of {bad.size} differ, first at {i}"


def _judge(ex: Example, x: Inputs, vs: int, d_mem: np.ndarray, sfd_mem: np.ndarray, sfd_offs: np.ndarray | None,
           stats: dict[str, Any]) -> Result:
    """D (and the generated SFD of 72b, 79b, 79d) against the model, code for code."""
    acc = accumulator(ex, x)
    m, n = acc.shape
    if not ex.sfd:
        got = d_mem.reshape(m, n)
        bad = got != expected_bf16(acc)
        if bad.any():
            return Result(False, f"D (bf16): {_first(bad)}", int(bad.sum()), stats)
        return Result(True, f"D equals the exact product ({m}x{n}, bf16)", 0, stats)
    assert sfd_offs is not None
    try:
        want_d, want_sf = (expected_sfd(acc, 16) if ex.sfd_fmt == "ue8m0" else
                           expected_sfd_ue4m3(acc, 16, ex.norm))
    except ValueError as e:  # the seed's data are not exact by construction: no verdict, say why
        return Result(False, f"model refused the data: {e}", -1, stats)
    got_d = np.stack([d_mem & 0xF, d_mem >> 4], axis=-1).reshape(m, n)
    got_sf = sfd_mem[sfd_offs]
    bad_sf, bad_d = got_sf != want_sf, got_d != want_d
    msgs = ([f"SFD: {_first(bad_sf)}"] if bad_sf.any() else []) + ([f"D (e2m1): {_first(bad_d)}"] if bad_d.any()
                                                                   else [])
    if msgs:
        return Result(False, "; ".join(msgs), int(bad_sf.sum() + bad_d.sum()), stats)
    return Result(True, f"D and SFD equal the exact model ({m}x{n}, e2m1 + {ex.sfd_fmt} per 16)", 0, stats)


# ------------------------------------------------------------------------------------------------ cases
Problem = tuple[tuple[int, int, int], ...]
SIZES: dict[str, dict[str, tuple[Problem, ...]]] = {
    "72b": {"standard": (((128, 128, 256),), ((256, 256, 512),)), "full": (((256, 256, 1024),), ((384, 256, 512),))},
    "79a": {"standard": (((128, 128, 256),),), "full": (((256, 256, 512),), ((256, 256, 1024),))},
    "72a": {"standard": (((256, 256, 256),),), "full": (((512, 512, 512),),)},
    "72c": {"standard": (((256, 256, 256),),), "full": (((512, 512, 512),),)},
    "79b": {"standard": (((128, 128, 256),),), "full": (((256, 256, 512),),)},
    "79c": {"standard": (((128, 128, 256),),), "full": (((256, 128, 512),),)},
    "79d": {"standard": (((128, 128, 256), (256, 128, 128)),),
            "full": (((256, 256, 512), (128, 256, 256), (128, 128, 128)),)},
    "79d.pingpong": {"full": (((128, 128, 256), (256, 128, 128)),)},
    "89": {"standard": (((128, 128, 768),), ((256, 256, 1536),)), "full": (((256, 512, 768),), ((128, 256, 384),))},
    "84a": {"standard": (((256, 128, 256),), ((256, 256, 512),)), "full": (((512, 256, 1024),),)},
    "84b": {"standard": (((256, 128, 256),), ((256, 256, 512),)), "full": (((512, 256, 1024),),)},
}
"""Problems per example and level (one M, N, K per group; one group but for the grouped 79d): the VM runs 72b's
256x256x1024 in seconds, 79a's (mma.sync, one warp instruction per 16x8x64) takes about a minute; the first build
of an example takes minutes (cached)."""
RUNNABLE = ("72b", "79a", "72a", "72c", "89", "79b", "79c", "79d", "79d.pingpong", "84a", "84b")
"""Examples whose cases are listed. 72a and 72c (2-SM MMA, cluster 2x4: TMA multicast with .cta_group::2,
tcgen05.cp/mma.cta_group::2) run as shipped since the VM reads a tcgen05.ld whose destination registers were read
as complete for a later tcgen05.dealloc (AMB-TCGEN05-LD-NO-WAIT-DEALLOC, reading register-read-completes: CUTLASS's
SM100 epilogue reads tcgen05.ld results with no tcgen05.wait::ld on the path that does not release the accumulator);
their verdicts rest on that open reading. 89 (sm_103a "ultra": tcgen05.mma.cta_group::1 M = 128 with K = 96, a shape
Table 39 does not print) runs with the VM told the reading also-m128 of AMB-K96-SHAPES (``Example.readings``); its
verdict rests on that reading, and it exercises AMB-SF-FIGURES-K96 (SFs straddling into the next 4-group column)
and AMB-ABSOLUTE-LBO-CHUNKS (48-byte K chunks, LBO absolute mode): the VM's other reading of either fails it.
84a and 84b (block-scaled sparse, 2-SM MMA in a 2x1 cluster: tcgen05.mma.sp.cta_group::2 with the metadata copied
to TMEM by tcgen05.cp.128x128b) use the same SM100 epilogue."""
TWO_SM = ("72a", "72c", "84a", "84b")
"""Examples whose MMA is cta_group::2 (a 2-SM tile)."""
CACHED_ONLY = ("72a", "72c", "84b", "79b", "79c", "79d")
"""Examples whose tests run only with a cached build: CI builds 72b, 79a, 89 and 84a (72b and 79a about 6 and 12
minutes on two loaded cores; 89 about one; 84a 2 to 8 by load); 72a/72c build for 10+ minutes and each of 79b,
79c, 79d would add 10+ more; 84b adds the 2:4 metadata and the mx scale count but no new path through CUTLASS's
sparse collective."""


def case_id(name: str, problems: Problem) -> str:
    shapes = "-".join(f"m{m}n{n}k{k}" for m, n, k in problems)
    return f"peers.cutlass.example{name}.{f'g{len(problems)}.' if EXAMPLES[name].grouped else ''}{shapes}"


def example_cases(level: str) -> list[Case]:
    """The example cases of ``level`` (none at smoke: a first build takes minutes)."""
    out: list[Case] = []
    for name in RUNNABLE:
        for lvl, sizes in SIZES[name].items():
            if level_rank(lvl) > level_rank(level):
                continue
            ex = EXAMPLES[name]
            sm100 = ex.arch in ("sm_100a", "sm_103a")
            group = 2 if name in TWO_SM else 1
            sp = ".sp" if ex.sparse else ""
            instr = (f"tcgen05.mma{sp}.cta_group::{group}.kind::{ex.kind}.block_scale" if sm100
                     else f"mma.sync.aligned.kind::{ex.kind}.block_scale")
            rows = ("S9.7.16.9", "S9.7.16.10.7") if sm100 else ("S9.7.14.3",)
            if ex.arch == "sm_103a":
                instr = f"tcgen05.mma.cta_group::{group}.kind::{ex.kind}.block_scale.block16"
                rows = ("S9.7.16.9", "S9.7.16.10.7", "S9.7.16.2.1.1", "T54.4")
            rows += ("S9.7.16.10.8",) if ex.sparse else ()
            if ex.grouped:
                rows += ("S9.7.9.27",)  # tensormap.replace: the kernel rewrites its maps for every group
            for problems in sizes:
                rt = (GroupedRuntime(problems=",".join(f"{m}x{n}x{k}" for m, n, k in problems)) if ex.grouped
                      else ExampleRuntime(*problems[0]))
                out.append(Case(case_id=case_id(name, problems), suite="peers", instruction=instr, arch=ex.arch,
                                spec_rows=rows, level=lvl, recipe="exact",
                                form=ExampleForm(example=name, cutlass=cutlass_version() or "absent"), runtime=rt))
    return out


def run_example_case(case: Case) -> dict[str, Any]:
    """Record fields of one example case: status, message, CUTLASS version, PTX forms, wall, thread-instructions.
    A toolchain or build that is missing is ``not-supported`` with the reason (this machine cannot run it)."""
    rt = case.runtime
    name = case.form.example
    ex = EXAMPLES[name]
    try:
        if ex.grouped:
            r = run_grouped(name, rt.shapes, seed=case.seed)  # type: ignore[arg-type]
        else:
            r = run_example(name, rt.m, rt.n, rt.k, seed=case.seed)
    except Unavailable as e:
        return {"status": NOT_SUPPORTED, "message": f"CUTLASS example unavailable: {e}"}
    s = r.stats
    status = "pass" if r.ok else ("error" if r.mismatches < 0 else "fail")
    note = f"; {s['rcp']}" if s.get("rcp") else ""
    if ex.readings:
        note += "; VM reading " + ", ".join(f"{e} {r}" for e, r in ex.readings)
    links = f"; register: {', '.join(ex.register)}" if ex.register else ""
    return {"status": status, "executor": "ptxvm", "compare_mode": "exact", "mismatches": max(r.mismatches, 0),
            "message": f"CUTLASS {s['cutlass']} example {s['example']}: {r.message}{note}; "
                       f"{s.get('thread_instructions', 0)} thread-instructions, {s.get('steps', 0)} steps, "
                       f"VM {s.get('wall_s', 0)} s; forms: {', '.join(s['forms'])}{links}"}
