"""Peers suite, Gluon part: a project-written Gluon tcgen05 block-scaled kernel, 1-CTA and 2-CTA, on the VM.

Why: Triton's ``tl.dot_scaled`` never emits ``cta_group::2``, so the pair forms (``tcgen05.mma.cta_group::2``,
``tcgen05.cp.cta_group::2``, TMA ``.cta_group::2`` into the lead CTA's barrier, multicast commits, shared::cluster
addresses masked with the CTA rank) never ran from a production compiler. ``gluon_kernels.mma_scaled_kernel``
is our kernel, but its PTX is Triton's: Gluon picks the instructions, the TMEM columns, the barrier protocol
and the CTA-rank arithmetic. If D equals the exact product, the VM's reading of those forms agrees with
what Triton's authors believe the hardware does (their lowering is tested on silicon).

``gluon_cases(level)`` lists the configurations (ids ``peers.gluon.mma_scaled.cta{1,2}.<fmt>.m{M}n{N}k{K}``);
``run_gluon_case(case)`` compiles (PTX cached like the Triton peer's), builds exact-by-construction data
(``triton_cases.make_inputs``: values with two significant bits, scales 2^-1..2^1), encodes the host tensor
maps with the VM's ``cuTensorMapEncodeTiled`` counterpart (:func:`mmacts.ptxvm.host.tensormap.encode_tiled`)
from the compiler's ``tensordesc_meta`` (swizzle, element type, per-CTA box),
launches with Triton's grid (x times ``num_ctas``) and cluster ``(num_ctas, 1, 1)``, and returns
``(got, want, message)``. ``fault="swap_sfb"`` swaps the two N halves of SFB in the input (the halves the two
CTAs of a pair own for B): the product must then differ, or the check is blind to SFB ownership.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from mmacts.cases.model import Case
from mmacts.ptxvm import api as vm
from mmacts.ptxvm.host.tensormap import encode_tiled
from mmacts.toolchain.cache import DiskCache
from suites.peers import triton_cases as TC
from suites.peers.fields import GluonConfig, GluonForm

SUITE = "peers"
_GL_DTYPE = {"e4m3": "fp8e4nv", "e5m2": "fp8e5", "e2m1": "u8"}
_GL_NAME = {"fp8e4nv": "float8e4nv", "fp8e5": "float8e5", "u8": "uint8"}
def _configs() -> list[tuple[str, GluonConfig]]:
    S, F = "standard", "full"
    return [
        ("smoke", GluonConfig(1, "e4m3", "e4m3", "ue8m0", 128, 128, 128)),
        (S, GluonConfig(1, "e2m1", "e2m1", "ue4m3", 128, 128, 256)),
        (S, GluonConfig(1, "e4m3", "e2m1", "ue8m0", 128, 128, 128)),
        (S, GluonConfig(2, "e4m3", "e4m3", "ue8m0", 256, 256, 128)),
        (F, GluonConfig(2, "e2m1", "e2m1", "ue8m0", 256, 256, 256)),
        (F, GluonConfig(2, "e2m1", "e2m1", "ue4m3", 256, 256, 256)),
        (F, GluonConfig(1, "e4m3", "e4m3", "ue8m0", 128, 128, 128, tiles=(2, 2))),
        (F, GluonConfig(2, "e4m3", "e4m3", "ue8m0", 256, 256, 128, tiles=(2, 2))),
    ]


def _case(level: str, cfg: GluonConfig) -> Case:
    instr = f"tcgen05.mma.cta_group::{cfg.ctas}.kind::{cfg.kind}.block_scale"
    return Case(case_id=cfg.case_id, suite=SUITE, instruction=instr, arch="sm_100a", spec_rows=("S9.7.16.10",),
                level=level, form=GluonForm.of_config(cfg), recipe="exact",
                seed=sum(map(ord, cfg.case_id)) % 1000)


def gluon_cases(level: str) -> list[Case]:
    """Every Gluon configuration at ``level`` (smaller levels included)."""
    return [c for c in (_case(lvl, cfg) for lvl, cfg in _configs()) if c.in_level(level)]


def config_of(case: Case) -> GluonConfig:
    """The kernel configuration of a Gluon case (its form without the peer)."""
    return case.form.config


# ------------------------------------------------------------------------------------------ compile
def _kernel_source() -> str:
    return Path(__file__).with_name("gluon_kernels.py").read_text()


def compile_config(cfg: GluonConfig, *, cache: DiskCache | None = None) -> dict[str, Any]:
    """PTX and launch metadata of ``cfg``'s kernel (from the disk cache when present)."""
    return TC.cached_compile("gluon", _kernel_source(), cfg, _compile, cache)


