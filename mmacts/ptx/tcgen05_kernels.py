"""Kernel modules for ``tcgen05.mma ... .block_scale``: one PTX module per instruction *form*.

Why one generic, table-driven kernel per form: the compile-time part of the instruction (kind,
``.cta_group``, ``.scale_vectorsize`` spelling, ``.sp``, A from shared or tensor memory, the
``.collector::a`` sequence) must be baked into the PTX text, but everything else the spec lets vary
at run time -- instruction descriptor, shared-memory descriptors, SF tensor-memory addresses (SF
IDs included), ``enable-input-d``, the data -- arrives through a *params buffer*. So one assembled
module serves every N, M, SF ID, swizzle and data recipe of its form, and many cases run in one
launch (one CTA, or one 2-CTA cluster, per case).

What one CTA does (every step is driven by its params record; nothing is inferred in the kernel):

1. copy its *shared-memory image* byte-for-byte from global into dynamic shared memory, at a
   1024-byte aligned base (so swizzle patterns start where the host-built descriptors assume);
2. warp 0: ``tcgen05.alloc`` (power-of-two columns, from params) + ``relinquish_alloc_permit``;
3. all 4 warps: write the *TMEM preload image* (columns ``[0, preload_cols)`` relative to the
   allocation, all 128 lanes) with ``tcgen05.st.32x32b.x1`` -- this is how scale factors are staged
   "from registers", how A is placed in tensor memory and how D is initialised for
   ``enable-input-d`` = true;
4. one thread of the leader CTA: the listed ``tcgen05.cp`` operations (scale factors "from shared
   memory"), then the MMAs of the form, then ``tcgen05.commit`` to an mbarrier (multicast to both
   CTAs for ``cta_group::2``);
5. thread 0 waits with a BOUNDED ``mbarrier.try_wait`` loop (``%globaltimer`` deadline from params);
   on timeout it records status ``TIMEOUT`` and the CTA skips the read-back but still deallocates;
6. ``tcgen05.fence::after_thread_sync``; each warp reads its lane quadrant with
   ``tcgen05.ld.32x32b.x8`` over columns ``[ld_col0, ld_col0 + ld_ncols)``, ``tcgen05.wait::ld``,
   and stores the raw 32-bit cells to global -- the host decodes D from that raw dump with the
   datapath layout, exactly as it decodes the model's dump;
7. ``tcgen05.dealloc``; thread 0 writes the status word (``OK`` / ``TIMEOUT``).

Addresses in params are *relative*: shared-memory descriptors' start address (and, in LBO
absolute mode, bit 52, the LBO field) are relative to the image base, and tensor-memory addresses
to the allocation base. The kernel relocates them by plain addition; the CPU model uses base 0,
which is the same arithmetic. The 2-CTA cluster is declared in the PTX (``.explicitcluster``,
``.reqnctapercluster 2, 1, 1``) so a plain launch of ``grid = 2 * cases`` works.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from mmacts.ptx import instructions as I
from mmacts.ptx.fault_points import faulty
from mmacts.ptx.module import max_version, min_ptx_for_target, module_header
from reference.tcgen05_model.program import CP_CODES, CtaProgram

# ---------------------------------------------------------------------------------------------
# Params record layout (u64 words per CTA). The host writes it; the kernel reads it.

REC_WORDS = 96
"""u64 words per CTA record (768 bytes)."""
W_SMEM_OFF, W_SMEM_BYTES, W_TMEM_NCOLS = 0, 1, 2
W_PRELOAD_OFF, W_PRELOAD_COLS = 3, 4
W_LD_COL0, W_LD_NCOLS, W_OUT_OFF = 5, 6, 7
W_N_CP, W_TIMEOUT_NS, W_N_MMA = 8, 9, 10
W_PATCH = 11
"""``a_overwrite`` forms: blob offset of the bytes written over the image start after the first MMA | their
length << 32."""
W_CP0 = 12
"""Each cp op: word 0 = shape code | (relative taddr << 32); word 1 = relative smem descriptor."""
MAX_CP = 24
W_MMA0 = W_CP0 + 2 * MAX_CP
"""Each MMA: a (descriptor, or relative A tmem address), b_desc, idesc | d_rel << 32,
sfa_rel | sfb_rel << 32, enable_input_d | sp_meta_rel << 32."""
MMA_WORDS = 5
MAX_MMA = 4
assert W_MMA0 + MMA_WORDS * MAX_MMA <= REC_WORDS

STATUS_NOT_RUN, STATUS_OK, STATUS_TIMEOUT = 0, 1, 2
"""Status word per CTA: 0 = the kernel never got there, 1 = completed, 2 = the bounded wait expired."""

CP_SHAPES: dict[int, tuple[str, str | None]] = {c: (s, m) for c, (s, m, f) in CP_CODES.items() if f is None}
"""Run-time cp shape codes -> (shape, multicast) of the plain copies (``program.CP_CODES``). 0 is
what CUTLASS uses for scale factors; 1 is the DSL's Layout-B SFB copy."""

