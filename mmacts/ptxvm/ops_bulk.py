"""Asynchronous copies into shared memory: ``cp.async`` (9.7.9.25.3), bulk tensor copies through
tensor maps (``cp.async.bulk.tensor``, 9.7.9.25.5) and the tensor-map instructions
(``tensormap.replace``, ``tensormap.cp_fenceproxy``, 9.7.9.27-28).

Why: Triton's Blackwell kernels stage A and B in shared memory either with ``cp.async`` (pointer
loads, pipelined in async-groups) or with TMA (``tl.make_tensor_descriptor``: the kernel zeroes a
128-byte tensor map in shared memory, fills it field by field with ``tensormap.replace``, copies it
to global memory with ``tensormap.cp_fenceproxy`` and hands its address to ``cp.async.bulk.tensor``).

Semantics kept, so that a kernel that forgets a wait reads stale data as it could on a GPU:

- ``cp.async``: the source is read at issue (global memory does not change during these kernels),
  the shared-memory write happens when ``cp.async.wait_group N`` / ``wait_all`` retires the
  thread's group (groups close at ``cp.async.commit_group``); the bytes past ``src-size`` are zero.
- ``cp.async.bulk.tensor`` (tile mode, global -> shared::cta): the box is gathered at issue; the write
  and the ``complete_tx`` of its byte count on the mbarrier happen when a thread waits on that
  mbarrier (or at kernel end). Out-of-bound elements are zero (``fill_mode`` 0; 1 = NaN for float
  element types). Shared memory receives the box densely, innermost dimension first, through the
  swizzle of ``swizzle_mode`` (none / 32B / 64B / 128B, 16-byte atomicity), which permutes 16-byte
  chunks by the shared-memory *address* bits: chunk bits [4, 4+s) ^= bits [7, 7+s) for s = 1, 2, 3.
  The bytes land as async-proxy writes (no ``fence.proxy.async`` needed before tcgen05.mma reads).
- ``cp.async.bulk.tensor`` in im2col mode (5.5.4; global -> shared): ``pixelsPerColumn`` pixels traversed in
  NDHW space from the filter base the instruction's coordinates give (which must lie in the bounding box), W
  fastest, each spatial coordinate wrapping from the box's upper corner (``globalDim - 1 + upper``) back to its
  lower one and carrying into the next (N last); each pixel reads ``channelsPerPixel`` elements from channel
  ``c`` at position + im2col offsets. Elements outside the tensor (padding, N past the batch, channels past C)
  are filled as in tile mode. Shared memory receives the pixels as rows of channels, swizzled as in tile mode.
  Traversal strides other than 1, interleave, ``im2col::w`` / ``::w::128`` and im2col stores are refused by name.
- Bulk copies shared -> global (``cp.async.bulk.tensor.*.global.shared::cta``, ``cp.async.bulk.global.shared::cta``)
  are performed at issue; ``cp.async.bulk.commit_group`` / ``wait_group`` then have nothing left to wait for.
- Into other CTAs of the cluster: a ``.shared::cluster`` destination names its CTA by the address's rank bits
  (``memory.CLUSTER_RANK_SHIFT``); ``.multicast::cluster`` writes the same offset in every CTA of ``ctaMask`` and
  completes the transaction on each one's mbarrier at the same offset (with ``.cta_group::2``, the mbarrier of
  the mbarrier address's parity in each destination's CTA pair); ``cp.async.bulk.shared::cluster.shared::cta``
  copies the executing CTA's shared memory into a peer's. See :func:`_bulk_targets`.

The tensor map is an opaque 128-byte object (5.5.8) whose layout the ISA does not publish; the VM reads it in the
layout the real driver writes (recorded from 408 ``cuTensorMapEncode*`` calls on an H200,
``validation/probes/tmap-bytes``; the table with provenance is ``validation/probes/tmap-bytes/LAYOUT.md``), so maps from
the real driver, from host code that builds descriptors itself (the CuTe DSL) and from the project's encoders
(``mmacts.ptxvm.host.encode_tiled`` / ``encode_im2col``, ``libvmcuda``) all read the same. The VM keeps its own
bit table (:data:`MAP_BITS`, written apart from the encoders'; ``test_independence.py`` forbids sharing it).
``tensormap.replace`` writes the same bit fields (:data:`REPLACE`), so a zeroed map filled field by field on the
device reads as it would on silicon: every field's zero is the first value of its enumeration (``.u8``, rank 1, no
interleave, no swizzle, zero fill) and the dims, boxes and element strides are stored minus one. Bits the VM does not
know (an sm_100 feature it cannot observe, another im2col mode) are refused by name, never ignored. A map may lie
in global memory or in the kernel's parameter block (a ``__grid_constant__`` parameter: ``cvta.param`` makes its
generic address).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from mmacts.ptxvm import ops_core
from mmacts.ptxvm.errors import VmError, VmMemoryFault, VmUnsupported
from mmacts.ptxvm.handlers import handler
from mmacts.ptxvm.machine import Machine
from mmacts.ptxvm.memory import PARAM_WINDOW, WINDOW_SIZE, check_aligned
from mmacts.ptxvm.parse import Instr, Operand, _split_operands, parse_operand
from mmacts.ptxvm.ptxtypes import ptx_type

U32 = ptx_type("u32")
S32 = ptx_type("s32")
U64 = ptx_type("u64")
U16 = ptx_type("u16")

TENSORMAP_BYTES = 128
MAP_BITS: dict[str, tuple[int, int, int]] = {
    # field -> (32-bit word, first bit in it, width); the driver's layout (module docstring). Dims, boxes, element
    # strides, channels and pixels are stored minus one; global strides in 16-byte units, 36 bits split in two.
    "address_lo": (0, 0, 32), "address_hi": (1, 0, 32),
    "im2col": (2, 0, 1),
    "rank_m1": (2, 4, 3),
    "type_code": (2, 7, 4),
    "interleave": (2, 11, 2),
    "swizzle": (2, 13, 2),
    "fill": (2, 15, 1),
    "tf32": (2, 16, 1),
    "l2": (2, 17, 2),
    "atomicity": (2, 19, 2),  # assumed place (sm_100 only; AMB-TMAP-HW-SM100-FIELDS)
    "inner_m1": (13, 24, 8),  # boxDim[0] - 1, or channelsPerPixel - 1 (im2col)
    "pixels_m1": (15, 0, 10),
    "box_bytes": (16, 0, 32),  # derived by the driver (the DSL leaves it 0): not read
    "swizzle_repeat": (18, 0, 32),  # derived likewise: not read
}
STRIDE_WORD, STRIDE_HI_WORD, DIM_WORD, ESTRIDE_WORD, BOX_WORD, CORNER_WORD = 3, 7, 8, 13, 14, 14
"""Arrays: global stride i (bytes >> 4) low 32 bits in word 3 + i, bits 32..35 in word 7 bits 4i..4i+3; dim i - 1 in
word 8 + i; element stride i - 1 in word 13 bits 3i..3i+2; boxDim[i] - 1 (i >= 1) in word 14 byte i - 1; im2col
corners in word 14 (lower from bit 0, upper from bit 16, :data:`CORNER_BITS` each, W first)."""
CORNER_BITS = {3: 16, 4: 8, 5: 5}
TYPE_CODES = {0: 0, 1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7, 8: 8, 9: 9, 10: 10, 11: 13, 12: 14, 13: 15}
"""The map's 4-bit type code -> PTX ``elemtype`` (.u8 ... .bf16 share their values; .tf32 / .tf32.ftz are codes 7 / 8
with the tf32 bit). Codes 11..13 for the packed types: 11 is what the CuTe DSL writes for its fp4 maps, 12 and 13
assumed in order (AMB-TMAP-HW-SM100-FIELDS)."""
SPARE_BITS_SEEN = {2: (1 << 1) | (1 << 21)}
"""Bits outside every known field that the CuTe DSL 4.2.1 sets (word 2 bit 1 on every map, bit 21 on its output
map) and the driver never did: accepted and not interpreted (AMB-TMAP-HW-SM100-FIELDS)."""
REPLACE: dict[str, tuple[int, int, int, int]] = {
    # tensormap.replace field -> (first bit in the map, width, bits from one ord to the next, value transform)
    # transform: 0 as given, 1 minus one, 2 bytes >> 4 (36 bits, split), 3 elemtype code, 4 boxDim (ord 0 apart)
    "global_address": (0, 64, 0, 0),
    "rank": (68, 3, 0, 0),  # the instruction's value is already rank - 1
    "elemtype": (71, 4, 0, 3),
    "interleave_layout": (75, 2, 0, 0),
    "swizzle_mode": (77, 2, 0, 0),
    "fill_mode": (79, 1, 0, 0),
    "swizzle_atomicity": (83, 2, 0, 0),
    "global_dim": (256, 32, 32, 1),
    "global_stride": (96, 32, 32, 2),
    "element_stride": (416, 3, 3, 1),
    "box_dim": (448, 8, 8, 4),
}
IM2COL_OFFSET_MAX = {3: 2**16 - 1, 4: 2**8 - 1, 5: 2**5 - 1}
"""Tensor rank -> largest im2col offset (5.5.4.1: [0, 2^16-1], [0, 2^8-1], [0, 2^5-1])."""
ELEM_BYTES = {0: 1, 1: 2, 2: 4, 3: 4, 4: 8, 5: 8, 6: 2, 7: 4, 8: 4, 9: 8, 10: 2, 11: 4, 12: 4}
"""tensormap elemtype enumeration (.u8 .u16 .u32 .s32 .u64 .s64 .f16 .f32 .f32.ftz .f64 .bf16 .tf32
.tf32.ftz) -> bytes per element; the packed sub-byte types (13..15) are not implemented."""
SUB_BYTE = {13: (8, 0), 14: (8, 8), 15: (12, 4)}
"""Packed sub-byte element types (5.5.1.1): ``.b4x16`` (16 x 4 bits in 8 bytes), ``.b4x16_p64`` (the 8 bytes
followed by 8 bytes of padding in shared memory), ``.b6x16_p32`` (16 x 6 bits in 12 bytes, then 4 bytes of
padding) -> (bytes of data per 16 elements, bytes of padding). The transaction count is the data bytes (Triton
3.9 expects 8192 bytes for a 128 x 128 ``.b4x16_p64`` box, whose shared image is 16384 bytes)."""
PAD_POISON = 0xFF
"""What the VM writes into the padding (the ISA leaves it unspecified): an MMA that reads padding as data
gets -6.0 nibbles and a wrong product."""
FLOAT_TYPES = {6, 7, 8, 9, 10, 11, 12}
SWIZZLE_SPAN = {0: 0, 1: 32, 2: 64, 3: 128}
"""Bytes of one swizzled row. A box row (the innermost dimension's elements; im2col: one pixel's channels)
narrower than the span still starts on a multiple of it in shared memory, its rows padded to the span
(H200 probe ``validation/probes/tma-smem-rows``, 78 of 78 swizzled loads; AMB-TMA-SWIZZLE-ROW-PITCH)."""
NAN_FILL = bytes([0xF7, 0x7F])
"""The OOB NaN fill (``CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA``) as silicon writes it: the 16-bit
pattern 0x7FF7 in every two bytes of the element (f16/bf16 0x7FF7, f32 0x7FF77FF7), not a canonical NaN
(H200 probe ``validation/probes/tma-smem-rows``, 5 of 5 NaN-filled loads; AMB-TMA-NAN-FILL-BITS)."""
INNER_COORD_ALIGN = 16
"""Bytes: a load whose innermost coordinate times the element size is not a multiple of this traps on silicon
with an illegal instruction (tile and im2col, H200 probe ``validation/probes/tma-smem-rows``, 11 of 11;
AMB-TMA-INNER-COORD-ALIGN); the VM refuses it by name."""


@dataclass
class TensorMap:
    address: int
    rank: int
    elemtype: int
    box: list[int]
    estride: list[int]
    dims: list[int]
    strides: list[int]
    interleave: int
    swizzle: int
    atomicity: int
    fill: int
    mode: int = 0
    """0 tiled, 1 im2col: then ``channels`` (per pixel), ``pixels`` (per column) and the corners are set."""
    channels: int = 0
    pixels: int = 0
    lower: list[int] = field(default_factory=list)
    upper: list[int] = field(default_factory=list)

    @classmethod
    def decode(cls, raw: np.ndarray) -> TensorMap:
        """The map's fields from its 128 bytes (:data:`MAP_BITS`), or :class:`VmUnsupported` naming bits it does not
        know."""
        w = [int(x) for x in np.ascontiguousarray(raw[:TENSORMAP_BYTES]).view("<u4")]
        known = [0] * 32

        def bits(word: int, lo: int, width: int, signed: bool = False) -> int:
            known[word] |= ((1 << width) - 1) << lo
            v = (w[word] >> lo) & ((1 << width) - 1)
            return v - (1 << width) if signed and v >> (width - 1) else v

        def f(name: str) -> int:
            return bits(*MAP_BITS[name])

        mode, rank = f("im2col"), f("rank_m1") + 1
        code, tf32 = f("type_code"), f("tf32")
        if code not in TYPE_CODES or (tf32 and code not in (7, 8)):
            raise VmUnsupported(f"tensor map type code {code} (tf32 bit {tf32}) is not known")
        elemtype = {7: 11, 8: 12}[code] if tf32 else TYPE_CODES[code]
        address = f("address_lo") | f("address_hi") << 32
        strides = [(bits(STRIDE_WORD + i, 0, 32) | bits(STRIDE_HI_WORD, 4 * i, 4) << 32) << 4 for i in range(4)]
        dims = [bits(DIM_WORD + i, 0, 32) + 1 for i in range(5)]
        estride = [bits(ESTRIDE_WORD, 3 * i, 3) + 1 for i in range(5)]
        inner = f("inner_m1") + 1
        tm = cls(address, rank, elemtype, [inner], estride, dims, strides, f("interleave"), f("swizzle"),
                 f("atomicity"), f("fill"), mode)
        f("l2"), f("box_bytes"), f("swizzle_repeat")  # a cache hint and the driver's derived words: not used
        if mode:
            n, k = CORNER_BITS.get(rank, 5), rank - 2
            tm.channels, tm.pixels = inner, f("pixels_m1") + 1
            tm.lower = [bits(CORNER_WORD, i * n, n, True) for i in range(k)]
            tm.upper = [bits(CORNER_WORD, 16 + i * n, n, True) for i in range(k)]
        else:
            tm.box += [bits(BOX_WORD, 8 * i, 8) + 1 for i in range(4)]
        for word, spare in SPARE_BITS_SEEN.items():
            known[word] |= spare
        unknown = [(i, v & ~known[i]) for i, v in enumerate(w) if v & ~known[i]]
        if unknown:
            raise VmUnsupported("tensor map bits the VM does not know: " + ", ".join(
                f"word {i} mask {m:#x}" for i, m in unknown) + " (another layout, or an sm_100 field the VM cannot "
                "observe; AMB-TMAP-HW-SM100-FIELDS)")
        return tm


@dataclass
class PendingCopy:
    cta: int
    dst: np.ndarray
    """Flat indices into ``m.smem`` (after swizzling)."""
    data: np.ndarray
    mbar: tuple[int, int] | None
    nbytes: int
    line: int


@dataclass
class BulkState:
    tensor: list[PendingCopy] = field(default_factory=list)
    cp_async: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, Instr]] = field(default_factory=list)
    """(threads, their group number, shared addresses, data) of issued ``cp.async`` copies."""
    committed: dict[int, int] = field(default_factory=dict)

    def on_mbarrier_wait(self, m: Machine, cta: int, addr: int) -> None:
        self.complete_tensor(m, (cta, addr))

    def on_kernel_end(self, m: Machine) -> None:
        self.complete_tensor(m, None)
        self.cp_async.clear()

    def complete_tensor(self, m: Machine, key: tuple[int, int] | None) -> None:
        keep = []
        for p in self.tensor:
            if key is not None and p.mbar != key:
                keep.append(p)
                continue
            m.smem.reshape(-1)[p.dst] = p.data
            m.smem_writer.reshape(-1)[p.dst] = -1  # an async-proxy write
            m.notify("shared_store", p.dst)
            if p.mbar is not None:
                mb = m.mbarriers.get(p.mbar)
                if mb is None:
                    raise VmError(f"cp.async.bulk.tensor (line {p.line}) completes on an mbarrier that was "
                                  f"invalidated or never initialised")
                mb.tx -= p.nbytes
                ops_core.arrive(m, mb, 0)
        self.tensor = keep


def state(m: Machine) -> BulkState:
    return m.hook("bulk", lambda _: BulkState())


# ------------------------------------------------------------------------------------------ cp.async
@handler("cp.async")
def _cp_async(m: Machine, ins: Instr, act: np.ndarray) -> None:
    kind = ins.parts[2]
    if kind == "bulk":
        return _bulk(m, ins, act)
    s = state(m)
    if kind == "commit_group":
        for t in act:
            s.committed[int(t)] = s.committed.get(int(t), 0) + 1
        return None
    if kind in ("wait_group", "wait_all"):
        n = 0 if kind == "wait_all" else int(ins.operands[0].value)
        _retire_cp_async(m, s, act, n)
        return None
    if kind not in ("ca", "cg") or "shared" not in ins.parts[3] or "global" not in ins.parts:
        raise VmUnsupported(f"{ins.opcode} is not implemented")
    ops = ins.operands
    size = int(ops[2].value)
    if size not in (4, 8, 16) or (kind == "cg" and size != 16):
        raise VmError(f"{ins.opcode}: cp-size {size} is not allowed")
    dst = m.address(ops[0], act)
    src = m.address(ops[1], act)
    keep = np.full(len(act), size, dtype=np.int64)
    if len(ops) > 3 and ops[3].kind in ("imm", "reg"):  # src-size: only that many bytes are read, the rest is 0
        keep = np.minimum(m.read(ops[3], U32, act).astype(np.int64), size)
    data = np.zeros((len(act), size), dtype=np.uint8)
    full = keep == size
    if full.any():
        data[full] = m.load("global", src[full], size, act[full])
    for i in np.flatnonzero((keep > 0) & ~full):
        data[i, :keep[i]] = m.gmem.load(src[i] + np.arange(keep[i], dtype=np.uint64), 1)[:, 0]
    if ((dst % np.uint64(size)) != 0).any():
        raise VmMemoryFault(f"{ins.opcode}: shared address not aligned to {size}")
    groups = np.array([s.committed.get(int(t), 0) for t in act], dtype=np.int64)
    s.cp_async.append((act.copy(), groups, dst, data, ins))
    return None


def _retire_cp_async(m: Machine, s: BulkState, act: np.ndarray, n: int) -> None:
    keep = []
    aset = np.zeros(m.T, dtype=bool)
    aset[act] = True
    limit = np.array([s.committed.get(t, 0) for t in range(m.T)], dtype=np.int64) - n
    for threads, groups, dst, data, ins in s.cp_async:
        done = aset[threads] & (groups < limit[threads])
        if done.any():
            m.shared_store(dst[done], data[done], threads[done], ins)
        if not done.all():
            rest = ~done
            keep.append((threads[rest], groups[rest], dst[rest], data[rest], ins))
    s.cp_async = keep


# ------------------------------------------------------------------------------------------ bulk tensor
_OPERANDS: dict[tuple[int, str], tuple[Operand, ...]] = {}


def _tensor_operands(ins: Instr) -> tuple[Operand, ...]:
    """``[dst], [tmap, {c0, ...}], [mbar] ...``: the parser keeps ``[tmap, {..}]`` as one token; split it."""
    key = (ins.line, ins.text)
    if key not in _OPERANDS:
        head, _, rest = ins.text.partition(" ")
        if ins.guard is not None:
            head, _, rest = rest.partition(" ")
        raw = _split_operands(rest)
        out: list[Operand] = []
        for tok in raw:
            tok = tok.strip()
            if tok.startswith("[") and "{" in tok:
                inner = _split_operands(tok[1:-1])
                out.append(Operand("addr", base=parse_operand(inner[0], ins.line)))
                out.append(parse_operand(inner[1], ins.line))
            else:
                out.append(parse_operand(tok, ins.line))
        _OPERANDS[key] = tuple(out)
    return _OPERANDS[key]


def _tensormap_addresses(m: Machine, op: Operand, act: np.ndarray) -> np.ndarray:
    """Generic addresses of the tensor maps ``op`` names: a register (a global address, or a generic one in the
    parameter window after ``cvta.param``) or a kernel parameter by name (``[k_param_0, {..}]``: its
    parameter-space address, made generic here)."""
    addrs = m.address(op, act)
    if op.base is not None and op.base.kind == "sym" and op.base.name in m.param_offsets:
        addrs = addrs + np.uint64(PARAM_WINDOW)
    return addrs


def _read_tensormap(m: Machine, addr: int, ins: Instr) -> TensorMap:
    """The 128-byte map at generic ``addr``: in global memory, or in the kernel parameter block (a
    ``__grid_constant__`` parameter reached through ``cvta.param``)."""
    if addr % 64:
        raise VmMemoryFault(f"{ins.opcode}: tensor map address {addr:#x} is not 64-byte aligned")
    a = np.array([addr], dtype=np.uint64)
    if int(a[0]) - PARAM_WINDOW in range(WINDOW_SIZE):
        raw = m.param_load(a - np.uint64(PARAM_WINDOW), TENSORMAP_BYTES)[0]
    else:
        raw = m.gmem.load(a, TENSORMAP_BYTES)[0]
    key = raw.tobytes()
    tm = _DECODED.get(key)
    if tm is None:  # a kernel reads the same few maps for every copy: decode each once (never mutated)
        if len(_DECODED) > 256:
            _DECODED.clear()
        tm = _DECODED[key] = TensorMap.decode(raw)
    return tm


_DECODED: dict[bytes, TensorMap] = {}
"""Decoded tensor maps by their 128 bytes (the map is a pure function of them)."""


def _swizzle(addrs: np.ndarray, mode: int) -> np.ndarray:
    if mode == 0:
        return addrs
    bits = {1: 1, 2: 2, 3: 3}[mode]
    mask = (1 << bits) - 1
    return addrs ^ (((addrs >> 7) & mask) << 4)


def _box(m: Machine, tm: TensorMap, coords: list[int], ins: Instr) -> tuple[np.ndarray, int, int]:
    """The box at ``coords`` as the bytes shared memory receives (rows of the innermost dimension one after
    another, padded for the ``_p64`` / ``_p32`` packed types), the transaction count (bytes of data) and the
    bytes of one row (:func:`_shared_rows` places the rows)."""
    if tm.mode != 0:
        raise VmError(f"{ins.opcode}: a tile-mode copy through an im2col tensor map (mode {tm.mode})")
    if tm.interleave != 0:
        raise VmUnsupported(f"{ins.opcode}: interleaved tensor maps are not implemented")
    if tm.atomicity != 0:
        raise VmUnsupported(f"{ins.opcode}: swizzle atomicity {tm.atomicity} is not implemented")
    r = tm.rank
    if len(coords) != r:
        raise VmError(f"{ins.opcode}: {len(coords)} coordinates for a rank-{r} tensor map")
    if any(e != 1 for e in tm.estride[:r]):
        raise VmUnsupported(f"{ins.opcode}: element strides other than 1 are not implemented")
    box = list(tm.box[:r])
    dims_in = list(tm.dims[:r])
    coords = list(coords)
    if any(b < 1 or b > 256 for b in box):
        raise VmError(f"{ins.opcode}: tensor map box {box} out of range [1, 256]")
    box[0], coords[0], dims_in[0], es, pad = _inner(tm, box[0], coords[0], dims_in[0], ins)
    inb, off = _box_offsets(box, coords, dims_in, [es, *tm.strides[:r - 1]])
    return (*_gather(m, tm, off, inb, es, pad), box[0] * (es + pad))


def _box_offsets(box: list[int], coords: list[int] | list[np.ndarray], dims: list[int],
                 strides: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Per element of the box at ``coords`` (dimension 0 innermost, fastest), whether it lies inside the tensor
    of extents ``dims`` and its byte offset there (``strides`` in bytes, dimension 0 first; indices outside the
    tensor clipped to it, so that every offset is a valid address). ``coords`` of ints give (box elements,);
    of (T,) arrays, one box per entry: (T, box elements)."""
    # per dimension a 1-D index broadcast along its own axis (outermost first), summed: no meshgrid copies
    r = len(box)
    lead = np.shape(coords[0])
    inb = np.ones(lead + (1,) * r, dtype=bool)
    off = np.zeros(lead + (1,) * r, dtype=np.int64)
    for k, (b, c, d, st) in enumerate(zip(reversed(box), reversed(coords), reversed(dims), reversed(strides),
                                          strict=True)):
        c = np.asarray(c, dtype=np.int64).reshape(lead + (1,) * r)
        i = c + np.arange(b, dtype=np.int64).reshape((1,) * k + (b,) + (1,) * (r - k - 1))
        inb = inb & (i >= 0) & (i < d)
        off = off + np.clip(i, 0, max(d - 1, 0)) * st
    shape = lead + tuple(reversed(box))
    return np.broadcast_to(inb, shape).reshape(lead + (-1,)), np.broadcast_to(off, shape).reshape(lead + (-1,))


