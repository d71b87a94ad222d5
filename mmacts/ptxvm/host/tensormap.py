"""``cuTensorMapEncodeTiled`` for the VM: the driver's parameters, validation rules and error result, producing
the 128-byte tensor map that the VM's ``cp.async.bulk.tensor`` reads.

Why a table of our own: the driver's binary layout is unpublished, so the VM keeps the fields that PTX's
``tensormap.replace`` (9.7.9.28) names at offsets of its own. This module writes those fields from the PTX ISA's
field list and enumerations (the values ``tensormap.replace`` takes), in :data:`LAYOUT`, with no import of the VM;
``test_tensormap.py`` proves the two agree by decoding with the VM and running real TMA loads on it.

Translation the driver does and a wrong table would get wrong: the driver's ``CUtensorMapDataType`` order
(..., FLOAT64 = 8, BFLOAT16 = 9, FLOAT32_FTZ = 10, ...) is not the PTX ``elemtype`` order (.f32.ftz = 8, .f64 = 9,
.bf16 = 10); the 128B atom swizzles are swizzle_mode 128B plus a swizzle_atomicity; ``globalStrides`` (rank - 1
entries, bytes, stride of dimension i + 1) go to ``global_stride`` ord i; ``rank`` is stored minus one.
L2 promotion is validated but has no ``tensormap.replace`` field, so it is not stored (a cache hint).
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
    "fill_mode": (124, "<u4", 1),
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
INTERLEAVE = {"NONE": 0, "16B": 1, "32B": 2}  # driver enum == PTX interleave_layout value
# CUtensorMapSwizzle -> (driver enum, PTX swizzle_mode, PTX swizzle_atomicity, span in bytes)
SWIZZLE = {"NONE": (0, 0, 0, 0), "32B": (1, 1, 0, 32), "64B": (2, 2, 0, 64), "128B": (3, 3, 0, 128),
           "128B_ATOM_32B": (4, 3, 1, 128), "128B_ATOM_32B_FLIP_8B": (5, 3, 2, 128), "128B_ATOM_64B": (6, 3, 3, 128)}
L2_PROMOTION = {"NONE": 0, "L2_64B": 1, "L2_128B": 2, "L2_256B": 3}
OOB_FILL = {"NONE": 0, "NAN_REQUEST_ZERO_FMA": 1}  # driver enum == PTX fill_mode value


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


def encode_tiled(data_type: str | int, rank: int, global_address: int, global_dim: Sequence[int],
                 global_strides: Sequence[int], box_dim: Sequence[int], element_strides: Sequence[int] | None = None,
                 interleave: str | int = "NONE", swizzle: str | int = "NONE", l2_promotion: str | int = "NONE",
                 oob_fill: str | int = "NONE") -> np.ndarray:
    """The tensor map ``cuTensorMapEncodeTiled`` describes, as ``numpy.uint8[128]``, or :class:`TensorMapError`.

    Arguments in the driver's order and units (dimension 0 innermost; ``global_strides`` in bytes, rank - 1 of
    them); enums as the driver's integer values or names (``"128B"`` or ``"CU_TENSOR_MAP_SWIZZLE_128B"``).
    ``element_strides`` defaults to all ones."""
    dt = _enum(DATA_TYPES, data_type, "tensorDataType", "CU_TENSOR_MAP_DATA_TYPE_")
    il = _enum(INTERLEAVE, interleave, "interleave", "CU_TENSOR_MAP_INTERLEAVE_")
    sw = _enum(SWIZZLE, swizzle, "swizzle", "CU_TENSOR_MAP_SWIZZLE_")
    _enum(L2_PROMOTION, l2_promotion, "l2Promotion", "CU_TENSOR_MAP_")
    fill = _enum(OOB_FILL, oob_fill, "oobFill", "CU_TENSOR_MAP_FLOAT_OOB_FILL_")
    _, elemtype, bits, is_float = DATA_TYPES[dt]
    rank = int(rank)
    if not 1 <= rank <= 5:
        raise TensorMapError(f"tensorRank {rank} must be in [1, 5]")
    if il != "NONE" and rank < 3:
        raise TensorMapError(f"tensorRank {rank} must be at least 3 when interleave is {il}")
    dims = [int(d) for d in global_dim]
    strides = [int(s) for s in global_strides]
    box = [int(b) for b in box_dim]
    estr = [1] * rank if element_strides is None else [int(e) for e in element_strides]
    for name, arr, want in (("globalDim", dims, rank), ("globalStrides", strides, rank - 1), ("boxDim", box, rank),
                            ("elementStrides", estr, rank)):
        if len(arr) != want:
            raise TensorMapError(f"{name} has {len(arr)} entries, tensorRank {rank} needs {want}")
    addr_align = 32 if il == "32B" or dt in ("16U4_ALIGN16B", "16U6_ALIGN16B") else 16
    if global_address % addr_align:
        raise TensorMapError(f"globalAddress {global_address:#x} is not {addr_align}-byte aligned")
    for i, d in enumerate(dims):
        if not 0 < d <= 2**32:
            raise TensorMapError(f"globalDim[{i}] = {d} must be in [1, 2^32]")
    stride_align = 32 if il == "32B" else 16
    for i, s in enumerate(strides):
        if s % stride_align or not 0 <= s < 2**40:
            raise TensorMapError(f"globalStrides[{i}] = {s} must be a multiple of {stride_align} and below 2^40")
    for i, b in enumerate(box):
        if not 0 < b <= 256:
            raise TensorMapError(f"boxDim[{i}] = {b} must be in [1, 256]")
    for i, e in enumerate(estr):
        if not 0 < e <= 8:
            raise TensorMapError(f"elementStrides[{i}] = {e} must be in [1, 8]")
    if dt in SHARED_CHUNK:
        if box[0] % 16:
            raise TensorMapError(f"boxDim[0] = {box[0]} of packed type {dt} must be a multiple of 16 elements")
        inner = box[0] // 16 * SHARED_CHUNK[dt]
    else:
        inner = box[0] * bits // 8
    if il == "NONE":
        if (box[0] * bits) % (16 * 8):
            raise TensorMapError(f"boxDim[0] * element size = {box[0] * bits / 8:g} bytes is not a multiple of 16")
        span = SWIZZLE[sw][3]
        if span and inner > span:
            raise TensorMapError(f"inner box of {inner} bytes exceeds the {span}-byte span of swizzle {sw}")
    if il == "32B" and sw != "32B":
        raise TensorMapError(f"interleave 32B requires swizzle 32B, got {sw}")
    if fill != "NONE" and not is_float:
        raise TensorMapError(f"oobFill {fill} needs a floating-point tensorDataType, got {dt}")
    if any(d == 2**32 for d in dims):  # allowed by the driver, not representable in a 32-bit global_dim field
        raise TensorMapError("globalDim of 2^32 does not fit the 32-bit global_dim field of the VM's map",
                             "CUDA_ERROR_NOT_SUPPORTED")

    out = np.zeros(MAP_BYTES, dtype=np.uint8)

    def put(name: str, values: Sequence[int]) -> None:
        off, dtype, count = LAYOUT[name]
        vals = list(values) + [0] * (count - len(values))
        raw = np.array(vals, dtype=dtype).view(np.uint8)
        out[off:off + raw.size] = raw

    put("global_address", [global_address])
    put("rank", [rank - 1])
    put("elemtype", [elemtype])
    put("box_dim", box)
    put("element_stride", estr)
    put("global_dim", dims)
    put("global_stride", strides)
    put("interleave_layout", [INTERLEAVE[il]])
    put("swizzle_mode", [SWIZZLE[sw][1]])
    put("swizzle_atomicity", [SWIZZLE[sw][2]])
    put("fill_mode", [OOB_FILL[fill]])
    return out
