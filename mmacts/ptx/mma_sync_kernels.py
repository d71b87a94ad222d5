"""Kernel-module generators for warp-level mma.sync (block-scale, fp8) and Hopper wgmma.

One module per instruction *form*; many cases per launch (one warp per case for mma.sync,
one warpgroup per case for wgmma). Every kernel only moves register images: the host
(``reference.mma_sync``, ``suites/hopper_validation/wgmma_layout.py``) builds the exact bits
each lane loads and decodes the bits each lane stores, so the kernel has no layout logic of
its own that could hide a mistake in the encoders.

Parameter conventions (all arrays contiguous, little-endian 32-bit words):

* ``mma_bs``   (block-scale): a[case,32,4] b[case,32,2] c[case,32,4] sfa[case,32] sfb[case,32]
  sel[case] (bytes: bida | tida<<8 | bidb<<16 | tidb<<24, read only by the run-time-selector
  variant) -> d[case,32,4]; ``ncases``.
* ``mma_fp8``: a[case,32,4] b[case,32,2] c[case,32,CW] -> d[case,32,CW]; CW = 4 (f32) or 2 (f16x2).
* ``wgmma``: img[case, IMG bytes] (the shared-memory image, copied verbatim), desc[case, steps, 2]
  (u64 A and B descriptors with the start-address field holding the *offset* inside the image;
  the kernel adds the shared base), c[case,128,N/2] f32, use_c -> d[case,128,N/2] f32.

No kernel here waits on anything but its own MMA, so each one finishes in bounded time; the
runtime's deadline (``mmacts.backends.cuda_runtime``) is the guard against a hung launch.
"""

from __future__ import annotations

from collections.abc import Sequence

from mmacts.ptx import instructions as ins
from mmacts.ptx.fault_points import faulty

PTX_VERSION = "8.7"
"""mma.sync block_scale needs PTX ISA 8.7 (sm_120a); wgmma and fp8 mma.sync are older."""

WARPS_PER_CTA = 4


def _header(arch: str, version: str = PTX_VERSION) -> str:
    return f".version {version}\n.target {arch}\n.address_size 64\n"


def blockscale_ptx_version(kind: str, stype: str, scale_vec: str) -> str:
    """Lowest PTX ISA version ptxas 13.5 accepts for the form.

    ptxas: "Feature 'mma with .scale_vec::4X and .ue8m0 scale type' requires PTX ISA .version
    9.1 or later" -- although Table 36 lists mxf4nvf4 4X ue8m0 beside the 8.7 forms (recorded
    in the ambiguity register).
    """
    if kind == "mxf4nvf4" and stype == "ue8m0" and scale_vec.endswith("4X"):
        return "9.1"
    return PTX_VERSION


def _regs(prefix: str, n: int) -> list[str]:
    return [f"%{prefix}{i}" for i in range(n)]


_WARP_PROLOGUE = """\
    mov.u32 %tx, %tid.x;
    and.b32 %lane, %tx, 31;
    shr.u32 %warp, %tx, 5;
    mov.u32 %t0, %ctaid.x;
    mov.u32 %t1, %ntid.x;
    shr.u32 %t1, %t1, 5;
    mad.lo.u32 %cs, %t0, %t1, %warp;
    ld.param.u32 %n, [ncases];
    setp.ge.u32 %p, %cs, %n;
    @%p bra DONE;
    mad.lo.u32 %t2, %cs, 32, %lane;
    cvt.u64.u32 %idx, %t2;
"""


def _addr(dst: str, param: str, idx: str, stride: int) -> str:
    return (f"    ld.param.u64 {dst}, [{param}];\n"
            f"    cvta.to.global.u64 {dst}, {dst};\n"
            f"    mad.lo.u64 {dst}, {idx}, {stride}, {dst};\n")


