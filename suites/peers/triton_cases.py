"""Peers suite, Triton part: Triton's own ``tl.dot_scaled`` kernels executed on the PTX VM.

Why: Triton's Blackwell lowering (tcgen05.mma block_scale on sm_100a, mma.sync block_scale on
sm_120a) is tested by its authors on silicon. If the VM runs the PTX Triton emits and D equals the
exact block-scaled product, our reading of the figure-only facts those kernels exercise (scale
factors in tensor memory and their tcgen05.cp / tcgen05.st staging, packed FP4 in shared memory,
shared-memory descriptors and swizzles, TMA swizzles, fragments and selectors) agrees with
silicon-proven code. A disagreement is a VM bug or a question for the ambiguity register.

``triton_cases(level)`` lists the configurations; ``run_triton_case(case)`` compiles (PTX cached on
disk under ``.mmacts-cache/peers/``, keyed by the Triton version, the kernel source and the
configuration, so CI does not compile), builds exact-by-construction data, launches on the VM with
Triton's grid, warps and shared memory, and returns ``(got, want, message)``.

Data: element values with at most two significant bits and scales within 2^-1..2^1 (E8M0) or
{0.5, 1, 1.5, 2} (UE4M3), so every partial sum is exact in fp32 whatever the accumulation order;
``want`` is ``reference.gemm.block_scaled_gemm`` (the exact product, rounded once). The chained kernel
(``load="chain"``, A of the second MMA in tensor memory) uses a one-hot A so the e4m3 intermediate P is exact;
``want`` chains two reference products computed from the logical matrices.
"""

from __future__ import annotations

import os
import zlib
from dataclasses import asdict, dataclass
from typing import Any

import ml_dtypes
import numpy as np

from mmacts.cases.model import Case
from mmacts.ptxvm.runtime import load_module
from mmacts.toolchain.cache import DiskCache, cache_key
from mmacts.toolchain.locate import find_tool
from reference import gemm as G
from suites.peers.fields import TritonConfig, TritonForm

SUITE = "peers"
ARCHS = {"sm_100a": 100, "sm_120a": 120}
FORMAT_PAIRS = (("e4m3", "e4m3"), ("e5m2", "e5m2"), ("e4m3", "e5m2"), ("e4m3", "e2m1"), ("e2m1", "e4m3"),
                ("e5m2", "e2m1"), ("e2m1", "e2m1"))


def _configs() -> list[tuple[str, TritonConfig]]:
    out: list[tuple[str, TritonConfig]] = []
    S, F = "standard", "full"

    def add(level: str, *args: Any, **kw: Any) -> None:
        out.append((level, TritonConfig(*args, **kw)))

    # smoke: mxfp8 pointer loads on sm_100a, mxfp4 through TMA on sm_100a, mxfp8 on sm_120a
    add("smoke", "sm_100a", "e4m3", "e4m3", "ue8m0", 128, 128, 128, "ptr", "bN")
    add("smoke", "sm_100a", "e2m1", "e2m1", "ue8m0", 128, 128, 128, "tma", "bK")
    add("smoke", "sm_120a", "e4m3", "e4m3", "ue8m0", 128, 128, 128, "ptr", "bK")
    for arch in ARCHS:
        for a, b in FORMAT_PAIRS:
            if arch == "sm_120a" and (a == "e2m1") != (b == "e2m1"):
                continue  # not native: Triton 3.9 emulates mixed fp8 x fp4 on sm_120a (bf16 cvt + mma m16n8k16)
            for load in ("ptr", "tma"):
                for bmaj in ("bK", "bN"):
                    add(S if (load, bmaj) == ("tma", "bK") or arch == "sm_100a" else F, arch, a, b, "ue8m0",
                        128, 128, 128, load, bmaj)
        for load in ("ptr", "tma"):
            add(S, arch, "e2m1", "e2m1", "ue4m3", 128, 128, 128, load, "bK")
            add(F, arch, "e2m1", "e2m1", "ue4m3", 128, 128, 256, load, "bK")
    # tutorial 10: 5-D preshuffled scales, staged to tensor memory with tcgen05.cp (sm_100a only)
    for load in ("tma5p", "tma5t"):
        add(S, "sm_100a", "e4m3", "e4m3", "ue8m0", 128, 128, 128, load, "bK")
        add(S, "sm_100a", "e2m1", "e2m1", "ue4m3", 128, 128, 256, load, "bK")
        add(F, "sm_100a", "e2m1", "e2m1", "ue8m0", 128, 256, 256, load, "bK")
        add(F, "sm_100a", "e4m3", "e2m1", "ue8m0", 128, 128, 128, load, "bK")
        add(F, "sm_100a", "e4m3", "e4m3", "ue8m0", 256, 128, 128, load, "bK", num_warps=8)
    # chained products: the second tcgen05.mma block_scale reads A (the e4m3 intermediate) from tensor memory
    for bn in (128, 64):
        add(S, "sm_100a", "e4m3", "e4m3", "ue8m0", 128, bn, 128, "chain", "bN")
    # (256, 256, *) is not a kernel: its accumulator needs 592 TMEM columns and Triton 3.9 compiles the body to trap
    for bm, bn, bk in ((128, 64, 128), (128, 256, 128), (128, 128, 256), (256, 128, 128), (128, 64, 256),
                       (256, 64, 256)):
        lvl = S if (bm, bn, bk) in ((128, 64, 128), (128, 128, 256), (256, 128, 128)) else F
        add(lvl, "sm_100a", "e4m3", "e4m3", "ue8m0", bm, bn, bk, "tma", "bK", num_warps=8 if bm == 256 else 4)
        add(lvl, "sm_100a", "e4m3", "e2m1", "ue8m0", bm, bn, bk, "ptr", "bK", num_warps=8 if bm == 256 else 4)
        add(F, "sm_100a", "e2m1", "e2m1", "ue4m3", bm, bn, bk, "tma", "bK", num_warps=8 if bm == 256 else 4)
        add(F, "sm_120a", "e4m3", "e4m3", "ue8m0", bm, bn, bk, "tma", "bK", num_warps=8 if bm == 256 else 4)
        add(F, "sm_120a", "e2m1", "e2m1", "ue8m0", bm, bn, bk, "ptr", "bN", num_warps=8 if bm == 256 else 4)
    return out


