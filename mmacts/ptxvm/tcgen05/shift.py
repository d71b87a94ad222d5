"""``tcgen05.shift.cta_group::{1,2}.down [taddr]`` (PTX ISA 9.7.16.9.3).

Spec lines: "initiates the shifting of 32-byte elements downwards across all the rows, except the
last, by one row"; "The lane of the address operand taddr must be aligned to 32"; the data-movement
shape table (9.7.16.2.3) gives ``.shift`` the implicit shape ``.31x256b``; ``.cta_group::2`` shifts
"the Tensor Memory of both the current and the peer CTAs"; it is asynchronous and completes through
``tcgen05.commit`` like mma/cp (9.7.16.6.2.1.1 lists ``tcgen05.shift``).

Reading (the VM's; the figure-less text allows others): the matrix is the 32 lanes
``lane0 .. lane0+31`` of the address (a warp's quadrant) and the 8 columns (256 bits) from the
address column; lane ``lane0+i+1`` receives the old contents of lane ``lane0+i`` for i = 0..30 (31
rows moved: ``.31x256b``; the old last row is dropped); lane ``lane0`` keeps its contents.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .tmem import COLS, LANES, split_taddr

ROWS, WIDTH = 32, 8


@dataclass
class ShiftFootprint:
    tmem_read: list[np.ndarray]
    tmem_written: list[np.ndarray]
    smem_ranges: list[list[tuple[int, int]]] = field(default_factory=list)


def shift_cells(taddr: int) -> tuple[np.ndarray, np.ndarray]:
    """(lanes (32,), columns (8,)) of the shifted block; misalignment / overflow raise ``ValueError``."""
    lane0, col0 = split_taddr(taddr, what="tcgen05.shift address")
    if lane0 % 32:
        raise ValueError(f"tcgen05.shift: address lane {lane0} is not aligned to 32 (9.7.16.9.3)")
    if col0 + WIDTH > COLS:
        raise ValueError(f"tcgen05.shift: columns {col0}..{col0 + WIDTH - 1} run past column {COLS - 1}")
    return lane0 + np.arange(ROWS), col0 + np.arange(WIDTH)


def shift_moves(lanes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(from, to): the lanes whose contents move and where each goes -- ``.down`` by one row, the old last row
    dropped, the first row kept."""
    return lanes[:-1], lanes[1:]


def execute_shift(tmems: list[np.ndarray], taddr: int) -> ShiftFootprint:
    """Shift the block in place in every TMEM of ``tmems`` (one per CTA of the cta_group)."""
    lanes, cols = shift_cells(taddr)
    src, dst = shift_moves(lanes)
    fp = ShiftFootprint([], [], [[] for _ in tmems])
    for tm in tmems:
        tm[np.ix_(dst, cols)] = tm[np.ix_(src, cols)].copy()
        read = np.zeros((LANES, COLS), dtype=bool)
        read[np.ix_(src, cols)] = True
        written = np.zeros((LANES, COLS), dtype=bool)
        written[np.ix_(dst, cols)] = True
        fp.tmem_read.append(read)
        fp.tmem_written.append(written)
    return fp