def mma_sync_blockscale_module(
    kind: str,
    atype: str,
    btype: str,
    stype: str,
    scale_vec: str,
    *,
    arch: str = "sm_120a",
    selectors: tuple[int, int, int, int] | None = None,
) -> str:
    """PTX module with entry ``mma_bs`` for one block-scale form.

    ``selectors=None`` reads ``{byte-id, thread-id}`` per case at run time (``.b16``
    registers, which ptxas 13.5 accepts and packs into one uniform register); a tuple
    ``(bida, tida, bidb, tidb)`` spells them as immediates instead (then they are part of
    the form and ``sel`` is ignored).
    """
    shape = "m16n8k32" if kind == "mxf8f6f4" else "m16n8k64"
    if selectors is None:
        sel_a: tuple[str | int, str | int] = ("%bida", "%tida")
        sel_b: tuple[str | int, str | int] = ("%bidb", "%tidb")
        load_sel = (
            "    ld.param.u64 %rs, [psel];\n    cvta.to.global.u64 %rs, %rs;\n"
            "    cvt.u64.u32 %cs64, %cs;\n    mad.lo.u64 %rs, %cs64, 4, %rs;\n"
            "    ld.global.b32 %selw, [%rs];\n"
            "    cvt.u16.u32 %bida, %selw;\n    and.b16 %bida, %bida, 255;\n"
            f"    shr.b32 %t3, %selw, {16 if faulty('mma-sync-tida-byte') else 8};\n"
            "    cvt.u16.u32 %tida, %t3;\n    and.b16 %tida, %tida, 255;\n"
            "    shr.b32 %t3, %selw, 16;\n    cvt.u16.u32 %bidb, %t3;\n    and.b16 %bidb, %bidb, 255;\n"
            "    shr.b32 %t3, %selw, 24;\n    cvt.u16.u32 %tidb, %t3;\n"
        )
    else:
        sel_a = (selectors[0], selectors[1])
        sel_b = (selectors[2], selectors[3])
        load_sel = ""
    a, b, c, d = _regs("a", 4), _regs("b", 2), _regs("c", 4), _regs("d", 4)
    mma = ins.mma_sync_block_scale(kind, atype, btype, stype, scale_vec, shape, d, a, b, c,
                                   "%sfa", sel_a, "%sfb", sel_b)
    body = (
        _WARP_PROLOGUE
        + _addr("%ra", "pa", "%idx", 16) + "    ld.global.v4.b32 {%a0, %a1, %a2, %a3}, [%ra];\n"
        + _addr("%rb", "pb", "%idx", 8) + "    ld.global.v2.b32 {%b0, %b1}, [%rb];\n"
        + _addr("%rc", "pc", "%idx", 16) + "    ld.global.v4.f32 {%c0, %c1, %c2, %c3}, [%rc];\n"
        + _addr("%rsa", "psfa", "%idx", 4) + "    ld.global.b32 %sfa, [%rsa];\n"
        + _addr("%rsb", "psfb", "%idx", 4) + "    ld.global.b32 %sfb, [%rsb];\n"
        + load_sel
        + f"    {mma}\n"
        + _addr("%rd", "pd", "%idx", 16) + "    st.global.v4.f32 [%rd], {%d0, %d1, %d2, %d3};\n"
    )
    return (
        _header(arch, blockscale_ptx_version(kind, stype, scale_vec))
        + "\n.visible .entry mma_bs(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 psfa,\n"
        "    .param .u64 psfb, .param .u64 psel, .param .u64 pd, .param .u32 ncases)\n{\n"
        "    .reg .pred %p;\n"
        "    .reg .b32 %tx, %lane, %warp, %cs, %n, %t<4>, %a<4>, %b<2>, %sfa, %sfb, %selw;\n"
        "    .reg .f32 %c<4>, %d<4>;\n    .reg .b16 %bida, %tida, %bidb, %tidb;\n"
        "    .reg .b64 %idx, %cs64, %ra, %rb, %rc, %rd, %rsa, %rsb, %rs;\n"
        + body + "DONE:\n    ret;\n}\n"
    )


