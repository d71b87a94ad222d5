"""PTX instruction text builders: one function per instruction, qualifiers in, one line of PTX out.

Why builders and not templates: every suite (compile conformance, hardware runs) must spell an
instruction form the same way, and the compile suite must also spell the forms the spec *forbids*
(``.ws`` with ``.block_scale``, a wrong ``.scale_vec`` for a kind, ...). So these functions only
*spell*: they never validate a combination against the spec tables -- that is the job of the
catalog and of ptxas, and a builder that refused a forbidden form would make negative
conformance impossible. They do reject structurally meaningless input (an unknown spelling of a
qualifier value, a wrong operand count where the count is fixed by the syntax), because such a
case would test the builder, not ptxas.

Qualifier order follows the syntax blocks of the PTX ISA (9.7.16.* for tcgen05, 9.7.14.3 for
mma.sync block scaling): e.g. ``tcgen05.mma{.sp}.cta_group.kind{.block_scale{.sv}}{.ashift}
{.collector_usage}``. Operands are register names (``%r1``) or immediates, passed as strings or
ints; vector operands are sequences and are rendered ``{a, b, ...}``.

ptxas facts recorded while writing these (ptxas 13.5.37, see ``mmacts/toolchain``):

* mma.sync block-scale selectors ``{byte-id, thread-id}`` may be immediates **or** ``.b16``
  registers; ``.b32`` registers are refused ("Arguments mismatch"). Immediates are range-checked
  (byte-id in [0..3], thread-id-a in [0..1], thread-id-b in [0..3]).
* The scale-data operand may be written bare (``%r7``) or braced (``{%r7}``) as CUTLASS does;
  the qualifier order ``kind...block_scale...m16n8k32.row.col`` (CUTLASS) and
  ``m16n8k32.row.col.kind...`` (the PTX syntax block) are both accepted.
"""

from __future__ import annotations

from collections.abc import Sequence

Operand = str | int
"""A register name (``%r3``), a symbol, or an immediate."""

# ---------------------------------------------------------------------------------------------
# Small spelling helpers


def _op(x: Operand) -> str:
    return str(x)


def vec(regs: Sequence[Operand]) -> str:
    """Render a brace-enclosed vector operand: ``{%r0, %r1}``."""
    return "{" + ", ".join(_op(r) for r in regs) + "}"


def addr(x: Operand) -> str:
    """Render an address operand: ``[%r0]``."""
    return f"[{_op(x)}]"


def _cta(cta_group: int) -> str:
    if cta_group not in (1, 2):
        raise ValueError(f"cta_group must be 1 or 2, not {cta_group!r}")
    return f".cta_group::{cta_group}"


def _strip(q: str) -> str:
    return q[1:] if q.startswith(".") else q


MMA_KINDS: tuple[str, ...] = ("f16", "tf32", "f8f6f4", "i8", "mxf8f6f4", "mxf4", "mxf4nvf4")
"""Every ``.kind::*`` spelling of the tcgen05 chapter (Table 39). Spelling only, not validity."""

SCALE_VEC_SPELLINGS: dict[str, str] = {
    "1X": ".scale_vec::1X",
    "2X": ".scale_vec::2X",
    "4X": ".scale_vec::4X",
    "block16": ".block16",
    "block32": ".block32",
}
"""The ``.scale_vectorsize`` spellings of tcgen05.mma (9.7.16.10.9.1) and mma.sync (9.7.14.3)."""


def scale_vec_qualifier(scale_vec: str | None) -> str:
    """``'2X'`` -> ``.scale_vec::2X``; ``'block16'`` -> ``.block16``; ``None`` -> ``''`` (default form)."""
    if scale_vec is None:
        return ""
    key = scale_vec
    if key.startswith(".scale_vec::"):
        key = key[len(".scale_vec::"):]
    key = _strip(key)
    if key.startswith("scale_vec::"):
        key = key[len("scale_vec::"):]
    if key not in SCALE_VEC_SPELLINGS:
        # Unknown spellings (e.g. "3X") are still spelled: negative conformance needs them.
        return f".scale_vec::{key}"
    return SCALE_VEC_SPELLINGS[key]


# ---------------------------------------------------------------------------------------------
# mma.sync (Hopper/Ada/Blackwell-consumer warp-level MMA)


