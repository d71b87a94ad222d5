"""``cuTensorMapEncodeTiled`` and ``cuTensorMapEncodeIm2col`` for the VM: the driver's parameters, validation rules
(those the CUDA 13 ``cuda.h`` documents) and error result, producing the 128-byte tensor map that the VM's
``cp.async.bulk.tensor`` reads.

Why a table of our own: the driver's binary layout is unpublished, so the VM keeps the fields that PTX's
``tensormap.replace`` (9.7.9.28) names at offsets of its own. This module writes those fields from the PTX ISA's
field list and enumerations (the values ``tensormap.replace`` takes), in :data:`LAYOUT`, with no import of the VM;
``test_tensormap.py`` proves the two agree by decoding with the VM and running real TMA loads on it. The C library
``libvmcuda`` is a second, independent implementation of the same contract (``test_libvmcuda.py`` compares them).

Translation the driver does and a wrong table would get wrong: the driver's ``CUtensorMapDataType`` order
(..., FLOAT64 = 8, BFLOAT16 = 9, FLOAT32_FTZ = 10, ...) is not the PTX ``elemtype`` order (.f32.ftz = 8, .f64 = 9,
.bf16 = 10); the 128B atom swizzles are swizzle_mode 128B plus a swizzle_atomicity; ``globalStrides`` (rank - 1
entries, bytes, stride of dimension i + 1) go to ``global_stride`` ord i; ``rank`` is stored minus one.
L2 promotion is validated but has no ``tensormap.replace`` field, so it is not stored (a cache hint).

im2col maps (:data:`IM2COL_LAYOUT`): byte 125 (``mode``) is 1; the five ``box_dim`` words, which im2col has no use
for, hold channelsPerPixel, pixelsPerColumn and the two pixel-box corners (three signed 16-bit offsets each, W
first). Every other field is where a tiled map has it, and a tiled map is byte-identical to before (``fill_mode``
is 0 or 1, so its word's upper bytes were always zero; ``mode`` 0 = tiled is what a zeroed map says).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

MAP_BYTES = 128

LAYOUT: dict[str, tuple[int, str, int]] = {
    # field (tensormap.replace name) -> (byte offset, little-endian dtype, count)
    "global_address": (0, "<u8", 1),
    "rank": (8, "<u4", 1),
    "elemtype": (12, "<u4", 1),
    "box_dim": (16, "<u4", 5),
    "element_stride": (36, "<u4", 5),
    "global_dim": (56, "<u4", 5),
    "global_stride": (80, "<u8", 4),
    "interleave_layout": (112, "<u4", 1),
    "swizzle_mode": (116, "<u4", 1),
    "swizzle_atomicity": (120, "<u4", 1),
    "fill_mode": (124, "<u1", 1),
}
IM2COL_LAYOUT: dict[str, tuple[int, str, int]] = {
    # im2col-only fields (no tensormap.replace name); mode 1 says they replace box_dim
    "mode": (125, "<u1", 1),
    "channels_per_pixel": (16, "<u4", 1),
    "pixels_per_column": (20, "<u4", 1),
    "lower_corner": (24, "<i2", 3),
    "upper_corner": (30, "<i2", 3),
}

DATA_TYPES: dict[str, tuple[int, int, int, bool]] = {
    # name: (driver enum, PTX elemtype, bits in global memory, floating point)
    "UINT8": (0, 0, 8, False), "UINT16": (1, 1, 16, False), "UINT32": (2, 2, 32, False),
    "INT32": (3, 3, 32, False), "UINT64": (4, 4, 64, False), "INT64": (5, 5, 64, False),
    "FLOAT16": (6, 6, 16, True), "FLOAT32": (7, 7, 32, True), "FLOAT64": (8, 9, 64, True),
    "BFLOAT16": (9, 10, 16, True), "FLOAT32_FTZ": (10, 8, 32, True), "TFLOAT32": (11, 11, 32, True),
    "TFLOAT32_FTZ": (12, 12, 32, True),
    "16U4_ALIGN8B": (13, 13, 4, False), "16U4_ALIGN16B": (14, 14, 4, False), "16U6_ALIGN16B": (15, 15, 6, False),
}
SHARED_CHUNK = {"16U4_ALIGN8B": 8, "16U4_ALIGN16B": 16, "16U6_ALIGN16B": 16}
"""Packed types: shared-memory bytes per 16 elements (data plus the padding of the ``_p64`` / ``_p32`` forms)."""
ALIGN16B = ("16U4_ALIGN16B", "16U6_ALIGN16B")
"""The padded packed types: 32-byte address and strides, inner box (channels) of exactly 128, few swizzles."""
ALIGN16B_SWIZZLES = {"16U4_ALIGN16B": ("NONE", "128B", "128B_ATOM_32B"),
                     "16U6_ALIGN16B": ("NONE", "128B", "128B_ATOM_32B", "128B_ATOM_64B")}
INTERLEAVE = {"NONE": 0, "16B": 1, "32B": 2}  # driver enum == PTX interleave_layout value
# CUtensorMapSwizzle -> (driver enum, PTX swizzle_mode, PTX swizzle_atomicity, span in bytes)
SWIZZLE = {"NONE": (0, 0, 0, 0), "32B": (1, 1, 0, 32), "64B": (2, 2, 0, 64), "128B": (3, 3, 0, 128),
           "128B_ATOM_32B": (4, 3, 1, 128), "128B_ATOM_32B_FLIP_8B": (5, 3, 2, 128), "128B_ATOM_64B": (6, 3, 3, 128)}
L2_PROMOTION = {"NONE": 0, "L2_64B": 1, "L2_128B": 2, "L2_256B": 3}
OOB_FILL = {"NONE": 0, "NAN_REQUEST_ZERO_FMA": 1}  # driver enum == PTX fill_mode value
CORNER_RANGE = {3: (-32768, 32767), 4: (-128, 127), 5: (-16, 15)}
"""cuTensorMapEncodeIm2col: tensor rank -> range of each of its rank - 2 pixel-box corner offsets."""
RESULT = {"CUDA_SUCCESS": 0, "CUDA_ERROR_INVALID_VALUE": 1}
"""CUresult codes the encoders return (the driver's values)."""


class TensorMapError(ValueError):
    """What the driver returns instead of a map: ``result`` (``CUDA_ERROR_INVALID_VALUE``) and the violated rule."""

    def __init__(self, rule: str, result: str = "CUDA_ERROR_INVALID_VALUE") -> None:
        super().__init__(f"{result}: {rule}")
        self.result = result
        self.rule = rule


def _enum(table: dict, value: str | int, what: str, prefix: str) -> str:
    if isinstance(value, str):
        name = value.upper().removeprefix(prefix)
        if name in table:
            return name
        raise TensorMapError(f"{what} {value!r} is not a {prefix.rstrip('_')}* value")
    for name, v in table.items():
        if int(value) == (v[0] if isinstance(v, tuple) else v):
            return name
    raise TensorMapError(f"{what} {value} is not a valid enum value")


class _Common:
    """The arguments both encoders share, validated by the rules they share (``cuda.h``'s lists for the two are
    the same up to the box): enums, rank range, address, globalDim, globalStrides, elementStrides, interleave,
    the swizzle and fill rules that do not depend on the box."""

    def __init__(self, data_type: str | int, rank: int, ranks: range, global_address: int,
                 global_dim: Sequence[int], global_strides: Sequence[int], element_strides: Sequence[int] | None,
                 interleave: str | int, swizzle: str | int, l2_promotion: str | int, oob_fill: str | int) -> None:
        self.dt = dt = _enum(DATA_TYPES, data_type, "tensorDataType", "CU_TENSOR_MAP_DATA_TYPE_")
        self.il = il = _enum(INTERLEAVE, interleave, "interleave", "CU_TENSOR_MAP_INTERLEAVE_")
        self.sw = sw = _enum(SWIZZLE, swizzle, "swizzle", "CU_TENSOR_MAP_SWIZZLE_")
        _enum(L2_PROMOTION, l2_promotion, "l2Promotion", "CU_TENSOR_MAP_L2_PROMOTION_")
        self.fill = fill = _enum(OOB_FILL, oob_fill, "oobFill", "CU_TENSOR_MAP_FLOAT_OOB_FILL_")
        self.rank = rank = int(rank)
        if rank not in ranks:
            raise TensorMapError(f"tensorRank {rank} must be in [{ranks.start}, {ranks.stop - 1}]")
        if il != "NONE" and rank < 3:
            raise TensorMapError(f"tensorRank {rank} must be at least 3 when interleave is {il}")
        self.address = int(global_address)
        self.dims = dims = [int(d) for d in global_dim]
        self.strides = strides = [int(s) for s in global_strides]
        self.estr = estr = [1] * rank if element_strides is None else [int(e) for e in element_strides]
        for name, arr, want in (("globalDim", dims, rank), ("globalStrides", strides, rank - 1),
                                ("elementStrides", estr, rank)):
            if len(arr) != want:
                raise TensorMapError(f"{name} has {len(arr)} entries, tensorRank {rank} needs {want}")
        align = 32 if il == "32B" or dt in ALIGN16B else 16
        if self.address % align or self.address < 0:
            raise TensorMapError(f"globalAddress {self.address:#x} is not {align}-byte aligned")
        for i, d in enumerate(dims):
            if not 0 < d <= 2**31:
                raise TensorMapError(f"globalDim[{i}] = {d} must be in [1, 2^31]")
        if dt in ALIGN16B and dims[0] % 128:
            raise TensorMapError(f"globalDim[0] = {dims[0]} of {dt} must be a multiple of 128")
        if dt == "16U4_ALIGN8B" and dims[0] % 2:
            raise TensorMapError(f"globalDim[0] = {dims[0]} of {dt} must be a multiple of 2")
        for i, s in enumerate(strides):
            if s % align or not 0 <= s < 2**40:
                raise TensorMapError(f"globalStrides[{i}] = {s} must be a multiple of {align} and below 2^40")
        for i, e in enumerate(estr):
            if not 0 < e <= 8:
                raise TensorMapError(f"elementStrides[{i}] = {e} must be in [1, 8]")
        if il == "32B" and sw != "32B":
            raise TensorMapError(f"interleave 32B requires swizzle 32B, got {sw}")
        if dt == "16U6_ALIGN16B" and il != "NONE":
            raise TensorMapError(f"{dt} requires interleave NONE, got {il}")
        if dt in ALIGN16B and sw not in ALIGN16B_SWIZZLES[dt]:
            raise TensorMapError(f"swizzle {sw} is not supported for {dt}")
        if fill != "NONE" and not DATA_TYPES[dt][3]:
            raise TensorMapError(f"oobFill {fill} needs a floating-point tensorDataType, got {dt}")

    def inner(self, n: int, what: str) -> None:
        """The innermost box (``n`` elements: boxDim[0] or channelsPerPixel) against the type and the swizzle."""
        dt, bits = self.dt, DATA_TYPES[self.dt][2]
        if dt in ALIGN16B and n != 128:
            raise TensorMapError(f"{what} = {n} of {dt} must be 128")
        if dt in SHARED_CHUNK and n % 16:
            raise TensorMapError(f"{what} = {n} of packed type {dt} must be a multiple of 16 elements")
        nbytes = n // 16 * SHARED_CHUNK[dt] if dt in SHARED_CHUNK else n * bits // 8
        span = SWIZZLE[self.sw][3]
        if self.il == "NONE" and span and nbytes > span:
            raise TensorMapError(f"inner box of {nbytes} bytes exceeds the {span}-byte span of swizzle {self.sw}")

    def write(self, box_words: Sequence[int]) -> np.ndarray:
        """The map: every shared field, and ``box_words`` (the 20 bytes of the box_dim slots) as given."""
        out = np.zeros(MAP_BYTES, dtype=np.uint8)

        def put(name: str, values: Sequence[int]) -> None:
            off, dtype, count = LAYOUT[name]
            raw = np.array(list(values) + [0] * (count - len(values)), dtype=dtype).view(np.uint8)
            out[off:off + raw.size] = raw

        put("global_address", [self.address])
        put("rank", [self.rank - 1])
        put("elemtype", [DATA_TYPES[self.dt][1]])
        out[16:36] = np.asarray(box_words, dtype=np.uint8)
        put("element_stride", self.estr)
        put("global_dim", self.dims)
        put("global_stride", self.strides)
        put("interleave_layout", [INTERLEAVE[self.il]])
        put("swizzle_mode", [SWIZZLE[self.sw][1]])
        put("swizzle_atomicity", [SWIZZLE[self.sw][2]])
        put("fill_mode", [OOB_FILL[self.fill]])
        return out


def encode_tiled(data_type: str | int, rank: int, global_address: int, global_dim: Sequence[int],
                 global_strides: Sequence[int], box_dim: Sequence[int], element_strides: Sequence[int] | None = None,
                 interleave: str | int = "NONE", swizzle: str | int = "NONE", l2_promotion: str | int = "NONE",
                 oob_fill: str | int = "NONE") -> np.ndarray:
    """The tensor map ``cuTensorMapEncodeTiled`` describes, as ``numpy.uint8[128]``, or :class:`TensorMapError`.

    Arguments in the driver's order and units (dimension 0 innermost; ``global_strides`` in bytes, rank - 1 of
    them); enums as the driver's integer values or names (``"128B"`` or ``"CU_TENSOR_MAP_SWIZZLE_128B"``).
    ``element_strides`` defaults to all ones."""
    c = _Common(data_type, rank, range(1, 6), global_address, global_dim, global_strides, element_strides,
                interleave, swizzle, l2_promotion, oob_fill)
    box = [int(b) for b in box_dim]
    if len(box) != c.rank:
        raise TensorMapError(f"boxDim has {len(box)} entries, tensorRank {c.rank} needs {c.rank}")
    for i, b in enumerate(box):
        if not 0 < b <= 256:
            raise TensorMapError(f"boxDim[{i}] = {b} must be in [1, 256]")
    c.inner(box[0], "boxDim[0]")
    if c.il == "NONE" and (box[0] * DATA_TYPES[c.dt][2]) % (16 * 8):
        raise TensorMapError(f"boxDim[0] * element size = {box[0] * DATA_TYPES[c.dt][2] / 8:g} bytes is not a "
                             f"multiple of 16")
    return c.write(np.array(box + [0] * (5 - len(box)), dtype="<u4").view(np.uint8))


def encode_im2col(data_type: str | int, rank: int, global_address: int, global_dim: Sequence[int],
                  global_strides: Sequence[int], pixel_box_lower_corner: Sequence[int],
                  pixel_box_upper_corner: Sequence[int], channels_per_pixel: int, pixels_per_column: int,
                  element_strides: Sequence[int] | None = None, interleave: str | int = "NONE",
                  swizzle: str | int = "NONE", l2_promotion: str | int = "NONE",
                  oob_fill: str | int = "NONE") -> np.ndarray:
    """The tensor map ``cuTensorMapEncodeIm2col`` describes (rank 3-5: NWC, NHWC, NDHWC with C innermost), as
    ``numpy.uint8[128]`` in :data:`IM2COL_LAYOUT`, or :class:`TensorMapError`.

    The corners are the rank - 2 pixel-box offsets, W first (the order of the tensor's dimensions 1 ..): the lower
    one from the tensor's first pixel, the upper one from its last (the box spans ``lower[i]`` to
    ``globalDim[i + 1] - 1 + upper[i]``; it must not be empty)."""
    c = _Common(data_type, rank, range(3, 6), global_address, global_dim, global_strides, element_strides,
                interleave, swizzle, l2_promotion, oob_fill)
    lo = [int(v) for v in pixel_box_lower_corner]
    hi = [int(v) for v in pixel_box_upper_corner]
    lim = CORNER_RANGE[c.rank]
    for name, arr in (("pixelBoxLowerCorner", lo), ("pixelBoxUpperCorner", hi)):
        if len(arr) != c.rank - 2:
            raise TensorMapError(f"{name} has {len(arr)} entries, tensorRank {c.rank} needs {c.rank - 2}")
        for i, v in enumerate(arr):
            if not lim[0] <= v <= lim[1]:
                raise TensorMapError(f"{name}[{i}] = {v} must be in [{lim[0]}, {lim[1]}] for tensorRank {c.rank}")
    for i in range(c.rank - 2):
        if c.dims[i + 1] - 1 + hi[i] < lo[i]:
            raise TensorMapError(f"the pixel box is empty in dimension {i + 1}: lower corner {lo[i]}, upper "
                                 f"corner {hi[i]}, globalDim {c.dims[i + 1]}")
    cpp, ppc = int(channels_per_pixel), int(pixels_per_column)
    if not 0 < cpp <= 256:
        raise TensorMapError(f"channelsPerPixel = {cpp} must be in [1, 256]")
    if not 0 < ppc <= 1024:
        raise TensorMapError(f"pixelsPerColumn = {ppc} must be in [1, 1024]")
    c.inner(cpp, "channelsPerPixel")
    words = np.zeros(20, dtype=np.uint8)
    words[0:8] = np.array([cpp, ppc], dtype="<u4").view(np.uint8)
    words[8:14] = np.array(lo + [0] * (3 - len(lo)), dtype="<i2").view(np.uint8)
    words[14:20] = np.array(hi + [0] * (3 - len(hi)), dtype="<i2").view(np.uint8)
    out = c.write(words)
    out[IM2COL_LAYOUT["mode"][0]] = 1
    return out