def mma_sync_fp8_module(atype: str, btype: str, *, dtype: str = "f32", arch: str = "sm_90a") -> str:
    """PTX module with entry ``mma_fp8``: ``mma.sync.aligned.m16n8k32.row.col.<d>.<a>.<b>.<d>``.

    ``dtype='f16'`` gives the f16-accumulator form (C and D are two f16x2 registers), the
    form the published fp16-output vectors were produced with.
    """
    cw = 4 if dtype == "f32" else 2
    a, b = _regs("a", 4), _regs("b", 2)
    c, d = _regs("c", cw), _regs("d", cw)
    creg = ".f32" if dtype == "f32" else ".b32"
    mma = ins.mma_sync_fp8(atype, btype, d, a, b, c, dtype=dtype, ctype=dtype)
    vec = "v4" if cw == 4 else "v2"
    ty = "f32" if dtype == "f32" else "b32"
    body = (
        _WARP_PROLOGUE
        + _addr("%ra", "pa", "%idx", 16) + "    ld.global.v4.b32 {%a0, %a1, %a2, %a3}, [%ra];\n"
        + _addr("%rb", "pb", "%idx", 8) + "    ld.global.v2.b32 {%b0, %b1}, [%rb];\n"
        + _addr("%rc", "pc", "%idx", 4 * cw) + f"    ld.global.{vec}.{ty} {ins.vec(c)}, [%rc];\n"
        + f"    {mma}\n"
        + _addr("%rd", "pd", "%idx", 4 * cw) + f"    st.global.{vec}.{ty} [%rd], {ins.vec(d)};\n"
    )
    return (
        _header(arch)
        + "\n.visible .entry mma_fp8(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd,\n"
        "    .param .u32 ncases)\n{\n"
        "    .reg .pred %p;\n    .reg .b32 %tx, %lane, %warp, %cs, %n, %t<4>, %a<4>, %b<2>;\n"
        f"    .reg {creg} %c<{cw}>, %d<{cw}>;\n"
        "    .reg .b64 %idx, %ra, %rb, %rc, %rd;\n"
        + body + "DONE:\n    ret;\n}\n"
    )