def mma_sync_block_scale(
    kind: str,
    atype: str,
    btype: str,
    stype: str,
    scale_vec: str | None,
    shape: str,
    d: Sequence[Operand],
    a: Sequence[Operand],
    b: Sequence[Operand],
    c: Sequence[Operand],
    sfa: Operand,
    sel_a: tuple[Operand, Operand],
    sfb: Operand,
    sel_b: tuple[Operand, Operand],
    *,
    dtype: str = "f32",
    ctype: str = "f32",
    brace_scale: bool = False,
) -> str:
    """``mma.sync.aligned.<shape>.row.col.kind::<k>.block_scale{.scale_vec::NX}.f32.<a>.<b>.f32.<s>``.

    ``sel_a``/``sel_b`` are ``(byte_id, thread_id)``: immediates or ``.b16`` registers (ptxas
    13.5 refuses ``.b32`` registers there). ``scale_vec=None`` spells the default form (the
    qualifier is optional in the syntax). ``brace_scale`` writes ``{sfa}`` as CUTLASS does.
    """
    sv = scale_vec_qualifier(scale_vec)
    opcode = (
        f"mma.sync.aligned.{_strip(shape)}.row.col.kind::{_strip(kind).removeprefix('kind::')}"
        f".block_scale{sv}.{_strip(dtype)}.{_strip(atype)}.{_strip(btype)}.{_strip(ctype)}.{_strip(stype)}"
    )
    sa = vec([sfa]) if brace_scale else _op(sfa)
    sb = vec([sfb]) if brace_scale else _op(sfb)
    operands = [vec(d), vec(a), vec(b), vec(c), sa, vec(sel_a), sb, vec(sel_b)]
    return f"{opcode} {', '.join(operands)};"


def mma_sync_fp8(
    atype: str,
    btype: str,
    d: Sequence[Operand],
    a: Sequence[Operand],
    b: Sequence[Operand],
    c: Sequence[Operand],
    *,
    shape: str = "m16n8k32",
    dtype: str = "f32",
    ctype: str = "f32",
) -> str:
    """Plain FP8 ``mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32`` (sm_89+; Hopper emulates)."""
    opcode = (
        f"mma.sync.aligned.{_strip(shape)}.row.col.{_strip(dtype)}.{_strip(atype)}.{_strip(btype)}"
        f".{_strip(ctype)}"
    )
    return f"{opcode} {vec(d)}, {vec(a)}, {vec(b)}, {vec(c)};"


def mma_sync(
    shape: str,
    dtype: str,
    atype: str,
    btype: str,
    ctype: str,
    d: Sequence[Operand],
    a: Sequence[Operand],
    b: Sequence[Operand],
    c: Sequence[Operand],
    *,
    kind: str | None = None,
) -> str:
    """Generic ``mma.sync.aligned.<shape>.row.col{.kind::k}.<d>.<a>.<b>.<c>`` (e.g. bf16 m16n8k16)."""
    k = f".kind::{_strip(kind).removeprefix('kind::')}" if kind else ""
    opcode = (
        f"mma.sync.aligned.{_strip(shape)}.row.col{k}.{_strip(dtype)}.{_strip(atype)}.{_strip(btype)}"
        f".{_strip(ctype)}"
    )
    return f"{opcode} {vec(d)}, {vec(a)}, {vec(b)}, {vec(c)};"


# ---------------------------------------------------------------------------------------------
# wgmma (Hopper warpgroup MMA)


def wgmma_fp8(
    n: int,
    atype: str,
    btype: str,
    d: Sequence[Operand],
    a_desc: Operand,
    b_desc: Operand,
    scale_d: Operand,
    *,
    imm_scale_a: int = 1,
    imm_scale_b: int = 1,
    dtype: str = "f32",
) -> str:
    """``wgmma.mma_async.sync.aligned.m64n<N>k32.f32.<a>.<b>`` with both operands in shared memory."""
    opcode = f"wgmma.mma_async.sync.aligned.m64n{n}k32.{_strip(dtype)}.{_strip(atype)}.{_strip(btype)}"
    ops = [vec(d), _op(a_desc), _op(b_desc), _op(scale_d), str(imm_scale_a), str(imm_scale_b)]
    return f"{opcode} {', '.join(ops)};"


