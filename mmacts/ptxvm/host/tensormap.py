"""``cuTensorMapEncodeTiled`` and ``cuTensorMapEncodeIm2col`` for the VM: the driver's parameters, validation rules
and error result, producing the 128-byte tensor map that the VM's ``cp.async.bulk.tensor`` reads. The rules are
those the CUDA 13 ``cuda.h`` documents, corrected where the real driver (580.159.04, H100; the probe
``validation/probes/tma-im2col``) disagrees: a box-size limit, the globalDim bounds, no interleave-32B swizzle rule,
16-byte channel rows in im2col (:data:`BOX_BYTES_MAX`, :data:`GLOBAL_DIM_MAX`, ``_Common``); the sm_100-only swizzles
and packed types are accepted, as on the device the VM emulates (:func:`refused_before_sm100`).

The layout is the hardware's: the bytes the real driver writes, recorded for 408 calls on an H200
(``validation/probes/tmap-bytes``; the field table with its provenance is ``validation/probes/tmap-bytes/LAYOUT.md``),
so a map from this module, from ``libvmcuda``, from the real driver and from host code that builds descriptors
itself (the CuTe DSL) are the same bytes for the same call. ``test_tmap_record.py`` replays every recorded call
through this module and through ``libvmcuda`` (byte-identical). The bit table here (:data:`LAYOUT`) is the encoders'
own, with no import of the VM, which decodes with a table written apart (``test_tensormap.py`` runs real TMA loads
through the two). The C library ``libvmcuda`` is a second, independent implementation of the same contract
(``test_libvmcuda.py`` compares them on random arguments).

Translation the driver does and a wrong table would get wrong: the driver's ``CUtensorMapDataType`` order
(..., FLOAT64 = 8, BFLOAT16 = 9, FLOAT32_FTZ = 10, ...) is not the map's type-code order (.f32.ftz = 8, .f64 = 9,
.bf16 = 10, the PTX ``elemtype`` order), and the tf32 types are the f32 codes plus a flag (:data:`HW_ELEMTYPE`); dims,
boxes, element strides, channels and pixels are stored minus one, strides in 16-byte units; the driver also writes
two derived words (the bytes one load moves, rounded down per dimension, and the swizzle repeat). What sm_90 cannot
show (the 128B swizzle atoms' place, the packed types' codes) is assumed and registered (AMB-TMAP-HW-SM100-FIELDS).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

MAP_BYTES = 128

LAYOUT: dict[str, tuple[int, int, int, int]] = {
    # field -> (first bit in the 1024-bit little-endian map, width in bits, count, bits from one entry to the next);
    # the hardware layout the real driver writes (table and provenance: validation/probes/tmap-bytes/LAYOUT.md)
    "global_address": (0, 64, 1, 0),
    "im2col": (64, 1, 1, 0),
    "rank_m1": (68, 3, 1, 0),
    "elemtype": (71, 4, 1, 0),  # HW_ELEMTYPE code
    "interleave": (75, 2, 1, 0),
    "swizzle": (77, 2, 1, 0),  # none, 32B, 64B, 128B
    "oob_fill": (79, 1, 1, 0),
    "tf32": (80, 1, 1, 0),
    "l2_promotion": (81, 2, 1, 0),
    "swizzle_atom": (83, 2, 1, 0),  # sm_100 128B atoms: NOT observed (AMB-TMAP-HW-SM100-FIELDS)
    "global_stride_lo": (96, 32, 4, 32),  # (stride >> 4) bits 0..31
    "global_stride_hi": (224, 4, 4, 4),  # (stride >> 4) bits 32..35
    "global_dim_m1": (256, 32, 5, 32),
    "element_stride_m1": (416, 3, 5, 3),
    "box_dim0_m1": (440, 8, 1, 0),  # im2col: channelsPerPixel - 1
    "box_dim_m1": (448, 8, 4, 8),  # boxDim[1..4] - 1 (tiled)
    "corners": (448, 32, 1, 0),  # im2col: lower then upper corner, (rank - 2) offsets each (IM2COL_CORNER_BITS)
    "pixels_m1": (480, 10, 1, 0),  # im2col: pixelsPerColumn - 1
    "box_bytes": (512, 32, 1, 0),  # bytes one load moves (derived)
    "swizzle_repeat": (576, 32, 1, 0),  # 16 unswizzled, else 8 rows of the swizzle span (derived)
}
IM2COL_CORNER_BITS = {3: 16, 4: 8, 5: 5}
"""Tensor rank -> bits of one pixel-box corner offset; the lower corner's offsets from bit 0 of the corners word,
the upper corner's from bit 16, W first."""
HW_ELEMTYPE = {0: (0, 0), 1: (1, 0), 2: (2, 0), 3: (3, 0), 4: (4, 0), 5: (5, 0), 6: (6, 0), 7: (7, 0), 8: (9, 0),
               9: (10, 0), 10: (8, 0), 11: (7, 1), 12: (8, 1), 13: (11, 0), 14: (12, 0), 15: (13, 0)}