CP_DECOMPRESS: dict[int, tuple[str, str | None, str]] = {
    c: (s, m, f) for c, (s, m, f) in CP_CODES.items() if f is not None}
"""Run-time cp codes of the decompressing copies ``.b8x16.<src_fmt>`` (9.7.16.9.1): 4/6-bit
elements -> 8-bit containers. Used by the raw-TMEM probe ``cp_decompress`` (the container bit
positions are in the missing Figures 195-198)."""


def cp_code_info(code: int) -> tuple[str, str | None, str | None]:
    """(shape, multicast, src_fmt or None) of a run-time cp code."""
    if code not in CP_CODES:
        raise ValueError(f"unknown tcgen05.cp code {code}")
    return CP_CODES[code]


SMEM_ALIGN = 1024
"""Image base alignment: the largest swizzle repeat (128-byte swizzle, Table 41)."""


@dataclass(frozen=True)
class KernelForm:
    """The compile-time qualifiers of one ``tcgen05.mma ... .block_scale`` kernel module."""

    kind: str
    """``mxf8f6f4`` | ``mxf4`` | ``mxf4nvf4``."""
    scale_vec: str | None
    """``1X`` | ``2X`` | ``4X`` | ``block16`` | ``block32`` | ``None`` (qualifier omitted)."""
    cta_group: int = 1
    sparse: bool = False
    a_tmem: bool = False
    collectors: tuple[str | None, ...] = (None,)
    """One entry per MMA issued: ``None`` (no qualifier) or ``fill``/``use``/``lastuse``/``discard``."""
    arch: str = "sm_100a"
    block_scale: bool = True
    """False: a kind without block scaling (``f8f6f4``, ...), no scale-factor operands -- the forms that
    carry ``.ws`` and ``disable-output-lane``, which the block-scaled kinds do not have (9.7.16.10.9)."""
    ws: bool = False
    """``tcgen05.mma.ws``: the collector entries are then ``b<N>::<op>`` (``.collector::b<N>::<op>``)."""
    dol: bool = False
    """Issue the ``disable-output-lane`` vector operand (4 words per MMA, from the record's cp slots)."""
    a_overwrite: bool = False
    """After the first MMA (a ``collector::a::fill``): commit, wait for it, overwrite the start of the shared
    memory image (where A is) with the record's patch, ``fence.proxy.async``, then the remaining MMAs -- so
    whether a ``use`` reads the collector or memory shows (probe collector_reuse)."""

    def __post_init__(self) -> None:
        if self.cta_group not in (1, 2):
            raise ValueError("cta_group must be 1 or 2")
        if not 1 <= len(self.collectors) <= MAX_MMA:
            raise ValueError(f"1..{MAX_MMA} MMAs per form")
        if (self.ws or self.dol) and (self.block_scale or self.cta_group != 1 or (self.ws and self.dol)):
            raise ValueError(".ws / disable-output-lane forms: a kind without block scaling, cta_group::1, not both")
        if self.a_overwrite and (self.cta_group != 1 or self.a_tmem or len(self.collectors) < 2):
            raise ValueError("a_overwrite: cta_group::1, A in shared memory, at least two MMAs")

    def instruction(self, collector: str | None = None) -> str:
        """The opcode with every qualifier, as the kernel spells it."""
        return I.tcgen05_mma_opcode(
            self.kind, self.cta_group, sparse=self.sparse, block_scale=self.block_scale, ws=self.ws,
            scale_vec=self.scale_vec, collector_a=None if self.ws else collector,
            collector_b=collector if self.ws else None,
        )

    @property
    def entry_name(self) -> str:
        sv = self.scale_vec or "none"
        col = "_".join((c or "d").replace("::", "_") for c in self.collectors)
        extra = ("_plain" if not self.block_scale else "") + ("_ws" if self.ws else "") + ("_dol" if self.dol else "")
        extra += "_aover" if self.a_overwrite else ""
        return (f"tc05bs_{self.kind}_{sv}_cg{self.cta_group}_{'sp' if self.sparse else 'dn'}_"
                f"{'at' if self.a_tmem else 'as'}_{col}{extra}")


PTX_VERSION = "8.8"
"""``.block16``/``.block32`` need PTX ISA 8.8 (9.7.16.10.9.1 notes); sm_103a also needs 8.8."""