def _inner(tm: TensorMap, n: int, c0: int, dim0: int, ins: Instr) -> tuple[int, int, int, int, int]:
    """The innermost dimension (``n`` elements of the box, or channels, from ``c0`` of ``dim0``) in copy units:
    packed sub-byte types count chunks of 16 elements (``es`` data bytes, then ``pad``). Checks the swizzle span.
    Returns (n, c0, dim0, es, pad) in those units."""
    pad = 0
    if tm.elemtype in SUB_BYTE:  # 16 packed elements per chunk; the inner dimension counts elements
        es, pad = SUB_BYTE[tm.elemtype]
        if n % 16 or c0 % 16:
            raise VmError(f"{ins.opcode}: packed sub-byte tensor map needs an inner box and coordinate that are "
                          f"multiples of 16 elements (box {n}, coordinate {c0})")
        n, c0, dim0 = n // 16, c0 // 16, (dim0 + 15) // 16
    else:
        es = ELEM_BYTES.get(tm.elemtype)
        if es is None:
            raise VmUnsupported(f"{ins.opcode}: tensor map element type {tm.elemtype} is not implemented")
        if (c0 * es) % INNER_COORD_ALIGN:
            raise VmError(f"{ins.opcode}: innermost coordinate {c0} ({c0 * es} bytes) is not a multiple of "
                          f"{INNER_COORD_ALIGN} bytes (silicon traps: illegal instruction)")
    span = SWIZZLE_SPAN.get(tm.swizzle)
    if span is None:
        raise VmUnsupported(f"{ins.opcode}: swizzle mode {tm.swizzle} is not implemented")
    if span and n * (es + pad) > span:
        raise VmError(f"{ins.opcode}: inner box of {n * (es + pad)} bytes exceeds the {span}-byte swizzle span")
    return n, c0, dim0, es, pad