def _case(level: str, cfg: TritonConfig) -> Case:
    instr = ("tcgen05.mma.cta_group::1.kind::{k}.block_scale" if cfg.arch == "sm_100a"
             else "mma.sync.aligned.kind::{k}.block_scale").format(k=cfg.kind)
    rows = ("S9.7.16.10",) if cfg.arch == "sm_100a" else ("S9.7.14.5.14",)
    return Case(case_id=cfg.case_id, suite=SUITE, instruction=instr, arch=cfg.arch, spec_rows=rows, level=level,
                form=TritonForm.of_config(cfg), recipe="exact", seed=zlib.crc32(cfg.case_id.encode()) % 1000)


def triton_cases(level: str) -> list[Case]:
    """Every Triton configuration at ``level`` (smaller levels included)."""
    seen: dict[str, Case] = {}
    for lvl, cfg in _configs():
        c = _case(lvl, cfg)
        if c.in_level(level) and c.case_id not in seen:
            seen[c.case_id] = c
    return list(seen.values())


def config_of(case: Case) -> TritonConfig:
    """The kernel configuration of a Triton case (its form without the peer)."""
    return case.form.config


# ------------------------------------------------------------------------------------------ compile
def _triton_version() -> str:
    try:
        from importlib.metadata import version

        return version("triton")
    except Exception:  # pragma: no cover - not installed
        return "absent"


def _kernel_source() -> str:
    from pathlib import Path

    return (Path(__file__).with_name("triton_kernels.py")).read_text()


def cached_compile(tag: str, source: str, cfg: Any, build: Any, cache: DiskCache | None = None) -> dict[str, Any]:
    """``build(cfg)`` (PTX and launch metadata), from the disk cache when present: keyed by ``tag``, the Triton
    version, the kernel ``source`` text and the configuration, so CI does not compile."""
    cache = cache or DiskCache("peers")
    key = cache_key(tag, _triton_version(), source, asdict(cfg))
    hit = cache.get(key)
    if hit is not None:
        return hit
    payload = build(cfg)
    cache.put(key, payload)
    return payload


def compile_config(cfg: TritonConfig, *, cache: DiskCache | None = None) -> dict[str, Any]:
    """PTX and launch metadata of ``cfg``'s kernel (from the disk cache when present)."""
    return cached_compile("triton", _kernel_source(), cfg, _compile, cache)


def triton_env() -> None:
    """Point Triton at the project's ptxas (the NVIDIA wheel's) and pin FP fusion (Triton 3.9 warns otherwise)."""
    ptxas = str(find_tool("ptxas"))
    os.environ.setdefault("TRITON_PTXAS_PATH", ptxas)
    os.environ.setdefault("TRITON_PTXAS_BLACKWELL_PATH", ptxas)
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")


