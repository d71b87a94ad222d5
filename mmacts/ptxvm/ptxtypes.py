"""PTX fundamental types as the VM stores and computes them.

Registers are stored as raw bits in an unsigned numpy array of the register's declared width
(predicates as ``bool``); an instruction reinterprets those bits as its own type (``.s32`` views
them as ``int32``, ``.f32`` as ``float32``). That is exactly the PTX model: a register holds bits,
the instruction type says how to read them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PtxType:
    """One PTX type: name, width in bits, and how its bits are read."""

    name: str
    bits: int
    kind: str
    """``u`` unsigned, ``s`` signed, ``b`` untyped bits, ``f`` float, ``pred``."""

    @property
    def dtype(self) -> np.dtype:
        """The numpy dtype whose values are this type's values."""
        if self.kind == "pred":
            return np.dtype(bool)
        if self.kind == "f":
            return np.dtype({16: np.float16, 32: np.float32, 64: np.float64}[self.bits])
        if self.kind == "s":
            return np.dtype(f"int{self.bits}")
        return np.dtype(f"uint{self.bits}")

    @property
    def udtype(self) -> np.dtype:
        """Unsigned storage dtype of the same width."""
        if self.kind == "pred":
            return np.dtype(bool)
        return np.dtype(f"uint{self.bits}")

    @property
    def signed(self) -> bool:
        return self.kind == "s"

    @property
    def nbytes(self) -> int:
        return max(1, self.bits // 8)


_TYPES: dict[str, PtxType] = {}
for _w in (8, 16, 32, 64):
    for _k in "usb":
        _TYPES[f"{_k}{_w}"] = PtxType(f"{_k}{_w}", _w, _k)
_TYPES["b128"] = PtxType("b128", 128, "b")
for _w in (16, 32, 64):
    _TYPES[f"f{_w}"] = PtxType(f"f{_w}", _w, "f")
_TYPES["f16x2"] = PtxType("f16x2", 32, "b")
_TYPES["bf16x2"] = PtxType("bf16x2", 32, "b")
_TYPES["bf16"] = PtxType("bf16", 16, "b")
_TYPES["pred"] = PtxType("pred", 1, "pred")

TYPE_NAMES = frozenset(_TYPES)


def ptx_type(name: str) -> PtxType:
    """The type called ``name`` (without the leading dot)."""
    try:
        return _TYPES[name.lstrip(".")]
    except KeyError:
        raise KeyError(f"unknown PTX type .{name.lstrip('.')}") from None


def is_type(name: str) -> bool:
    return name.lstrip(".") in _TYPES


def to_bits(values: np.ndarray, t: PtxType) -> np.ndarray:
    """``values`` (any numeric dtype) as ``t``'s unsigned bit pattern (wrap-around, no checks)."""
    if t.kind == "pred":
        return np.asarray(values, dtype=bool)
    v = np.asarray(values)
    if t.kind == "f":
        return v.astype(t.dtype).view(t.udtype)
    if v.dtype.kind == "f":
        raise TypeError("float value given for an integer type")
    return v.astype(t.udtype, copy=False) if v.dtype.itemsize >= t.udtype.itemsize else v.astype(t.udtype)


def from_bits(bits: np.ndarray, t: PtxType) -> np.ndarray:
    """Unsigned bits of ``t``'s width, read as ``t``'s values."""
    if t.kind == "pred":
        return bits.astype(bool)
    return np.ascontiguousarray(bits, dtype=t.udtype).view(t.dtype)
