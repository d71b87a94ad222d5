"""model(encoded operands) == exact reference on the logical matrices, and wrong encodings are caught.

Encoding: ``suites.tcgen05_blockscale.build`` (host encoders of reference.tcgen05). Reference:
``reference.gemm.block_scaled_gemm`` on the logical matrices -- it never sees an encoding.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from mmacts.ptx.tcgen05_kernels import KernelForm
from reference.tcgen05_model import machine
from suites.tcgen05_blockscale import build as B
from suites.tcgen05_blockscale.cases import make_case

CASES = [
    make_case("standard", "mxf8f6f4", None, atype="e4m3", btype="e2m1", sfa_id=1, sfb_id=3, seed=1),
    make_case("standard", "mxf8f6f4", "1X", atype="e3m2", btype="e2m3", swizzle_a="32B", swizzle_b="none",
              enable_d=True, seed=2),
    make_case("standard", "mxf8f6f4", "block32", cg=2, m=256, n=96, atype="e5m2", btype="e4m3",
              transpose_a=1, transpose_b=1, swizzle_a="64B", swizzle_b="64B", sf_stage="cp", seed=3),
    make_case("standard", "mxf8f6f4", None, cg=2, m=128, n=48, atype="e2m1", btype="e4m3", negate_a=1, seed=4),
    make_case("standard", "mxf4", "2X", n=200, sfa_id=2, sf_stage="cp", swizzle_a="none", seed=5),
    make_case("standard", "mxf4nvf4", "4X", stype="ue4m3", n=24, a_tmem=True, seed=6),
    make_case("standard", "mxf4nvf4", "block16", cg=2, m=256, n=144, k96=True, sfa_id=2, sfb_id=2,
              sf_stage="cp", seed=7),
    make_case("standard", "mxf4", "block32", cg=2, m=256, n=64, k96=True, sfa_id=3, sfb_id=1, seed=8),
    make_case("standard", "mxf8f6f4", None, collectors=("fill", "use", "lastuse"), a_reuse=True,
              atype="e4m3", btype="e4m3", seed=9),
    make_case("standard", "mxf4nvf4", "block32", cg=2, m=128, n=256, collectors=(None,) * 4, seed=10),
    make_case("standard", "mxf8f6f4", None, sparse=True, n=32, atype="e4m3", btype="e2m1", seed=11),
]


def _form(case) -> KernelForm:
    return KernelForm(**dict(case.form))


def _run(case, inp):
    dumps = machine.run(_form(case), inp.programs)
    return machine.decode_d(dumps, inp.layout, inp.m, inp.n)


def _want(case, inp):
    rt = case.runtime
    return B.expected_d(inp, case.form["kind"], negate_a=bool(rt.get("negate_a")),
                        negate_b=bool(rt.get("negate_b")))


@pytest.mark.parametrize("case", CASES, ids=[c.case_id for c in CASES])
def test_model_equals_exact_reference(case) -> None:
    inp = B.build(case)
    got, want = _run(case, inp), _want(case, inp)
    assert got.shape == want.shape == (case.runtime["m"], case.runtime["n"])
    assert np.array_equal(got, want), f"{int((got != want).sum())} mismatches"
    assert np.abs(want).max() > 0  # a non-trivial answer


def _mismatches(case, inp) -> int:
    return int((_run(case, inp) != _want(case, inp)).sum())


def test_flipped_descriptor_bit_is_caught() -> None:
    case = CASES[0]
    inp = B.build(case)
    p = inp.programs[0]
    op = p.mmas[0]
    for bit in (1, 4, 33, 62):  # start address (+32 B, +256 B), SBO, swizzle mode
        bad = replace(p, mmas=[replace(op, b_desc=op.b_desc ^ (1 << bit))])
        try:
            caught = _mismatches(case, replace(inp, programs=[bad])) > 0
        except (IndexError, ValueError):  # the walk leaves the image / invalid field: also caught
            caught = True
        assert caught, f"descriptor bit {bit} flipped went unnoticed"


def test_wrong_sf_id_is_caught() -> None:
    case = CASES[0]
    inp = B.build(case)
    p = inp.programs[0]
    op = p.mmas[0]
    bad = replace(p, mmas=[replace(op, idesc=op.idesc ^ (1 << 29))])  # SFA ID bit 0
    assert _mismatches(case, replace(inp, programs=[bad])) > 0
    bad = replace(p, mmas=[replace(op, idesc=op.idesc ^ (1 << 4))])   # SFB ID bit 0
    assert _mismatches(case, replace(inp, programs=[bad])) > 0


def test_sf_quadrant_hypotheses_differ_on_single_quadrant_data() -> None:
    case = make_case("standard", "mxf8f6f4", None, atype="e4m3", btype="e4m3", sf_quadrant_only=0,
                     recipe="probe:sf_quadrant")
    inp = B.build(case)
    d_row = machine.decode_d(machine.run(_form(case), inp.programs), inp.layout, 128, 64)
    d_q0 = machine.decode_d(machine.run(_form(case), inp.programs, machine.Hypotheses(sf_lane_rule="quadrant0")),
                            inp.layout, 128, 64)
    want = _want(case, inp)
    assert np.array_equal(d_q0, want)               # quadrant-0 reader sees the true SFs everywhere
    assert np.array_equal(d_row[:32], want[:32])    # row-quadrant reader: right only in quadrant 0
    assert not np.array_equal(d_row[32:], want[32:])
