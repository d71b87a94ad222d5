"""tcgen05 instruction descriptor (the 32-bit ``idesc`` operand of ``tcgen05.mma``).

Implements PTX ISA 9.7.16.4.2:
  * Table 42 -- ``.kind::tf32``, ``.kind::f16``, ``.kind::f8f6f4``, ``.kind::i8``;
  * Table 43 -- ``.kind::mxf8f6f4``;
  * Table 44 -- ``.kind::mxf4`` and ``.kind::mxf4nvf4``.

Why a table-driven codec: the three tables differ in which bits are reserved and how M is
scaled (M>>4 in 5 bits for Table 42, M>>7 in 2 bits for Tables 43/44), so every field is
declared once in ``FIELDS`` with its bit range and its allowed values, and both directions are
generated from that declaration.  Reserved bits are derived as "every bit no field claims".

Values are given in *user units*: ``n=256`` (encoded as N>>3), ``m=128`` (encoded as M>>4 or
M>>7), type fields as table codes or names (``atype="e4m3"``).  ``decode_idesc`` returns the
same user units, so ``encode_idesc(kind, decode_idesc(kind, w)) == w`` for every word without
reserved bits set.

``strict=True`` (default) rejects values the tables do not list (e.g. SF ID 1 for mxf4,
transpose for mxf4).  ``strict=False`` only checks that the value fits its bit field, so a
probe can build deliberately invalid descriptors; ``reserved_bits=`` sets reserved bits (probe
only, always requires ``strict=False``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

KINDS: tuple[str, ...] = ("tf32", "f16", "f8f6f4", "i8", "mxf8f6f4", "mxf4", "mxf4nvf4")

#: Table 42/43 type codes of atype/btype for the f8f6f4 families.
F8F6F4_TYPE_CODES: dict[str, int] = {"e4m3": 0, "e5m2": 1, "e2m3": 3, "e3m2": 4, "e2m1": 5}
#: Table 42 codes for the other kinds.
F16_TYPE_CODES: dict[str, int] = {"f16": 0, "bf16": 1}
TF32_TYPE_CODES: dict[str, int] = {"tf32": 2}
I8_TYPE_CODES: dict[str, int] = {"u8": 0, "s8": 1}
MXF4_TYPE_CODES: dict[str, int] = {"e2m1": 1}
DTYPE_CODES: dict[str, int] = {"f16": 0, "f32": 1, "s32": 2}
SCALE_TYPE_CODES: dict[str, int] = {"ue4m3": 0, "ue8m0": 1}


@dataclass(frozen=True)
class Field:
    """One bit field of an instruction descriptor.

    ``shift`` is the number of low bits of the user value that are not stored (N>>3, M>>4,
    M>>7).  ``allowed`` lists the user values the table allows (None = any value that fits).
    ``names`` maps accepted spellings to user values.
    """

    name: str
    lo: int
    width: int
    allowed: frozenset[int] | None = None
    shift: int = 0
    names: Mapping[str, int] | None = None
    doc: str = ""

    @property
    def mask(self) -> int:
        return ((1 << self.width) - 1) << self.lo


def _f(name: str, lo: int, width: int, allowed=None, shift: int = 0, names=None, doc: str = "") -> Field:
    return Field(name, lo, width, None if allowed is None else frozenset(allowed), shift, names, doc)


_N_ALLOWED = range(8, 257, 8)  # Table 39: every kind allows N in 8..256 step 8 at most

_TABLE42_COMMON = (
    _f("sparsity_selector", 0, 2, range(4), doc="Table 42 bits 0-1"),
    _f("sparse", 2, 1, (0, 1), doc="bit 2: Dense = 0, Sparse = 1"),
    _f("negate_a", 13, 1, (0, 1)),
    _f("negate_b", 14, 1, (0, 1)),
    _f("transpose_a", 15, 1, (0, 1)),
    _f("transpose_b", 16, 1, (0, 1)),
    _f("n", 17, 6, _N_ALLOWED, shift=3, doc="N >> 3"),
    _f("m", 24, 5, (32, 64, 128, 256), shift=4, doc="M >> 4 (32 only with .ws)"),
    _f("max_shift", 30, 2, range(4), doc=".ws B-reuse max shift: 0 none, 1: 8, 2: 16, 3: 32"),
)

FIELDS: dict[str, tuple[Field, ...]] = {
    "tf32": _TABLE42_COMMON
    + (
        _f("saturate", 3, 1, (0,)),
        _f("dtype", 4, 2, (1,), names=DTYPE_CODES),
        _f("atype", 7, 3, (2,), names=TF32_TYPE_CODES),
        _f("btype", 10, 3, (2,), names=TF32_TYPE_CODES),
    ),
    "f16": _TABLE42_COMMON
    + (
        _f("saturate", 3, 1, (0,)),
        _f("dtype", 4, 2, (0, 1), names=DTYPE_CODES),
        _f("atype", 7, 3, (0, 1), names=F16_TYPE_CODES),
        _f("btype", 10, 3, (0, 1), names=F16_TYPE_CODES),
    ),
    "f8f6f4": _TABLE42_COMMON
    + (
        _f("saturate", 3, 1, (0,)),
        # Table 42 lists F32 = 1 only in the f8f6f4 column, but Table 39 allows .f16 D for
        # kind::f8f6f4; accept both (see AMBIGUITIES in the package docstring).
        _f("dtype", 4, 2, (0, 1), names=DTYPE_CODES),
        _f("atype", 7, 3, F8F6F4_TYPE_CODES.values(), names=F8F6F4_TYPE_CODES),
        _f("btype", 10, 3, F8F6F4_TYPE_CODES.values(), names=F8F6F4_TYPE_CODES),
    ),
    "i8": tuple(f for f in _TABLE42_COMMON if f.name not in ("negate_a", "negate_b"))
    + (
        _f("negate_a", 13, 1, (0,)),
        _f("negate_b", 14, 1, (0,)),
        _f("saturate", 3, 1, (0, 1)),
        _f("dtype", 4, 2, (2,), names=DTYPE_CODES),
        _f("atype", 7, 3, (0, 1), names=I8_TYPE_CODES),
        _f("btype", 10, 3, (0, 1), names=I8_TYPE_CODES),
    ),
    "mxf8f6f4": (
        _f("sparse", 2, 1, (0, 1)),
        _f("sfb_id", 4, 2, range(4), doc="Matrix B Scale Factor Data ID"),
        _f("atype", 7, 3, F8F6F4_TYPE_CODES.values(), names=F8F6F4_TYPE_CODES),
        _f("btype", 10, 3, F8F6F4_TYPE_CODES.values(), names=F8F6F4_TYPE_CODES),
        _f("negate_a", 13, 1, (0, 1)),
        _f("negate_b", 14, 1, (0, 1)),
        _f("transpose_a", 15, 1, (0, 1)),
        _f("transpose_b", 16, 1, (0, 1)),
        _f("n", 17, 6, _N_ALLOWED, shift=3),
        _f("scale_type", 23, 1, (1,), names=SCALE_TYPE_CODES, doc="UE8M0 = 1"),
        _f("m", 27, 2, (128, 256), shift=7, doc="M >> 7"),
        _f("sfa_id", 29, 2, range(4), doc="Matrix A Scale Factor Data ID"),
    ),
}
_MXF4_COMMON = (
    _f("sparse", 2, 1, (0, 1)),
    _f("sfb_id", 4, 2, (0, 2)),
    _f("atype", 7, 3, (1,), names=MXF4_TYPE_CODES),
    _f("btype", 10, 2, (1,), names=MXF4_TYPE_CODES),
    _f("negate_a", 13, 1, (0, 1)),
    _f("negate_b", 14, 1, (0, 1)),
    _f("transpose_a", 15, 1, (0,)),
    _f("transpose_b", 16, 1, (0,)),
    _f("n", 17, 6, _N_ALLOWED, shift=3),
    _f("m", 27, 2, (128, 256), shift=7),
    _f("sfa_id", 29, 2, (0, 2)),
    _f("k96", 31, 1, (0, 1), doc="K dimension: 0 = dense K64 / sparse K128, 1 = dense K96"),
)
FIELDS["mxf4"] = _MXF4_COMMON + (_f("scale_type", 23, 1, (1,), names=SCALE_TYPE_CODES),)
FIELDS["mxf4nvf4"] = _MXF4_COMMON + (_f("scale_type", 23, 1, (0, 1), names=SCALE_TYPE_CODES),)


def reserved_mask(kind: str) -> int:
    """Bits no field of ``kind`` claims: they must be 0 (Tables 42-44 "Reserved")."""
    used = 0
    for f in _fields(kind):
        used |= f.mask
    return 0xFFFFFFFF & ~used


def _fields(kind: str) -> tuple[Field, ...]:
    try:
        return FIELDS[kind]
    except KeyError:
        raise ValueError(f"unknown tcgen05 kind {kind!r}; expected one of {KINDS}") from None


# Defaults that make a minimal call produce a valid dense descriptor.
_DEFAULTS: dict[str, dict[str, int | str]] = {
    "tf32": {"dtype": 1, "atype": 2, "btype": 2},
    "f16": {"dtype": 1},
    "f8f6f4": {"dtype": 1},
    "i8": {"dtype": 2, "atype": 1, "btype": 1},
    "mxf8f6f4": {"scale_type": 1},
    "mxf4": {"atype": 1, "btype": 1, "scale_type": 1},
    "mxf4nvf4": {"atype": 1, "btype": 1, "scale_type": 1},
}


def encode_idesc(
    kind: str,
    fields: Mapping[str, int | str] | None = None,
    *,
    strict: bool = True,
    reserved_bits: int = 0,
    **kw: int | str,
) -> int:
    """Pack ``fields`` into the 32-bit instruction descriptor of ``kind`` (Tables 42-44).

    ``m`` and ``n`` are required.  Unknown field names, values that do not fit, values that are
    not multiples of the dropped LSBs and (with ``strict``) values the table does not list all
    raise ``ValueError`` naming the field.  ``reserved_bits`` is OR-ed in verbatim and must lie
    inside ``reserved_mask(kind)``; it needs ``strict=False``.
    """
    flds = _fields(kind)
    by_name = {f.name: f for f in flds}
    values: dict[str, int | str] = dict(_DEFAULTS[kind])
    values.update(fields or {})
    values.update(kw)
    for req in ("m", "n"):
        if req not in values:
            raise ValueError(f"idesc {kind}: field {req!r} is required")
    unknown = set(values) - set(by_name)
    if unknown:
        raise ValueError(f"idesc {kind}: unknown field(s) {sorted(unknown)}; known: {sorted(by_name)}")
    word = 0
    for name, raw in values.items():
        f = by_name[name]
        if isinstance(raw, str):
            if not f.names or raw.lower() not in f.names:
                raise ValueError(f"idesc {kind}: field {name!r} has no value named {raw!r}")
            val = f.names[raw.lower()]
        else:
            val = int(raw)
        if val < 0:
            raise ValueError(f"idesc {kind}: field {name!r} = {val} is negative")
        if val & ((1 << f.shift) - 1):
            raise ValueError(f"idesc {kind}: field {name!r} = {val} is not a multiple of {1 << f.shift}")
        enc = val >> f.shift
        if enc >= (1 << f.width):
            raise ValueError(
                f"idesc {kind}: field {name!r} = {val} does not fit bits {f.lo}-{f.lo + f.width - 1}"
            )
        if strict and f.allowed is not None and val not in f.allowed:
            raise ValueError(
                f"idesc {kind}: field {name!r} = {val} is not allowed by the table "
                f"(allowed: {sorted(f.allowed)}); pass strict=False to build it anyway"
            )
        word |= enc << f.lo
    if reserved_bits:
        if strict:
            raise ValueError(f"idesc {kind}: reserved bits must be 0 (got {reserved_bits:#x}); use strict=False")
        bad = reserved_bits & ~reserved_mask(kind)
        if bad:
            raise ValueError(f"idesc {kind}: reserved_bits {reserved_bits:#x} overlap real fields ({bad:#x})")
        word |= reserved_bits
    return word


def decode_idesc(kind: str, word: int, *, strict: bool = False) -> dict[str, int]:
    """Unpack a 32-bit descriptor of ``kind`` into user units (inverse of ``encode_idesc``).

    The result always has the key ``reserved_bits``: the word masked with the reserved bits
    (0 for a well-formed descriptor), so a probe or a model can report them instead of silently
    dropping them.  With ``strict`` a nonzero ``reserved_bits`` or a value outside the table
    raises ``ValueError``.
    """
    if not 0 <= word < (1 << 32):
        raise ValueError(f"idesc must be a 32-bit unsigned value, got {word:#x}")
    out: dict[str, int] = {}
    for f in _fields(kind):
        val = ((word >> f.lo) & ((1 << f.width) - 1)) << f.shift
        if strict and f.allowed is not None and val not in f.allowed:
            raise ValueError(f"idesc {kind}: decoded {f.name}={val} not allowed by the table")
        out[f.name] = val
    out["reserved_bits"] = word & reserved_mask(kind)
    if strict and out["reserved_bits"]:
        raise ValueError(f"idesc {kind}: reserved bits set: {out['reserved_bits']:#010x}")
    return out


def mma_k(kind: str, *, sparse: bool = False, k96: bool = False) -> int:
    """K of one MMA (Table 39): implied by the kind and sparsity, never encoded (9.7.16.2.2)."""
    base = {"tf32": 8, "f16": 16, "f8f6f4": 32, "i8": 32, "mxf8f6f4": 32, "mxf4": 64, "mxf4nvf4": 64}[kind]
    if k96:
        if kind not in ("mxf4", "mxf4nvf4") or sparse:
            raise ValueError("K = 96 exists only for dense kind::mxf4 / mxf4nvf4 (Table 39, Table 44 bit 31)")
        return 96
    return base * (2 if sparse else 1)
