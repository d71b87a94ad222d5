"""``tcgen05.shift`` below the suite (issue 26 item 2): the generated mutation of ``shift.py`` left the refusal
of a shift running past column 511 and the footprint the VM's hazard bookkeeping reads (which cells a shift
reads and writes) unpinned; here each is pinned exactly."""

from __future__ import annotations

import numpy as np
import pytest

from mmacts.ptxvm.tcgen05.shift import execute_shift, shift_cells
from mmacts.ptxvm.tcgen05.tmem import COLS, LANES


def _taddr(lane: int, col: int) -> int:
    return (lane << 16) | col


@pytest.mark.parametrize("lane0", [0, 32, 96])
@pytest.mark.parametrize("col0", [505, 506, 511])
def test_a_shift_past_column_511_is_refused_by_name(lane0: int, col0: int) -> None:
    """8 columns from ``col0`` end past 511: refused, the message naming the columns and the last one."""
    with pytest.raises(ValueError) as e:
        shift_cells(_taddr(lane0, col0))
    assert str(e.value) == f"tcgen05.shift: columns {col0}..{col0 + 7} run past column 511"


@pytest.mark.parametrize("col0", [0, 3, 65, 256, 503, 504])
def test_a_shift_ending_at_or_before_column_511_is_accepted(col0: int) -> None:
    lanes, cols = shift_cells(_taddr(64, col0))
    assert lanes.tolist() == list(range(64, 96)) and cols.tolist() == list(range(col0, col0 + 8))


def _distinct_tmem(seed: int) -> np.ndarray:
    """Every cell distinct (so a moved cell always changes)."""
    return (np.arange(LANES * COLS, dtype=np.uint32).reshape(LANES, COLS) * 7919 + seed).astype(np.uint32)


@pytest.mark.parametrize("lane0,col0", [(0, 0), (32, 3), (96, 504)])
def test_the_footprint_is_exactly_the_cells_moved(lane0: int, col0: int) -> None:
    """Written: exactly the cells whose contents changed (rows lane0+1..lane0+31 of the 8 columns); read: exactly
    the cells they came from (rows lane0..lane0+30); per TMEM of the cta_group (2 for cta_group::2)."""
    tmems = [_distinct_tmem(1), _distinct_tmem(2)]
    before = [t.copy() for t in tmems]
    fp = execute_shift(tmems, _taddr(lane0, col0))
    assert len(fp.tmem_read) == len(fp.tmem_written) == 2 and fp.smem_ranges == [[], []]
    for b, t, read, written in zip(before, tmems, fp.tmem_read, fp.tmem_written, strict=True):
        assert read.shape == written.shape == (LANES, COLS) and read.dtype == written.dtype == bool
        assert np.array_equal(written, t != b), "written must be exactly the cells the shift changed"
        src = np.zeros((LANES, COLS), dtype=bool)
        src[lane0:lane0 + 31, col0:col0 + 8] = True
        assert np.array_equal(read, src)
        assert np.array_equal(t[lane0 + 1:lane0 + 32, col0:col0 + 8], b[lane0:lane0 + 31, col0:col0 + 8])
        assert int(written.sum()) == int(read.sum()) == 31 * 8