def wgmma_bf16(
    n: int,
    d: Sequence[Operand],
    a_desc: Operand,
    b_desc: Operand,
    scale_d: Operand,
    *,
    imm_scale_a: int = 1,
    imm_scale_b: int = 1,
    imm_trans_a: int = 0,
    imm_trans_b: int = 0,
    dtype: str = "f32",
) -> str:
    """``wgmma.mma_async.sync.aligned.m64n<N>k16.f32.bf16.bf16`` with both operands in shared memory."""
    opcode = f"wgmma.mma_async.sync.aligned.m64n{n}k16.{_strip(dtype)}.bf16.bf16"
    ops = [vec(d), _op(a_desc), _op(b_desc), _op(scale_d), str(imm_scale_a), str(imm_scale_b),
           str(imm_trans_a), str(imm_trans_b)]
    return f"{opcode} {', '.join(ops)};"


def wgmma_fence() -> str:
    """``wgmma.fence.sync.aligned;`` -- orders register accesses before the first wgmma."""
    return "wgmma.fence.sync.aligned;"


def wgmma_commit_group() -> str:
    """``wgmma.commit_group.sync.aligned;``"""
    return "wgmma.commit_group.sync.aligned;"


def wgmma_wait_group(n: int = 0) -> str:
    """``wgmma.wait_group.sync.aligned N;``"""
    return f"wgmma.wait_group.sync.aligned {int(n)};"


# ---------------------------------------------------------------------------------------------
# tcgen05.mma family (9.7.16.10.9)


def tcgen05_mma_opcode(
    kind: str,
    cta_group: int,
    *,
    sparse: bool = False,
    ws: bool = False,
    block_scale: bool = False,
    scale_vec: str | None = None,
    ashift: bool = False,
    collector_a: str | None = None,
    collector_b: str | None = None,
) -> str:
    """The opcode-with-qualifiers part of a tcgen05.mma instruction (no operands).

    ``collector_a`` is the op (``fill``/``use``/``lastuse``/``discard``) for ``.collector::a::op``;
    ``collector_b`` is ``"b<N>::op"`` (e.g. ``"b2::use"``) for the ``.ws`` forms.
    """
    q = "tcgen05.mma"
    if ws:
        q += ".ws"
    if sparse:
        q += ".sp"
    q += _cta(cta_group)
    q += f".kind::{_strip(kind).removeprefix('kind::')}"
    if block_scale:
        q += ".block_scale" + scale_vec_qualifier(scale_vec)
    elif scale_vec is not None:
        # Spelled on request: a scale_vec without .block_scale is a negative form.
        q += scale_vec_qualifier(scale_vec)
    if ashift:
        q += ".ashift"
    if collector_a is not None:
        q += f".collector::a::{_strip(collector_a)}"
    if collector_b is not None:
        q += f".collector::{_strip(collector_b)}"
    return q


def tcgen05_mma(
    kind: str,
    cta_group: int,
    *,
    d_tmem: Operand,
    a: Operand,
    b_desc: Operand,
    idesc: Operand,
    enable_input_d: Operand,
    sparse: bool = False,
    ws: bool = False,
    block_scale: bool = False,
    scale_vec: str | None = None,
    a_in_tmem: bool = False,
    collector_a: str | None = None,
    collector_b: str | None = None,
    ashift: bool = False,
    sp_meta_tmem: Operand | None = None,
    scale_a_tmem: Operand | None = None,
    scale_b_tmem: Operand | None = None,
    disable_output_lane: Sequence[Operand] | None = None,
    scale_input_d: Operand | None = None,
    zero_col_mask: Operand | None = None,
) -> str:
    """One ``tcgen05.mma{.ws}{.sp}`` instruction, operands in the order of the syntax blocks.

    ``a`` is the A shared-memory descriptor register, or (``a_in_tmem=True``) the tensor-memory
    address of A, rendered ``[a]``. Optional operands are emitted only when given, in the syntax
    order: ``[d], a, b, [sp-meta], idesc, {[scale-A], [scale-B] | {disable-output-lane}},
    enable-input-d {, scale-input-d | , zero-column-mask-desc}``.
    """
    opcode = tcgen05_mma_opcode(
        kind, cta_group, sparse=sparse, ws=ws, block_scale=block_scale, scale_vec=scale_vec,
        ashift=ashift, collector_a=collector_a, collector_b=collector_b,
    )
    ops: list[str] = [addr(d_tmem), addr(a) if a_in_tmem else _op(a), _op(b_desc)]
    if sparse:
        if sp_meta_tmem is None:
            raise ValueError("a sparse tcgen05.mma needs sp_meta_tmem")
        ops.append(addr(sp_meta_tmem))
    ops.append(_op(idesc))
    if scale_a_tmem is not None or scale_b_tmem is not None:
        if scale_a_tmem is None or scale_b_tmem is None:
            raise ValueError("block scaling needs both scale_a_tmem and scale_b_tmem")
        ops += [addr(scale_a_tmem), addr(scale_b_tmem)]
    if disable_output_lane is not None:
        ops.append(vec(disable_output_lane))
    ops.append(_op(enable_input_d))
    if scale_input_d is not None:
        ops.append(_op(scale_input_d))
    if zero_col_mask is not None:
        ops.append(_op(zero_col_mask))
    return f"{opcode} {', '.join(ops)};"