"""Driver data type -> (elemtype code, tf32 flag). TFLOAT32 is FLOAT32's code with the tf32 bit, TFLOAT32_FTZ
FLOAT32_FTZ's; the packed types 13..15 cannot be encoded on sm_90: 11 is the code the CuTe DSL writes for its
fp4 maps, 12 and 13 follow it by assumption (AMB-TMAP-HW-SM100-FIELDS)."""

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
BOX_BYTES_MAX = 240 * 1024
"""Most bytes one box may move (tiled: ceil(boxDim[i] / elementStrides[i]) elements in every dimension, dimension 0
included; im2col: channelsPerPixel x pixelsPerColumn, elementStrides[0] not applied). Not in ``cuda.h``: the real
driver (580.159.04 on an H100) accepted 235,520 bytes and refused 256,480 (tiled), accepted 131,072 and refused
262,144 (im2col); 240 KiB lies in both gaps (ambiguity register AMB-TMAP-BOX-BYTES; the probe bisects it)."""
GLOBAL_DIM_MAX = {"tiled": 2**32, "im2col": 2**31}
"""Largest globalDim. ``cuda.h`` (CUDA 13) says 2^31 for both; the driver accepted 2^31 + 1 in a tiled map (CUDA 12's
``cuda.h`` said 2^32) and refused it in an im2col map (AMB-TMAP-GLOBALDIM). A map stores each dimension in 32 bits,
so 2^32 is written as 0, which no valid dimension is (the VM reads 0 back as 2^32)."""
SM100_ONLY_SWIZZLES = ("128B_ATOM_32B", "128B_ATOM_32B_FLIP_8B", "128B_ATOM_64B")
SM100_ONLY_TYPES = ("16U4_ALIGN8B", "16U4_ALIGN16B", "16U6_ALIGN16B")
"""What the driver refuses on an sm_90 device (H100: every such call, 355 of the probe's calls) though ``cuda.h``
lists it without a device condition. This module models the sm_100a device the VM emulates, so it accepts them;
:func:`refused_before_sm100` says which calls an older device refuses (AMB-TMAP-SM90-FEATURES)."""
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


def refused_before_sm100(data_type: str | int, swizzle: str | int) -> str | None:
    """Why the driver refuses these arguments on a device below compute capability 10.0 (an sm_100-only swizzle or
    packed data type), or None; invalid enum values are the encoders' business (None here)."""
    try:
        dt = _enum(DATA_TYPES, data_type, "tensorDataType", "CU_TENSOR_MAP_DATA_TYPE_")
        sw = _enum(SWIZZLE, swizzle, "swizzle", "CU_TENSOR_MAP_SWIZZLE_")
    except TensorMapError:
        return None
    if dt in SM100_ONLY_TYPES:
        return f"tensorDataType {dt} needs compute capability 10.0"
    if sw in SM100_ONLY_SWIZZLES:
        return f"swizzle {sw} needs compute capability 10.0"
    return None