# ---------------------------------------------------------------------------------------------
# The kernel body, block by block, in the order it runs (steps 1-7 above). Each block returns its PTX
# lines. Registers that live across blocks:
#   %r0 thread, %r1 warp, %r4 rank in the pair, %r7 image base (shared::cta), %r15 mbarrier,
#   %r16 TMEM columns, %r18 TMEM base, %r21 this warp's lane-quadrant base, %r41 the wait's status,
#   %rd1 blob, %rd2 out, %rd4 this CTA's record, %rd5 its status word, %rd6 the leader's record,
#   %rd16 / %rd17 descriptor relocation (image base >> 4, and the same in the LBO field),
#   %p1 thread 0, %p2 warp 0.
# A block that a planted kernel fault changes asks ``faulty(<point>)`` (mmacts.ptx.fault_points).


def _lines(form: KernelForm) -> list[str]:
    """The kernel body (without the entry's signature and directives), block after block."""
    cg = form.cta_group
    return [
        *_registers(),
        *_identity(cg),
        *_smem_image(),
        *_mbarrier_init(cg),
        *_tmem_alloc(cg),
        *_tmem_preload(cg),
        *_issue(form),
        *_bounded_wait(form),
        *_read_back(),
        *_teardown(cg),
    ]


def _registers() -> list[str]:
    """Register files (sized for every form) and the CTA's shared words: mbarrier, TMEM slot, wait flag."""
    return [
        ".reg .pred %p<16>;",
        ".reg .b16 %h<4>;",
        ".reg .b32 %r<96>;",
        ".reg .b64 %rd<64>;",
        ".shared .align 8 .b64 mbar;",
        ".shared .align 4 .b32 tmem_slot;",
        ".shared .align 4 .b32 wait_flag;",
    ]


def _identity(cg: int) -> list[str]:
    """Who am I: thread, warp, lane; the record index (2*case + rank in a pair); the kernel parameters;
    this CTA's record and status word; the pair leader's record (where the MMA/cp operands live)."""
    L = [
        "mov.u32 %r0, %tid.x;",                     # thread
        "shr.u32 %r1, %r0, 5;",                     # warp
        "and.b32 %r2, %r0, 31;",                    # lane in warp
    ]
    if cg == 2:
        L += [
            "mov.u32 %r3, %clusterid.x;",           # case index
            "mov.u32 %r4, %cluster_ctarank;",       # rank in pair
            "shl.b32 %r5, %r3, 1;",
        ]
        if not faulty("wrong-cluster-rank"):
            L.append("add.u32 %r5, %r5, %r4;")      # record index = 2*case + rank
    else:
        L += [
            "mov.u32 %r3, %ctaid.x;",
            "mov.u32 %r4, 0;",
            "mov.u32 %r5, %r3;",
        ]
    for i, p in enumerate(("p_params", "p_blob", "p_out", "p_status")):
        L += [f"ld.param.u64 %rd{i}, [{p}];", f"cvta.to.global.u64 %rd{i}, %rd{i};"]
    L += [
        f"mul.wide.u32 %rd4, %r5, {REC_WORDS * 8};",
        "add.u64 %rd4, %rd0, %rd4;",                # this CTA's record
        "mul.wide.u32 %rd5, %r5, 4;",
        "add.u64 %rd5, %rd3, %rd5;",                # this CTA's status word
    ]
    if cg == 2:
        L += [
            "shl.b32 %r6, %r3, 1;",                 # record index of the pair's leader (rank 0)
            f"mul.wide.u32 %rd6, %r6, {REC_WORDS * 8};",
            "add.u64 %rd6, %rd0, %rd6;",
        ]
    else:
        L.append("mov.u64 %rd6, %rd4;")
    return L


def _smem_image() -> list[str]:
    """Step 1: copy the shared-memory image, 16 bytes a thread per round, to the 1024-byte aligned base."""
    L = [
        "mov.u32 %r7, smem_dyn;",
        f"add.u32 %r7, %r7, {SMEM_ALIGN - 1};",
        f"and.b32 %r7, %r7, {-SMEM_ALIGN & 0xFFFFFFFF};",   # aligned image base (shared::cta)
        f"ld.global.u64 %rd7, [%rd4+{W_SMEM_OFF * 8}];",
        f"ld.global.u64 %rd8, [%rd4+{W_SMEM_BYTES * 8}];",
        "cvt.u32.u64 %r8, %rd8;",
        "shr.u32 %r8, %r8, 4;",                     # 16-byte chunks
        "add.u64 %rd7, %rd1, %rd7;",                # global source
        "mov.u32 %r9, %r0;",
        "SMEM_LOOP:",
        "setp.ge.u32 %p0, %r9, %r8;",
        "@%p0 bra SMEM_DONE;",
        "mul.wide.u32 %rd9, %r9, 16;",
        "add.u64 %rd10, %rd7, %rd9;",
        "ld.global.v4.u32 {%r10, %r11, %r12, %r13}, [%rd10];",
        "shl.b32 %r14, %r9, 4;",
        "add.u32 %r14, %r14, %r7;",
        "st.shared.v4.u32 [%r14], {%r10, %r11, %r12, %r13};",
        "add.u32 %r9, %r9, 128;",
        "bra SMEM_LOOP;",
        "SMEM_DONE:",
    ]
    if not faulty("missing-proxy-fence"):
        # Generic-proxy smem writes must be visible to the async proxy (tcgen05.cp / tcgen05.mma).
        L.append("fence.proxy.async.shared::cta;")
    return L


