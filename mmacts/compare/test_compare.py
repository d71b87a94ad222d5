"""The comparison must be strict where the data are exact and say where it failed."""

import numpy as np

from mmacts.compare.compare import compare, ulp_distance
from mmacts.core.driver import Expectation


def test_exact_equal_passes_and_nan_equals_nan() -> None:
    want = np.array([[1.0, np.nan], [0.0, -2.5]], dtype=np.float32)
    r = compare(want.copy(), Expectation(want))
    assert r.status == "pass" and r.mismatches == 0


def test_one_ulp_off_fails_with_position() -> None:
    want = np.ones((4, 8), dtype=np.float32)
    got = want.copy()
    got[2, 5] = np.nextafter(np.float32(1.0), np.float32(2.0))
    r = compare(got, Expectation(want))
    assert r.status == "fail"
    assert r.mismatches == 1
    assert r.first_mismatch.startswith("(2, 5)")
    assert r.max_ulp_err == 1.0


def test_signed_zero_only_when_asked() -> None:
    want = np.zeros(3, dtype=np.float32)
    got = -want
    assert compare(got, Expectation(want)).status == "pass"
    assert compare(got, Expectation(want), signed_zero=True).status == "fail"


def test_a_case_asks_for_signed_zeros_through_its_mode() -> None:
    """The executor passes no flags: the mode is how a case pins the sign of zero."""
    want = np.zeros(3, dtype=np.float32)
    assert compare(-want, Expectation(want, mode="exact+signed-zero")).status == "fail"
    assert compare(-want, Expectation(-want, mode="exact+signed-zero")).status == "pass"
    assert compare(want, Expectation(want, mode="exact+signed-zero")).status == "pass"


def test_bound_mode_uses_tolerance() -> None:
    want = np.array([1.0, 2.0], dtype=np.float32)
    got = np.array([1.001, 2.5], dtype=np.float32)
    r = compare(got, Expectation(want, mode="bound", tolerance=0.01))
    assert r.status == "fail" and r.mismatches == 1


def test_missing_output_is_error_not_pass() -> None:
    assert compare(None, Expectation(np.zeros(2, np.float32))).status == "error"


def test_shape_mismatch_fails() -> None:
    assert compare(np.zeros(3, np.float32), Expectation(np.zeros(4, np.float32))).status == "fail"


def test_ulp_distance_across_zero() -> None:
    tiny = np.array([np.float32(1e-45)])
    assert ulp_distance(-tiny, tiny)[0] == 2.0


def test_observe_modes_never_fail() -> None:
    want = np.zeros(2, np.float32)
    got = np.ones(2, np.float32)
    for mode in ("observe", "observe:model:b200_tcgen05_hypothesis"):
        r = compare(got, Expectation(want, mode=mode))
        assert r.status == "observed" and r.mismatches == 2
        same = compare(want.copy(), Expectation(want, mode=mode))
        assert same.status == "observed" and same.mismatches == 0, "an observation is never a pass"


def test_bound_mode_accepts_equal_infinities() -> None:
    want = np.array([np.inf, -np.inf, 1.0], dtype=np.float32)
    assert compare(want.copy(), Expectation(want, mode="bound", tolerance=0.5)).status == "pass"
    flipped = np.array([-np.inf, -np.inf, 1.0], dtype=np.float32)
    assert compare(flipped, Expectation(want, mode="bound", tolerance=0.5)).mismatches == 1


def test_first_mismatch_gives_values_and_bit_patterns_once() -> None:
    want = np.array([1.0, -2.5, np.nan, 0.0], dtype=np.float32)
    got = want.copy()
    got[1] = np.nextafter(np.float32(-2.5), np.float32(0.0))
    r = compare(got, Expectation(want))
    assert r.first_mismatch == "(1) got=-2.4999998 (0xc01fffff) want=-2.5 (0xc0200000)"
    got = want.copy()
    got[3] = -0.0
    r = compare(got, Expectation(want), signed_zero=True)
    assert r.first_mismatch == "(3) got=-0.0 (0x80000000) want=0.0 (0x00000000)"
    assert r.first_mismatch.count("0x") == 2 and "np.float32" not in r.first_mismatch


def _f32(*bits: int) -> np.ndarray:
    return np.array(bits, dtype=np.uint32).view(np.float32)


def test_ulp_distance_counts_across_zero_and_for_negatives() -> None:
    """Generated mutants (mmacts.mutants.generated) of the ordering survived tests with positive values only."""
    zero, minus_zero, tiny, minus_tiny = _f32(0, 0x80000000, 1, 0x80000001)
    assert ulp_distance(tiny, zero)[0] == 1 and ulp_distance(zero, tiny)[0] == 1
    assert ulp_distance(minus_tiny, tiny)[0] == 2 and ulp_distance(minus_zero, tiny)[0] == 1
    assert ulp_distance(zero, minus_zero)[0] == 0 and ulp_distance(minus_zero, minus_zero)[0] == 0
    one = np.float32(1.0)
    assert ulp_distance(-one, np.nextafter(-one, np.float32(-2.0))) == 1
    assert ulp_distance(-one, one) == 2 * 0x3F800000 and ulp_distance(zero, _f32(0x3F800000))[0] == 0x3F800000
    assert ulp_distance(_f32(0x3F800000), zero)[0] == 0x3F800000


