"""Kernel modules for the tcgen05 features the block-scaled MMA kernel never issues: every ``tcgen05.ld``/
``tcgen05.st`` shape x num, and ``tcgen05.shift``.

Why separate kernels: the MMA kernel (``tcgen05_kernels``) stages and reads tensor memory with
``.32x32b`` only and never shifts, so a wrong reading of the other Table 47 shapes, or a shift that moves
rows the wrong way, could not make any case fail (issue 26). These kernels make each feature observable
with position-coded data: every cell and every register carries a value naming where it came from.

One CTA of 128 threads per case (4 warps, each on its own TMEM lane quadrant, 9.7.16.8.1):

1. warp 0 allocates all 512 columns (``tcgen05.alloc`` + ``relinquish_alloc_permit``);
2. every thread writes its lane of the *preload image* (``pre_cols`` columns, host-made, each cell
   distinct) with ``tcgen05.st.32x32b.x8``, then ``tcgen05.wait::st``;
3. the feature:

   * ``ldst`` (one module per shape): for each ``.num`` of the shape, a ``tcgen05.ld.<shape>.x<num>`` of the
     preloaded cells at that num's column window (lane offset 16 in the quadrant for every other num of
     the 16-lane shapes), registers stored to global (output ``L``); then a ``tcgen05.st.<shape>.x<num>``
     of registers holding ``ST_BASE | num index << 20 | thread << 8 | register`` into the same
     window, ``tcgen05.wait::st`` and a ``tcgen05.ld`` of the same shape back (output ``RT``: must
     give the registers back whatever the shape's map is);
   * ``shift``: one thread issues ``tcgen05.shift.cta_group::1.down`` at each (lane, column) of
     ``SHIFTS``, then ``tcgen05.commit`` to an mbarrier; thread 0 waits (bounded by ``%globaltimer``);

4. every thread reads its lane of all ``dump_cols`` columns back with ``tcgen05.ld.32x32b.x8``
   (output ``D``), then warp 0 deallocates.

Parameters: ``p_pre`` (uint32 preload images, one (128, pre_cols) per case), ``p_out`` (uint32, one
(128, out_words) per case), ``p_status`` (one word per case: 1 done, 2 the shift wait expired).
"""

from __future__ import annotations

from dataclasses import dataclass

from mmacts.ptx import instructions as I
from mmacts.ptx.module import max_version, min_ptx_for_target, module_header

LDST_NUMS: dict[str, tuple[int, ...]] = {
    "32x32b": (1, 2, 4, 8, 16, 32, 64, 128),
    "16x64b": (1, 2, 4, 8, 16, 32, 64, 128),
    "16x128b": (1, 2, 4, 8, 16, 32, 64),
    "16x256b": (1, 2, 4, 8, 16, 32),
    "16x32bx2": (1, 2, 4, 8, 16, 32, 64, 128),
}
"""Every ``.num`` Table 47 lists per shape (the kernel issues each once)."""

REGS_PER_X1 = {"32x32b": 1, "16x64b": 1, "16x128b": 2, "16x256b": 4, "16x32bx2": 1}
SHIFTS: tuple[tuple[int, int], ...] = ((96, 3), (0, 16))
"""(lane, column) of each ``tcgen05.shift``: lane 96 (the last quadrant: every reading of how far the
rows move agrees there) at column 3 (the spec aligns the lane only: a column off any 8-column boundary
shows a block taken at the wrong columns), and lane 0 (where AMB-SHIFT-ROW-SCOPE's readings differ)."""
ST_BASE = 0x20000000
"""Tag of the st phase's register values (finite, normal fp32: a raw-cell compare is never NaN == NaN)."""
STATUS_OK, STATUS_TIMEOUT = 1, 2
TIMEOUT_NS = 1_000_000_000
PTX_VERSION = "8.7"


def ld_cols(shape: str, num: int) -> int:
    """TMEM columns one ``.<shape>.x<num>`` access spans (``.16x32bx2``: both halves, immHalfSplitoff = num)."""
    return {"32x32b": num, "16x64b": 2 * num, "16x128b": 4 * num, "16x256b": 8 * num, "16x32bx2": 2 * num}[shape]