def _mbarrier_init(cg: int) -> list[str]:
    """Thread 0 initialises the commit's mbarrier (one arrival); then the CTA (or cluster) rendezvous."""
    return [
        "mov.u32 %r15, mbar;",
        "setp.eq.u32 %p1, %r0, 0;",
        "@%p1 mbarrier.init.shared::cta.b64 [%r15], 1;",
        "@%p1 fence.mbarrier_init.release.cluster;",
        *_barrier(cg),
    ]


def _tmem_alloc(cg: int) -> list[str]:
    """Step 2: warp 0 allocates the record's power-of-two columns; every thread reads the base back."""
    return [
        f"ld.global.u64 %rd11, [%rd4+{W_TMEM_NCOLS * 8}];",
        "cvt.u32.u64 %r16, %rd11;",                 # ncols (power of two, 32..512)
        "mov.u32 %r17, tmem_slot;",
        "setp.eq.u32 %p2, %r1, 0;",
        "@!%p2 bra ALLOC_DONE;",
        I.tcgen05_alloc(cg, "%r17", "%r16"),
        I.tcgen05_relinquish(cg),
        "ALLOC_DONE:",
        I.tcgen05_fence("before"),
        "bar.sync 0;",
        I.tcgen05_fence("after"),
        "ld.shared.u32 %r18, [%r17];",              # TMEM base address
    ]


def _tmem_preload(cg: int) -> list[str]:
    """Step 3: each thread writes its lane's row of the preload image with tcgen05.st.32x32b.x1 (scale
    factors from registers, A in tensor memory, the initial D), then waits for the stores."""
    quadrant_shift = 20 if faulty("tmem-quadrant-shift") else 21
    L = [
        f"ld.global.u64 %rd12, [%rd4+{W_PRELOAD_OFF * 8}];",
        f"ld.global.u64 %rd13, [%rd4+{W_PRELOAD_COLS * 8}];",
        "cvt.u32.u64 %r19, %rd13;",
        "add.u64 %rd12, %rd1, %rd12;",
        f"shl.b32 %r20, %r1, {quadrant_shift};",    # (32*warp) << 16: this warp's lane quadrant
        "add.u32 %r21, %r18, %r20;",                # quadrant base taddr
        "mul.lo.u32 %r22, %r0, %r19;",              # row = thread (= lane 32*warp + t)
        "mul.wide.u32 %rd14, %r22, 4;",
        "add.u64 %rd14, %rd12, %rd14;",             # &preload[lane][0]
        "mov.u32 %r23, 0;",
        "PRE_LOOP:",
        "setp.ge.u32 %p3, %r23, %r19;",
        "@%p3 bra PRE_DONE;",
        "mul.wide.u32 %rd15, %r23, 4;",
        "add.u64 %rd15, %rd14, %rd15;",
        "ld.global.u32 %r24, [%rd15];",
        "add.u32 %r25, %r21, %r23;",
        I.tcgen05_st("32x32b", 1, "%r25", ["%r24"]),
        "add.u32 %r23, %r23, 1;",
        "bra PRE_LOOP;",
        "PRE_DONE:",
    ]
    if not faulty("missing-wait-st"):
        L.append(I.tcgen05_wait("st"))
    return L + _fenced_barrier(cg)


def _issue(form: KernelForm) -> list[str]:
    """Step 4, thread 0 of the leader CTA only: the cp ops, the form's MMAs, the commit to the mbarrier."""
    cg = form.cta_group
    L = ["setp.ne.u32 %p4, %r0, 0;"]
    if cg == 2:
        L += ["setp.ne.u32 %p5, %r4, 0;", "or.pred %p4, %p4, %p5;"]
    L += [
        "@%p4 bra ISSUE_DONE;",
        "mov.u32 %r26, %r7;",
        "shr.u32 %r26, %r26, 4;",
        "cvt.u64.u32 %rd16, %r26;",                 # image base >> 4 (descriptor units)
        "shl.b64 %rd17, %rd16, 16;",                # same, in the LBO field
        *_cp_ops(cg),
        f"ld.global.u64 %rd23, [%rd6+{W_N_MMA * 8}];",
        "cvt.u32.u64 %r31, %rd23;",
    ]
    for i, collector in enumerate(form.collectors):
        L += _mma(form, i, collector)
        if form.a_overwrite and i == 0:
            L += _overwrite_after_first_mma()
    return [*L, "MMA_DONE:", *_commit(cg), "ISSUE_DONE:"]