def test_report_columns() -> None:
    """max_abs_err / max_ulp_err / mismatches / first_mismatch: what a report shows beside the verdict."""
    want = np.array([1.0, -1.0, 4.0], dtype=np.float32)
    r = compare(np.array([1.0, -3.0, 4.0], dtype=np.float32), Expectation(want))
    assert (r.status, r.mismatches, r.max_abs_err) == ("fail", 1, 2.0) and r.first_mismatch.startswith("(1) got=-3.0")
    assert r.max_ulp_err == float(ulp_distance(np.float32(-3.0), np.float32(-1.0)).item())
    r = compare(np.array([np.inf, 2.0, 4.0], dtype=np.float32), Expectation(want))
    assert r.max_abs_err == 3.0 and r.max_ulp_err > 1e6  # the infinite error is left out of max_abs_err
    r = compare(np.array([np.nan, -1.0, 4.0], dtype=np.float32), Expectation(want))
    assert r.max_ulp_err == float("inf") and r.max_abs_err == 0.0
    nan3 = np.full(3, np.nan, dtype=np.float32)
    r = compare(nan3, Expectation(nan3.copy()))
    assert (r.status, r.max_ulp_err, r.max_abs_err) == ("pass", 0.0, 0.0)
    r = compare(np.zeros(0, np.float32), Expectation(np.zeros(0, np.float32)))
    assert (r.status, r.mismatches, r.max_ulp_err) == ("pass", 0, 0.0)
    r = compare(None, Expectation(want))
    assert (r.status, r.mismatches, r.first_mismatch) == ("error", 3, "no output")
    r = compare(np.zeros((3, 1), np.float32), Expectation(want))
    assert (r.status, r.mismatches) == ("fail", 3) and "shape" in r.first_mismatch


def test_bound_without_tolerance_is_exact_and_observe_never_judges() -> None:
    want = np.array([1.0, 2.0], dtype=np.float32)
    assert compare(want.copy(), Expectation(want, mode="bound")).status == "pass"
    assert compare(want + 1, Expectation(want, mode="bound")).status == "fail"
    r = compare(want + 1, Expectation(want, mode="observe"))
    assert (r.status, r.mismatches) == ("observed", 2)
    assert compare(want.copy(), Expectation(want, mode="observe:model:x")).status == "observed"


def test_more_edges_generated_mutants_found() -> None:
    """Each line pins one survivor of the generated mutation of compare.py (generated/survivors.yaml history)."""
    w = np.zeros(2, dtype=np.float32)
    assert compare(-w, Expectation(w, mode="model:m")).status == "pass"  # only exact+signed-zero asks for signs
    assert compare(-w, Expectation(w, mode="observe")).mismatches == 0
    assert compare(np.float32([5.0]), Expectation(np.float32([2.0]), mode="bound", tolerance=1.5)).status == "fail"
    r = compare(np.float32([0.0, 7.0, 9.0]), Expectation(np.float32([0.0, 1.0, 2.0])))
    assert r.mismatches == 2 and r.first_mismatch.startswith("(1) got=7.0")  # the FIRST differing element
    one = np.float32(1.0)
    assert ulp_distance(-one, np.float32(0.0)) == 0x3F800000 and ulp_distance(np.float32(0.0), -one) == 0x3F800000
    assert ulp_distance(_f32(0x80000000), -one)[0] == 0x3F800000


def test_mode_is_compared_by_value_not_identity() -> None:
    """A mode read back from the answer cache (JSON) is an equal string, not the literal object."""
    mode = "".join(["bo", "und"])
    want = np.float32([1.0])
    assert compare(np.float32([1.25]), Expectation(want, mode=mode, tolerance=0.5)).status == "pass"


def test_ulp_columns_with_nan_on_either_side_and_large_negatives() -> None:
    want = np.float32([1.0, 2.0])
    r = compare(_f32(0x7FC00001, 0x40000000), Expectation(_f32(0x7FC00000, 0x40000000)))  # NaN payloads differ
    assert (r.status, r.max_ulp_err) == ("pass", 0.0)
    r = compare(want.copy(), Expectation(np.float32([np.nan, 2.0])))
    assert (r.status, r.max_ulp_err) == ("fail", float("inf"))
    assert ulp_distance(np.float32(-4.0), np.float32(-2.0)) == 0x800000
    assert ulp_distance(np.float32(-2.0), np.nextafter(np.float32(-2.0), np.float32(-3.0))) == 1