class _Common:
    """The arguments both encoders share, validated by the rules they share (``cuda.h``'s lists for the two are
    the same up to the box): enums, rank range, address, globalDim, globalStrides, elementStrides, interleave,
    the swizzle and fill rules that do not depend on the box. ``kind`` ("tiled" or "im2col") picks the rank range
    and :data:`GLOBAL_DIM_MAX`.

    Not checked, though ``cuda.h`` states it: "interleave 32B requires swizzle 32B" -- the driver accepted 32B
    interleave with swizzle NONE, 64B and 128B (AMB-TMAP-INTERLEAVE32-SWIZZLE); the VM refuses interleave at the
    load anyway."""

    def __init__(self, kind: str, data_type: str | int, rank: int, global_address: int,
                 global_dim: Sequence[int], global_strides: Sequence[int], element_strides: Sequence[int] | None,
                 interleave: str | int, swizzle: str | int, l2_promotion: str | int, oob_fill: str | int) -> None:
        self.dt = dt = _enum(DATA_TYPES, data_type, "tensorDataType", "CU_TENSOR_MAP_DATA_TYPE_")
        self.il = il = _enum(INTERLEAVE, interleave, "interleave", "CU_TENSOR_MAP_INTERLEAVE_")
        self.sw = sw = _enum(SWIZZLE, swizzle, "swizzle", "CU_TENSOR_MAP_SWIZZLE_")
        self.l2 = L2_PROMOTION[_enum(L2_PROMOTION, l2_promotion, "l2Promotion", "CU_TENSOR_MAP_L2_PROMOTION_")]
        self.fill = fill = _enum(OOB_FILL, oob_fill, "oobFill", "CU_TENSOR_MAP_FLOAT_OOB_FILL_")
        self.rank = rank = int(rank)
        ranks = range(1, 6) if kind == "tiled" else range(3, 6)
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
        dim_max = GLOBAL_DIM_MAX[kind]
        for i, d in enumerate(dims):
            if not 0 < d <= dim_max:
                raise TensorMapError(f"globalDim[{i}] = {d} must be in [1, 2^{dim_max.bit_length() - 1}] ({kind})")
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
        if dt == "16U6_ALIGN16B" and il != "NONE":
            raise TensorMapError(f"{dt} requires interleave NONE, got {il}")
        if dt in ALIGN16B and sw not in ALIGN16B_SWIZZLES[dt]:
            raise TensorMapError(f"swizzle {sw} is not supported for {dt}")
        if fill != "NONE" and not DATA_TYPES[dt][3]:
            raise TensorMapError(f"oobFill {fill} needs a floating-point tensorDataType, got {dt}")

    def row_bytes(self, n: int) -> int:
        """Shared-memory bytes of ``n`` innermost elements (packed types: whole chunks of 16, padding included)."""
        if self.dt in SHARED_CHUNK:
            return -(-n // 16) * SHARED_CHUNK[self.dt]
        return n * DATA_TYPES[self.dt][2] // 8

    def inner(self, n: int, what: str) -> int:
        """The innermost box (``n`` elements: boxDim[0] or channelsPerPixel) against the type and the swizzle; its
        bytes."""
        dt = self.dt
        if dt in ALIGN16B and n != 128:
            raise TensorMapError(f"{what} = {n} of {dt} must be 128")
        if dt in SHARED_CHUNK and n % 16:
            raise TensorMapError(f"{what} = {n} of packed type {dt} must be a multiple of 16 elements")
        nbytes = self.row_bytes(n)
        span = SWIZZLE[self.sw][3]
        if self.il == "NONE" and span and nbytes > span:
            raise TensorMapError(f"inner box of {nbytes} bytes exceeds the {span}-byte span of swizzle {self.sw}")
        return nbytes

    @staticmethod
    def box_bytes(nbytes: int, what: str) -> None:
        """The whole box against :data:`BOX_BYTES_MAX` (a driver rule ``cuda.h`` does not state)."""
        if nbytes > BOX_BYTES_MAX:
            raise TensorMapError(f"the box moves {nbytes} bytes ({what}), more than {BOX_BYTES_MAX}")

    def write(self, fields: dict[str, Sequence[int]], box_bytes: int) -> np.ndarray:
        """The map in the hardware layout: the shared fields, the kind-specific ``fields`` and ``box_bytes``."""
        code, tf32 = HW_ELEMTYPE[DATA_TYPES[self.dt][0]]
        sw_mode, sw_atom = SWIZZLE[self.sw][1], SWIZZLE[self.sw][2]
        strides = [s >> 4 for s in self.strides]
        common = {"global_address": [self.address], "rank_m1": [self.rank - 1], "elemtype": [code],
                  "interleave": [INTERLEAVE[self.il]], "swizzle": [sw_mode], "oob_fill": [OOB_FILL[self.fill]],
                  "tf32": [tf32], "l2_promotion": [self.l2], "swizzle_atom": [sw_atom],
                  "global_stride_lo": [s & 0xFFFFFFFF for s in strides], "global_stride_hi": [s >> 32 for s in strides],
                  "global_dim_m1": [d - 1 for d in self.dims], "element_stride_m1": [e - 1 for e in self.estr],
                  "box_bytes": [box_bytes], "swizzle_repeat": [SWIZZLE[self.sw][3] * 8 or 16]}
        bits = 0
        for name, values in {**common, **fields}.items():
            first, width, _, step = LAYOUT[name]
            for i, v in enumerate(values):
                bits |= (int(v) & ((1 << width) - 1)) << (first + i * step)
        return np.frombuffer(bits.to_bytes(MAP_BYTES, "little"), dtype=np.uint8).copy()


def encode_tiled(data_type: str | int, rank: int, global_address: int, global_dim: Sequence[int],
                 global_strides: Sequence[int], box_dim: Sequence[int], element_strides: Sequence[int] | None = None,
                 interleave: str | int = "NONE", swizzle: str | int = "NONE", l2_promotion: str | int = "NONE",
                 oob_fill: str | int = "NONE") -> np.ndarray:
    """The tensor map ``cuTensorMapEncodeTiled`` describes, as ``numpy.uint8[128]``, or :class:`TensorMapError`.

    Arguments in the driver's order and units (dimension 0 innermost; ``global_strides`` in bytes, rank - 1 of
    them); enums as the driver's integer values or names (``"128B"`` or ``"CU_TENSOR_MAP_SWIZZLE_128B"``).
    ``element_strides`` defaults to all ones."""
    c = _Common("tiled", data_type, rank, global_address, global_dim, global_strides, element_strides,
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
    steps = [-(-b // e) for b, e in zip(box, c.estr, strict=True)]  # per dimension, elementStrides[0] included
    c.box_bytes(c.row_bytes(steps[0]) * int(np.prod(steps[1:], dtype=np.int64)), "ceil(boxDim / elementStrides)")
    moved = [b // e for b, e in zip(box, c.estr, strict=True)]  # the driver's box-bytes word rounds down
    return c.write({"box_dim0_m1": [box[0] - 1], "box_dim_m1": [b - 1 for b in box[1:]]},
                   int(np.prod(moved, dtype=np.int64)) * DATA_TYPES[c.dt][2] // 8)


def encode_im2col(data_type: str | int, rank: int, global_address: int, global_dim: Sequence[int],
                  global_strides: Sequence[int], pixel_box_lower_corner: Sequence[int],
                  pixel_box_upper_corner: Sequence[int], channels_per_pixel: int, pixels_per_column: int,
                  element_strides: Sequence[int] | None = None, interleave: str | int = "NONE",
                  swizzle: str | int = "NONE", l2_promotion: str | int = "NONE",
                  oob_fill: str | int = "NONE") -> np.ndarray:
    """The tensor map ``cuTensorMapEncodeIm2col`` describes (rank 3-5: NWC, NHWC, NDHWC with C innermost), as
    ``numpy.uint8[128]`` in the hardware layout (:data:`LAYOUT`), or :class:`TensorMapError`.

    The corners are the rank - 2 pixel-box offsets, W first (the order of the tensor's dimensions 1 ..): the lower
    one from the tensor's first pixel, the upper one from its last (the box spans ``lower[i]`` to
    ``globalDim[i + 1] - 1 + upper[i]``; it must not be empty)."""
    c = _Common("im2col", data_type, rank, global_address, global_dim, global_strides, element_strides,
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
    row = c.inner(cpp, "channelsPerPixel")
    if row % 16:
        raise TensorMapError(f"channelsPerPixel * element size = {row} bytes is not a multiple of 16")
    c.box_bytes(row * ppc, "channelsPerPixel x pixelsPerColumn")
    nbits = IM2COL_CORNER_BITS[c.rank]
    corners = sum(((v & ((1 << nbits) - 1)) << (i * nbits)) for i, v in enumerate(lo))
    corners |= sum(((v & ((1 << nbits) - 1)) << (16 + i * nbits)) for i, v in enumerate(hi))
    return c.write({"im2col": [1], "box_dim0_m1": [cpp - 1], "corners": [corners], "pixels_m1": [ppc - 1]},
                   cpp * ppc * DATA_TYPES[c.dt][2] // 8)
