"""Complete PTX modules for one instruction *form*, as the compile-conformance suite needs them.

Why a separate, minimal scaffold: a compile case asks one question -- does ptxas accept this
instruction form for this target at this ISA version? Anything else in the module (tensor-memory
allocation, barriers) could itself be refused on the targets the case probes (sm_90a, sm_120a
have no tcgen05 at all) and would hide the answer. So the module holds: one entry, operands
loaded from a global buffer (so nothing is a compile-time constant that ptxas could fold), the
instruction under test marked with :data:`UNDER_TEST_MARK`, and stores of any register results
(so nothing is dead code). It is still a complete, loadable module.

A form is a plain mapping (JSON-able, hashable once frozen). ``form["op"]`` picks the generator;
the other keys are the qualifiers of that instruction (see each ``_gen_*``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from mmacts.ptx import instructions as I
from mmacts.ptx.module import Entry, module

UNDER_TEST_MARK = "// mmacts:under-test"
"""Same text as :data:`mmacts.toolchain.conformance.UNDER_TEST_MARK` (kept import-free)."""


class _Ctx:
    """Operand registers shared by every generator: 8 b32, 4 b64, 1 predicate, all loaded."""

    def __init__(self, e: Entry):
        self.e = e
        self.out = e.load_param_u64("buf")
        self.r = e.regs.new("b32", 8)
        self.d = e.regs.new("b64", 4)
        self.p = e.regs.one("pred")
        e.emit(f"ld.global.b32 {self.r[0]}, [{self.out}];")
        for i in range(1, 8):
            e.emit(f"ld.global.b32 {self.r[i]}, [{self.out}+{4 * i}];")
        for i in range(4):
            e.emit(f"ld.global.b64 {self.d[i]}, [{self.out}+{32 + 8 * i}];")
        e.emit(f"setp.ne.u32 {self.p}, {self.r[0]}, 0;")

    def under_test(self, *lines: str) -> None:
        for ln in lines:
            self.e.emit(UNDER_TEST_MARK, ln)

    def store_b32(self, regs: list[str]) -> None:
        for i, reg in enumerate(regs):
            self.e.emit(f"st.global.b32 [{self.out}+{64 + 4 * i}], {reg};")

    def fresh_b32(self, n: int) -> list[str]:
        regs = self.e.regs.new("b32", n)
        for i, reg in enumerate(regs):
            self.e.emit(f"add.u32 {reg}, {self.r[0]}, {i + 1};")
        return regs


def _gen_tcgen05_mma(c: _Ctx, f: Mapping[str, Any]) -> None:
    """Keys: kind, cta_group, sparse, ws, block_scale, scale_vec, a_tmem, collector_a, collector_b,
    ashift, dol (disable-output-lane vector size, 0 = absent), sid (scale-input-d or None),
    zcm (zero-column-mask), idesc (immediate, or None for a register)."""
    bs = bool(f.get("block_scale"))
    dol_n = int(f.get("dol", 0) or 0)
    dol = [c.r[3]] * dol_n if dol_n else None
    idesc = f.get("idesc")
    c.under_test(I.tcgen05_mma(
        f["kind"], int(f["cta_group"]),
        d_tmem=c.r[1], a=c.r[2] if f.get("a_tmem") else c.d[0], b_desc=c.d[1],
        idesc=idesc if idesc is not None else c.r[4], enable_input_d=c.p,
        sparse=bool(f.get("sparse")), ws=bool(f.get("ws")), block_scale=bs,
        scale_vec=f.get("scale_vec"), a_in_tmem=bool(f.get("a_tmem")),
        collector_a=f.get("collector_a"), collector_b=f.get("collector_b"), ashift=bool(f.get("ashift")),
        sp_meta_tmem=c.r[5] if f.get("sparse") else None,
        scale_a_tmem=c.r[6] if bs else None, scale_b_tmem=c.r[7] if bs else None,
        disable_output_lane=dol, scale_input_d=f.get("sid"),
        zero_col_mask=c.d[2] if f.get("zcm") else None,
    ))


def _gen_tcgen05_ld(c: _Ctx, f: Mapping[str, Any]) -> None:
    """Keys: shape, num, pack, split (immHalfSplitoff or None), nregs (override), red (None or
    dict op/dtype/abs/nan)."""
    n = int(f.get("nregs") or max(1, I.ld_st_regs_per_thread(f["shape"], f["num"])))
    dst = c.e.regs.new("b32", n)
    red = f.get("red")
    if red:
        rv = c.e.regs.one("b32")
        c.under_test(I.tcgen05_ld_red(
            f["shape"], f["num"], dst, rv, c.r[1], op=red["op"], dtype=red["dtype"],
            abs_=bool(red.get("abs")), nan=bool(red.get("nan")), half_splitoff=f.get("split"),
        ))
        dst = [*dst, rv]
    else:
        c.under_test(I.tcgen05_ld(f["shape"], f["num"], dst, c.r[1], pack=bool(f.get("pack")),
                                  half_splitoff=f.get("split")))
    # No tcgen05.wait here: the scaffold must hold no tcgen05 instruction besides the one under
    # test, or a target without tcgen05 would be refused twice (the hardware kernels wait).
    c.store_b32(dst)


def _gen_tcgen05_st(c: _Ctx, f: Mapping[str, Any]) -> None:
    """Keys: shape, num, unpack, split, nregs."""
    n = int(f.get("nregs") or max(1, I.ld_st_regs_per_thread(f["shape"], f["num"])))
    src = c.fresh_b32(n)
    c.under_test(I.tcgen05_st(f["shape"], f["num"], c.r[1], src, unpack=bool(f.get("unpack")),
                              half_splitoff=f.get("split")))


def _gen_alloc(c: _Ctx, f: Mapping[str, Any]) -> None:
    """Keys: cta_group, shared_cta, ncols."""
    c.e.shared.append(".shared .align 4 .b32 mmacts_tslot;")
    c.under_test(I.tcgen05_alloc(int(f["cta_group"]), "mmacts_tslot", f.get("ncols", 32),
                                 shared_cta=bool(f.get("shared_cta", True))))


def _gen_dealloc(c: _Ctx, f: Mapping[str, Any]) -> None:
    c.under_test(I.tcgen05_dealloc(int(f["cta_group"]), c.r[1], f.get("ncols", 32)))


def _gen_relinquish(c: _Ctx, f: Mapping[str, Any]) -> None:
    c.under_test(I.tcgen05_relinquish(int(f["cta_group"])))


def _gen_wait(c: _Ctx, f: Mapping[str, Any]) -> None:
    c.under_test(f"tcgen05.wait::{f['which']}.sync.aligned;")


def _gen_cp(c: _Ctx, f: Mapping[str, Any]) -> None:
    """Keys: cta_group, shape, multicast, src_fmt."""
    c.under_test(I.tcgen05_cp(int(f["cta_group"]), f["shape"], c.r[1], c.d[0],
                              multicast=f.get("multicast"), src_fmt=f.get("src_fmt")))


def _gen_shift(c: _Ctx, f: Mapping[str, Any]) -> None:
    c.under_test(I.tcgen05_shift(int(f["cta_group"]), c.r[1], order=f.get("order", "syntax")))


def _gen_fence(c: _Ctx, f: Mapping[str, Any]) -> None:
    c.under_test(f"tcgen05.fence::{f['which']};")


def _gen_commit(c: _Ctx, f: Mapping[str, Any]) -> None:
    """Keys: cta_group, multicast (bool), shared_cluster (bool)."""
    c.e.shared.append(".shared .align 8 .b64 mmacts_mbar;")
    mask = None
    if f.get("multicast"):
        mask = c.e.regs.one("b16")
        c.e.emit(f"cvt.u16.u32 {mask}, {c.r[3]};")
    c.under_test(I.tcgen05_commit(int(f["cta_group"]), "mmacts_mbar", multicast_mask=mask,
                                  shared_cluster=bool(f.get("shared_cluster"))))


def _gen_mixed_cta(c: _Ctx, f: Mapping[str, Any]) -> None:
    """Two tcgen05 instructions with different .cta_group in one kernel (S9.7.16.10.9.1).

    Both are under test: the rule concerns the pair, and on a target lacking the first
    instruction (tcgen05.shift on an ``f`` target, anything tcgen05 on sm_90a/sm_12x) ptxas
    rightly refuses the module at the first one."""
    c.under_test(I.tcgen05_shift(1, c.r[1]) if f.get("first") == "shift" else
                 I.tcgen05_cp(1, "128x256b", c.r[1], c.d[0]))
    c.under_test(I.tcgen05_cp(2, "128x256b", c.r[2], c.d[1]))


def _gen_mma_sync_bs(c: _Ctx, f: Mapping[str, Any]) -> None:
    """Keys: kind, atype, btype, stype, scale_vec, shape, sel (bida, tida, bidb, tidb), sel_regs."""
    e = c.e
    d = e.regs.new("f32", 4)
    cc = e.regs.new("f32", 4)
    a = c.fresh_b32(4)
    b = c.fresh_b32(2)
    for reg in cc:
        e.emit(f"mov.b32 {reg}, {c.r[0]};")
    bida, tida, bidb, tidb = f.get("sel", (0, 0, 0, 0))
    if f.get("sel_regs"):
        h = e.regs.new("b16", 4)
        for reg, v in zip(h, (bida, tida, bidb, tidb), strict=True):
            e.emit(f"mov.u16 {reg}, {v};")
        sel_a, sel_b = (h[0], h[1]), (h[2], h[3])
    else:
        sel_a, sel_b = (bida, tida), (bidb, tidb)
    c.under_test(I.mma_sync_block_scale(
        f["kind"], f["atype"], f["btype"], f["stype"], f.get("scale_vec"), f["shape"],
        d, a, b, cc, c.r[6], sel_a, c.r[7], sel_b,
    ))
    for i, reg in enumerate(d):
        e.emit(f"st.global.f32 [{c.out}+{64 + 4 * i}], {reg};")


GENERATORS: dict[str, Callable[[_Ctx, Mapping[str, Any]], None]] = {
    "tcgen05.mma": _gen_tcgen05_mma,
    "tcgen05.ld": _gen_tcgen05_ld,
    "tcgen05.st": _gen_tcgen05_st,
    "tcgen05.alloc": _gen_alloc,
    "tcgen05.dealloc": _gen_dealloc,
    "tcgen05.relinquish_alloc_permit": _gen_relinquish,
    "tcgen05.wait": _gen_wait,
    "tcgen05.cp": _gen_cp,
    "tcgen05.shift": _gen_shift,
    "tcgen05.fence": _gen_fence,
    "tcgen05.commit": _gen_commit,
    "tcgen05.mixed_cta_group": _gen_mixed_cta,
    "mma.sync.block_scale": _gen_mma_sync_bs,
}


def build_module(form: Mapping[str, Any], arch: str, ptx_version: str | None = None) -> str:
    """Complete PTX module exercising ``form`` for ``.target arch`` at ``.version ptx_version``."""
    op = form["op"]
    if op not in GENERATORS:
        raise ValueError(f"no module generator for op {op!r}")
    e = Entry("mmacts_compile", params=[("u64", "buf")])
    c = _Ctx(e)
    GENERATORS[op](c, form)
    return module(arch, [e], ptx_version)


def instruction_text(form: Mapping[str, Any], arch: str = "sm_100a") -> str:
    """The instruction(s) under test of ``form``, as spelled in its module."""
    lines = build_module(form, arch).splitlines()
    return " ".join(lines[i + 1].strip() for i, ln in enumerate(lines) if ln.strip() == UNDER_TEST_MARK)
