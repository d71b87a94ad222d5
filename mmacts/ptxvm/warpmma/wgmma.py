"""Semantics of Hopper ``wgmma`` (``fence``, ``mma_async`` with A and B in shared memory,
``commit_group``, ``wait_group``), written from the PTX ISA text, not from the project's encoders
(``suites/hopper_validation/wgmma_layout.py``, ``reference.tcgen05``).

Matrix descriptor (PTX ISA 9.7.15.5.1.2.2 "Matrix Descriptor Format", 64 bits):

=====  ====  ==========================================================================
bits   size  field
=====  ====  ==========================================================================
0-13   14    matrix-descriptor-encode(start address) = (addr & 0x3FFFF) >> 4
16-29  14    matrix-descriptor-encode(leading dimension byte offset, LBO)
32-45  14    matrix-descriptor-encode(stride dimension byte offset, SBO)
49-51  3     matrix base offset (every swizzle mode but none)
62-63  2     swizzle: 0 none, 1 128B, 2 64B, 3 32B
=====  ====  ==========================================================================

The other bits (14-15, 30-31, 46-48, 52-61) have no meaning in the wgmma table; ``strict``
(default) refuses a descriptor that sets them.

Canonical layouts (the CuTe layouts of the PTX ISA's canonical-layout table, identical for
wgmma and tcgen05; T = 16 bytes of elements; offsets in bytes, ``kb`` = byte offset of the
element along K, ``mb`` = byte offset along M/N, W = swizzle width in bytes):

* K-major, no swizzle ``((8,m),(T,2k)):((1T,SBO),(1,LBO))``:
  (mn % 8)*16 + (mn // 8)*SBO + kb % 16 + (kb // 16)*LBO
* K-major, W-byte swizzle ``((8,m),(T,2k)):((W/16 T,SBO),(1,T))``:
  (mn % 8)*W + (mn // 8)*SBO + kb  (LBO unused)
* MN-major, no swizzle ``((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))``:
  (k % 8)*16 + (k // 8)*LBO + mb % 16 + (mb // 16)*SBO
* MN-major, W-byte swizzle ``((T,W/16,m),(8,k)):((1,T,LBO),(W/16 T,SBO))``:
  (k % 8)*W + (k // 8)*SBO + mb % W + (mb // W)*LBO

then ``Swizzle<B,4,3>`` (B = 1, 2, 3 for 32B, 64B, 128B) on the shared address: bits [4, 4+B)
are XORed with the *row phase*, bits [7, 7+B). The base offset says where the repeating
pattern's phase starts when the pattern is not on its natural boundary (Table 41: 256/512/1024
B). Reading ``subtract-phase`` (default; the project's reading, AMB-SDESC-BASEOFFSET):
phase = ((addr >> 7) - base_offset) mod 2^B. Reading ``ignored``: phase = addr bits [7, 7+B).
Both agree whenever the base offset is 0 and patterns start on their boundaries.

imm-trans-a/b (bf16 only): 0 = K-major, 1 = M-/N-major. fp8 forms are K-major only.
imm-scale-a/b = -1 negates A/B. scale-d false: D = A x B (the accumulator is not read).

Accumulator D (f32) of m64nN: the warpgroup's 128 threads hold N/2 registers each; D[row][col]
is in thread 32*(row // 16) + 4*(row % 8) + (col % 8) // 2, register
4*(col // 8) + 2*((row % 16) // 8) + col % 2 (PTX ISA "WGMMA .m64nNk* register fragment layout
for accumulator matrix D": warp w owns rows 16w..16w+15, each 8-column slice as in mma.m16n8).

Leading batch axes (warpgroups) are accepted throughout.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

import numpy as np

from mmacts.ptxvm.warpmma import formats as fm
from mmacts.ptxvm.warpmma import numerics

THREADS = 128
M = 64
SWIZZLE_CODES = {0: "none", 1: "128B", 2: "64B", 3: "32B"}
SWIZZLE_WIDTH = {"none": 16, "32B": 32, "64B": 64, "128B": 128}
SWIZZLE_B = {"none": 0, "32B": 1, "64B": 2, "128B": 3}
RESERVED_MASK = (0x3 << 14) | (0x3 << 30) | (0x7 << 46) | (((1 << 10) - 1) << 52)
"""Descriptor bits the wgmma table gives no meaning."""
BASE_OFFSET_READINGS = ("subtract-phase", "ignored")
K_OF = {"e4m3": 32, "e5m2": 32, "bf16": 16}
ELEM_BYTES = {"e4m3": 1, "e5m2": 1, "bf16": 2}


@dataclass(frozen=True)
class WgmmaForm:
    """``wgmma.mma_async.sync.aligned.m64n<N>k<K>.<dtype>.<atype>.<btype>``."""

    n: int
    k: int
    dtype: str
    atype: str
    btype: str

    @property
    def elem_bytes(self) -> int:
        return ELEM_BYTES[self.atype]

    @property
    def path(self) -> str:
        return "wgmma.bf16" if self.atype == "bf16" else "wgmma.fp8"

    @property
    def transposable(self) -> bool:
        return self.atype == "bf16"


@dataclass(frozen=True)
class WgmmaSyncOp:
    """``wgmma.fence`` / ``wgmma.commit_group`` / ``wgmma.wait_group N``."""

    op: str  # fence | commit_group | wait_group
    n: int | None = None


def parse_wgmma(opcode: str) -> WgmmaForm | WgmmaSyncOp:
    """Parse a wgmma opcode (operands after the opcode are read only for ``wait_group N``)."""
    parts = opcode.strip().rstrip(";").split(None, 1)
    toks = parts[0].split(".")
    if toks[0] != "wgmma":
        raise ValueError(f"not a wgmma instruction: {opcode!r}")
    if toks[1] in ("fence", "commit_group", "wait_group"):
        if toks[2:] != ["sync", "aligned"]:
            raise ValueError(f"unsupported wgmma form {opcode!r}: expected .sync.aligned")
        n = None
        if toks[1] == "wait_group":
            if len(parts) < 2 or not parts[1].strip().isdigit():
                raise ValueError(f"wgmma.wait_group needs an integer constant: {opcode!r}")
            n = int(parts[1].strip())
        return WgmmaSyncOp(toks[1], n)
    if toks[1] != "mma_async":
        raise ValueError(f"unsupported wgmma form {opcode!r}")
    rest = toks[2:]
    if rest[:2] != ["sync", "aligned"] or len(rest) != 6:
        raise ValueError(f"unsupported wgmma form {opcode!r}: expected mma_async.sync.aligned.<shape>.<d>.<a>.<b>"
                         " (.sp not modelled)")
    shape, d, a, b = rest[2:]
    if not (shape.startswith("m64n") and "k" in shape):
        raise ValueError(f"unsupported wgmma shape {shape!r}")
    n_s, k_s = shape[4:].split("k")
    n, k = int(n_s), int(k_s)
    if a not in K_OF or (a == "bf16") != (b == "bf16") or b not in K_OF:
        raise ValueError(f"unsupported wgmma types .{a}.{b} (modelled: bf16.bf16, {{e4m3,e5m2}}x{{e4m3,e5m2}})")
    if k != K_OF[a]:
        raise ValueError(f"wgmma .{a} has K = {K_OF[a]}, not {k}")
    if n % 8 or not 8 <= n <= 256:
        raise ValueError(f"wgmma N must be a multiple of 8 in [8, 256], not {n}")
    if d != "f32":
        raise ValueError(f"wgmma .{d} accumulator not modelled (f32 only)")
    return WgmmaForm(n, k, d, a, b)


# ----------------------------------------------------------------------------------- descriptors

@dataclass(frozen=True)
class MatrixDescriptor:
    start: int
    lbo: int
    sbo: int
    base_offset: int
    swizzle: str


def decode_descriptor(word: int, *, strict: bool = True) -> MatrixDescriptor:
    """Decode one 64-bit wgmma matrix descriptor (byte quantities)."""
    w = int(word) & ((1 << 64) - 1)
    if strict and w & RESERVED_MASK:
        raise ValueError(f"wgmma descriptor {w:#018x} sets bits with no meaning ({w & RESERVED_MASK:#x})")
    return MatrixDescriptor(start=(w & 0x3FFF) << 4, lbo=((w >> 16) & 0x3FFF) << 4, sbo=((w >> 32) & 0x3FFF) << 4,
                            base_offset=(w >> 49) & 0x7, swizzle=SWIZZLE_CODES[(w >> 62) & 0x3])


def operand_addresses(desc: MatrixDescriptor, mn: int, k: int, elem_bytes: int, mn_major: bool,
                      base_offset_reading: str = "subtract-phase") -> np.ndarray:
    """Shared address of the first byte of every element (mn, k) of one operand: int64 [mn, k]."""
    if base_offset_reading not in BASE_OFFSET_READINGS:
        raise ValueError(f"base offset reading must be one of {BASE_OFFSET_READINGS}")
    i = np.arange(mn, dtype=np.int64)[:, None]
    j = np.arange(k, dtype=np.int64)[None, :]
    sw = desc.swizzle
    width = SWIZZLE_WIDTH[sw]
    if not mn_major:
        kb = j * elem_bytes
        if sw == "none":
            off = (i % 8) * 16 + (i // 8) * desc.sbo + kb % 16 + (kb // 16) * desc.lbo
        else:
            if k * elem_bytes > width:
                raise ValueError(f"K-major {sw} operand of {k * elem_bytes} B along K exceeds one swizzle row")
            off = (i % 8) * width + (i // 8) * desc.sbo + kb
    else:
        mb = i * elem_bytes
        if sw == "none":
            off = (j % 8) * 16 + (j // 8) * desc.lbo + mb % 16 + (mb // 16) * desc.sbo
        else:
            off = (j % 8) * width + (j // 8) * desc.sbo + mb % width + (mb // width) * desc.lbo
    addr = desc.start + off
    nb = SWIZZLE_B[sw]
    if nb:
        bo = desc.base_offset if base_offset_reading == "subtract-phase" else 0
        phase = ((addr >> 7) - bo) & ((1 << nb) - 1)
        addr = addr ^ (phase << 4)
    return addr


def _read_codes(smem: np.ndarray, addr: np.ndarray, elem_bytes: int) -> np.ndarray:
    hi = int(addr.max()) + elem_bytes
    if int(addr.min()) < 0 or hi > smem.shape[-1]:
        raise ValueError(f"wgmma operand reads shared bytes [{int(addr.min())}, {hi}) outside the "
                         f"{smem.shape[-1]}-byte shared window")
    code = smem[addr].astype(np.uint32)
    for e in range(1, elem_bytes):
        code |= smem[addr + e].astype(np.uint32) << np.uint32(8 * e)
    return code


def _byte_ranges(addr_sets: list[np.ndarray], elem_bytes: int) -> list[tuple[int, int]]:
    allb = np.unique(np.concatenate([(a.reshape(-1)[:, None] + np.arange(elem_bytes)).reshape(-1)
                                     for a in addr_sets]))
    if allb.size == 0:
        return []
    breaks = np.nonzero(np.diff(allb) != 1)[0]
    starts = np.concatenate(([allb[0]], allb[breaks + 1]))
    ends = np.concatenate((allb[breaks] + 1, [allb[-1] + 1]))
    return [(int(s), int(e)) for s, e in zip(starts, ends, strict=True)]


# ----------------------------------------------------------------------------------- accumulator

@cache
def _d_where(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(thread, register) of D[row][col], arrays [64, n]."""
    row, col = np.meshgrid(np.arange(M), np.arange(n), indexing="ij")
    thread = 32 * (row // 16) + 4 * (row % 8) + (col % 8) // 2
    reg = 4 * (col // 8) + 2 * ((row % 16) // 8) + col % 2
    return thread, reg


def read_accumulator(d: np.ndarray, n: int) -> np.ndarray:
    """Accumulator bits (..., 128, N/2) -> D values (..., 64, N) float64."""
    t, r = _d_where(n)
    return fm.f32_from_bits(np.asarray(d, dtype=np.uint32)[..., t, r])


def write_accumulator(values: np.ndarray, n: int) -> np.ndarray:
    """D values (..., 64, N), exact in f32 -> accumulator bits (..., 128, N/2) uint32."""
    t, r = _d_where(n)
    out = np.zeros(values.shape[:-2] + (THREADS, n // 2), dtype=np.uint32)
    out[..., t, r] = fm.f32_to_bits(values)
    return out


# ----------------------------------------------------------------------------------- execution

def _check_imm(name: str, v: int, allowed: tuple[int, ...]) -> int:
    v = int(v)
    if v not in allowed:
        raise ValueError(f"wgmma {name} must be one of {allowed}, not {v}")
    return v


def read_operands(q: WgmmaForm, smem: np.ndarray, a_desc: int, b_desc: int, *, imm_trans_a: int = 0,
                  imm_trans_b: int = 0, base_offset_reading: str = "subtract-phase",
                  strict: bool = True) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int]]]:
    """One warpgroup: A codes [64, K], B codes [K, N] (uint32) and the byte ranges read."""
    da = decode_descriptor(a_desc, strict=strict)
    db = decode_descriptor(b_desc, strict=strict)
    eb = q.elem_bytes
    aa = operand_addresses(da, M, q.k, eb, bool(imm_trans_a), base_offset_reading)
    ba = operand_addresses(db, q.n, q.k, eb, bool(imm_trans_b), base_offset_reading)
    a = _read_codes(smem, aa, eb)
    b = _read_codes(smem, ba, eb).T
    return a, b, _byte_ranges([aa, ba], eb)


def _decode(codes: np.ndarray, etype: str) -> np.ndarray:
    return fm.decode_element(codes, etype)


def execute_wgmma(q: WgmmaForm | str, smem: np.ndarray, a_desc, b_desc, d: np.ndarray, scale_d=True,
                  imm_scale_a: int = 1, imm_scale_b: int = 1, imm_trans_a: int = 0, imm_trans_b: int = 0, *,
                  arch: str = "sm_90a", model=None, base_offset_reading: str = "subtract-phase",
                  strict: bool = True):
    """One ``wgmma.mma_async`` per warpgroup, computed at issue (see :class:`AsyncGroups` for when
    its result may be read).

    ``smem``: uint8 shared memory by shared::cta address, (S,) or (W, S) (one per warpgroup);
    ``a_desc``/``b_desc``: 64-bit descriptors holding absolute shared addresses, int or (W,);
    ``d``: accumulator bits (128, N/2) or (W, 128, N/2) uint32; ``scale_d``: bool or (W,).
    ``model`` overrides the device profile. Returns ``(new_d, ranges)``: the new accumulator bits
    and the shared byte ranges read, half-open ``(lo, hi)`` (a list per warpgroup when batched).
    """
    form = parse_wgmma(q) if isinstance(q, str) else q
    if not isinstance(form, WgmmaForm):
        raise ValueError("execute_wgmma takes an mma_async form")
    sa = _check_imm("imm-scale-a", imm_scale_a, (1, -1))
    sb = _check_imm("imm-scale-b", imm_scale_b, (1, -1))
    ta = _check_imm("imm-trans-a", imm_trans_a, (0, 1))
    tb = _check_imm("imm-trans-b", imm_trans_b, (0, 1))
    if (ta or tb) and not form.transposable:
        raise ValueError(f"wgmma .{form.atype}: imm-trans must be 0 (only K-major is supported)")
    d = np.asarray(d, dtype=np.uint32)
    if d.shape[-2:] != (THREADS, form.n // 2):
        raise ValueError(f"wgmma accumulator must be (..., 128, {form.n // 2}), got {d.shape}")
    batched = d.ndim == 3
    dw = d if batched else d[None]
    nw = dw.shape[0]
    smem = np.asarray(smem, dtype=np.uint8)
    sm = np.broadcast_to(smem, (nw, smem.shape[-1])) if smem.ndim == 1 else smem
    ad = np.broadcast_to(np.asarray(a_desc, dtype=np.uint64), (nw,))
    bd = np.broadcast_to(np.asarray(b_desc, dtype=np.uint64), (nw,))
    use = np.broadcast_to(np.asarray(scale_d, dtype=bool), (nw,))
    if sm.shape[0] != nw:
        raise ValueError(f"{sm.shape[0]} shared images for {nw} warpgroups")
    A = np.empty((nw, M, form.k))
    B = np.empty((nw, form.k, form.n))
    ranges = []
    for w in range(nw):
        ac, bc, rg = read_operands(form, sm[w], int(ad[w]), int(bd[w]), imm_trans_a=ta, imm_trans_b=tb,
                                   base_offset_reading=base_offset_reading, strict=strict)
        A[w] = _decode(ac, form.atype) * sa
        B[w] = _decode(bc, form.btype) * sb
        ranges.append(rg)
    C = np.where(use[:, None, None], read_accumulator(dw, form.n), 0.0)
    mdl = model or numerics.profile(form.path, arch)
    k, n = form.k, form.n
    av = np.broadcast_to(A[:, :, None, :], (nw, M, n, k)).reshape(-1, k)
    bv = np.broadcast_to(np.swapaxes(B, -1, -2)[:, None, :, :], (nw, M, n, k)).reshape(-1, k)
    out = numerics.dot(mdl, av, bv, C.reshape(-1), "fp32", (form.atype, form.btype)).reshape(nw, M, n)
    new = write_accumulator(out, n)
    return (new, ranges) if batched else (new[0], ranges[0])


# ----------------------------------------------------------------------------------- async groups

@dataclass
class AsyncGroups:
    """Per-warpgroup bookkeeping of ``wgmma.fence`` / ``commit_group`` / ``wait_group`` (9.7.15.6-8).

    The VM computes each ``mma_async`` at issue (chained wgmmas on the same accumulator see each
    other's results in order, as the hardware pipelines them); what these ops define is *when the
    program may touch the registers*. ``issue`` records an mma's accumulator registers as pending
    in the open group; ``commit`` closes it; ``wait(n)`` completes all but the newest ``n``
    committed groups and returns the registers now safe to read. ``hazards(regs)`` names the
    pending accumulator registers a non-wgmma instruction would read or write (undefined
    behaviour in the PTX ISA), and an ``issue`` without a ``fence`` since the accumulator was last
    touched outside wgmma is reported by ``issue`` as a missing fence.
    """

    open_group: list[tuple[str, ...]] = field(default_factory=list)
    committed: list[list[tuple[str, ...]]] = field(default_factory=list)
    fenced: bool = False

    def fence(self) -> None:
        self.fenced = True

    def touched_outside(self) -> None:
        """Call when a non-wgmma instruction wrote registers a later wgmma reads (needs a new fence)."""
        self.fenced = False

    def issue(self, acc_regs: tuple[str, ...]) -> str | None:
        """Record one mma_async; returns a diagnostic if no ``wgmma.fence`` preceded it."""
        msg = None if self.fenced else "wgmma.mma_async without a preceding wgmma.fence"
        self.open_group.append(tuple(acc_regs))
        return msg

    def commit(self) -> None:
        self.committed.append(self.open_group)  # an empty group is legal
        self.open_group = []

    def wait(self, n: int) -> list[str]:
        """``wgmma.wait_group n``: returns the registers of the groups completed now."""
        if n < 0:
            raise ValueError("wgmma.wait_group N must be >= 0")
        done: list[str] = []
        while len(self.committed) > n:
            for regs in self.committed.pop(0):
                done.extend(regs)
        return done

    def pending(self) -> set[str]:
        out = {r for regs in self.open_group for r in regs}
        for g in self.committed:
            out |= {r for regs in g for r in regs}
        return out

    def hazards(self, regs) -> set[str]:
        return self.pending() & set(regs)