def _cp_ops(cg: int) -> list[str]:
    """The record's tcgen05.cp ops (scale factors from shared memory): a loop over (code, taddr, descriptor)
    whose body issues the copy of the matching run-time shape code."""
    L = [
        f"ld.global.u64 %rd18, [%rd6+{W_N_CP * 8}];",
        "cvt.u32.u64 %r27, %rd18;",
        "mov.u32 %r28, 0;",
        "CP_LOOP:",
        "setp.ge.u32 %p6, %r28, %r27;",
        "@%p6 bra CP_DONE;",
        "mul.wide.u32 %rd19, %r28, 16;",
        "add.u64 %rd19, %rd6, %rd19;",
        f"ld.global.u64 %rd20, [%rd19+{W_CP0 * 8}];",
        f"ld.global.u64 %rd21, [%rd19+{W_CP0 * 8 + 8}];",
        *_reloc("%rd21"),
        "cvt.u32.u64 %r29, %rd20;",                 # shape code
        "shr.u64 %rd22, %rd20, 32;",
        "cvt.u32.u64 %r30, %rd22;",
        "add.u32 %r30, %r30, %r18;",                # absolute taddr
    ]
    for code in (*CP_SHAPES, *CP_DECOMPRESS):
        shape, mc, src = cp_code_info(code)
        L += [f"setp.eq.u32 %p7, %r29, {code};",
              f"@%p7 {I.tcgen05_cp(cg, shape, '%r30', '%rd21', multicast=mc, src_fmt=src)}"]
    return [*L, "add.u32 %r28, %r28, 1;", "bra CP_LOOP;", "CP_DONE:"]


def _mma(form: KernelForm, i: int, collector: str | None) -> list[str]:
    """MMA ``i`` of the form (skipped, with the rest, past the record's MMA count): its operands from the
    leader's record, relocated to the image and TMEM bases, then the instruction."""
    base = (W_MMA0 + MMA_WORDS * i) * 8
    L = [
        f"setp.le.u32 %p8, %r31, {i};",
        "@%p8 bra MMA_DONE;",
        *(f"ld.global.u64 %rd{24 + w}, [%rd6+{base + 8 * w}];" for w in range(MMA_WORDS)),
    ]
    if form.a_tmem:
        L += ["cvt.u32.u64 %r32, %rd24;", "add.u32 %r32, %r32, %r18;"]
    else:
        L += _reloc("%rd24")
    L += [
        *_reloc("%rd25"),
        "cvt.u32.u64 %r33, %rd26;",                 # idesc
        "shr.u64 %rd29, %rd26, 32;",
        "cvt.u32.u64 %r34, %rd29;",
        "add.u32 %r34, %r34, %r18;",                # D taddr
        "cvt.u32.u64 %r35, %rd27;",
        "add.u32 %r35, %r35, %r18;",                # SFA taddr
        "shr.u64 %rd30, %rd27, 32;",
        "cvt.u32.u64 %r36, %rd30;",
        "add.u32 %r36, %r36, %r18;",                # SFB taddr
        "cvt.u32.u64 %r37, %rd28;",
        "setp.ne.u32 %p9, %r37, 0;",                # enable-input-d
        "shr.u64 %rd31, %rd28, 32;",
        "cvt.u32.u64 %r38, %rd31;",
        "add.u32 %r38, %r38, %r18;",                # sparse metadata taddr
    ]
    if form.dol:
        L += _disable_output_lane(i)
    return [*L, _mma_instruction(form, collector)]


def _disable_output_lane(i: int) -> list[str]:
    """The disable-output-lane vector of MMA ``i``: 4 words in its two cp slots, into %r60..%r63."""
    w = (W_CP0 + 2 * i) * 8
    return [
        f"ld.global.u64 %rd42, [%rd6+{w}];",
        f"ld.global.u64 %rd43, [%rd6+{w + 8}];",
        "cvt.u32.u64 %r60, %rd42;",
        "shr.u64 %rd44, %rd42, 32;",
        "cvt.u32.u64 %r61, %rd44;",
        "cvt.u32.u64 %r62, %rd43;",
        "shr.u64 %rd44, %rd43, 32;",
        "cvt.u32.u64 %r63, %rd44;",
    ]


def _mma_instruction(form: KernelForm, collector: str | None) -> str:
    """The tcgen05.mma itself, on the operand registers ``_mma`` filled."""
    bs = form.block_scale
    sfa, sfb = ("%r36", "%r35") if bs and faulty("mma-sfa-sfb-swapped") else ("%r35", "%r36")
    return I.tcgen05_mma(
        form.kind, form.cta_group, d_tmem="%r34", a="%r32" if form.a_tmem else "%rd24", b_desc="%rd25",
        idesc="%r33", enable_input_d="%p9", sparse=form.sparse, block_scale=bs,
        scale_vec=form.scale_vec if bs else None, a_in_tmem=form.a_tmem,
        collector_a=None if form.ws else collector, collector_b=collector if form.ws else None, ws=form.ws,
        sp_meta_tmem="%r38" if form.sparse else None, scale_a_tmem=sfa if bs else None,
        scale_b_tmem=sfb if bs else None,
        disable_output_lane=["%r60", "%r61", "%r62", "%r63"] if form.dol else None,
    )