# ---------------------------------------------------------------------------------------------
# Tensor memory management (9.7.16.7)


def tcgen05_alloc(cta_group: int, dst: Operand, ncols: Operand, *, shared_cta: bool = True) -> str:
    """``tcgen05.alloc.cta_group::N.sync.aligned{.shared::cta}.b32 [dst], nCols;``"""
    ss = ".shared::cta" if shared_cta else ""
    return f"tcgen05.alloc{_cta(cta_group)}.sync.aligned{ss}.b32 {addr(dst)}, {_op(ncols)};"


def tcgen05_dealloc(cta_group: int, taddr: Operand, ncols: Operand) -> str:
    """``tcgen05.dealloc.cta_group::N.sync.aligned.b32 taddr, nCols;``"""
    return f"tcgen05.dealloc{_cta(cta_group)}.sync.aligned.b32 {_op(taddr)}, {_op(ncols)};"


def tcgen05_relinquish(cta_group: int) -> str:
    """``tcgen05.relinquish_alloc_permit.cta_group::N.sync.aligned;``"""
    return f"tcgen05.relinquish_alloc_permit{_cta(cta_group)}.sync.aligned;"


# ---------------------------------------------------------------------------------------------
# Tensor memory <-> registers (9.7.16.8)

LD_ST_SHAPES: tuple[str, ...] = ("16x64b", "16x128b", "16x256b", "32x32b", "16x32bx2")
"""Every ld/st shape spelling (9.7.16.2.3). Spelling only: Table 47/48 decide validity."""


def ld_st_regs_per_thread(shape: str, num: int) -> int:
    """32-bit registers per thread for ``shape`` x ``num``, derived from the shape itself.

    A warp moves lanes x bits per repetition (``.16x32bx2`` = two 16x32b accesses); spread over
    32 threads of 32-bit registers. Derived independently of Table 47 so the table can be
    checked against it.
    """
    s = _strip(shape)
    twice = s.endswith("x2")
    lanes_s, bits_s = s.removesuffix("x2").split("x")
    bits = int(lanes_s) * int(bits_s.removesuffix("b")) * (2 if twice else 1)
    return bits * int(num) // (32 * 32)


def _num(num: int | str) -> str:
    return f".x{int(str(num).lstrip('.x'))}"


def tcgen05_ld(
    shape: str,
    num: int,
    dst: Sequence[Operand],
    taddr: Operand,
    *,
    pack: bool = False,
    half_splitoff: Operand | None = None,
) -> str:
    """``tcgen05.ld.sync.aligned.<shape>.x<num>{.pack::16b}.b32 r, [taddr]{, immHalfSplitoff};``"""
    p = ".pack::16b" if pack else ""
    tail = f", {_op(half_splitoff)}" if half_splitoff is not None else ""
    return f"tcgen05.ld.sync.aligned.{_strip(shape)}{_num(num)}{p}.b32 {vec(dst)}, {addr(taddr)}{tail};"


def tcgen05_ld_red(
    shape: str,
    num: int,
    dst: Sequence[Operand],
    redval: Operand,
    taddr: Operand,
    *,
    op: str,
    dtype: str,
    abs_: bool = False,
    nan: bool = False,
    half_splitoff: Operand | None = None,
) -> str:
    """``tcgen05.ld.red.sync.aligned.<shape>.x<num>.<min|max>{.abs}{.NaN}.<f32|u32|s32>``.

    Operands: ``r, redval, [taddr]{, immHalfSplitoff}``.
    """
    q = f"tcgen05.ld.red.sync.aligned.{_strip(shape)}{_num(num)}.{_strip(op)}"
    if abs_:
        q += ".abs"
    if nan:
        q += ".NaN"
    q += f".{_strip(dtype)}"
    tail = f", {_op(half_splitoff)}" if half_splitoff is not None else ""
    return f"{q} {vec(dst)}, {_op(redval)}, {addr(taddr)}{tail};"


