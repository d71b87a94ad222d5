"""Address spaces of production Blackwell kernels (issue 23): the kernel parameter space reached through
``cvta.param``, and shared::cluster addresses that carry the CTA's rank in the cluster.

Why: nvcc hands a ``__grid_constant__`` CUtensorMap to TMA as ``mov.b64 %rd, k_param_0; cvta.param.u64``, and
2-CTA kernels compute a peer CTA's shared addresses from the rank bits of a shared::cluster address (CUTLASS
masks with ``0xFEFFFFFF``). Each test runs a small hand-written kernel the way such a kernel uses the feature
and names the planted fault it catches.
"""

from __future__ import annotations

import numpy as np
import pytest

from mmacts.ptxvm import api
from mmacts.ptxvm.memory import PARAM_WINDOW

HEAD = ".version 8.7\n.target sm_100a\n.address_size 64\n"
REGS = "  .reg .pred %p<8>;\n  .reg .b32 %r<32>;\n  .reg .b64 %rd<32>;\n"


# ------------------------------------------------------------------------------------------ cvta.param
PARAM_TMA = HEAD + """.visible .entry k(.param .align 64 .b8 k_param_0[128], .param .u64 pout)
{
""" + REGS + """  .shared .align 128 .b8 buf[128];
  .shared .align 8 .b64 bar;
  ld.param.u64 %rd1, [pout];
  mov.b64 %rd2, k_param_0;
  cvta.param.u64 %rd3, %rd2;
  prefetch.tensormap [%rd3];
  mov.u32 %r0, %tid.x;
  mov.u32 %r1, bar;
  setp.ne.u32 %p0, %r0, 0;
  @%p0 bra WAIT;
  mbarrier.init.shared.b64 [%r1], 1;
  mov.u32 %r2, buf;
  mov.u32 %r3, 16;
  mbarrier.arrive.expect_tx.shared.b64 %rd4, [%r1], 128;
  cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r2], [%rd3, {%r3}], [%r1];
  isspacep.param %p2, %rd3;
  selp.u32 %r4, 1, 0, %p2;
  st.global.u32 [%rd1+128], %r4;
  ld.u64 %rd5, [%rd3];
  st.global.u64 [%rd1+136], %rd5;
  cvta.to.param.u64 %rd6, %rd3;
  st.global.u64 [%rd1+144], %rd6;
WAIT:
  bar.sync 0;
LOOP:
  mbarrier.try_wait.parity.shared.b64 %p1, [%r1], 0;
  @!%p1 bra LOOP;
  mov.u32 %r5, buf;
  shl.b32 %r6, %r0, 2;
  add.u32 %r5, %r5, %r6;
  ld.shared.u32 %r7, [%r5];
  mul.wide.u32 %rd7, %r0, 4;
  add.u64 %rd8, %rd1, %rd7;
  st.global.u32 [%rd8], %r7;
  ret;
}
"""


def test_cvta_param_tensor_map_feeds_tma_and_generic_loads() -> None:
    """The kernel reads its ``__grid_constant__`` map through ``cvta.param``: prefetch, TMA (elements 16..47),
    a generic ``ld`` of its first word, ``isspacep.param`` and ``cvta.to.param`` (offset 0). Planted fault:
    ``_read_tensormap`` reading every map from global memory -> out-of-bounds global load."""
    a = api.asarray(np.arange(64, dtype=np.uint32) * 3)
    tmap = api.tensormap_tiled(a, (32,), by_value=True)
    out = api.zeros(38, np.uint32)
    api.RawModule(code=PARAM_TMA).get_function("k")(1, 32, (tmap, out))
    got = out.get()
    assert (got[:32] == np.arange(16, 48) * 3).all()
    assert got[32] == 1
    assert got[34:36].view(np.uint64)[0] == np.frombuffer(tmap.tobytes()[:8], np.uint64)[0]
    assert got[36:38].view(np.uint64)[0] == 0


def test_a_store_into_the_parameter_space_is_a_fault() -> None:
    """Planted: a generic store through the ``cvta.param`` address; the window is read-only."""
    ptx = PARAM_TMA.replace("  prefetch.tensormap [%rd3];\n", "  prefetch.tensormap [%rd3];\n  st.u32 [%rd3], 7;\n")
    a = api.asarray(np.arange(64, dtype=np.uint32))
    with pytest.raises(api.LaunchError, match=r"kernel parameter space .* read-only .*\[CTA 0, thread 0\]"):
        api.RawModule(code=ptx).get_function("k")(1, 32, (api.tensormap_tiled(a, (32,), by_value=True),
                                                       api.zeros(38, np.uint32)))


def test_a_generic_load_past_the_parameter_block_is_a_fault() -> None:
    """Planted: a generic load 8 bytes past the 136-byte parameter block."""
    ptx = PARAM_TMA.replace("  ld.u64 %rd5, [%rd3];", "  ld.u64 %rd5, [%rd3+136];")
    a = api.asarray(np.arange(64, dtype=np.uint32))
    with pytest.raises(api.LaunchError, match="out-of-bounds param load of 8 bytes at parameter offset 0x88"):
        api.RawModule(code=ptx).get_function("k")(1, 32, (api.tensormap_tiled(a, (32,), by_value=True),
                                                       api.zeros(38, np.uint32)))
    assert PARAM_WINDOW % (1 << 32) == 0
