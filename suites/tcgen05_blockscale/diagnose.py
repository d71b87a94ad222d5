"""Turn a mismatch pattern in D into a hint about which operand layout or field is wrong.

Why: "4096 mismatches" tells the person at the Blackwell box nothing. D's rows come from A and
SFA, its columns from B and SFB, and K-blocks only through the scale factors, so the *shape* of the
wrong region points at the culprit:

- whole rows wrong (every column of some rows)      -> SFA layout / A rows (lane or row mapping)
- whole columns wrong (every row of some columns)   -> SFB layout / B columns
- rows wrong in 32-row bands                       -> SF lane quadrant / TMEM lane mapping
- columns wrong in 32-column bands                 -> SFB column (floor(n/32)) mapping
- the second half of N wrong (cta_group::2, M=128)  -> Layout B split of D / SFB halves
- everything wrong                                 -> idesc/type fields, descriptors, or SF ID

When the inputs are available, ``match_alternatives`` goes one step further: it recomputes D
with one knob changed (SFA ID +-1, SFB ID +-1, K-blocks of the scales shifted, A or B negated) and
says which alternative the hardware's answer equals -- "block-periodic along K" becomes "got
equals the prediction with SFB ID 1 instead of 0".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np


def _bands(mask_1d: np.ndarray, width: int) -> list[int]:
    n = mask_1d.size // width
    return [i for i in range(n) if mask_1d[i * width:(i + 1) * width].all()]


def pattern(mask: np.ndarray) -> str:
    """A one-line description of the mismatch region of an (M, N) boolean mask."""
    mask = np.asarray(mask, dtype=bool)
    if mask.ndim != 2 or not mask.any():
        return ""
    m, n = mask.shape
    rows_all = mask.all(axis=1)
    cols_all = mask.all(axis=0)
    rows_any = mask.any(axis=1)
    cols_any = mask.any(axis=0)
    frac = mask.mean()
    if frac == 1.0:
        return ("every element wrong: suspect the instruction descriptor (types, scale type, M/N), "
                "the shared-memory descriptors, or the SF IDs / SF addresses")
    if rows_all[rows_any].all() and not rows_all.all():
        bad = np.flatnonzero(rows_all)
        q = _bands(rows_all, 32) if m % 32 == 0 else []
        band = f" in 32-row bands {q} (TMEM lane quadrants)" if q and len(q) * 32 == bad.size else ""
        return (f"{bad.size}/{m} whole rows wrong{band} (first rows {bad[:6].tolist()}): suspect the SFA "
                "layout in tensor memory (lane/quadrant of a row) or the A operand rows")
    if cols_all[cols_any].all() and not cols_all.all():
        bad = np.flatnonzero(cols_all)
        if n % 2 == 0 and bad.size == n // 2 and bad[0] == n // 2:
            return ("the second half of N is wrong: suspect the Layout B (M=128, cta_group::2) split of D "
                    "or of SFB into lane halves")
        b = _bands(cols_all, 32) if n % 32 == 0 else []
        band = f" in 32-column bands {b} (SFB column floor(n/32))" if b and len(b) * 32 == bad.size else ""
        return (f"{bad.size}/{n} whole columns wrong{band} (first columns {bad[:6].tolist()}): suspect the "
                "SFB layout in tensor memory or the B operand columns")
    return (f"{int(mask.sum())} scattered mismatches ({frac:.1%}); rows touched {int(rows_any.sum())}/{m}, "
            f"columns touched {int(cols_any.sum())}/{n}: suspect element decoding (packing, swizzle) or "
            "accumulation/rounding")


def match_alternatives(got: np.ndarray, alternatives: Mapping[str, Callable[[], np.ndarray]]) -> str:
    """Name every alternative prediction ``got`` equals bit for bit (NaN == NaN, +0 == -0)."""
    g = np.asarray(got, dtype=np.float32)
    hits = []
    for name, fn in alternatives.items():
        try:
            alt = np.asarray(fn(), dtype=np.float32)
        except Exception:  # an alternative that cannot be formed is simply not a match
            continue
        if alt.shape == g.shape and bool(np.all((alt == g) | (np.isnan(alt) & np.isnan(g)))):
            hits.append(name)
    return ("got equals the prediction with " + " / ".join(hits)) if hits else ""


def diagnose(got: np.ndarray | None, want: np.ndarray, mask: np.ndarray | None,
             alternatives: Mapping[str, Callable[[], np.ndarray]] | None = None) -> str:
    """Full hint: the pattern, plus the alternative explanation when one matches."""
    if got is None:
        return "no output"
    if mask is None:
        g, w = np.asarray(got, np.float32), np.asarray(want, np.float32)
        mask = ~((g == w) | (np.isnan(g) & np.isnan(w)))
    parts = [pattern(mask)]
    if alternatives:
        parts.append(match_alternatives(got, alternatives))
    return "; ".join(p for p in parts if p)