def _gather(m: Machine, tm: TensorMap, flat_off: np.ndarray, good: np.ndarray, es: int,
            pad: int) -> tuple[np.ndarray, int]:
    """Elements (``es`` bytes each) at byte offsets ``flat_off`` from the map's base, in shared-memory order; those
    not ``good`` (outside the tensor) zero or NaN by the fill mode; packed chunks followed by ``pad`` poison
    bytes. Returns the shared image and the transaction count (data bytes)."""
    addrs = (np.uint64(tm.address) + flat_off.astype(np.uint64))
    out = np.zeros((flat_off.size, es), dtype=np.uint8)
    if good.any():
        out[good] = m.gmem.load(addrs[good], es)
    if not good.all() and tm.fill == 1 and tm.elemtype in FLOAT_TYPES:
        out[~good] = np.frombuffer(NAN_FILL * (es // 2), dtype=np.uint8)
    tx = out.size
    if pad:  # each chunk of packed data is followed by its padding in shared memory
        out = np.concatenate([out, np.full((out.shape[0], pad), PAD_POISON, dtype=np.uint8)], axis=1)
    return out.reshape(-1), tx


def _im2col_pixels(tm: TensorMap, base: list[int], n0: int, ins: Instr) -> np.ndarray:
    """The ``tm.pixels`` pixels an im2col copy traverses, as rows (spatial coordinates W first, then n): from the
    filter base, W fastest, each coordinate wrapping from the box's upper to its lower corner into the next."""
    k = tm.rank - 2
    lo = tm.lower[:k]
    hi = [d - 1 + u for d, u in zip(tm.dims[1:k + 1], tm.upper[:k], strict=True)]
    for i in range(k):
        if not lo[i] <= base[i] <= hi[i]:
            raise VmError(f"{ins.opcode}: im2col filter base {base} lies outside the bounding box "
                          f"{lo}..{hi} (5.5.4.1: it must be within)")
    pos = list(base) + [n0]
    rows = np.empty((tm.pixels, k + 1), dtype=np.int64)
    for p in range(tm.pixels):
        rows[p] = pos
        i = 0
        while i < k:
            pos[i] += 1
            if pos[i] <= hi[i]:
                break
            pos[i] = lo[i]
            i += 1
        if i == k:
            pos[k] += 1
    return rows


def _im2col_box(m: Machine, tm: TensorMap, coords: list[int], offsets: list[int],
                ins: Instr) -> tuple[np.ndarray, int, int]:
    """An im2col-mode box (5.5.4): ``tm.pixels`` rows of ``tm.channels`` elements, as :func:`_box` returns it."""
    if tm.mode != 1:
        raise VmError(f"{ins.opcode}: an im2col copy through a tensor map that is not im2col (mode {tm.mode})")
    r = tm.rank
    if r not in IM2COL_OFFSET_MAX or len(coords) != r:
        raise VmError(f"{ins.opcode}: {len(coords)} coordinates for a rank-{r} im2col tensor map (3D-5D)")
    if len(offsets) != r - 2 or any(not 0 <= o <= IM2COL_OFFSET_MAX[r] for o in offsets):
        raise VmError(f"{ins.opcode}: im2col offsets {offsets}: rank {r} takes {r - 2} in [0, "
                      f"{IM2COL_OFFSET_MAX[r]}]")
    if tm.interleave or tm.atomicity or any(e != 1 for e in tm.estride[1:r]):
        raise VmUnsupported(f"{ins.opcode}: im2col with interleave, swizzle atomicity or traversal strides other "
                            f"than 1 is not implemented")
    ch, c0, dim_c, es, pad = _inner(tm, tm.channels, coords[0], tm.dims[0], ins)
    rows = _im2col_pixels(tm, coords[1:r - 1], coords[r - 1], ins)
    at = rows.copy()
    at[:, :r - 2] += np.array(offsets, dtype=np.int64)
    dims = np.array(tm.dims[1:r], dtype=np.int64)
    inb_px = ((at >= 0) & (at < dims)).all(axis=1)
    px_off = (np.clip(at, 0, dims - 1) * np.array(tm.strides[:r - 1], dtype=np.int64)).sum(axis=1)
    c = np.arange(c0, c0 + ch, dtype=np.int64)
    inb = inb_px[:, None] & ((c >= 0) & (c < dim_c))[None, :]
    off = px_off[:, None] + (np.clip(c, 0, max(dim_c - 1, 0)) * es)[None, :]
    return (*_gather(m, tm, off.reshape(-1), inb.reshape(-1), es, pad), ch * (es + pad))


def _row_offsets(nbytes: int, row_bytes: int, swizzle: int) -> np.ndarray:
    """Offsets from the box's start of its ``nbytes`` (rows of ``row_bytes``) in shared memory, before the
    swizzle: rows one after another, each starting on a multiple of the swizzle span when the map swizzles
    (:data:`SWIZZLE_SPAN`; loads and stores alike)."""
    pitch = max(SWIZZLE_SPAN[swizzle], row_bytes)
    i = np.arange(nbytes, dtype=np.int64)
    return (i // row_bytes) * pitch + i % row_bytes


def _shared_rows(d0: int, nbytes: int, row_bytes: int, swizzle: int) -> np.ndarray:
    """Shared addresses of a box's ``nbytes`` placed from ``d0`` (:func:`_row_offsets`), then the swizzle's
    permutation of 16-byte chunks."""
    return _swizzle(d0 + _row_offsets(nbytes, row_bytes, swizzle), swizzle)


def _bulk(m: Machine, ins: Instr, act: np.ndarray) -> None:
    sub = ins.parts[3] if len(ins.parts) > 3 else ""
    if sub in ("commit_group", "wait_group"):  # bulk async-groups: every bulk copy is complete at issue
        return None
    if sub == "tensor":
        return _bulk_tensor(m, ins, act)
    if sub.startswith("shared") or sub == "global":
        return _bulk_plain(m, ins, act)
    raise VmUnsupported(f"{ins.opcode} is not implemented")


def _bulk_tensor(m: Machine, ins: Instr, act: np.ndarray) -> None:
    """``cp.async.bulk.tensor``: global -> shared (unicast, ``.multicast::cluster``, ``.cta_group::{1,2}``;
    the writes land when the mbarrier is waited on) and shared::cta -> global (performed at issue)."""
    s = state(m)
    if any(p.startswith("im2col") and p != "im2col" for p in ins.parts):
        raise VmUnsupported(f"{ins.opcode}: the im2col::w modes are not implemented")
    im2col = "im2col" in ins.parts
    dims = int(ins.parts[4][0])
    ops = _tensor_operands(ins)
    dst_space = _spaces(ins)[0]
    if dst_space.startswith("shared"):  # global -> shared
        dst_op, tmap_op, coord_op, mbar_op = ops[0], ops[1], ops[2], ops[3]
        if not ins.has("mbarrier::complete_tx::bytes"):
            raise VmUnsupported(f"{ins.opcode}: only the mbarrier::complete_tx::bytes completion is implemented")
        dst = m.address(dst_op, act)
        tmaps = _tensormap_addresses(m, tmap_op, act)
        coords = [m.read(c, S32, act).astype(np.int64) for c in coord_op.items]
        if len(coords) != dims:
            raise VmError(f"{ins.opcode}: {len(coords)} coordinates for .{dims}d")
        mbars = m.address(mbar_op, act)
        offs = _im2col_offsets(m, ins, ops, act, dims) if im2col else []
        masks = _cta_masks(m, ins, ops[5:] if im2col else ops[4:], act)
        for i in range(len(act)):
            tm = _read_tensormap(m, int(tmaps[i]), ins)
            if im2col:
                data, tx, row = _im2col_box(m, tm, [int(c[i]) for c in coords], [int(o[i]) for o in offs], ins)
            else:
                data, tx, row = _box(m, tm, [int(c[i]) for c in coords], ins)
            for dc, d0, mbar in _bulk_targets(m, ins, act, i, int(dst[i]), int(mbars[i]),
                                              None if masks is None else int(masks[i])):
                if d0 % 128:
                    raise VmMemoryFault(f"{ins.opcode}: shared destination {d0:#x} is not 128-byte aligned")
                sa = _shared_rows(d0, data.size, row, tm.swizzle)
                if int(sa.max()) >= m.smem_size:
                    raise VmMemoryFault(f"{ins.opcode}: box of {data.size} bytes (rows of {row} bytes) at shared "
                                        f"{d0:#x} exceeds the {m.smem_size}-byte window")
                s.tensor.append(PendingCopy(dc, dc * m.smem.shape[1] + sa, data, mbar, tx, ins.line))
        return None
    if im2col:
        raise VmUnsupported(f"{ins.opcode}: im2col stores are not implemented")
    if dst_space == "global":  # shared -> global (TMA store): performed now
        tmap_op, coord_op, src_op = ops[0], ops[1], ops[2]
        tmaps = _tensormap_addresses(m, tmap_op, act)
        coords = [m.read(c, S32, act).astype(np.int64) for c in coord_op.items]
        srcs = m.shared_target(m.address(src_op, act), act, f"{ins.opcode} source")[1]
        boxes: list[tuple[np.ndarray, np.ndarray] | None] = []
        i = 0
        while i < len(act):  # runs of threads storing through one map: together, else thread by thread
            j = i + 1
            while j < len(act) and tmaps[j] == tmaps[i]:
                j += 1
            tm = _read_tensormap(m, int(tmaps[i]), ins)
            run = _store_run(m, tm, [c[i:j] for c in coords], m.cta[act[i:j]], srcs[i:j].astype(np.int64))
            boxes += [run] if run is not None else [
                _store_box(m, tm, [int(c[k]) for c in coords], int(m.cta[act[k]]), int(srcs[k]), ins)
                for k in range(i, j)]
            i = j
        _store_boxes(m, [b for b in boxes if b is not None])
        return None
    raise VmUnsupported(f"{ins.opcode} is not implemented")


def _spaces(ins: Instr) -> list[str]:
    """The state spaces of a bulk copy, destination first. Found by name, not position: CUTLASS (and ptxas)
    also spell ``.cta_group::2`` before them (``cp.async.bulk.tensor.3d.cta_group::2.shared::cluster.global``)."""
    out = [p for p in ins.parts[3:] if p.split("::")[0] in ("shared", "global")]
    return out or [""]


def _cta_masks(m: Machine, ins: Instr, rest: tuple[Operand, ...], act: np.ndarray) -> np.ndarray | None:
    """The 16-bit ``ctaMask`` of a ``.multicast::cluster`` copy (the operand after the mbarrier), else None."""
    if not ins.has("multicast::cluster"):
        if any(p.startswith("multicast") for p in ins.parts):
            raise VmUnsupported(f"{ins.opcode}: this multicast form is not implemented")
        return None
    if not rest:
        raise VmError(f"{ins.opcode}: .multicast::cluster needs a ctaMask operand")
    return m.read(rest[0], U16, act)


def _bulk_targets(m: Machine, ins: Instr, act: np.ndarray, i: int, dst: int, mbar: int,
                  mask: int | None) -> list[tuple[int, int, tuple[int, int]]]:
    """(chunk CTA, byte offset, mbarrier key) of each shared destination of one bulk copy issued by ``act[i]``
    (9.7.9.25.4-5). Unicast: the CTA the destination address's rank bits name; ``.multicast::cluster``: each
    CTA whose rank is set in ``mask``, at the same offset. The mbarrier that receives complete_tx: without
    ``.cta_group::2`` the one at the mbarrier's offset in the destination CTA itself (unicast: the address must
    name that CTA); with ``.cta_group::2`` it may be in either CTA of the destination's pair: the one of the
    mbarrier address's rank parity in the destination's pair (CUTLASS's 2-SM loads signal the even CTA's
    barrier, ``addr & 0xFEFFFFFF``). A destination space ``.shared::cta`` names the executing CTA only."""
    t = int(act[i])
    one = np.array([t])
    cluster = _spaces(ins)[0] == "shared::cluster"
    dc, doff = m.shared_target(np.array([dst], dtype=np.uint64), one, f"{ins.opcode} destination", cluster)
    mc, moff = m.shared_target(np.array([mbar], dtype=np.uint64), one, f"{ins.opcode} mbarrier", cluster)
    own, d0, mb_cta, mb_off = int(m.cta[t]), int(doff[0]), int(mc[0]), int(moff[0])
    if mask is not None:
        if mask >> m.cluster_size or not mask:
            raise VmError(f"{ins.opcode}: ctaMask {mask:#06x} names no CTA or a rank past the cluster of "
                          f"{m.cluster_size} CTAs@thread{i}")
        dests = [int(m.peer[own, r]) for r in range(m.cluster_size) if mask >> r & 1]
    else:
        dests = [int(dc[0])]
    pair = ins.has("cta_group::2")
    if pair and m.cluster_size % 2:
        raise VmError(f"{ins.opcode}: .cta_group::2 needs clusters of an even number of CTAs, not {m.cluster_size}")
    out = []
    for d in dests:
        rank = int(m.rank_of_cta[d])
        want = int(m.peer[own, (rank & ~1) | (int(m.rank_of_cta[mb_cta]) & 1)]) if pair else d
        if mask is None and mb_cta != want:
            where = "pair" if pair else "CTA (only .cta_group::2 may signal the peer CTA's)"
            raise VmError(f"{ins.opcode}: the mbarrier (cluster rank {int(m.rank_of_cta[mb_cta])}) is not in the "
                          f"destination's {where}; the destination is cluster rank {rank}@thread{i}")
        out.append((d, d0, (want, mb_off)))
    return out


def _shared_source(m: Machine, ins: Instr, cta: int, lo: int, n: int) -> np.ndarray:
    """The ``n`` bytes at offset ``lo`` of ``cta``'s shared memory that a bulk copy reads (through the async
    proxy: generic writes to them must have been fenced), bounds-checked."""
    if lo + n > m.smem_size:
        raise VmMemoryFault(f"{ins.opcode}: source of {n} bytes at shared {lo:#x} exceeds the {m.smem_size}-byte "
                            f"window")
    m.check_async_reads(cta, np.arange(lo, lo + n), ins.opcode)
    return m.smem[cta, lo:lo + n].copy()


def _bulk_plain(m: Machine, ins: Instr, act: np.ndarray) -> None:
    """``cp.async.bulk`` (non-tensor, 9.7.9.25.4): global -> shared::cluster / shared::cta (optionally
    ``.multicast::cluster``) and shared::cta -> shared::cluster (a copy into a peer CTA's memory), completed
    on an mbarrier like the tensor form; shared::cta -> global (``.bulk_group``), performed at issue. ``size``
    is a multiple of 16 and both addresses 16-byte aligned; a shared source is read by the async proxy (so
    generic writes to it need ``fence.proxy.async`` first)."""
    s = state(m)
    dsp, ssp = ins.parts[3], ins.parts[4]
    ops = ins.operands
    dst, src = m.address(ops[0], act), m.address(ops[1], act)
    size = m.read(ops[2], U32, act).astype(np.int64)
    if (size % 16).any() or ((dst | src) % np.uint64(16)).any():
        raise VmMemoryFault(f"{ins.opcode}: size must be a multiple of 16 and both addresses 16-byte aligned")
    soff = np.zeros(len(act), dtype=np.int64)
    if ssp in ("shared::cta", "shared"):
        soff = m.shared_target(src, act, f"{ins.opcode} source")[1].astype(np.int64)
    if dsp == "global":
        if ssp not in ("shared::cta", "shared"):
            raise VmUnsupported(f"{ins.opcode} is not implemented")
        for i, t in enumerate(act):
            m.gmem.store(dst[i:i + 1], _shared_source(m, ins, int(m.cta[t]), int(soff[i]), int(size[i]))[None, :])
        return None
    if not ins.has("mbarrier::complete_tx::bytes") or ssp not in ("global", "shared::cta", "shared"):
        raise VmUnsupported(f"{ins.opcode} is not implemented")
    mbars = m.address(ops[3], act)
    masks = _cta_masks(m, ins, ops[4:], act)
    for i, t in enumerate(act):
        n = int(size[i])
        if ssp == "global":
            data = m.gmem.load(src[i:i + 1], n)[0]  # 16-byte alignment suffices (checked above)
        else:
            data = _shared_source(m, ins, int(m.cta[t]), int(soff[i]), n)
        for dc, d0, mbar in _bulk_targets(m, ins, act, i, int(dst[i]), int(mbars[i]),
                                          None if masks is None else int(masks[i])):
            if d0 + n > m.smem_size:
                raise VmMemoryFault(f"{ins.opcode}: {n} bytes at shared {d0:#x} exceed the {m.smem_size}-byte window")
            s.tensor.append(PendingCopy(dc, dc * m.smem.shape[1] + np.arange(d0, d0 + n), data, mbar, n, ins.line))
    return None


def _im2col_offsets(m: Machine, ins: Instr, ops: tuple[Operand, ...], act: np.ndarray,
                    dims: int) -> list[np.ndarray]:
    """The ``{offsets}`` vector after ``[mbar]`` (16-bit, W first; rank - 2 of them), per active thread."""
    if len(ops) < 5 or ops[4].kind != "vec":
        raise VmError(f"{ins.opcode}: im2col mode needs the im2col offsets vector after [mbar]")
    offs = [m.read(o, U16, act).astype(np.int64) for o in ops[4].items]
    if len(offs) != dims - 2:
        raise VmError(f"{ins.opcode}: {len(offs)} im2col offsets for .{dims}d (needs {dims - 2})")
    return offs


def _store_boxes(m: Machine, boxes: list[tuple[np.ndarray, np.ndarray]]) -> None:
    """Store each (addresses, element bytes) box in order: one scatter when the elements are of one width (a
    later box's bytes win, as one by one); box by box when widths differ or an address faults (the fault then
    names the box and element it did before)."""
    if len(boxes) > 1 and len({d.shape[1] for _, d in boxes}) == 1:
        try:
            m.gmem.store(np.concatenate([a for a, _ in boxes]), np.concatenate([d for _, d in boxes]))
            return
        except VmMemoryFault:
            pass  # nothing was written (bounds are checked first): redo box by box to raise where it did
    for a, d in boxes:
        m.gmem.store(a, d)


def _store_run(m: Machine, tm: TensorMap, coords: list[np.ndarray], ctas: np.ndarray,
               srcs: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """What :func:`_store_box` stores for several threads through one map, as one (addresses, bytes) pair in
    thread order; None where any of them would be refused or fault (unsupported map, a packed coordinate off a
    chunk, unfenced shared bytes): the caller then goes thread by thread, raising exactly what it did."""
    r = tm.rank
    box, dims, coords = list(tm.box[:r]), list(tm.dims[:r]), list(coords)
    es = ELEM_BYTES.get(tm.elemtype)
    if tm.mode != 0 or tm.interleave or tm.atomicity or any(e != 1 for e in tm.estride[:r]):
        return None
    if tm.elemtype in SUB_BYTE:
        es, pad = SUB_BYTE[tm.elemtype]
        if pad or box[0] % 16 or dims[0] % 16 or (coords[0] % 16).any():
            return None
        box[0], coords[0], dims[0] = box[0] // 16, coords[0] // 16, dims[0] // 16
    if es is None or _store_trap(coords, None if tm.elemtype in SUB_BYTE else es):
        return None
    if tm.swizzle not in SWIZZLE_SPAN or SWIZZLE_SPAN[tm.swizzle] and box[0] * es > SWIZZLE_SPAN[tm.swizzle]:
        return None
    n = int(np.prod(box))
    sa = _swizzle(srcs[:, None] + _row_offsets(n * es, box[0] * es, tm.swizzle)[None, :], tm.swizzle)
    if (m.smem_writer[ctas[:, None], sa] >= 0).any():
        return None
    data = m.smem[ctas[:, None], sa].reshape(len(ctas), n, es)
    good, off = _box_offsets(box, coords, dims, [es, *tm.strides[:r - 1]])
    return np.uint64(tm.address) + off[good].astype(np.uint64), data[good]


def _store_trap(coords: list, es: int | None) -> str:
    """Why silicon traps (illegal instruction) on a TMA store at ``coords`` (innermost first, copy units of
    ``es`` bytes), or "": any negative coordinate (a box past the tensor's end is clipped, one before its start
    traps: AMB-TMA-STORE-NEGATIVE-COORD) or an innermost start off 16 bytes (AMB-TMA-INNER-COORD-ALIGN; not
    probed for the packed sub-byte types, ``es`` None: they keep their own whole-chunk rule)."""
    if any(bool((np.asarray(c) < 0).any()) for c in coords):
        return "a negative coordinate"
    if es is not None and bool(((np.asarray(coords[0]) * es) % INNER_COORD_ALIGN).any()):
        return f"an innermost coordinate off {INNER_COORD_ALIGN} bytes"
    return ""


def _store_box(m: Machine, tm: TensorMap, coords: list[int], cta: int, src: int,
               ins: Instr) -> tuple[np.ndarray, np.ndarray] | None:
    """Shared -> global through ``tm``: the box (dense in shared memory, through the swizzle) to its place in
    the tensor, elements outside the tensor not written; returned as (global addresses, element bytes) for the
    caller to store (None: nothing inside the tensor). Packed ``.b4x16`` data (16 elements in 8 bytes, the
    nvfp4 output of CUTLASS's block-scaled epilogues) moves in 8-byte chunks, the inner dimension counted in
    elements as for loads; the padded types and a tensor whose inner extent ends inside a chunk are refused."""
    r = tm.rank
    box, dims, coords = list(tm.box[:r]), list(tm.dims[:r]), list(coords)
    es = ELEM_BYTES.get(tm.elemtype)
    if tm.mode != 0:
        raise VmUnsupported(f"{ins.opcode}: stores through an im2col tensor map are not implemented")
    if tm.elemtype in SUB_BYTE:
        es, pad = SUB_BYTE[tm.elemtype]
        if pad:
            raise VmUnsupported(f"{ins.opcode}: a store through a padded packed tensor map (.b4x16_p64 / "
                                f".b6x16_p32) is not implemented")
        if box[0] % 16 or coords[0] % 16 or dims[0] % 16:
            raise VmUnsupported(f"{ins.opcode}: a packed store whose box, coordinate or inner extent is not whole "
                                f"16-element chunks (box {box[0]}, coordinate {coords[0]}, extent {dims[0]})")
        box[0], coords[0], dims[0] = box[0] // 16, coords[0] // 16, dims[0] // 16
    if es is None or tm.interleave or tm.atomicity or any(e != 1 for e in tm.estride[:tm.rank]):
        raise VmUnsupported(f"{ins.opcode}: this tensor map is not implemented for stores")
    trap = _store_trap(coords, None if tm.elemtype in SUB_BYTE else es)
    if trap:
        raise VmError(f"{ins.opcode}: a store at coordinates {coords} has {trap} (silicon traps: illegal "
                      f"instruction)")
    n = int(np.prod(box))
    span = SWIZZLE_SPAN.get(tm.swizzle)
    if span is None:
        raise VmUnsupported(f"{ins.opcode}: swizzle mode {tm.swizzle} is not implemented")
    if span and box[0] * es > span:
        raise VmError(f"{ins.opcode}: inner box of {box[0] * es} bytes exceeds the {span}-byte swizzle span")
    sa = _shared_rows(src, n * es, box[0] * es, tm.swizzle)
    if int(sa.max()) >= m.smem_size:
        raise VmMemoryFault(f"{ins.opcode}: box of {n * es} bytes at shared {src:#x} exceeds the "
                            f"{m.smem_size}-byte window")
    m.check_async_reads(cta, sa, ins.opcode)
    data = m.smem[cta, sa].reshape(n, es)
    good, off = _box_offsets(box, coords, dims, [es, *tm.strides[:r - 1]])
    if not good.any():
        return None
    return np.uint64(tm.address) + off[good].astype(np.uint64), data[good]


# ------------------------------------------------------------------------------------------ tensormap
def _replace_bits(bits: int, fname: str, ordn: int, value: int, ins: Instr) -> int:
    """The 1024-bit map ``bits`` with ``tensormap.replace``'s field ``fname`` (entry ``ordn``) set to ``value``, in
    the map's encoding (:data:`REPLACE`)."""
    first, width, step, how = REPLACE[fname]
    pos = first + ordn * step
    if how == 1:
        value -= 1
    elif how == 2:
        value >>= 4
        hi = (value >> 32) & 0xF
        bits = bits & ~(0xF << (224 + 4 * ordn)) | hi << (224 + 4 * ordn)
    elif how == 3:
        code = {11: (7, 1), 12: (8, 1), 13: (11, 0), 14: (12, 0), 15: (13, 0)}.get(value, (value, 0))
        if code[0] > 15:
            raise VmError(f"{ins.opcode}: elemtype {value} out of range")
        value = code[0]
        bits = bits & ~(1 << 80) | code[1] << 80
    elif how == 4:
        value -= 1
        pos = 440 if ordn == 0 else 448 + (ordn - 1) * 8
    mask = (1 << width) - 1
    return bits & ~(mask << pos) | (value & mask) << pos


@handler("tensormap")
def _tensormap(m: Machine, ins: Instr, act: np.ndarray) -> None:
    op = ins.parts[1]
    if op == "replace":
        if ins.parts[2] != "tile":
            raise VmUnsupported(f"{ins.opcode}: only .tile is implemented")
        fname = ins.parts[3]
        if fname not in REPLACE:
            raise VmUnsupported(f"{ins.opcode}: field .{fname}")
        space = "shared" if any(p.startswith("shared") for p in ins.parts) else "global"
        ops = ins.operands
        addrs = m.address(ops[0], act)
        if ((addrs % np.uint64(128)) != 0).any():
            raise VmMemoryFault(f"{ins.opcode}: tensor map address not 128-byte aligned")
        ordv = np.zeros(len(act), dtype=np.int64)
        if REPLACE[fname][2]:
            ordv = m.read(ops[1], U32, act).astype(np.int64)
            if (ordv >= (4 if fname == "global_stride" else 5)).any():
                raise VmError(f"{ins.opcode}: ord {int(ordv.max())} out of range")
        val = m.read(ops[-1], U64, act).astype(np.uint64)
        for i in range(len(act)):  # read-modify-write of the whole map, thread by thread (program order)
            where = addrs[i:i + 1]
            if space == "shared":
                raw = m.load("shared", where, TENSORMAP_BYTES, act[i:i + 1])[0]
            else:
                raw = m.gmem.load(where, TENSORMAP_BYTES)[0]
            bits = _replace_bits(int.from_bytes(raw.tobytes(), "little"), fname, int(ordv[i]), int(val[i]), ins)
            data = np.frombuffer(bits.to_bytes(TENSORMAP_BYTES, "little"), dtype=np.uint8)[None, :].copy()
            if space == "shared":
                m.store("shared", where, data, act[i:i + 1], ins)
            else:
                m.gmem.store(where, data)
        return None
    if op == "cp_fenceproxy":
        ops = ins.operands
        size = int(ops[2].value)
        if size != TENSORMAP_BYTES:
            raise VmError(f"{ins.opcode}: size must be 128")
        dst = m.address(ops[0], act)
        src = m.address(ops[1], act)
        seen: set[tuple[int, int, int]] = set()
        for i, t in enumerate(act):
            key = (int(m.cta[t]), int(dst[i]), int(src[i]))
            if key in seen:
                continue
            seen.add(key)
            raw = m.load("shared", src[i:i + 1], size, act[i:i + 1])
            m.gmem.store(dst[i:i + 1], raw)
        return None
    raise VmUnsupported(f"{ins.opcode} is not implemented")


# ------------------------------------------------------------------------------------------ st.async
@handler("st.async")
def _st_async(m: Machine, ins: Instr, act: np.ndarray) -> None:
    """``st.async{.sem}{.scope}.shared::cluster.mbarrier::complete_tx::bytes{.v2,.v4}.type [a], b, [mbar]``
    (9.7.9.12): an asynchronous store into a CTA of the cluster that completes its byte count on the mbarrier
    ``mbar`` of the same CTA. Like the bulk copies, the bytes land (and the transaction completes) when that
    mbarrier is waited on, so a reader that does not wait sees the old bytes."""
    if not (ins.has("shared::cluster") and ins.has("mbarrier::complete_tx::bytes")):
        raise VmUnsupported(f"{ins.opcode} is not implemented")
    t = ops_core._ty(ins)
    nv = ops_core._vec_width(ins)
    a, src, mbar = ins.operands
    items = src.items if src.kind == "vec" else (src,)
    if len(items) != nv:
        raise VmError(f"{ins.opcode}: {len(items)} sources for .v{nv}")
    data = np.concatenate([np.ascontiguousarray(m.read(it, t, act)).view(t.udtype).view(np.uint8)
                           .reshape(len(act), t.nbytes) for it in items], axis=1)
    n = data.shape[1]
    addrs = m.address(a, act)
    check_aligned(addrs, n, "shared")
    ctas, offs = m.shared_target(addrs, act, ins.opcode, True)
    mctas, moffs = m.shared_target(m.address(mbar, act), act, f"{ins.opcode} mbarrier", True)
    if (ctas != mctas).any():
        i = int(np.flatnonzero(ctas != mctas)[0])
        raise VmError(f"{ins.opcode}: the mbarrier is not in the CTA the store writes@thread{i}")
    if (offs + np.uint64(n) > np.uint64(m.smem_size)).any():
        i = int(np.flatnonzero(offs + np.uint64(n) > np.uint64(m.smem_size))[0])
        raise VmMemoryFault(f"{ins.opcode}: {n} bytes at shared::cluster {int(addrs[i]):#x} exceed the "
                            f"{m.smem_size}-byte window@thread{i}")
    s = state(m)
    for i in range(len(act)):
        c, lo = int(ctas[i]), int(offs[i])
        s.tensor.append(PendingCopy(c, c * m.smem.shape[1] + np.arange(lo, lo + n), data[i].copy(),
                                    (c, int(moffs[i])), n, ins.line))


@handler("red.async")
def _red_async(m: Machine, ins: Instr, act: np.ndarray) -> None:
    """``red.async`` (remote reductions completing on an mbarrier): not implemented, refused by name."""
    raise VmUnsupported(f"{ins.opcode} is not implemented by the VM")