def lane_offset(shape: str, index: int) -> int:
    """Lane offset inside the warp's quadrant of the ``index``-th num: 16 for every other num of the 16-lane
    shapes, so both halves of a quadrant are exercised."""
    return 16 * (index % 2) if shape.startswith("16x") else 0


def ldst_nums(shape: str, pack: bool = False) -> tuple[int, ...]:
    """The nums the kernel issues: every one of Table 47, or with ``.pack::16b`` (two columns per register
    unit) those whose accesses still fit the 512 columns side by side."""
    if not pack:
        return LDST_NUMS[shape]
    out, col = [], 0
    for num in LDST_NUMS[shape]:
        col += 2 * ld_cols(shape, num)
        if col <= 512:
            out.append(num)
    return tuple(out)


def windows(shape: str, lane_base: int = 0, pack: bool = False) -> list[tuple[int, int, int, int]]:
    """(num, lane offset, first column, first register of the output row) of each access of the shape;
    ``lane_base`` (16-lane shapes only): every access at that lane of the quadrant instead; ``pack``:
    each access spans twice the columns (.pack::16b / .unpack::16b)."""
    out, col, reg = [], 0, 0
    for i, num in enumerate(ldst_nums(shape, pack)):
        out.append((num, lane_base or lane_offset(shape, i), col, reg))
        col += ld_cols(shape, num) * (2 if pack else 1)
        reg += REGS_PER_X1[shape] * num
    return out


def total_regs(shape: str, pack: bool = False) -> int:
    """Registers per thread over all nums of ``shape`` (the width of outputs ``L`` and ``RT``)."""
    return sum(REGS_PER_X1[shape] * n for n in ldst_nums(shape, pack))


def st_code(index: int, thread: int, reg: int) -> int:
    """The value the st phase puts in register ``reg`` of ``thread`` for the ``index``-th num."""
    return ST_BASE | (index << 20) | (thread << 8) | reg


@dataclass(frozen=True)
class FeatureForm:
    """A feature kernel: ``feature`` ``ldst`` (with ``shape``) or ``shift``."""

    feature: str
    shape: str = ""
    arch: str = "sm_100a"
    lane_base: int = 0
    """ldst with a 16-lane shape: every access starts this many lanes into the warp's quadrant (1-16; 0: the
    alternating 0 / 16 of :func:`lane_offset`), a base no multiple of 16 tells ``base + lane`` from other
    combinations of the two (``base ^ lane``)."""
    pack: bool = False
    """ldst: loads with ``.pack::16b``, stores with ``.unpack::16b`` (the nums of :func:`ldst_nums`)."""

    def __post_init__(self) -> None:
        if self.feature == "ldst" and self.shape not in LDST_NUMS:
            raise ValueError(f"ldst feature needs a Table 47 shape, not {self.shape!r}")
        if self.lane_base and not (self.feature == "ldst" and self.shape.startswith("16x")
                                   and 0 < self.lane_base <= 16):
            raise ValueError(f"lane_base {self.lane_base}: a 16-lane ld/st shape and 1-16 lanes only")
        if self.feature not in ("ldst", "shift"):
            raise ValueError(f"unknown feature kernel {self.feature!r}")

    @property
    def entry_name(self) -> str:
        return (f"tc05feat_{self.feature}" + (f"_{self.shape}" if self.shape else "")
                + (f"_lane{self.lane_base}" if self.lane_base else "") + ("_pack16b" if self.pack else ""))

    @property
    def pre_cols(self) -> int:
        return 512 if self.feature == "ldst" else 24

    @property
    def dump_cols(self) -> int:
        return self.pre_cols

    @property
    def out_words(self) -> int:
        """uint32 words per thread: L, RT (ldst) and the dump."""
        return (2 * total_regs(self.shape, self.pack) if self.feature == "ldst" else 0) + self.dump_cols

    def instruction(self) -> str:
        if self.feature == "shift":
            return I.tcgen05_shift(1, "taddr").split(" ")[0]
        return f"tcgen05.ld/st.sync.aligned.{self.shape}.x*.b32"


def _regs(n: int) -> list[str]:
    return [f"%v{i}" for i in range(n)]


def _half(shape: str, num: int) -> int | None:
    return num if shape == "16x32bx2" else None


