"""Instruction descriptor (idesc) and shared-memory descriptor decoding, generated from the spec catalog.

Every field position, fixed value, encoding and allowed-value set comes from the transcribed tables
(``mmacts.spec``: Table 40 for the shared-memory descriptor, Tables 42/43/44 for the idesc, Table 39
for the M/N values a kind allows). Nothing here is shared with the host encoders
(``reference.tcgen05``): this is the PTX VM's own, second reading.

Errors: a reserved bit set, a fixed field with the wrong value, or a value the table does not list
raises ``ValueError`` with a one-line message naming the field and the value.

Readings the spec leaves open (ids of ``mmacts/ambiguity/register.yaml``):

* AMB-SDESC-53-60 -- bits 53-60 "0xb00000000" read as 8 zero bits (the catalog's reading).
* AMB-SDESC-VERSION -- bits 46-48 must be exactly 0b001.
* AMB-SDESC-UNLISTED-BITS -- bits 14-15 and 30-31 (listed by no Table 40 row) are reserved: must be 0.
* AMB-IDESC-RESERVED / AMB-IDESC-BIT31-MXF8F6F4 -- every bit a table marks Reserved must be 0
  (incl. bit 31 for mxf8f6f4 and bit 12 for mxf4/mxf4nvf4).
* AMB-IDESC-M-FIELD -- block-scaled M is bits 27-28 holding M >> 7 (Tables 43/44), bits 24-26 reserved.
* SF ID with K = 96 (FINDING, no register id yet): Table 44 lists SF ID 0 or 2 for mxf4/mxf4nvf4,
  but 9.7.16.10.7.2.4 / .3.4 (block32, K = 96) say the SF ID is a byte offset and show IDs 00, 01, 10,
  11 (Figures 234-237). With bit 31 set the decoder defers the SF-ID check to the MMA, which applies
  the K = 96 prose (0-3 for block32, 0/2 for block16).
* AMB-SFID-4X-TABLE44 -- the idesc decoder accepts what Table 44 lists (SF ID 0 or 2); the stricter
  scale_vec rule (4X needs SF ID 0) is applied by the MMA, which knows the qualifier.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from mmacts.spec import queries as Q
from mmacts.spec.catalog import load

BLOCK_SCALED_KINDS = ("mxf8f6f4", "mxf4", "mxf4nvf4")
KINDS = ("f16", "tf32", "f8f6f4", "i8") + BLOCK_SCALED_KINDS

#: short names of the Table 40 swizzle encodings (spec names -> VM names)
SWIZZLE_SHORT = {
    "No swizzling": "none",
    "128-Byte with 32B atomic swizzling": "128B_base32B",
    "128-Byte swizzling": "128B",
    "64-Byte swizzling": "64B",
    "32-Byte swizzling": "32B",
}


@cache
def catalog():
    return load()


# ---------------------------------------------------------------------------------------------- idesc
@dataclass(frozen=True)
class _IField:
    key: str  # VM name of the field
    lo: int
    hi: int
    fixed: int | None
    encodings: dict[str, int]
    values: tuple[int, ...]
    shift: int  # formula 'N >> 3' -> 3
    printed: str

    @property
    def mask(self) -> int:
        return ((1 << (self.hi - self.lo + 1)) - 1) << self.lo


_KEY_PATTERNS = (
    (r"^Sparsity selector", "sparsity_selector"),
    (r"^Sparsity$", "sparse"),
    (r"^Saturate", "saturate"),
    (r"^dtype", "dtype"),
    (r"^Matrix B Scale Factor Data ID", "sfb_id"),
    (r"^Matrix A Scale Factor Data ID", "sfa_id"),
    (r"^atype", "atype"),
    (r"^btype", "btype"),
    (r"^Negate A", "negate_a"),
    (r"^Negate B", "negate_b"),
    (r"^Transpose A", "transpose_a"),
    (r"^Transpose B", "transpose_b"),
    (r"^N, Dimension", "n"),
    (r"^M, Dimension", "m"),
    (r"^Scale Matrix Type", "scale_type"),
    (r"^K Dimension", "k96"),
    (r"^Maximum shift", "max_shift"),
    (r"^Reserved", "reserved"),
)


def _key_of(description: str) -> str:
    for pat, key in _KEY_PATTERNS:
        if re.search(pat, description.strip()):
            return key
    raise ValueError(f"spec catalog: unknown idesc field {description!r}")


@cache
def idesc_layout(kind: str) -> tuple[_IField, ...]:
    """The idesc fields of ``kind`` as the catalog transcribes Tables 42-44."""
    if kind not in KINDS:
        raise ValueError(f"idesc: unknown kind {kind!r}")
    out = []
    for f in Q.idesc_fields(catalog(), kind):
        shift = 0
        if f.formula:
            m = re.fullmatch(r"[MN] >> (\d+)", f.formula)
            if not m:
                raise ValueError(f"spec catalog: unreadable formula {f.formula!r}")
            shift = int(m.group(1))
        out.append(_IField(_key_of(f.name), f.lo, f.hi, f.fixed, dict(f.encodings), tuple(f.values), shift, f.printed))
    return tuple(out)


@cache
def _mn_allowed(kind: str) -> tuple[frozenset[int], frozenset[int]]:
    """(M values, N values) Table 39 allows for ``kind`` over every row (ws included)."""
    ms: set[int] = set()
    ns: set[int] = set()
    for s in Q.tcgen05_shapes(catalog(), kind):
        ms.add(s.M)
        ns.update(s.N)
    return frozenset(ms), frozenset(ns)


def decode_idesc(kind: str, word: int) -> dict[str, Any]:
    """Decode the 32-bit instruction descriptor of ``kind`` (Tables 42/43/44).

    Returns user units: ``m``/``n`` as dimensions, ``sparse``, ``negate_*``, ``transpose_*``,
    ``k96`` as 0/1, ``atype``/``btype``/``dtype``/``scale_type`` as table codes with the spelled
    type in ``atype_name`` etc. (lower case, e.g. ``"e4m3"``, ``"ue8m0"``). Raises ``ValueError``
    on reserved bits, fixed fields, values the table does not list, and M/N outside Table 39.
    """
    word = int(word)
    if not 0 <= word < 1 << 32:
        raise ValueError(f"idesc: value {word:#x} is not a 32-bit word")
    out: dict[str, Any] = {"kind": kind}
    deferred: list[tuple[_IField, int]] = []
    for f in idesc_layout(kind):
        raw = (word & f.mask) >> f.lo
        if f.fixed is not None:
            if raw != f.fixed:
                name = "reserved" if f.key == "reserved" else f.key
                raise ValueError(f"idesc {kind}: {name} bits {f.lo}-{f.hi} = {raw:#x}, must be {f.fixed}")
            if f.key != "reserved":
                out[f.key] = raw
            continue
        if f.encodings:
            names = {v: k for k, v in f.encodings.items()}
            if raw not in names:
                raise ValueError(f"idesc {kind}: {f.key} (bits {f.lo}-{f.hi}) = {raw} is not listed "
                                 f"(allowed {sorted(names)})")
            out[f.key] = raw
            if f.key in ("atype", "btype", "dtype", "scale_type"):
                out[f.key + "_name"] = names[raw].lower()
            continue
        if f.values:
            if f.key in ("sfa_id", "sfb_id") and raw not in f.values:
                deferred.append((f, raw))  # checked below, once bit 31 (K = 96) is known
                out[f.key] = raw
                continue
            if raw not in f.values:
                raise ValueError(f"idesc {kind}: {f.key} (bits {f.lo}-{f.hi}) = {raw} is not allowed "
                                 f"(allowed {list(f.values)})")
            out[f.key] = raw
            continue
        out[f.key] = raw << f.shift
    if deferred and not out.get("k96"):
        f, raw = deferred[0]
        raise ValueError(f"idesc {kind}: {f.key} (bits {f.lo}-{f.hi}) = {raw} is not allowed "
                         f"(allowed {list(f.values)})")
    ms, ns = _mn_allowed(kind)
    if out["m"] not in ms:
        raise ValueError(f"idesc {kind}: M = {out['m']} (field {out['m'] >> _shift(kind, 'm')}) not in Table 39 "
                         f"{sorted(ms)}")
    if out["n"] not in ns:
        raise ValueError(f"idesc {kind}: N = {out['n']} not in Table 39 (8..256 step 8)")
    out.setdefault("k96", 0)
    out.setdefault("sfa_id", 0)
    out.setdefault("sfb_id", 0)
    if out["k96"] and out["sparse"]:
        raise ValueError(f"idesc {kind}: K dimension = 1 (dense K=96) with the sparsity bit set")
    return out


def _shift(kind: str, key: str) -> int:
    return next(f.shift for f in idesc_layout(kind) if f.key == key)


# ---------------------------------------------------------------------------------------------- smem desc
@cache
def _smem_layout():
    return tuple(Q.smem_desc_fields(catalog()))


@cache
def swizzle_codes() -> dict[int, str]:
    """Table 40 bits 61-63 code -> VM swizzle name (none/32B/64B/128B/128B_base32B)."""
    return {m.code: SWIZZLE_SHORT[m.name] for m in Q.smem_swizzle_modes(catalog())}


@cache
def pattern_bytes() -> dict[str, int | None]:
    """Table 41: where each swizzle's repeating pattern starts (None: the table says nothing)."""
    return {SWIZZLE_SHORT[m.name]: m.pattern_bytes for m in Q.smem_swizzle_modes(catalog())}


