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

The tensor map is an opaque 128-byte object (5.5.8): the CUDA driver's binary layout is not published,
so the VM keeps the fields ``tensormap.replace`` names at offsets of its own (:data:`FIELDS`; the im2col ones in
:data:`IM2COL_FIELDS`), all zero
in a zeroed object, which is what a kernel that builds its maps on the device relies on (each field's
zero is the first value of its enumeration: ``.u8``, no interleave, no swizzle, zero fill). Host code
builds maps in this layout with ``mmacts.ptxvm.host.encode_tiled`` / ``encode_im2col`` or the C library
``mmacts/ptxvm/host/libvmcuda`` (the ``cuTensorMapEncodeTiled`` / ``cuTensorMapEncodeIm2col`` contract,
written from the documentation with a table of its own; ``host/test_tensormap.py`` proves the two agree). A map
encoded by the real driver is not readable (its layout is unpublished). A map may lie in global memory or in the
kernel's parameter block (a ``__grid_constant__`` parameter: ``cvta.param`` makes its generic address).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from mmacts.ptxvm import ops_core
from mmacts.ptxvm.errors import VmError, VmMemoryFault, VmUnsupported
from mmacts.ptxvm.machine import Machine, handler
from mmacts.ptxvm.memory import PARAM_WINDOW, WINDOW_SIZE, check_aligned
from mmacts.ptxvm.parse import Instr, Operand, _split_operands, parse_operand
from mmacts.ptxvm.ptxtypes import ptx_type

U32 = ptx_type("u32")
S32 = ptx_type("s32")
U64 = ptx_type("u64")
U16 = ptx_type("u16")