def _compile(cfg: TritonConfig) -> dict[str, Any]:
    triton_env()
    import triton
    from triton.backends.compiler import GPUTarget

    from suites.peers.triton_kernels import KERNELS

    fn = KERNELS[cfg.load]
    names = list(fn.arg_names)
    const: dict[str, Any] = {"BLOCK_M": cfg.bm, "BLOCK_N": cfg.bn, "BLOCK_K": cfg.bk, "FMT_A": cfg.fmt_a,
                             "FMT_B": cfg.fmt_b, "GROUP": cfg.group}
    if cfg.load == "ptr":
        const.update(stride_ak=1, stride_cn=1)
        const["stride_bk" if cfg.b_major == "bK" else "stride_bn"] = 1
    elif cfg.load.startswith("tma5"):
        const["SCALE_TMA"] = cfg.load == "tma5t"
    elif cfg.load != "chain":
        const["B_KMAJOR"] = cfg.b_major == "bK"
    sig: dict[str, str] = {}
    for n in names:
        if n in const:
            sig[n] = "constexpr"
        elif n == "c_ptr":
            sig[n] = "*fp32"
        elif n in ("sa_ptr", "sb_ptr"):
            sig[n] = "*fp8e4nv" if cfg.scale == "ue4m3" else "*u8"
        elif n.endswith("_ptr"):
            sig[n] = "*u8"
        else:
            sig[n] = "i32"
    attrs = {(i,): [["tt.divisibility", 16]] for i, n in enumerate(names) if sig[n] != "constexpr"}
    src = triton.compiler.ASTSource(fn, sig, const, attrs)
    ck = triton.compile(src, target=GPUTarget("cuda", ARCHS[cfg.arch], 32),
                        options={"num_warps": cfg.num_warps, "num_stages": cfg.num_stages})
    md = ck.metadata
    return {"ptx": ck.asm["ptx"], "name": md.name, "num_warps": md.num_warps, "shared": md.shared,
            "num_ctas": md.num_ctas, "cluster_dims": list(getattr(md, "cluster_dims", (1, 1, 1)) or (1, 1, 1)),
            "global_scratch_size": md.global_scratch_size, "global_scratch_align": md.global_scratch_align,
            "profile_scratch_size": md.profile_scratch_size, "tmem_size": getattr(md, "tmem_size", 0),
            "triton_version": triton.__version__, "args": [n for n in names if sig[n] != "constexpr"]}