def tcgen05_st(
    shape: str,
    num: int,
    taddr: Operand,
    src: Sequence[Operand],
    *,
    unpack: bool = False,
    half_splitoff: Operand | None = None,
) -> str:
    """``tcgen05.st.sync.aligned.<shape>.x<num>{.unpack::16b}.b32 [taddr]{, immHalfSplitoff}, r;``"""
    u = ".unpack::16b" if unpack else ""
    mid = f", {_op(half_splitoff)}" if half_splitoff is not None else ""
    return f"tcgen05.st.sync.aligned.{_strip(shape)}{_num(num)}{u}.b32 {addr(taddr)}{mid}, {vec(src)};"


def tcgen05_wait(op: str) -> str:
    """``tcgen05.wait::ld.sync.aligned;`` or ``tcgen05.wait::st.sync.aligned;``"""
    o = _strip(op).removeprefix("wait::")
    if o not in ("ld", "st"):
        raise ValueError(f"tcgen05.wait operation must be ld or st, not {op!r}")
    return f"tcgen05.wait::{o}.sync.aligned;"


# ---------------------------------------------------------------------------------------------
# Data movement (9.7.16.9)

CP_SHAPES: tuple[str, ...] = ("128x256b", "4x256b", "128x128b", "64x128b", "32x128b")
CP_MULTICASTS: tuple[str, ...] = ("warpx2::02_13", "warpx2::01_23", "warpx4")
CP_SRC_FMTS: tuple[str, ...] = ("b6x16_p32", "b4x16_p64")


def tcgen05_cp(
    cta_group: int,
    shape: str,
    taddr: Operand,
    s_desc: Operand,
    *,
    multicast: str | None = None,
    src_fmt: str | None = None,
    dst_fmt: str = "b8x16",
) -> str:
    """``tcgen05.cp.cta_group::N.<shape>{.multicast}{.b8x16.<src_fmt>} [taddr], s-desc;``"""
    q = f"tcgen05.cp{_cta(cta_group)}.{_strip(shape)}"
    if multicast is not None:
        q += f".{_strip(multicast)}"
    if src_fmt is not None:
        q += f".{_strip(dst_fmt)}.{_strip(src_fmt)}"
    return f"{q} {addr(taddr)}, {_op(s_desc)};"


def tcgen05_shift(cta_group: int, taddr: Operand, *, order: str = "syntax") -> str:
    """``tcgen05.shift.cta_group::N.down [taddr];``

    The syntax block writes ``shift.cta_group.down``; the spec's own examples write
    ``shift.down.cta_group::N`` (``order="example"``). Both spellings are kept so the
    compile suite can ask ptxas which it accepts (ambiguity SHIFT-ORDER).
    """
    if order == "syntax":
        return f"tcgen05.shift{_cta(cta_group)}.down {addr(taddr)};"
    if order == "example":
        return f"tcgen05.shift.down{_cta(cta_group)} {addr(taddr)};"
    raise ValueError(f"order must be 'syntax' or 'example', not {order!r}")


# ---------------------------------------------------------------------------------------------
# Synchronisation (9.7.16.11, 9.7.16.12)


def tcgen05_fence(which: str) -> str:
    """``tcgen05.fence::before_thread_sync;`` / ``tcgen05.fence::after_thread_sync;``"""
    w = _strip(which).removeprefix("fence::")
    if w in ("before", "after"):
        w += "_thread_sync"
    if w not in ("before_thread_sync", "after_thread_sync"):
        raise ValueError(f"unknown tcgen05.fence variant {which!r}")
    return f"tcgen05.fence::{w};"


def tcgen05_commit(
    cta_group: int,
    mbar: Operand,
    *,
    multicast_mask: Operand | None = None,
    shared_cluster: bool = False,
) -> str:
    """``tcgen05.commit.cta_group::N.mbarrier::arrive::one{.shared::cluster}{.multicast::cluster}.b64``.

    With ``multicast_mask`` (a 16-bit ctaMask register or immediate) the ``.multicast::cluster``
    form is spelled and the mask operand appended.
    """
    q = f"tcgen05.commit{_cta(cta_group)}.mbarrier::arrive::one"
    if shared_cluster:
        q += ".shared::cluster"
    if multicast_mask is not None:
        q += ".multicast::cluster"
    q += ".b64"
    tail = f", {_op(multicast_mask)}" if multicast_mask is not None else ""
    return f"{q} {addr(mbar)}{tail};"