TENSORMAP_BYTES = 128
FIELDS: dict[str, tuple[int, str, int]] = {
    # field -> (byte offset, numpy dtype, count); VM-private layout (see the module docstring)
    "global_address": (0, "<u8", 1),
    "rank": (8, "<u4", 1),  # rank - 1, as tensormap.replace writes it
    "elemtype": (12, "<u4", 1),
    "box_dim": (16, "<u4", 5),
    "element_stride": (36, "<u4", 5),
    "global_dim": (56, "<u4", 5),
    "global_stride": (80, "<u8", 4),  # bytes, stride of dimension ord + 1
    "interleave_layout": (112, "<u4", 1),
    "swizzle_mode": (116, "<u4", 1),
    "swizzle_atomicity": (120, "<u4", 1),
    "fill_mode": (124, "<u1", 1),  # 0 or 1: the upper bytes of what was a 32-bit word are mode and zero
}
IM2COL_FIELDS: dict[str, tuple[int, str, int]] = {
    # im2col-only fields (no tensormap.replace name): mode 1 (byte 125) says they replace the box_dim words
    "mode": (125, "<u1", 1),  # 0 = tiled (a zeroed map), 1 = im2col
    "channels_per_pixel": (16, "<u4", 1),
    "pixels_per_column": (20, "<u4", 1),
    "lower_corner": (24, "<i2", 3),  # pixel-box corners, W first; the box spans lower .. globalDim - 1 + upper
    "upper_corner": (30, "<i2", 3),
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
        def f(name: str, table: dict[str, tuple[int, str, int]] = FIELDS) -> list[int]:
            off, dt, n = table[name]
            size = np.dtype(dt).itemsize
            return [int(x) for x in raw[off:off + size * n].view(dt)]

        tm = cls(f("global_address")[0], f("rank")[0] + 1, f("elemtype")[0], f("box_dim"), f("element_stride"),
                 f("global_dim"), f("global_stride"), f("interleave_layout")[0], f("swizzle_mode")[0],
                 f("swizzle_atomicity")[0], f("fill_mode")[0], f("mode", IM2COL_FIELDS)[0])
        tm.dims = [d or 2**32 if i < tm.rank else d for i, d in enumerate(tm.dims)]  # the encoders write 2^32 as 0
        if tm.mode == 1:
            tm.channels, tm.pixels = f("channels_per_pixel", IM2COL_FIELDS)[0], f("pixels_per_column", IM2COL_FIELDS)[0]
            tm.lower, tm.upper = f("lower_corner", IM2COL_FIELDS), f("upper_corner", IM2COL_FIELDS)
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
    return TensorMap.decode(raw)


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


def _box_offsets(box: list[int], coords: list[int], dims: list[int],
                 strides: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Per element of the box at ``coords`` (dimension 0 innermost, fastest), whether it lies inside the tensor
    of extents ``dims`` and its byte offset there (``strides`` in bytes, dimension 0 first; indices outside the
    tensor clipped to it, so that every offset is a valid address)."""
    idx = np.meshgrid(*[np.arange(b, dtype=np.int64) + c for b, c in zip(reversed(box), reversed(coords),
                                                                          strict=True)], indexing="ij")
    inb = np.ones(idx[0].shape, dtype=bool)
    off = np.zeros(idx[0].shape, dtype=np.int64)
    for k, (d, st) in enumerate(zip(reversed(dims), reversed(strides), strict=True)):
        inb &= (idx[k] >= 0) & (idx[k] < d)
        off += np.clip(idx[k], 0, max(d - 1, 0)) * st
    return inb.reshape(-1), off.reshape(-1)


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


def _shared_rows(d0: int, nbytes: int, row_bytes: int, swizzle: int) -> np.ndarray:
    """Shared addresses of a box's ``nbytes`` (rows of ``row_bytes``) placed from ``d0``: rows one after
    another, each starting on a multiple of the swizzle span when the map swizzles (:data:`SWIZZLE_SPAN`),
    then the swizzle's permutation of 16-byte chunks."""
    pitch = max(SWIZZLE_SPAN[swizzle], row_bytes)
    i = np.arange(nbytes, dtype=np.int64)
    return _swizzle(d0 + (i // row_bytes) * pitch + i % row_bytes, swizzle)


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
        for i, t in enumerate(act):
            cta = int(m.cta[t])
            tm = _read_tensormap(m, int(tmaps[i]), ins)
            _store_box(m, tm, [int(c[i]) for c in coords], cta, int(srcs[i]), ins)
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


def _store_box(m: Machine, tm: TensorMap, coords: list[int], cta: int, src: int, ins: Instr) -> None:
    """Shared -> global through ``tm``: the box (dense in shared memory, through the swizzle) to its place in
    the tensor, elements outside the tensor not written. Packed ``.b4x16`` data (16 elements in 8 bytes, the
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
    n = int(np.prod(box))
    span = SWIZZLE_SPAN.get(tm.swizzle)
    if span is None:
        raise VmUnsupported(f"{ins.opcode}: swizzle mode {tm.swizzle} is not implemented")
    if span and box[0] * es > span:
        raise VmError(f"{ins.opcode}: inner box of {box[0] * es} bytes exceeds the {span}-byte swizzle span")
    sa = _shared_rows(src, n * es, box[0] * es, tm.swizzle)  # rows as loads place them (not probed for stores)
    if int(sa.max()) >= m.smem_size:
        raise VmMemoryFault(f"{ins.opcode}: box of {n * es} bytes at shared {src:#x} exceeds the "
                            f"{m.smem_size}-byte window")
    m.check_async_reads(cta, sa, ins.opcode)
    data = m.smem[cta, sa].reshape(n, es)
    good, off = _box_offsets(box, coords, dims, [es, *tm.strides[:r - 1]])
    if good.any():
        m.gmem.store(np.uint64(tm.address) + off[good].astype(np.uint64), data[good])


# ------------------------------------------------------------------------------------------ tensormap
@handler("tensormap")
def _tensormap(m: Machine, ins: Instr, act: np.ndarray) -> None:
    op = ins.parts[1]
    if op == "replace":
        if ins.parts[2] != "tile":
            raise VmUnsupported(f"{ins.opcode}: only .tile is implemented")
        fname = ins.parts[3]
        if fname not in FIELDS:
            raise VmUnsupported(f"{ins.opcode}: field .{fname}")
        off, dt, count = FIELDS[fname]
        space = "shared" if any(p.startswith("shared") for p in ins.parts) else "global"
        ops = ins.operands
        addrs = m.address(ops[0], act)
        if ((addrs % np.uint64(128)) != 0).any():
            raise VmMemoryFault(f"{ins.opcode}: tensor map address not 128-byte aligned")
        ordv = np.zeros(len(act), dtype=np.int64)
        if count > 1:
            ordv = m.read(ops[1], U32, act).astype(np.int64)
            if (ordv >= count).any():
                raise VmError(f"{ins.opcode}: ord {int(ordv.max())} out of range")
        val = m.read(ops[-1], U64, act).astype(np.uint64)
        size = np.dtype(dt).itemsize
        data = np.stack([np.frombuffer(np.array([v], dtype=dt).tobytes(), dtype=np.uint8)
                         for v in val.astype(np.dtype(dt).type)])
        where = addrs + np.uint64(off) + (ordv * size).astype(np.uint64)
        if space == "shared":
            m.store("shared", where, data, act, ins)
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