# ------------------------------------------------------------------------------------------ data
_VALUES = np.array([0.0, 0.5, -0.5, 1.0, -1.0, 1.5, -1.5, 2.0, -2.0, 3.0, -3.0])
_ML = {"e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2, "e2m1": ml_dtypes.float4_e2m1fn}


def _codes(values: np.ndarray, fmt: str) -> np.ndarray:
    return values.astype(_ML[fmt]).view(np.uint8) & (0x0F if fmt == "e2m1" else 0xFF)


def _pack_k(codes: np.ndarray, axis: int) -> np.ndarray:
    """Two e2m1 codes per byte along ``axis`` (low nibble first)."""
    lo = np.take(codes, np.arange(0, codes.shape[axis], 2), axis=axis)
    hi = np.take(codes, np.arange(1, codes.shape[axis], 2), axis=axis)
    return (lo | (hi << 4)).astype(np.uint8)


@dataclass
class TritonInputs:
    M: int
    N: int
    K: int
    a_codes: np.ndarray  # (M, K) logical codes
    b_codes: np.ndarray  # (K, N)
    sa_codes: np.ndarray  # (M, K / group)
    sb_codes: np.ndarray  # (N, K / group)
    a_mem: np.ndarray
    b_mem: np.ndarray
    sa_mem: np.ndarray | None = None  # scales as stored (None: the 2-D codes)
    sb_mem: np.ndarray | None = None
    # chain: the second product's operands, C = (P * sP) @ (D * sD) with P = (A * sA) @ (B * sB) in e4m3
    d_codes: np.ndarray | None = None  # (K2, N), K2 = cfg.bk; stored row-major (MN-major)
    sp_codes: np.ndarray | None = None  # (M, K2 / group)
    sd_codes: np.ndarray | None = None  # (N, K2 / group)


def preshuffle_scales(s: np.ndarray) -> np.ndarray:
    """``(MN, K / g)`` scales in Triton tutorial 10's 5-D layout ``(MN / 128, K / g / 4, 32, 4, 4)``:
    element ``[i0, i1, i2, i3, i4]`` is ``s[128 i0 + 32 i3 + i2, 4 i1 + i4]``."""
    mn, kg = s.shape
    return np.ascontiguousarray(s.reshape(mn // 128, 4, 32, kg // 4, 4).transpose(0, 3, 2, 1, 4))


def make_chain_inputs(cfg: TritonConfig, seed: int, grid: tuple[int, int] = (1, 1)) -> TritonInputs:
    """Data for ``dot_scaled_chain`` (one K tile): A is one-hot per row (a single 1.0), so P's row i is
    row ``sel[i]`` of B times two E8M0 scales in 2^-1..2^1: values in {0, +-0.125 .. +-12} with at most two
    significant bits, exact in e4m3, so the kernel's ``.to(float8e4nv)`` is exact whatever its rounding."""
    assert cfg.load == "chain" and cfg.fmt_a == cfg.fmt_b == "e4m3" and cfg.scale == "ue8m0"
    rng = np.random.default_rng(seed)
    M, N, K, g = cfg.bm * grid[0], cfg.bn * grid[1], cfg.bk, cfg.group
    onehot = np.zeros((M, K))
    onehot[np.arange(M), rng.integers(0, K, size=M)] = 1.0
    a = _codes(onehot, "e4m3")
    b = _codes(rng.choice(_VALUES, size=(K, K)), "e4m3")
    d = _codes(rng.choice(_VALUES, size=(K, N)), "e4m3")
    sa, sb, sp, sd = (rng.integers(126, 129, size=(r, K // g)).astype(np.uint8) for r in (M, K, M, N))
    return TritonInputs(M, N, K, a, b, sa, sb, a, np.ascontiguousarray(b), d_codes=d, sp_codes=sp, sd_codes=sd)


def chain_intermediate(x: TritonInputs) -> np.ndarray:
    """P = (A * sA) @ (B * sB) as e4m3 codes, from the logical matrices (checked exact)."""
    p = G.block_scaled_gemm(x.a_codes, x.b_codes, x.sa_codes, x.sb_codes.T, kind="mxf8f6f4", a_fmt="e4m3",
                            b_fmt="e4m3", scale_fmt="ue8m0").astype(np.float64)
    codes = _codes(p, "e4m3")
    assert (codes.view(ml_dtypes.float8_e4m3fn).astype(np.float64) == p).all(), "P is not exact in e4m3"
    return codes


def make_inputs(cfg: TritonConfig, seed: int, k_tiles: int = 2, grid: tuple[int, int] = (1, 1)) -> TritonInputs:
    if cfg.load == "chain":
        return make_chain_inputs(cfg, seed, grid)
    rng = np.random.default_rng(seed)
    M, N, K = cfg.bm * grid[0], cfg.bn * grid[1], cfg.bk * k_tiles
    a = _codes(rng.choice(_VALUES, size=(M, K)), cfg.fmt_a)
    b = _codes(rng.choice(_VALUES, size=(K, N)), cfg.fmt_b)
    g = cfg.group
    if cfg.scale == "ue8m0":
        sa = rng.integers(126, 129, size=(M, K // g)).astype(np.uint8)
        sb = rng.integers(126, 129, size=(N, K // g)).astype(np.uint8)
    else:
        pool = np.array([0.5, 1.0, 1.5, 2.0]).astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
        sa = rng.choice(pool, size=(M, K // g)).astype(np.uint8)
        sb = rng.choice(pool, size=(N, K // g)).astype(np.uint8)
    a_mem = _pack_k(a, 1) if cfg.fmt_a == "e2m1" else a
    if cfg.b_major == "bK":  # (N, K / packB)
        bt = b.T.copy()
        b_mem = _pack_k(bt, 1) if cfg.fmt_b == "e2m1" else bt
    else:  # (K / packB, N)
        b_mem = _pack_k(b, 0) if cfg.fmt_b == "e2m1" else b
    x = TritonInputs(M, N, K, a, b, sa, sb, np.ascontiguousarray(a_mem), np.ascontiguousarray(b_mem))
    if cfg.load.startswith("tma5"):
        x.sa_mem, x.sb_mem = preshuffle_scales(sa), preshuffle_scales(sb)
    return x


def expected(cfg: TritonConfig, x: TritonInputs) -> np.ndarray:
    if cfg.load == "chain":
        return G.block_scaled_gemm(chain_intermediate(x), x.d_codes, x.sp_codes, x.sd_codes.T, kind=cfg.kind,
                                   a_fmt="e4m3", b_fmt=cfg.fmt_b, scale_fmt=cfg.scale).astype(np.float32)
    return G.block_scaled_gemm(x.a_codes, x.b_codes, x.sa_codes, x.sb_codes.T, kind=cfg.kind, a_fmt=cfg.fmt_a,
                               b_fmt=cfg.fmt_b, scale_fmt=cfg.scale).astype(np.float32)


# ------------------------------------------------------------------------------------------ run
def launch_args(cfg: TritonConfig, meta: dict[str, Any], x: TritonInputs, rt: Any, nprog: int) -> tuple[list, Any]:
    """Kernel arguments in ``.param`` order (Triton appends the global and profile scratch pointers)."""
    sa = x.sa_codes if x.sa_mem is None else x.sa_mem
    sb = x.sb_codes if x.sb_mem is None else x.sb_mem
    bufs = {"a_ptr": rt.to_device(x.a_mem), "b_ptr": rt.to_device(x.b_mem), "sa_ptr": rt.to_device(sa),
            "sb_ptr": rt.to_device(sb)}
    if cfg.load == "chain":
        bufs.update(d_ptr=rt.to_device(np.ascontiguousarray(x.d_codes)), sp_ptr=rt.to_device(x.sp_codes),
                    sd_ptr=rt.to_device(x.sd_codes))
    c = rt.empty((x.M, x.N), np.float32)
    bufs["c_ptr"] = c
    pa = 2 if cfg.fmt_a == "e2m1" else 1
    pb = 2 if cfg.fmt_b == "e2m1" else 1
    ints = {"M": x.M, "N": x.N, "K": x.K, "stride_am": x.K // pa, "stride_ak": 1, "stride_cm": x.N, "stride_cn": 1}
    if cfg.b_major == "bK":
        ints.update(stride_bk=1, stride_bn=x.K // pb)
    else:
        ints.update(stride_bk=x.N, stride_bn=1)
    args: list[Any] = []
    for n in meta["args"]:
        args.append(bufs[n] if n in bufs else np.int32(ints[n]))
    gs = int(meta.get("global_scratch_size") or 0)
    scratch = rt.to_device(np.zeros(max(gs * nprog, 1), dtype=np.uint8))
    profile = rt.to_device(np.zeros(max(int(meta.get("profile_scratch_size") or 0) * nprog, 1), dtype=np.uint8))
    return args + [scratch, profile], c


def run_triton_case(case: Case, *, k_tiles: int = 2, trace: Any = None) -> tuple[np.ndarray | None, np.ndarray,
                                                                                  str]:
    """Compile (cached), run on the PTX VM, return ``(got, want, message)``; ``got`` is None when the
    launch did not complete (the message says why)."""
    cfg = config_of(case)
    meta = compile_config(cfg)
    x = make_inputs(cfg, case.seed, k_tiles)
    want = expected(cfg, x)
    mod = load_module(meta["ptx"], cfg.arch, trace=trace, max_steps=20_000_000)
    grid = (x.M // cfg.bm, x.N // cfg.bn, 1)
    args, c = launch_args(cfg, meta, x, mod.rt, grid[0] * grid[1])
    nparams = len(mod.module.entries[meta["name"]].params)
    args = args[:nparams]
    out = mod.launch(meta["name"], grid, (32 * meta["num_warps"], 1, 1), args, shared_mem=meta["shared"])
    info = f"triton {meta['triton_version']}, {meta['num_warps']} warps, {meta['shared']} B shared"
    if out.status != "ok":
        return None, want, f"{out.status}: {out.message} ({info})"
    got = mod.rt.to_host(c)
    return got, want, exact_message(got, want, f"{info}, {out.steps} steps, {out.wall_s:.1f}s")


def exact_message(got: np.ndarray, want: np.ndarray, info: str) -> str:
    """``exact (info)``, or how many fp32 elements differ bit for bit and where the first one is."""
    bad = got.view(np.uint32) != want.view(np.uint32)
    if not bad.any():
        return f"exact ({info})"
    i, j = (int(v) for v in np.argwhere(bad)[0])
    return (f"{int(bad.sum())}/{bad.size} elements differ, first D[{i},{j}] = {got[i, j]!r} want {want[i, j]!r}; "
            f"rows {np.unique(np.argwhere(bad)[:, 0]).size} cols {np.unique(np.argwhere(bad)[:, 1]).size} ({info})")


__all__ = ["TritonConfig", "TritonForm", "compile_config", "run_triton_case", "triton_cases"]
