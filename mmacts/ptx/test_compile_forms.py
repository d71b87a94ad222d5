"""Pins: every op of the compile-form generator yields a complete module ptxas accepts."""

from __future__ import annotations

import pytest

from mmacts.ptx.compile_forms import GENERATORS, UNDER_TEST_MARK, build_module, instruction_text
from mmacts.toolchain.assemble import assemble
from mmacts.toolchain.conformance import UNDER_TEST_MARK as CHECK_MARK

VALID = [
    ({"op": "tcgen05.mma", "kind": "mxf4nvf4", "cta_group": 1, "block_scale": True, "scale_vec": "block16"}, "sm_100f"),
    ({"op": "tcgen05.mma", "kind": "f16", "cta_group": 1, "ws": True, "sparse": True, "collector_b": "b3::use",
      "zcm": True}, "sm_100a"),
    ({"op": "tcgen05.ld", "shape": "16x32bx2", "num": 4, "split": 8}, "sm_100a"),
    ({"op": "tcgen05.ld", "shape": "32x32b", "num": 2, "red": {"op": "min", "dtype": "f32", "abs": True}}, "sm_110a"),
    ({"op": "tcgen05.st", "shape": "16x256b", "num": 2, "unpack": True}, "sm_100a"),
    ({"op": "tcgen05.alloc", "cta_group": 2}, "sm_100a"),
    ({"op": "tcgen05.dealloc", "cta_group": 1}, "sm_100a"),
    ({"op": "tcgen05.relinquish_alloc_permit", "cta_group": 1}, "sm_100a"),
    ({"op": "tcgen05.wait", "which": "st"}, "sm_100a"),
    ({"op": "tcgen05.cp", "cta_group": 2, "shape": "32x128b", "multicast": "warpx4", "src_fmt": "b4x16_p64"},
     "sm_100a"),
    ({"op": "tcgen05.shift", "cta_group": 1}, "sm_103a"),
    ({"op": "tcgen05.fence", "which": "after_thread_sync"}, "sm_100a"),
    ({"op": "tcgen05.commit", "cta_group": 1, "multicast": True, "shared_cluster": True}, "sm_100a"),
    ({"op": "mma.sync.block_scale", "kind": "mxf4nvf4", "shape": "m16n8k64", "atype": "e2m1", "btype": "e2m1",
      "stype": "ue4m3", "scale_vec": "4X", "sel": (0, 1, 0, 3), "sel_regs": True}, "sm_120a"),
]


@pytest.mark.parametrize(("form", "arch"), VALID, ids=[f["op"] + "/" + a for f, a in VALID])
def test_valid_forms_assemble(form, arch):
    ptx = build_module(form, arch, "8.8" if arch != "sm_110a" else "9.0")
    assert ptx.count(UNDER_TEST_MARK) == 1
    r = assemble(ptx, arch)
    assert r.ok, r.first_error_line


def test_every_generator_is_exercised_and_marks_agree():
    assert {f["op"] for f, _ in VALID} | {"tcgen05.mixed_cta_group"} == set(GENERATORS)
    assert UNDER_TEST_MARK == CHECK_MARK


def test_mixed_cta_group_is_refused():
    r = assemble(build_module({"op": "tcgen05.mixed_cta_group"}, "sm_100a"), "sm_100a")
    assert not r.ok and "cta_group" in r.first_error_line.lower()


def test_instruction_text_is_the_line_under_test():
    assert instruction_text({"op": "tcgen05.wait", "which": "ld"}) == "tcgen05.wait::ld.sync.aligned;"
