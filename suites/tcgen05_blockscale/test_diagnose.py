"""The mismatch-pattern diagnosis names the operand the pattern points to."""

from __future__ import annotations

import numpy as np

from suites.tcgen05_blockscale.diagnose import diagnose, match_alternatives, pattern


def test_whole_rows_point_to_sfa() -> None:
    m = np.zeros((128, 64), bool)
    m[32:64] = True
    msg = pattern(m)
    assert "SFA" in msg and "32-row bands [1]" in msg


def test_whole_columns_point_to_sfb() -> None:
    m = np.zeros((128, 64), bool)
    m[:, 5] = True
    assert "SFB" in pattern(m) and "1/64 whole columns" in pattern(m)


def test_second_half_points_to_layout_b() -> None:
    m = np.zeros((128, 64), bool)
    m[:, 32:] = True
    assert "Layout B" in pattern(m)


def test_everything_and_scattered() -> None:
    assert "descriptor" in pattern(np.ones((4, 4), bool))
    m = np.zeros((64, 64), bool)
    m[3, 7] = m[40, 2] = True
    assert "scattered" in pattern(m)
    assert pattern(np.zeros((4, 4), bool)) == ""


def test_alternatives_name_the_matching_knob() -> None:
    want = np.arange(12, dtype=np.float32).reshape(3, 4)
    got = want * 2
    msg = match_alternatives(got, {"sfb_id=1": lambda: want * 2, "negate_a": lambda: -want})
    assert msg == "got equals the prediction with sfb_id=1"
    assert "sfb_id=1" in diagnose(got, want, None, {"sfb_id=1": lambda: want * 2})
    assert match_alternatives(got, {"x": lambda: 1 / 0}) == ""
