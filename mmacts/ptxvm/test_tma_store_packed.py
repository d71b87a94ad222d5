"""TMA stores of packed 4-bit data (``cp.async.bulk.tensor.*.global.shared::cta`` through a
``16U4_ALIGN8B`` map): CUTLASS's nvfp4-output epilogues (example 72b) write D this way. Shared memory
holds the box densely (16 elements in 8 bytes); the inner box dimension and coordinate count elements."""

from __future__ import annotations

import numpy as np
import pytest

from mmacts.ptxvm import api as vm
from mmacts.ptxvm.host import encode_tiled

KERNEL = """.version 8.7
.target sm_100a
.address_size 64
.extern .shared .align 1024 .b8 smem[];
.visible .entry st(.param .u64 tmap, .param .u64 src, .param .s32 c0, .param .s32 c1)
{
  .reg .b32 %r<12>;
  .reg .b64 %rd<8>;
  .reg .pred %p<2>;
  ld.param.u64 %rd1, [tmap];
  ld.param.u64 %rd2, [src];
  ld.param.s32 %r10, [c0];
  ld.param.s32 %r11, [c1];
  mov.u32 %r0, %tid.x;
  mul.wide.u32 %rd3, %r0, 4;
  add.u64 %rd4, %rd2, %rd3;
  ld.global.u32 %r1, [%rd4];
  mov.u32 %r2, smem;
  mad.lo.u32 %r3, %r0, 4, %r2;
  st.shared.u32 [%r3], %r1;
  fence.proxy.async.shared::cta;
  bar.sync 0;
  setp.ne.u32 %p1, %r0, 0;
  @%p1 bra E;
  cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%rd1, {%r10, %r11}], [%r2];
  cp.async.bulk.commit_group;
  cp.async.bulk.wait_group 0;
E:
  ret;
}
"""


def _store(name: str, coords: list[int], cols: int = 256, rows: int = 8) -> tuple[np.ndarray, np.ndarray, str]:
    box = [128, 4]  # elements x rows: 64 bytes a row, 256 bytes in shared memory
    data = np.random.default_rng(5).integers(0, 256, size=256).astype(np.uint8)
    g = vm.zeros(rows * cols // 2, np.uint8)
    m = encode_tiled(name, 2, g.base, [cols, rows], [cols // 2], box)
    res = vm.RawModule(code=KERNEL).get_function("st")(1, 64, (vm.asarray(m), vm.asarray(data), *coords),
                                                       shared_mem=1024)
    return data, g.get().reshape(rows, cols // 2), getattr(res, "message", "")


def test_packed_4_bit_box_lands_in_global_memory() -> None:
    data, out, _ = _store("16U4_ALIGN8B", [128, 2])
    want = np.zeros_like(out)
    want[2:6, 64:128] = data.reshape(4, 64)
    assert np.array_equal(out, want)


def test_out_of_bound_rows_are_not_written() -> None:
    data, out, _ = _store("16U4_ALIGN8B", [0, 6])  # rows 6, 7 in the tensor, 8 and 9 past its end
    want = np.zeros_like(out)
    want[6:8, 0:64] = data.reshape(4, 64)[:2]
    assert np.array_equal(out, want)


def test_padded_packed_store_is_refused_by_name() -> None:
    with pytest.raises(Exception, match="padded"):
        _store("16U4_ALIGN16B", [128, 2])


def test_batched_box_stores_keep_thread_order_and_fault_naming() -> None:
    """Several threads' TMA-store boxes go out as one scatter (ops_bulk._store_boxes): where two boxes overlap
    the later thread's bytes win, as box by box; boxes of different element widths and a faulting address
    go box by box (the fault names the element of its own box). Planted fault: concatenating the boxes in
    reverse order makes the overlap test fail."""
    from mmacts.ptxvm.errors import VmMemoryFault
    from mmacts.ptxvm.memory import GlobalMemory
    from mmacts.ptxvm.ops_bulk import _store_boxes

    class _M:
        gmem = GlobalMemory()

    m = _M()
    buf = m.gmem.allocate(np.zeros(64, np.uint8))
    at = np.uint64(buf.base)
    first = (at + np.arange(0, 16, 2, dtype=np.uint64), np.full((8, 2), 1, np.uint8))
    second = (at + np.arange(8, 24, 2, dtype=np.uint64), np.full((8, 2), 2, np.uint8))
    _store_boxes(m, [first, second])
    assert buf.host[:8].tolist() == [1] * 8 and buf.host[8:24].tolist() == [2] * 16
    wide = (at + np.arange(0, 8, 4, dtype=np.uint64), np.full((2, 4), 3, np.uint8))
    _store_boxes(m, [second, wide])
    assert buf.host[:8].tolist() == [3] * 8 and buf.host[8:24].tolist() == [2] * 16
    bad = (at + np.array([60, 62, 64], dtype=np.uint64), np.full((3, 2), 4, np.uint8))
    fifth = (first[0], np.full((8, 2), 5, np.uint8))
    with pytest.raises(VmMemoryFault, match="@thread2"):
        _store_boxes(m, [fifth, bad])
    assert buf.host[:16].tolist() == [5] * 16 and buf.host[60:64].tolist() == [0] * 4  # as box by box


def _two_thread_store(fence: bool) -> tuple[np.ndarray, np.ndarray, str]:
    """Threads 0 and 1 each store the same 4-row box, thread t at column 128 t, row 4 t (one map: the VM
    stores such a run of threads together, ops_bulk._store_run)."""
    ptx = KERNEL.replace("setp.ne.u32 %p1, %r0, 0;", "setp.gt.u32 %p1, %r0, 1;\n  mul.lo.u32 %r5, %r0, 128;\n"
                         "  add.u32 %r10, %r10, %r5;\n  mul.lo.u32 %r6, %r0, 4;\n  add.u32 %r11, %r11, %r6;")
    if not fence:
        ptx = ptx.replace("fence.proxy.async.shared::cta;", "")
    data = np.random.default_rng(6).integers(0, 256, size=256).astype(np.uint8)
    g = vm.zeros(8 * 128, np.uint8)
    m = encode_tiled("16U4_ALIGN8B", 2, g.base, [256, 8], [128], [128, 4])
    res = vm.RawModule(code=ptx).get_function("st")(1, 64, (vm.asarray(m), vm.asarray(data), 0, 0), shared_mem=1024)
    return data, g.get().reshape(8, 128), getattr(res, "message", "")


def test_two_threads_store_their_boxes_and_an_unfenced_source_stays_a_hazard() -> None:
    """Planted fault: without _store_run's unfenced-bytes check the second call stores instead of raising."""
    data, out, _ = _two_thread_store(True)
    want = np.zeros_like(out)
    want[0:4, 0:64] = data.reshape(4, 64)
    want[4:8, 64:128] = data.reshape(4, 64)
    assert np.array_equal(out, want)
    with pytest.raises(Exception, match="fence.proxy.async"):
        _two_thread_store(False)
