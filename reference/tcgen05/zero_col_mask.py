"""tcgen05 zero-column mask descriptor (64-bit operand of ``tcgen05.mma.ws``).

Implements PTX ISA 9.7.16.4.3, Table 45, the sub-mask tables that follow it, and the four
worked examples.

Bit layout (Table 45):
  0-7 / 8-15 / 16-23 / 24-31  Start Count sc0..sc3  ("LSBs that must be skipped for sub-mask i")
  32..35                      First Span fs0..fs3   ("starting value for sub-mask i")
  36-38                       reserved
  39                          Non-Zero Mask: 0 -> mask is all zeros, 1 -> generate the mask
  40-47                       Skip Span
  48-55                       Use Span
  56-61                       Column Shift (max 16 for M=32, 32 otherwise)
  62-63                       not listed -> treated as reserved

Mask semantics: bit n of the N-bit mask = 1 means column n of B is replaced by zeros.
Sub-masks: M=128 one N-bit mask0; M=64 two N/2-bit masks (mask1 covers columns N/2..N-1);
M=32 four N/4-bit masks.

THE CONTRADICTION (cutlass-facts §8 #1-#3).  Table 45's *descriptions* say
Skip Span = (#columns where B is used) - 1 and Use Span = (#columns where 0s are used) - 1.
Every worked example decodes the other way round: Example 2 (Skip 2, Use 3, fs0 0) prints
``... 111 0000 111 0000`` i.e. runs of 4 used columns (0-bits) and 3 zeroed columns (1-bits), so
Skip Span + 1 = run of 1-bits (skipped columns) and Use Span + 1 = run of 0-bits (used columns).
CUTLASS's code and the field *names* agree with the examples.  ``reading="examples"`` (default)
implements that; ``reading="descriptions"`` implements the table text, so a hardware probe can
be checked against both.

Start count and first span, as the examples fix them: each sub-mask is a periodic pattern of
alternating runs; fs_i selects whether the first run is of 1-bits (fs=1, zeroed columns) or
0-bits (fs=0, used columns); sc_i columns of that pattern are consumed before column 0 of the
sub-mask (Example 4: mask1 with fs1=1, sc1=1 starts ``11`` = the 3-long 1-run minus 1).  Whether
sc may exceed the first run (the phase simply continues, as implemented) is not shown by any
example (inference).

Column shift: the MMA uses B columns shift..shift+N-1 (Example 4: N=128, shift 2 -> columns
2..129).  The mask is indexed by the MMA's column n (0..N-1), i.e. after the shift (inference:
the text does not say whether mask bit n refers to B column n or n+shift).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

READINGS = ("examples", "descriptions")
_RESERVED_MASK = (0b111 << 36) | (0b11 << 62)


def encode_zero_col_mask(
    *,
    start_counts: Sequence[int] = (0, 0, 0, 0),
    first_spans: Sequence[int] = (0, 0, 0, 0),
    non_zero_mask: int = 1,
    skip_span: int = 0,
    use_span: int = 0,
    column_shift: int = 0,
    reserved: int = 0,
) -> int:
    """Pack the raw Table 45 fields (spans are the raw field values, i.e. run length - 1).

    ``start_counts`` / ``first_spans`` are given as (sc0, sc1, sc2, sc3) -- note the spec's
    examples print them in the reverse order {sc3, sc2, sc1, sc0}.
    """
    if len(start_counts) != 4 or len(first_spans) != 4:
        raise ValueError("start_counts and first_spans take 4 values (index 0 = sub-mask 0)")
    word = 0
    for i, sc in enumerate(start_counts):
        if not 0 <= int(sc) <= 0xFF:
            raise ValueError(f"start count sc{i}={sc} does not fit 8 bits")
        word |= int(sc) << (8 * i)
    for i, fs in enumerate(first_spans):
        if int(fs) not in (0, 1):
            raise ValueError(f"first span fs{i}={fs} must be 0 or 1")
        word |= int(fs) << (32 + i)
    if int(non_zero_mask) not in (0, 1):
        raise ValueError("non_zero_mask must be 0 or 1")
    for name, v, bits in (("skip_span", skip_span, 8), ("use_span", use_span, 8), ("column_shift", column_shift, 6)):
        if not 0 <= int(v) < (1 << bits):
            raise ValueError(f"{name}={v} does not fit {bits} bits")
    if reserved & ~_RESERVED_MASK:
        raise ValueError(f"reserved={reserved:#x} touches defined fields")
    word |= int(non_zero_mask) << 39
    word |= int(skip_span) << 40
    word |= int(use_span) << 48
    word |= int(column_shift) << 56
    return word | reserved


def decode_zero_col_mask(word: int) -> dict[str, object]:
    """Inverse of ``encode_zero_col_mask`` (raw field values; ``reserved`` = reserved bits set)."""
    word = int(word)
    if not 0 <= word < (1 << 64):
        raise ValueError("zero-column mask descriptor must be a 64-bit unsigned value")
    return {
        "start_counts": tuple((word >> (8 * i)) & 0xFF for i in range(4)),
        "first_spans": tuple((word >> (32 + i)) & 1 for i in range(4)),
        "non_zero_mask": (word >> 39) & 1,
        "skip_span": (word >> 40) & 0xFF,
        "use_span": (word >> 48) & 0xFF,
        "column_shift": (word >> 56) & 0x3F,
        "reserved": word & _RESERVED_MASK,
    }


def _sub_mask_count(m: int) -> int:
    try:
        return {128: 1, 64: 2, 32: 4}[m]
    except KeyError:
        raise ValueError(f"zero-column mask defined for M in (32, 64, 128), got M={m}") from None


def sub_masks(word: int, m: int, n: int, *, reading: str = "examples") -> list[np.ndarray]:
    """The sub-masks mask0.. of Table 45 for an MxN MMA: list of bool arrays, element j = bit j.

    True = the column is zeroed.  ``reading`` selects how Skip/Use Span are interpreted (module
    docstring).
    """
    if reading not in READINGS:
        raise ValueError(f"reading must be one of {READINGS}")
    f = decode_zero_col_mask(word)
    count = _sub_mask_count(m)
    if n % count:
        raise ValueError(f"N={n} not divisible into {count} sub-masks")
    width = n // count
    if not f["non_zero_mask"]:
        return [np.zeros(width, dtype=bool) for _ in range(count)]
    skip = int(f["skip_span"]) + 1
    use = int(f["use_span"]) + 1
    ones_run, zeros_run = (skip, use) if reading == "examples" else (use, skip)
    period = ones_run + zeros_run
    j = np.arange(width)
    out = []
    for i in range(count):
        fs = f["first_spans"][i]
        first_len = ones_run if fs else zeros_run
        phase = (j + f["start_counts"][i]) % period
        in_first = phase < first_len
        out.append(np.where(in_first, bool(fs), not fs))
    return out


def generate_mask(word: int, m: int, n: int, *, reading: str = "examples") -> np.ndarray:
    """The whole N-bit mask (sub-masks concatenated in column order): bool (N,), True = zeroed."""
    return np.concatenate(sub_masks(word, m, n, reading=reading))


def mask_to_int(bits: np.ndarray) -> int:
    """Bit array (element j = bit j) -> integer, to compare with the spec's 0b... strings."""
    return int(sum(1 << int(i) for i in np.flatnonzero(bits)))


def b_columns(word: int, n: int) -> np.ndarray:
    """B column used by MMA column n: n + Column Shift (Example 4)."""
    return np.arange(n) + decode_zero_col_mask(word)["column_shift"]


def max_column_shift(m: int) -> int:
    """Table 45: max shift amount 16 for M=32, 32 otherwise."""
    return 16 if m == 32 else 32