def _commit(cg: int) -> list[str]:
    """tcgen05.commit to the mbarrier; for cta_group::2 multicast to both CTAs of the pair (mask 0b11)."""
    if cg == 2:
        return ["mov.b16 %h0, 3;", I.tcgen05_commit(cg, "%r15", multicast_mask="%h0", shared_cluster=True)]
    return [I.tcgen05_commit(cg, "%r15", shared_cluster=True)]


def _bounded_wait(form: KernelForm) -> list[str]:
    """Step 5: thread 0 of each CTA polls the mbarrier until the ``%globaltimer`` deadline from the record and
    shares OK / TIMEOUT through shared memory; a CTA whose wait expired skips the read-back."""
    # a_overwrite forms completed phase 0 of the mbarrier mid-sequence: the final commit completes phase 1
    parity = 1 if form.a_overwrite else 0
    try_wait = ("setp.eq.u32 %p10, %r0, %r0;" if faulty("missing-mbarrier-wait")
                else f"mbarrier.try_wait.parity.shared::cta.b64 %p10, [%r15], {parity};")
    return [
        "mov.u32 %r39, wait_flag;",
        "@!%p1 bra WAIT_DONE;",
        f"ld.global.u64 %rd32, [%rd4+{W_TIMEOUT_NS * 8}];",
        "mov.u64 %rd33, %globaltimer;",
        "add.u64 %rd33, %rd33, %rd32;",             # deadline
        f"mov.u32 %r40, {STATUS_OK};",
        "WAIT_LOOP:",
        try_wait,
        "@%p10 bra WAIT_END;",
        "mov.u64 %rd34, %globaltimer;",
        "setp.lt.u64 %p11, %rd34, %rd33;",
        "@%p11 bra WAIT_LOOP;",
        f"mov.u32 %r40, {STATUS_TIMEOUT};",
        "WAIT_END:",
        "st.shared.u32 [%r39], %r40;",
        "WAIT_DONE:",
        "bar.sync 0;",
        "ld.shared.u32 %r41, [%r39];",
        f"setp.ne.u32 %p12, %r41, {STATUS_OK};",
        "@%p12 bra READ_DONE;",
        I.tcgen05_fence("after"),
    ]


def _read_back() -> list[str]:
    """Step 6: each warp reads its lane quadrant over columns [ld_col0, ld_col0 + ld_ncols) with
    tcgen05.ld.32x32b.x8, waits for the loads, and stores the raw cells to its rows of the output."""
    col0_word = W_LD_NCOLS if faulty("params-record-offset") else W_LD_COL0
    loop_exit = "setp.gt.u32" if faulty("readback-loop-off-by-one") else "setp.ge.u32"
    shape = "16x64b" if faulty("wrong-ld-shape") else "32x32b"
    regs = [f"%r{48 + i}" for i in range(8)]
    L = [
        f"ld.global.u64 %rd35, [%rd4+{col0_word * 8}];",
        f"ld.global.u64 %rd36, [%rd4+{W_LD_NCOLS * 8}];",
        f"ld.global.u64 %rd37, [%rd4+{W_OUT_OFF * 8}];",
        "cvt.u32.u64 %r42, %rd35;",
        "cvt.u32.u64 %r43, %rd36;",
        "add.u32 %r44, %r21, %r42;",                # quadrant base + ld_col0
        "add.u64 %rd38, %rd2, %rd37;",
        "mul.lo.u32 %r45, %r0, %r43;",
        "mul.wide.u32 %rd39, %r45, 4;",
        "add.u64 %rd38, %rd38, %rd39;",             # &out[lane][0]
        "mov.u32 %r46, 0;",
        "LD_LOOP:",
        f"{loop_exit} %p13, %r46, %r43;",
        "@%p13 bra LD_END;",
        "add.u32 %r47, %r44, %r46;",
        I.tcgen05_ld(shape, 8, regs, "%r47"),
    ]
    if not faulty("missing-wait-ld"):
        L.append(I.tcgen05_wait("ld"))
    L += ["mul.wide.u32 %rd40, %r46, 4;", "add.u64 %rd40, %rd38, %rd40;"]
    L += [f"st.global.u32 [%rd40+{4 * i}], {r};" for i, r in enumerate(regs)]
    return [*L, "add.u32 %r46, %r46, 8;", "bra LD_LOOP;", "LD_END:", "READ_DONE:"]


