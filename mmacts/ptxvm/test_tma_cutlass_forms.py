"""TMA forms CUTLASS's Blackwell examples use. The ``.cta_group::2`` spelled before the state spaces (72a/72c's
2-SM loads: ``cp.async.bulk.tensor.3d.cta_group::2.shared::cluster.global...``), which ptxas accepts and the VM
read by position (it took ``cta_group::2`` for the destination space). TMA stores
(``cp.async.bulk.tensor...global.shared::cta``) of packed 4-bit data (16U4_ALIGN8B): CUTLASS's
nvfp4-output epilogue (example 72b) stores D this way. The box's bytes in shared memory (16 elements in 8 bytes,
no padding) must land at the coordinates' bytes in global memory, and nothing else may change; refused by name:
an inner coordinate that is not a multiple of 16 elements, and the padded packed types."""

from __future__ import annotations

import numpy as np
import pytest

from mmacts.ptxvm import api as vm
from mmacts.ptxvm.host.tensormap import encode_tiled
from mmacts.ptxvm.test_cluster_spaces import PAIR, _tma_args

KERNEL = """.version 8.7
.target sm_100a
.address_size 64
.visible .entry st(.param .u64 ptm, .param .u64 psrc, .param .u32 n, .param .u32 c0, .param .u32 c1)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  .reg .b16 %h<2>;
  .reg .pred %p<2>;
  .shared .align 128 .b8 buf[1024];
  ld.param.u64 %rd0, [ptm];
  ld.param.u64 %rd1, [psrc];
  ld.param.u32 %r0, [n];
  ld.param.u32 %r4, [c0];
  ld.param.u32 %r5, [c1];
  mov.u32 %r1, 0;
  mov.u32 %r2, buf;
LOOP:
  setp.ge.u32 %p0, %r1, %r0;
  @%p0 bra DONE;
  cvt.u64.u32 %rd2, %r1;
  add.u64 %rd3, %rd1, %rd2;
  ld.global.u8 %h0, [%rd3];
  add.u32 %r3, %r2, %r1;
  st.shared.u8 [%r3], %h0;
  add.u32 %r1, %r1, 1;
  bra LOOP;
DONE:
  fence.proxy.async.shared::cta;
  cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd0, {%r4, %r5}], [%r2];
  cp.async.bulk.commit_group;
  cp.async.bulk.wait_group 0;
  ret;
}
"""


def _store(name: str, box: list[int], coords: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rows, cols = 8, 256  # elements; 128 bytes per row
    before = np.random.default_rng(5).integers(0, 256, size=(rows, cols // 2)).astype(np.uint8)
    g = vm.asarray(before)
    tm = vm.asarray(encode_tiled(name, 2, g.base, [cols, rows], [cols // 2], box))
    nbytes = box[0] * box[1] // 2
    src = np.random.default_rng(6).integers(0, 256, size=nbytes).astype(np.uint8)
    vm.RawModule(code=KERNEL).get_function("st")(1, 1, (tm, vm.asarray(src), nbytes, *coords), shared_mem=0)
    return before, src, g.get()


def test_packed_4_bit_box_is_stored_byte_for_byte() -> None:
    before, src, after = _store("16U4_ALIGN8B", [64, 3], [96, 4])
    want = before.copy()
    want[4:7, 48:80] = src.reshape(3, 32)  # element 96 is byte 48; 64 elements are 32 bytes
    assert np.array_equal(after, want)


def test_a_box_past_the_end_stores_only_inside() -> None:
    before, src, after = _store("16U4_ALIGN8B", [64, 3], [224, 6])
    want = before.copy()
    want[6:8, 112:128] = src.reshape(3, 32)[:2, :16]
    assert np.array_equal(after, want)


def test_unaligned_inner_coordinate_and_padded_type_are_refused() -> None:
    with pytest.raises(vm.LaunchError, match="16-element chunks"):
        _store("16U4_ALIGN8B", [64, 3], [8, 0])
    with pytest.raises(vm.LaunchError, match="padded packed tensor map"):
        _store("16U4_ALIGN16B", [128, 2], [0, 0])


def test_cta_group_before_the_state_spaces() -> None:
    """The cluster test's 2-SM pair load respelled as CUTLASS emits it gives the same result. Planted fault: the
    position-based reading this replaced refused the launch (``cta_group::2`` is no state space)."""
    old = "cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.cta_group::2"
    assert old in PAIR
    ptx = PAIR.replace(old, "cp.async.bulk.tensor.1d.cta_group::2.shared::cluster.global.tile.mbarrier::"
                            "complete_tx::bytes")
    tmap, out, mask = _tma_args(0)
    vm.RawModule(code=ptx).get_function("k")(4, 32, (tmap, out, mask), cluster=(2, 1, 1))
    got = out.get().reshape(8, 32)[:4]
    for c in range(4):
        assert (got[c] == (np.arange(32) + 32 * (c % 2)) * 3).all(), c