def _lines(form: FeatureForm) -> list[str]:
    L: list[str] = []
    e = L.append
    e(".reg .pred %p<8>;")
    e(".reg .b32 %r<32>;")
    e(".reg .b32 %v<128>;")
    e(".reg .b64 %rd<16>;")
    e(".shared .align 8 .b64 mbar;")
    e(".shared .align 4 .b32 tmem_slot;")
    e(".shared .align 4 .b32 wait_flag;")
    e("mov.u32 %r0, %tid.x;")
    e("shr.u32 %r1, %r0, 5;")                        # warp = lane quadrant
    e("mov.u32 %r2, %ctaid.x;")                      # case
    e("ld.param.u64 %rd0, [p_pre];")
    e("cvta.to.global.u64 %rd0, %rd0;")
    e("ld.param.u64 %rd1, [p_out];")
    e("cvta.to.global.u64 %rd1, %rd1;")
    e("ld.param.u64 %rd2, [p_status];")
    e("cvta.to.global.u64 %rd2, %rd2;")
    e(f"mul.lo.u32 %r3, %r2, {128 * form.pre_cols};")
    e("mad.lo.u32 %r3, %r0, " + str(form.pre_cols) + ", %r3;")
    e("mul.wide.u32 %rd3, %r3, 4;")
    e("add.u64 %rd3, %rd0, %rd3;")                   # &pre[case][thread][0]
    e(f"mul.lo.u32 %r4, %r2, {128 * form.out_words};")
    e("mad.lo.u32 %r4, %r0, " + str(form.out_words) + ", %r4;")
    e("mul.wide.u32 %rd4, %r4, 4;")
    e("add.u64 %rd4, %rd1, %rd4;")                   # &out[case][thread][0]
    e("mov.u32 %r5, mbar;")
    e("setp.eq.u32 %p0, %r0, 0;")
    e("@%p0 mbarrier.init.shared::cta.b64 [%r5], 1;")
    e("@%p0 fence.mbarrier_init.release.cluster;")
    e("bar.sync 0;")
    e("mov.u32 %r12, wait_flag;")
    e("mov.u32 %r6, tmem_slot;")
    e("setp.eq.u32 %p1, %r1, 0;")
    e("@!%p1 bra ALLOC_DONE;")
    e(I.tcgen05_alloc(1, "%r6", 512))
    e(I.tcgen05_relinquish(1))
    e("ALLOC_DONE:")
    e(I.tcgen05_fence("before"))
    e("bar.sync 0;")
    e(I.tcgen05_fence("after"))
    e("ld.shared.u32 %r7, [%r6];")                   # TMEM base
    e("shl.b32 %r8, %r1, 21;")
    e("add.u32 %r8, %r7, %r8;")                      # quadrant base taddr
    # ---- preload: 8 columns per tcgen05.st.32x32b.x8 ------------------------------------------------
    eight = _regs(8)
    for c in range(0, form.pre_cols, 8):
        for i, r in enumerate(eight):
            e(f"ld.global.u32 {r}, [%rd3+{4 * (c + i)}];")
        e(f"add.u32 %r9, %r8, {c};")
        e(I.tcgen05_st("32x32b", 8, "%r9", eight))
    e(I.tcgen05_wait("st"))
    if form.feature == "ldst":
        _ldst(form, e)
    else:
        _shift(e)
    # ---- dump: every column of this thread's lane ---------------------------------------------------
    e("ld.shared.u32 %r20, [%r12];")
    e(f"setp.ne.u32 %p5, %r20, {STATUS_OK};")
    e("@%p5 bra DUMP_DONE;")
    e(I.tcgen05_fence("after"))
    base = form.out_words - form.dump_cols
    for c in range(0, form.dump_cols, 8):
        e(f"add.u32 %r9, %r8, {c};")
        e(I.tcgen05_ld("32x32b", 8, eight, "%r9"))
        e(I.tcgen05_wait("ld"))
        for i, r in enumerate(eight):
            e(f"st.global.u32 [%rd4+{4 * (base + c + i)}], {r};")
    e("DUMP_DONE:")
    e(I.tcgen05_fence("before"))
    e("bar.sync 0;")
    e(I.tcgen05_fence("after"))
    e("@!%p1 bra DEALLOC_DONE;")
    e(I.tcgen05_dealloc(1, "%r7", 512))
    e("DEALLOC_DONE:")
    e("mul.wide.u32 %rd5, %r2, 4;")
    e("add.u64 %rd5, %rd2, %rd5;")
    e("@%p0 st.global.u32 [%rd5], %r20;")
    e("ret;")
    return L