@cache
def _unlisted_mask() -> int:
    used = 0
    for f in _smem_layout():
        used |= ((1 << (f.hi - f.lo + 1)) - 1) << f.lo
    return ((1 << 64) - 1) & ~used


def decode_smem_desc(word: int) -> dict[str, Any]:
    """Decode a 64-bit shared-memory matrix descriptor (Table 40) into byte quantities.

    Keys: ``start_address``, ``lbo``, ``sbo`` (bytes; the fields hold (x & 0x3FFFF) >> 4, so the
    decoded values are field << 4), ``base_offset``, ``lbo_mode`` ("relative"/"absolute"),
    ``swizzle`` (VM name), ``swizzle_code``, ``fixed_46_48``, ``fixed_53_60``.
    """
    word = int(word)
    if not 0 <= word < 1 << 64:
        raise ValueError(f"smem descriptor: value {word:#x} is not a 64-bit word")
    bad = word & _unlisted_mask()
    if bad:
        raise ValueError(f"smem descriptor: unlisted bits (14-15, 30-31) set: {bad:#018x}")
    out: dict[str, Any] = {}
    for f in _smem_layout():
        raw = (word >> f.lo) & ((1 << (f.hi - f.lo + 1)) - 1)
        if f.fixed is not None and raw != f.fixed:
            raise ValueError(f"smem descriptor: {f.name} (bits {f.lo}-{f.hi}) = {raw:#x}, must be {f.fixed:#x}")
        if f.name == "swizzle":
            if raw not in f.encodings.values():
                raise ValueError(f"smem descriptor: swizzle (bits 61-63) = {raw} is invalid (Table 40)")
            out["swizzle_code"] = raw
            out["swizzle"] = swizzle_codes()[raw]
        elif f.name == "lbo_mode":
            out["lbo_mode"] = "absolute" if raw else "relative"
        elif f.formula:
            key = {"start_address": "start_address", "leading_byte_offset": "lbo", "stride_byte_offset": "sbo"}[f.name]
            out[key] = raw << 4
        elif f.name == "fixed_0b001":
            out["fixed_46_48"] = raw
        elif f.name == "fixed_zero":
            out["fixed_53_60"] = raw
        else:
            out[f.name] = raw
    if out["lbo_mode"] == "absolute":
        # 9.7.16.3.1.2.1: absolute mode needs 128B swizzle (16B atoms) and base offset 0
        if out["swizzle"] != "128B":
            raise ValueError(f"smem descriptor: lbo_mode absolute with swizzle {out['swizzle']} (needs 128B)")
        if out["base_offset"]:
            raise ValueError(f"smem descriptor: lbo_mode absolute with base_offset {out['base_offset']} (needs 0)")
    return out
