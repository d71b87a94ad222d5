"""``rcp.approx.f32`` / ``rcp.approx.ftz.f32`` from a table recorded on silicon (issue 23).

Why a table: the ISA gives rcp.approx a maximum error (9.7.3.x), not a result; the bits are the
multi-function unit's (MUFU.RCP), different from the correctly rounded reciprocal in about a third of
the inputs. CUTLASS's block-scaled epilogues compute scale factors with it, so a VM that rounds
correctly instead would write different scale factors than the GPU. The VM produces it only from
what a GPU answered, and refuses (``VmUnsupported``) otherwise.

What is recorded (``validation/silicon/mufu/record_rcp.py`` on a GPU, all 2^32 inputs checked there):

- ``rcp(m)`` for every f32 ``m`` in [1, 2) (2^23 mantissas), kept as its difference to the correctly
  rounded ``1/m`` (a trit -1/0/+1 per mantissa, 5 to a byte, larger differences in an escape list);
- per variant (``ftz`` / ``full``) and per input class, the rule every input of the class followed, or
  the inputs that did not follow it (complete up to a cap; a class with more is marked incomplete):

  ``normal``   normal ``x = m * 2^e`` with a normal result: ``rcp(m) * 2^-e`` (rule ``scale``);
  ``tiny``     normal ``x`` whose scaled result is below 2^-126: ``flush`` (+-0), ``rn`` / ``rz`` (the
               scaled value rounded on the subnormal grid);
  ``subnormal`` subnormal ``x``: ``flush`` (+-inf, the input taken as zero) or ``scale`` (normalised,
               scaled, +-inf beyond the largest finite);
  ``zero`` (``inf``: +-inf), ``inf`` (``zero``: +-0), ``nan`` (``canonical`` 0x7FFFFFFF or ``quiet``:
               the input with its quiet bit set).

The table is read from :data:`TABLE_PATH` (or ``$MMACTS_RCP_TABLE``).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mmacts.ptxvm.errors import VmUnsupported

TABLE_PATH = Path(__file__).resolve().parents[2] / "validation" / "silicon" / "mufu" / "rcp-approx.npz"
RECORD_HINT = "python validation/silicon/mufu/record_rcp.py on a GPU, see validation/silicon/mufu/README.md"
CLASSES = ("normal", "tiny", "subnormal", "zero", "inf", "nan")
VARIANTS = ("ftz", "full")
N_MANT = 1 << 23
_POW3 = np.array([1, 3, 9, 27, 81], dtype=np.int64)


# ------------------------------------------------------------------------------------------ encoding
def correct_rcp_bits(mant: np.ndarray) -> np.ndarray:
    """Bits of the correctly rounded (nearest even) f32 reciprocal of ``1 + mant / 2^23``: with
    ``M = 2^23 + mant`` the value is ``2^47 / M * 2^-24`` rounded to an integer number of 2^-24
    (exact integer arithmetic; 1.0 for ``mant`` 0)."""
    big = np.int64(1) << np.int64(47)
    m = np.asarray(mant, dtype=np.int64) + N_MANT
    q, rem = np.divmod(big, m)
    up = (2 * rem > m) | ((2 * rem == m) & (q % 2 == 1))
    return (0x3F000000 + q + up - N_MANT).astype(np.uint32)


def pack_deltas(hw_bits: np.ndarray) -> dict[str, np.ndarray]:
    """The recorded ``rcp(m)`` bits for all 2^23 mantissas as trits (difference to the correctly
    rounded reciprocal, -1/0/+1) packed 5 to a byte, plus an escape list for larger differences."""
    d = hw_bits.astype(np.int64) - correct_rcp_bits(np.arange(N_MANT)).astype(np.int64)
    esc = np.flatnonzero(np.abs(d) > 1)
    t = np.where(np.abs(d) > 1, 1, d + 1)
    t = np.concatenate([t, np.ones(-len(t) % 5, dtype=np.int64)]).reshape(-1, 5)
    return {"trits": (t * _POW3).sum(axis=1).astype(np.uint8), "escape_idx": esc.astype(np.int32),
            "escape_delta": d[esc].astype(np.int32)}


def write_table(path: Path, hw_bits: np.ndarray, rules: dict[str, dict[str, str]],
                exceptions: dict[str, tuple[np.ndarray, np.ndarray]], complete: dict[str, dict[str, bool]],
                meta: dict) -> None:
    """Store a recording (``rules[variant][class]``; ``exceptions[variant]`` = (inputs, outputs) that
    break their class's rule; ``complete[variant][class]``: whether that list holds every one)."""
    arrays = pack_deltas(hw_bits)
    for v in VARIANTS:
        xin, xout = exceptions.get(v, (np.zeros(0, np.uint32), np.zeros(0, np.uint32)))
        order = np.argsort(xin, kind="stable")
        arrays[f"exc_in_{v}"] = np.asarray(xin, dtype=np.uint32)[order]
        arrays[f"exc_out_{v}"] = np.asarray(xout, dtype=np.uint32)[order]
    arrays["info"] = np.array(json.dumps({"rules": rules, "complete": complete, "meta": meta}, sort_keys=True))
    np.savez_compressed(path, **arrays)


# ------------------------------------------------------------------------------------------ reading
@dataclass(frozen=True)
class RcpTable:
    trits: np.ndarray
    escape_idx: np.ndarray
    escape_delta: np.ndarray
    rules: dict[str, dict[str, str]]
    complete: dict[str, dict[str, bool]]
    exc: dict[str, tuple[np.ndarray, np.ndarray]]
    meta: dict

    def rcp_mantissa(self, mant: np.ndarray) -> np.ndarray:
        """Recorded bits of ``rcp(1 + mant / 2^23)``."""
        mant = np.asarray(mant, dtype=np.int64)
        d = (self.trits[mant // 5].astype(np.int64) // _POW3[mant % 5]) % 3 - 1
        if len(self.escape_idx):
            i = np.minimum(np.searchsorted(self.escape_idx, mant), len(self.escape_idx) - 1)
            d = np.where(self.escape_idx[i] == mant, self.escape_delta[i], d)
        return (correct_rcp_bits(mant).astype(np.int64) + d).astype(np.uint32)


_CACHE: dict[str, RcpTable] = {}


def load_table(path: Path | None = None) -> RcpTable:
    """The recorded table (cached per path); refuses by name when there is none."""
    p = Path(path or os.environ.get("MMACTS_RCP_TABLE") or TABLE_PATH)
    key = str(p)
    if key not in _CACHE:
        if not p.is_file():
            raise VmUnsupported(f"rcp.approx needs the recorded table {p} (its bits are the GPU's, not in the "
                                f"ISA); record it with {RECORD_HINT}")
        with np.load(p) as z:
            info = json.loads(str(z["info"]))
            exc = {v: (z[f"exc_in_{v}"], z[f"exc_out_{v}"]) for v in VARIANTS}
            _CACHE[key] = RcpTable(z["trits"], z["escape_idx"], z["escape_delta"], info["rules"],
                                   info["complete"], exc, info["meta"])
    return _CACHE[key]


def classify(bits: np.ndarray, table: RcpTable) -> tuple[np.ndarray, np.ndarray]:
    """Per input: its class index (into :data:`CLASSES`) and the ``scale`` rule's result bits (valid for
    ``normal``; for ``tiny`` the unrounded pieces are recomputed by :func:`_tiny`)."""
    b = np.asarray(bits, dtype=np.uint32)
    s, e, mant = b & np.uint32(0x80000000), (b >> np.uint32(23)) & np.uint32(0xFF), b & np.uint32(0x7FFFFF)
    r = table.rcp_mantissa(mant)
    field = ((r >> np.uint32(23)) & np.uint32(0xFF)).astype(np.int64) - (e.astype(np.int64) - 127)
    scaled = s | (np.clip(field, 0, 255).astype(np.uint32) << np.uint32(23)) | (r & np.uint32(0x7FFFFF))
    cls = np.select([(e == 0) & (mant == 0), e == 0, (e == 255) & (mant == 0), e == 255, field < 1],
                    [3, 2, 4, 5, 1], 0)
    return cls, scaled


def _tiny(bits: np.ndarray, table: RcpTable, mode: str) -> np.ndarray:
    """``rcp(m) * 2^-e`` rounded on the subnormal grid (``rn``: nearest even, ``rz``: truncated)."""
    e = ((bits >> np.uint32(23)) & np.uint32(0xFF)).astype(np.int64)
    r = table.rcp_mantissa(bits & np.uint32(0x7FFFFF)).astype(np.int64)
    sig = (r & 0x7FFFFF) | 0x800000
    sh = e - ((r >> 23) & 0xFF) - 126  # right shift onto the 2^-149 grid (>= 1 here)
    sh = np.minimum(sh, 40)
    q = sig >> sh
    rem = sig - (q << sh)
    half = np.int64(1) << (sh - 1)
    if mode == "rn":
        q = q + ((rem > half) | ((rem == half) & (q % 2 == 1)))
    return (bits & np.uint32(0x80000000)) | q.astype(np.uint32)


def _subnormal_scaled(bits: np.ndarray, table: RcpTable) -> np.ndarray:
    """A subnormal ``x = M * 2^-149`` normalised to ``1.f * 2^(p - 149)`` and scaled: ``rcp(1.f) *
    2^(149 - p)``, +-inf beyond the largest finite."""
    mant = (bits & np.uint32(0x7FFFFF)).astype(np.int64)
    p = np.floor(np.log2(np.maximum(mant, 1))).astype(np.int64)
    p = p - (np.left_shift(np.int64(1), p) > mant) + ((np.left_shift(np.int64(1), p + 1)) <= mant)
    f = (mant << (23 - p)) & 0x7FFFFF
    r = table.rcp_mantissa(f)
    field = ((r >> np.uint32(23)) & np.uint32(0xFF)).astype(np.int64) + 149 - p
    out = np.where(field >= 255, np.uint32(0x7F800000),
                   (np.minimum(field, 254).astype(np.uint32) << np.uint32(23)) | (r & np.uint32(0x7FFFFF)))
    return (bits & np.uint32(0x80000000)) | out


def _rule(cls: str, rule: str, bits: np.ndarray, scaled: np.ndarray, table: RcpTable) -> np.ndarray:
    sign = bits & np.uint32(0x80000000)
    if (cls, rule) == ("normal", "scale"):
        return scaled
    if cls == "tiny" and rule in ("rn", "rz"):
        return _tiny(bits, table, rule)
    if cls == "subnormal" and rule == "scale":
        return _subnormal_scaled(bits, table)
    if (cls, rule) in (("tiny", "flush"), ("inf", "zero")):
        return sign
    if (cls, rule) in (("subnormal", "flush"), ("zero", "inf")):
        return sign | np.uint32(0x7F800000)
    if (cls, rule) == ("nan", "canonical"):
        return np.full(len(bits), 0x7FFFFFFF, dtype=np.uint32)
    if (cls, rule) == ("nan", "quiet"):
        return bits | np.uint32(0x00400000)
    raise VmUnsupported(f"rcp.approx: the recorded table names rule {rule!r} for {cls} inputs, which this VM "
                        f"does not know")


def rcp_approx(bits: np.ndarray, ftz: bool, path: Path | None = None) -> np.ndarray:
    """Bits of ``rcp.approx{.ftz}.f32`` of the f32 ``bits``, as recorded. Inputs of a class whose rule
    was broken more often than the recording kept are refused unless they are among those kept."""
    table = load_table(path)
    v = "ftz" if ftz else "full"
    b = np.asarray(bits, dtype=np.uint32)
    cls, scaled = classify(b, table)
    out = np.zeros(len(b), dtype=np.uint32)
    for k, name in enumerate(CLASSES):
        sel = cls == k
        if sel.any():
            out[sel] = _rule(name, table.rules[v][name], b[sel], scaled[sel], table)
    xin, xout = table.exc[v]
    hit = np.zeros(len(b), dtype=bool)
    if len(xin):
        i = np.minimum(np.searchsorted(xin, b), len(xin) - 1)
        hit = xin[i] == b
        out = np.where(hit, xout[i], out)
    for k, name in enumerate(CLASSES):
        bad = (cls == k) & ~hit
        if bad.any() and not table.complete[v][name]:
            raise VmUnsupported(f"rcp.approx{'.ftz' if ftz else ''}.f32 of {int(b[bad][0]):#010x}: the recording "
                                f"kept only part of the {name} inputs that break their rule")
    return out
