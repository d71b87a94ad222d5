"""A compact picture of where got and want differ, small enough for every failing record.

``compact`` keeps the shape, a grid of at most 32 x 64 cells over M x N ('.' every element of the
cell equal, 'X' every one differs, 'x' some do) and the first few differing elements with their
values and fp32 bit patterns; ``render`` prints it for ``mmacts explain --run``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

MAX_ROWS, MAX_COLS, FIRST = 32, 64, 8


def _as2d(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    if a.ndim == 0:
        return a.reshape(1, 1)
    if a.ndim == 1:
        return a.reshape(1, -1)
    return a.reshape(-1, a.shape[-1])


def _hex(v: float) -> str:
    return f"{int(np.float32(v).view(np.uint32)):#010x}"


def compact(mask: np.ndarray, got: Any = None, want: Any = None) -> dict[str, Any]:
    m = _as2d(np.asarray(mask, dtype=bool))
    rows, cols = m.shape
    ry, cx = -(-rows // MAX_ROWS), -(-cols // MAX_COLS)
    grid = []
    for r0 in range(0, rows, ry):
        line = []
        for c0 in range(0, cols, cx):
            cell = m[r0:r0 + ry, c0:c0 + cx]
            line.append("X" if cell.all() else ("x" if cell.any() else "."))
        grid.append("".join(line))
    first = []
    if got is not None and want is not None:
        g, w = _as2d(np.asarray(got, dtype=np.float32)), _as2d(np.asarray(want, dtype=np.float32))
        if g.shape == m.shape == w.shape:
            for i, j in np.argwhere(m)[:FIRST]:
                first.append([int(i), int(j), float(g[i, j]), _hex(g[i, j]), float(w[i, j]), _hex(w[i, j])])
    return {"shape": list(np.asarray(mask).shape), "cell": [ry, cx], "grid": grid, "count": int(m.sum()),
            "rows_bad": int(m.any(axis=1).sum()), "cols_bad": int(m.any(axis=0).sum()), "first": first}


def render(mm: dict[str, Any]) -> str:
    ry, cx = mm.get("cell", [1, 1])
    out = [f"{mm.get('count')} elements differ of shape {tuple(mm.get('shape', ()))}; "
           f"{mm.get('rows_bad')} rows and {mm.get('cols_bad')} columns touched",
           f"map: one character per {ry} x {cx} elements ('.' equal, 'X' all differ, 'x' some differ); "
           "rows down, columns across"]
    grid = mm.get("grid") or []
    width = len(grid[0]) if grid else 0
    out.append("      " + "".join(str((c * cx) // 10 % 10) if (c * cx) % 10 == 0 else " " for c in range(width)))
    out += [f"{r * ry:5d} {line}" for r, line in enumerate(grid)]
    if mm.get("first"):
        out.append("first differing elements (row, col): got (bits) vs want (bits)")
        out += [f"  ({i}, {j}) got={g!r} ({gh}) want={w!r} ({wh})" for i, j, g, gh, w, wh in mm["first"]]
    return "\n".join(out)