def _desc_types(cfg: GluonConfig) -> dict[str, str]:
    """The ``tensordesc<...>`` signature strings: block shapes are the cluster's; ``cga_layout`` splits A,
    B and SFA across a pair on their first tile axis and broadcasts SFB (or splits it with ``sfb_split``)."""
    import triton.experimental.gluon.language as gl

    two = cfg.ctas == 2
    pa, pb = (2 if f == "e2m1" else 1 for f in (cfg.fmt_a, cfg.fmt_b))
    kg4 = cfg.bk // cfg.group // 4
    split2, split5 = ([[1, 0]], [[0, 1, 0, 0, 0]]) if two else ([], [])
    sfb5 = (split5 if cfg.sfb_split else [[0, 0, 0, 0, 0]]) if two else []
    sdt = "fp8e4nv" if cfg.scale == "ue4m3" else "u8"
    mixed = cfg.fmt_a != cfg.fmt_b

    def op(fmt: str, rows: int, cols: int) -> str:
        dt = _GL_DTYPE[fmt]
        lay = gl.NVMMASharedLayout.get_default_for([rows, cols], getattr(gl, _GL_NAME[dt]), cga_layout=split2,
                                                  fp4_padded=mixed and fmt == "e2m1")
        return f"tensordesc<{dt}[{rows},{cols}],{lay!r}>"

    def sc(mn: int, cga: list) -> str:
        lay = gl.NVMMASharedLayout(swizzle_byte_width=0, element_bitwidth=8, rank=5, cga_layout=cga)
        return f"tensordesc<{sdt}[1,{mn // 128},{kg4},2,256],{lay!r}>"

    return {"a_desc": op(cfg.fmt_a, cfg.bm, cfg.bk // pa), "b_desc": op(cfg.fmt_b, cfg.bn, cfg.bk // pb),
            "sa_desc": sc(cfg.bm, split5), "sb_desc": sc(cfg.bn, sfb5)}


def _compile(cfg: GluonConfig) -> dict[str, Any]:
    TC.triton_env()
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    from suites.peers.gluon_kernels import mma_scaled_kernel

    const = {"FMT_A": cfg.fmt_a, "FMT_B": cfg.fmt_b, "GROUP": cfg.group, "TWO_CTAS": cfg.ctas == 2,
             "SFB_SPLIT": cfg.sfb_split}
    sig: dict[str, str] = {**_desc_types(cfg), "c_ptr": "*fp32", "K": "i32", "stride_cm": "i32"}
    sig.update(dict.fromkeys(const, "constexpr"))
    ck = triton.compile(GluonASTSource(mma_scaled_kernel, sig, const, {}), target=GPUTarget("cuda", 100, 32),
                        options={"num_warps": cfg.num_warps, "num_ctas": cfg.ctas})
    md = ck.metadata
    return {"ptx": ck.asm["ptx"], "name": md.name, "num_warps": md.num_warps, "shared": md.shared,
            "num_ctas": md.num_ctas, "tensordesc_meta": [dict(m) for m in md.tensordesc_meta],
            "triton_version": triton.__version__}


# ------------------------------------------------------------------------------------------ run
VM_GAPS: tuple[tuple[str, str], ...] = ()
"""Substring of a VM launch error -> the VM gap it shows. The test and the driver report such a launch as that gap
by name (``xfail`` / ``skip``), anything else as what it is. Empty since the issue-23 cluster work closed the four
gaps the Gluon kernels met (cvta.param of a __grid_constant__ map, a 64-aligned map parameter, shared::cluster
addresses carrying the CTA rank, TMA with ``.cta_group::2`` before the state spaces): a new gap fails loudly."""


def vm_gap(msg: str) -> str | None:
    """The :data:`VM_GAPS` entry a launch message shows, if any."""
    return next((why for sub, why in VM_GAPS if sub in msg), None)


def swap_sfb_halves(x: TC.TritonInputs, bn: int) -> None:
    """The planted fault: within every ``bn``-column tile, SFB rows of the first and second N half change
    places (what each CTA of a pair owns for B), in the 2-D codes and in the preshuffled memory image."""
    sb = x.sb_codes.reshape(-1, 2, bn // 2, x.sb_codes.shape[1])[:, ::-1].reshape(x.sb_codes.shape)
    x.sb_mem = TC.preshuffle_scales(np.ascontiguousarray(sb))


_TMA_DEVICE_TO_HOST = {8: 10, 9: 8, 10: 9}
"""Triton's ``tensordesc_meta`` element types are the device's tensor-map codes; the driver's enum differs
for these three (Triton's NVIDIA driver maps them the same way)."""


def _maps(meta: dict[str, Any], mems: list[np.ndarray]) -> list[Any]:
    """Kernel arguments of the descriptors over the C-order byte arrays ``mems``: each a by-value tensor map
    (``cuTensorMapEncodeTiled``'s contract, from the compiler's swizzle, element type and per-CTA box; a
    ``fp4_padded`` operand is described in 4-bit elements, twice the bytes along K, as Triton's driver does),
    then its shape (i32) and strides (i64) in elements of the array, in Triton's order."""
    out: list[Any] = []
    for mem, md in zip(mems, meta["tensordesc_meta"], strict=True):
        assert not md.get("is_im2col"), md
        dev = vm.asarray(np.ascontiguousarray(mem))
        dims = list(reversed(mem.shape))
        if md["fp4_padded"]:
            dims[0] *= 2
        strides = [int(np.prod(mem.shape[k + 1:])) for k in range(mem.ndim)]
        et = int(md["elem_type"])
        m = encode_tiled(_TMA_DEVICE_TO_HOST.get(et, et), mem.ndim, dev.base, dims, list(reversed(strides[:-1])),
                         list(reversed(md["block_size"])), swizzle=int(md["swizzle"]))
        out.append(np.frombuffer(m.tobytes(), dtype="V128")[0])
        out += [np.int32(s) for s in mem.shape] + [np.int64(s) for s in strides]
    return out


def run_gluon_case(case: Case, *, k_tiles: int = 2, fault: str | None = None,
                   trace: Any = None) -> tuple[np.ndarray | None, np.ndarray, str]:
    """Compile (cached), run on the PTX VM, return ``(got, want, message)``; ``got`` is None when the
    launch did not complete (the message says why). ``want`` is always the product of the unfaulted data."""
    cfg = config_of(case)
    meta = compile_config(cfg)
    x = TC.make_inputs(cfg, case.seed, k_tiles, cfg.tiles)  # type: ignore[arg-type]
    want = TC.expected(cfg, x)  # type: ignore[arg-type]
    if fault == "swap_sfb":
        swap_sfb_halves(x, cfg.bn)
    elif fault is not None:
        raise ValueError(f"unknown fault {fault!r}")
    vm.reset()
    mod = vm.RawModule(code=meta["ptx"], arch="sm_100a", max_steps=20_000_000)
    k = mod.get_function(meta["name"])
    c = vm.empty((x.M, x.N), np.float32)
    kg4 = x.K // cfg.group // 4
    mems = [x.a_mem, x.b_mem, x.sa_mem.reshape(1, x.M // 128, kg4, 2, 256),
            x.sb_mem.reshape(1, x.N // 128, kg4, 2, 256)]
    args = _maps(meta, mems) + [c, np.int32(x.K), np.int32(x.N)]
    args += [vm.zeros(1, np.uint8), vm.zeros(1, np.uint8)][: len(k.params) - len(args)]
    grid = (x.M // cfg.bm * cfg.ctas, x.N // cfg.bn, 1)
    info = f"triton {meta['triton_version']} gluon, {cfg.ctas} CTA, {meta['num_warps']} warps, {meta['shared']} B"
    try:
        out = k(grid, (32 * meta["num_warps"],), args, shared_mem=meta["shared"], cluster=(cfg.ctas, 1, 1),
                trace=trace)
    except vm.LaunchError as exc:
        return None, want, f"{exc.outcome.status}: {exc} ({info})"
    got = c.get()
    return got, want, TC.exact_message(got, want, f"{info}, {out.steps} steps, {out.wall_s:.1f}s")


__all__ = ["VM_GAPS", "GluonConfig", "GluonForm", "compile_config", "gluon_cases", "run_gluon_case", "swap_sfb_halves",
           "vm_gap"]