def _ldst(form: FeatureForm, e) -> None:
    shape = form.shape
    nregs = total_regs(shape, form.pack)
    e(f"mov.u32 %r20, {STATUS_OK};")
    e("@%p0 st.shared.u32 [%r12], %r20;")
    e(I.tcgen05_fence("before"))
    e("bar.sync 0;")
    e(I.tcgen05_fence("after"))
    wins = windows(shape, form.lane_base, form.pack)

    def load_windows(first_slot: int) -> None:
        """tcgen05.ld every window, each register to its output slot from ``first_slot`` on."""
        for num, loff, col, reg0 in wins:
            regs = _regs(REGS_PER_X1[shape] * num)
            e(f"add.u32 %r9, %r8, {(loff << 16) + col};")
            e(I.tcgen05_ld(shape, num, regs, "%r9", pack=form.pack, half_splitoff=_half(shape, num)))
            e(I.tcgen05_wait("ld"))
            for i, r in enumerate(regs):
                e(f"st.global.u32 [%rd4+{4 * (first_slot + reg0 + i)}], {r};")

    load_windows(0)                                  # L: loads of the preloaded cells
    for idx, (num, loff, col, _) in enumerate(wins):  # st of position-coded registers
        n = REGS_PER_X1[shape] * num
        regs = _regs(n)
        e("shl.b32 %r10, %r0, 8;")
        e(f"or.b32 %r10, %r10, {ST_BASE | (idx << 20)};")
        for i, r in enumerate(regs):
            e(f"or.b32 {r}, %r10, {i};")
        e(f"add.u32 %r9, %r8, {(loff << 16) + col};")
        e(I.tcgen05_st(shape, num, "%r9", regs, unpack=form.pack, half_splitoff=_half(shape, num)))
    e(I.tcgen05_wait("st"))
    load_windows(nregs)                              # RT: the same shape loads them back


def _shift(e) -> None:
    # every warp's preload stores (waited) happen before thread 0's shift: the tcgen05 thread-sync pattern
    e(I.tcgen05_fence("before"))
    e("bar.sync 0;")
    e(I.tcgen05_fence("after"))
    e("@!%p0 bra ISSUE_DONE;")
    for lane, col in SHIFTS:
        e(f"add.u32 %r11, %r7, {(lane << 16) + col};")
        e(I.tcgen05_shift(1, "%r11"))
    e(I.tcgen05_commit(1, "%r5", shared_cluster=True))
    e("mov.u64 %rd6, %globaltimer;")
    e(f"add.u64 %rd6, %rd6, {TIMEOUT_NS};")
    e(f"mov.u32 %r20, {STATUS_OK};")
    e("WAIT_LOOP:")
    e("mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r5], 0;")
    e("@%p2 bra WAIT_END;")
    e("mov.u64 %rd7, %globaltimer;")
    e("setp.lt.u64 %p3, %rd7, %rd6;")
    e("@%p3 bra WAIT_LOOP;")
    e(f"mov.u32 %r20, {STATUS_TIMEOUT};")
    e("WAIT_END:")
    e("st.shared.u32 [%r12], %r20;")
    e("ISSUE_DONE:")
    e(I.tcgen05_fence("before"))
    e("bar.sync 0;")
    e(I.tcgen05_fence("after"))


def module_ptx(form: FeatureForm) -> str:
    """The complete PTX module (one ``.entry``) for ``form``."""
    head = module_header(form.arch, max_version(PTX_VERSION, min_ptx_for_target(form.arch)))
    sig = ", ".join(f".param .u64 {p}" for p in ("p_pre", "p_out", "p_status"))
    text = [head, f".visible .entry {form.entry_name}({sig})", ".maxntid 128, 1, 1", "{"]
    text += [("    " + ln) if not ln.endswith(":") else ln for ln in _lines(form)]
    text.append("}")
    return "\n".join(text) + "\n"