def _teardown(cg: int) -> list[str]:
    """Step 7: after the thread sync, warp 0 deallocates; thread 0 writes the status word."""
    return [
        *_fenced_barrier(cg),
        "@!%p2 bra DEALLOC_DONE;",
        I.tcgen05_dealloc(cg, "%r18", "%r16"),
        "DEALLOC_DONE:",
        "@%p1 st.global.u32 [%rd5], %r41;",
        "ret;",
    ]


def _overwrite_after_first_mma() -> list[str]:
    """(issuing thread) commit the first MMA, wait for it (bounded), copy the record's patch over the image start
    in 16-byte chunks, then make the generic-proxy writes visible to the tensor core (``fence.proxy.async``)."""
    out = [
        I.tcgen05_commit(1, "%r15", shared_cluster=True),
        f"ld.global.u64 %rd45, [%rd4+{W_TIMEOUT_NS * 8}];",
        "mov.u64 %rd46, %globaltimer;",
        "add.u64 %rd46, %rd46, %rd45;",
        "OVW_WAIT:",
        "mbarrier.try_wait.parity.shared::cta.b64 %p14, [%r15], 0;",
        "@%p14 bra OVW_WAITED;",
        "mov.u64 %rd47, %globaltimer;",
        "setp.lt.u64 %p15, %rd47, %rd46;",
        "@%p15 bra OVW_WAIT;",
        "bra MMA_DONE;",                                # timed out: skip the rest, the final wait reports it
        "OVW_WAITED:",
        f"ld.global.u64 %rd48, [%rd6+{W_PATCH * 8}];",
        "cvt.u32.u64 %r64, %rd48;",                    # blob offset
        "shr.u64 %rd49, %rd48, 32;",
        "cvt.u32.u64 %r65, %rd49;",
        "shr.u32 %r65, %r65, 4;",                      # 16-byte chunks
        "cvt.u64.u32 %rd50, %r64;",
        "add.u64 %rd50, %rd1, %rd50;",
        "mov.u32 %r66, 0;",
        "OVW_LOOP:",
        "setp.ge.u32 %p14, %r66, %r65;",
        "@%p14 bra OVW_DONE;",
        "mul.wide.u32 %rd51, %r66, 16;",
        "add.u64 %rd51, %rd50, %rd51;",
        "ld.global.v4.u32 {%r67, %r68, %r69, %r70}, [%rd51];",
        "shl.b32 %r71, %r66, 4;",
        "add.u32 %r71, %r71, %r7;",
        "st.shared.v4.u32 [%r71], {%r67, %r68, %r69, %r70};",
        "add.u32 %r66, %r66, 1;",
        "bra OVW_LOOP;",
        "OVW_DONE:",
        "fence.proxy.async.shared::cta;",
    ]
    return out


def _reloc(reg: str) -> list[str]:
    """Relocate a relative smem descriptor: start address += base>>4; LBO too in absolute mode."""
    return [
        f"add.u64 {reg}, {reg}, %rd16;",
        f"shr.u64 %rd41, {reg}, 52;",
        "and.b64 %rd41, %rd41, 1;",
        "mul.lo.u64 %rd41, %rd41, %rd17;",
        f"add.u64 {reg}, {reg}, %rd41;",
    ]


def _barrier(cg: int) -> list[str]:
    """A CTA barrier, or for cta_group::2 a cluster barrier (both CTAs of the pair)."""
    if cg == 2:
        return ["barrier.cluster.arrive.release.aligned;", "barrier.cluster.wait.acquire.aligned;"]
    return ["bar.sync 0;"]


def _fenced_barrier(cg: int) -> list[str]:
    """The canonical tcgen05 thread-sync pattern (S9.7.16.6.4): fence::before_thread_sync, a CTA
    (or, for cta_group::2, cluster) barrier, fence::after_thread_sync."""
    return [I.tcgen05_fence("before"), *_barrier(cg), I.tcgen05_fence("after")]


def module_ptx(form: KernelForm) -> str:
    """The complete PTX module (one ``.entry``) for ``form``."""
    directives = [".maxntid 128, 1, 1"]
    if form.cta_group == 2:
        directives = [".explicitcluster", ".reqnctapercluster 2, 1, 1", *directives]
    body = _lines(form)
    head = module_header(form.arch, max_version(PTX_VERSION, min_ptx_for_target(form.arch)))
    sig = ", ".join(f".param .u64 {p}" for p in ("p_params", "p_blob", "p_out", "p_status"))
    text = [head, ".extern .shared .align 1024 .b8 smem_dyn[];", "",
            f".visible .entry {form.entry_name}({sig})", *directives, "{"]
    text += [("    " + ln) if not ln.endswith(":") else ln for ln in body]
    text.append("}")
    return "\n".join(text) + "\n"


# ---------------------------------------------------------------------------------------------
# Host side: packing many cases into the params/blob buffers.