def wgmma_module(
    itype: str,
    n: int,
    btype: str | None = None,
    *,
    steps: int = 1,
    img_bytes: int,
    trans_a: int = 0,
    trans_b: int = 0,
    arch: str = "sm_90a",
) -> str:
    """PTX module with entry ``wgmma``: one warpgroup per case, ``steps`` chained MMAs.

    ``itype`` (A; B is ``btype``, default the same) is ``e4m3``/``e5m2`` (``m64n<N>k32``,
    both operands K-major) or ``bf16``
    (``m64n<N>k16``; ``trans_a``/``trans_b`` = 1 select MN-major A/B). The shared image
    (``img_bytes``, a multiple of 16) is copied verbatim, made visible to the async proxy
    (``fence.proxy.async``), then each step issues one wgmma with that step's descriptors.
    """
    if img_bytes % 16 or img_bytes > 48 * 1024:
        raise ValueError("img_bytes must be a multiple of 16 and at most 48 KiB (static smem)")
    nacc = n // 2
    d = _regs("d", nacc)
    steps_ptx = []
    for s in range(steps):
        pred = "%pc"
        if itype == "bf16":
            mma = ins.wgmma_bf16(n, d, f"%ad{s}", f"%bd{s}", pred if s == 0 else "%pone",
                                 imm_trans_a=trans_a, imm_trans_b=trans_b)
        else:
            mma = ins.wgmma_fp8(n, itype, btype or itype, d, f"%ad{s}", f"%bd{s}", pred if s == 0 else "%pone")
        steps_ptx.append(
            f"    ld.global.u64 %ad{s}, [%rdesc+{16 * s}];\n"
            f"    ld.global.u64 %bd{s}, [%rdesc+{16 * s + 8}];\n"
            f"    add.u64 %ad{s}, %ad{s}, %sb4;\n    add.u64 %bd{s}, %bd{s}, %sb4;\n"
        )
        steps_ptx.append(f"    {mma}\n")
    loads = "".join(f"    ld.global.f32 %d{i}, [%rc+{4 * i}];\n" for i in range(nacc))
    stores = "".join(f"    st.global.f32 [%rd+{4 * i}], %d{i};\n" for i in range(nacc))
    descs = ", ".join([f"%ad{s}, %bd{s}" for s in range(steps)])
    return (
        _header(arch)
        + f"\n.shared .align 1024 .b8 smem[{img_bytes}];\n\n"
        ".visible .entry wgmma(.param .u64 pimg, .param .u64 pdesc, .param .u64 pc, .param .u64 pd,\n"
        "    .param .u32 use_c, .param .u32 ncases)\n{\n"
        "    .reg .pred %p, %pc, %pone, %ploop;\n"
        "    .reg .b32 %tx, %cs, %n, %uc, %i, %off;\n"
        f"    .reg .f32 %d<{nacc}>;\n"
        "    .reg .b32 %v<4>;\n"
        f"    .reg .b64 %rimg, %rdesc, %rc, %rd, %cs64, %sb, %sb4, %src, %t64, {descs};\n"
        "    mov.u32 %tx, %tid.x;\n    mov.u32 %cs, %ctaid.x;\n"
        "    ld.param.u32 %n, [ncases];\n    setp.ge.u32 %p, %cs, %n;\n    @%p bra DONE;\n"
        "    cvt.u64.u32 %cs64, %cs;\n"
        "    ld.param.u64 %rimg, [pimg];\n    cvta.to.global.u64 %rimg, %rimg;\n"
        f"    mad.lo.u64 %rimg, %cs64, {img_bytes}, %rimg;\n"
        "    mov.u64 %sb, smem;\n"
        "    shl.b32 %i, %tx, 4;\n"
        "COPY:\n"
        f"    setp.ge.u32 %ploop, %i, {img_bytes};\n    @%ploop bra COPIED;\n"
        "    cvt.u64.u32 %t64, %i;\n    add.u64 %src, %rimg, %t64;\n"
        "    ld.global.v4.b32 {%v0, %v1, %v2, %v3}, [%src];\n"
        "    add.u64 %src, %sb, %t64;\n"
        "    st.shared.v4.b32 [%src], {%v0, %v1, %v2, %v3};\n"
        "    add.u32 %i, %i, 2048;\n    bra COPY;\n"
        "COPIED:\n"
        "    fence.proxy.async.shared::cta;\n    bar.sync 0;\n"
        "    shr.u64 %sb4, %sb, 4;\n"
        "    ld.param.u64 %rdesc, [pdesc];\n    cvta.to.global.u64 %rdesc, %rdesc;\n"
        f"    mad.lo.u64 %rdesc, %cs64, {16 * steps}, %rdesc;\n"
        "    cvt.u64.u32 %t64, %tx;\n"
        f"    mad.lo.u64 %t64, %cs64, 128, %t64;\n"
        "    ld.param.u64 %rc, [pc];\n    cvta.to.global.u64 %rc, %rc;\n"
        f"    mad.lo.u64 %rc, %t64, {4 * nacc}, %rc;\n"
        "    ld.param.u64 %rd, [pd];\n    cvta.to.global.u64 %rd, %rd;\n"
        f"    mad.lo.u64 %rd, %t64, {4 * nacc}, %rd;\n"
        "    ld.param.u32 %uc, [use_c];\n    setp.ne.u32 %pc, %uc, 0;\n    setp.eq.u32 %pone, %uc, %uc;\n"
        + loads
        + ("" if faulty("wgmma-missing-fence") else f"    {ins.wgmma_fence()}\n")
        + "".join(steps_ptx)
        + f"    {ins.wgmma_commit_group()}\n    {ins.wgmma_wait_group(0)}\n"
        + stores
        + "DONE:\n    ret;\n}\n"
    )


def pack_selectors(sels: Sequence[tuple[int, int, int, int]]) -> list[int]:
    """Per-case selector words for ``mma_bs``: bida | tida<<8 | bidb<<16 | tidb<<24."""
    return [a | (b << 8) | (c << 16) | (d << 24) for a, b, c, d in sels]