@dataclass
class PackedLaunch:
    """The buffers of one launch; ``out_slices[i]`` locates CTA i's raw (128, ld_ncols) dump."""

    params: np.ndarray
    blob: np.ndarray
    out_bytes: int
    out_slices: list[tuple[int, int]] = field(default_factory=list)
    smem_bytes: int = 0
    """Dynamic shared memory to request (largest image + alignment slack)."""


def pack(programs: Sequence[CtaProgram]) -> PackedLaunch:
    """Lay out CTA programs (2 per case for ``cta_group::2``, leader first) in launch buffers."""
    params = np.zeros((len(programs), REC_WORDS), dtype=np.uint64)
    chunks: list[bytes] = []
    off = 0
    out_off = 0
    slices = []
    max_smem = 0

    def put(b: bytes) -> int:
        nonlocal off
        start = off
        pad = (-len(b)) % 16
        chunks.append(b + bytes(pad))
        off += len(b) + pad
        return start

    for i, p in enumerate(programs):
        if p.smem.size % 16:
            raise ValueError("smem image length must be a multiple of 16")
        if p.ld_ncols % 8:
            raise ValueError("ld_ncols must be a multiple of 8 (tcgen05.ld .x8)")
        if len(p.cps) > MAX_CP or len(p.mmas) > MAX_MMA:
            raise ValueError("too many cp/mma operations for one record")
        r = params[i]
        r[W_SMEM_OFF] = put(np.ascontiguousarray(p.smem, dtype=np.uint8).tobytes())
        r[W_SMEM_BYTES] = p.smem.size
        r[W_TMEM_NCOLS] = p.tmem_ncols
        pre = np.ascontiguousarray(p.preload, dtype=np.uint32)
        if pre.ndim != 2 or pre.shape[0] != 128:
            raise ValueError("preload must be uint32 (128, cols)")
        r[W_PRELOAD_OFF] = put(pre.tobytes())
        r[W_PRELOAD_COLS] = pre.shape[1]
        r[W_LD_COL0] = p.ld_col0
        r[W_LD_NCOLS] = p.ld_ncols
        r[W_OUT_OFF] = out_off
        slices.append((out_off, p.ld_ncols))
        out_off += 128 * p.ld_ncols * 4
        r[W_N_CP] = len(p.cps)
        r[W_TIMEOUT_NS] = p.timeout_ns
        r[W_N_MMA] = len(p.mmas)
        if getattr(p, "smem_patch", None) is not None:
            patch = np.ascontiguousarray(p.smem_patch, dtype=np.uint8)
            if patch.size % 16 or patch.size > p.smem.size:
                raise ValueError("smem_patch: a multiple of 16 bytes, inside the image")
            r[W_PATCH] = put(patch.tobytes()) | (patch.size << 32)
        for j, (code, taddr, desc) in enumerate(p.cps):
            r[W_CP0 + 2 * j] = (code & 0xFFFFFFFF) | ((taddr & 0xFFFFFFFF) << 32)
            r[W_CP0 + 2 * j + 1] = desc & 0xFFFFFFFFFFFFFFFF
        for j, m in enumerate(p.mmas):
            if m.disable_output_lane is not None:  # the vector lives in MMA j's two cp slots
                if p.cps:
                    raise ValueError("disable-output-lane words and tcgen05.cp ops share the record's cp slots")
                dw = [int(x) & 0xFFFFFFFF for x in m.disable_output_lane]
                r[W_CP0 + 2 * j] = dw[0] | (dw[1] << 32)
                r[W_CP0 + 2 * j + 1] = dw[2] | (dw[3] << 32)
            w = W_MMA0 + MMA_WORDS * j
            r[w] = m.a & 0xFFFFFFFFFFFFFFFF
            r[w + 1] = m.b_desc & 0xFFFFFFFFFFFFFFFF
            r[w + 2] = (m.idesc & 0xFFFFFFFF) | ((m.d_tmem & 0xFFFFFFFF) << 32)
            r[w + 3] = (m.sfa_tmem & 0xFFFFFFFF) | ((m.sfb_tmem & 0xFFFFFFFF) << 32)
            r[w + 4] = int(bool(m.enable_input_d)) | ((m.sp_meta_tmem & 0xFFFFFFFF) << 32)
        max_smem = max(max_smem, p.smem.size)
    blob = np.frombuffer(b"".join(chunks) or bytes(16), dtype=np.uint8).copy()
    return PackedLaunch(params=params, blob=blob, out_bytes=max(out_off, 4), out_slices=slices,
                        smem_bytes=max_smem + SMEM_ALIGN)


def unpack_out(out: np.ndarray, launch: PackedLaunch) -> list[np.ndarray]:
    """Split the raw output buffer into one uint32 (128, ld_ncols) dump per CTA."""
    raw = np.ascontiguousarray(out).view(np.uint8)
    dumps = []
    for off, ncols in launch.out_slices:
        dumps.append(raw[off: off + 128 * ncols * 4].view(np.uint32).reshape(128, ncols).copy())
    return dumps
