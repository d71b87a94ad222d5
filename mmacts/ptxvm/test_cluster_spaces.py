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


# ------------------------------------------------------------------------------------------ shared::cluster
def _cluster_kernel(body: str, shared: str = "", params: str = ".param .u64 pout") -> str:
    return (HEAD + f".visible .entry k({params})\n{{\n" + REGS + shared +
            "  ld.param.u64 %rd1, [pout];\n  mov.u32 %r0, %tid.x;\n  mov.u32 %r1, %cluster_ctarank;\n"
            "  mov.u32 %r2, %ctaid.x;\n" + body + "\nEND:\n  ret;\n}\n")


ADDRESSES = _cluster_kernel("""  setp.ne.u32 %p0, %r0, 0;
  @%p0 bra END;
  mul.wide.u32 %rd3, %r2, 64;
  add.u64 %rd3, %rd1, %rd3;
  mov.u32 %r3, var;
  st.global.u32 [%rd3], %r3;
  mov.u64 %rd4, var;
  cvta.shared.u64 %rd5, %rd4;
  cvta.to.shared.u64 %rd6, %rd5;
  cvt.u32.u64 %r4, %rd6;
  st.global.u32 [%rd3+4], %r4;
  mapa.shared::cluster.u32 %r5, %r3, 0;
  st.global.u32 [%rd3+8], %r5;
  mov.u32 %r7, %cluster_nctarank;
  add.u32 %r6, %r1, 1;
  rem.u32 %r6, %r6, %r7;
  mapa.shared::cluster.u32 %r8, %r3, %r6;
  st.global.u32 [%rd3+12], %r8;
  mapa.u64 %rd7, %rd5, %r6;
  cvta.to.shared::cluster.u64 %rd8, %rd7;
  st.global.u64 [%rd3+16], %rd8;
  isspacep.shared::cta %p1, %rd7;
  isspacep.shared::cluster %p2, %rd7;
  isspacep.shared::cta %p3, %rd5;
  selp.u32 %r9, 1, 0, %p1;
  selp.u32 %r10, 1, 0, %p2;
  selp.u32 %r11, 1, 0, %p3;
  st.global.v4.u32 [%rd3+32], {%r9, %r10, %r11, %r1};""", "  .shared .align 16 .b8 pad[48];\n"
                                                        "  .shared .align 8 .b64 var;\n")


@pytest.mark.parametrize("csize", [None, 2, 4])
def test_shared_addresses_carry_the_cluster_rank(csize: int | None) -> None:
    """A shared variable's address, ``cvta`` round trips and ``mapa`` carry the rank (``rank << 24 | offset``);
    ``isspacep.shared::cta`` is false for a peer's generic address, ``shared::cluster`` true. Without a
    cluster the addresses are the plain offsets of before. Planted fault: ``symbol_values`` without the rank
    bits -> CTA 1 reads 48, not 0x1000030."""
    out = api.zeros(16 * 4, np.uint32)
    api.RawModule(code=ADDRESSES).get_function("k")(4, 32, (out,), cluster=None if csize is None else (csize, 1, 1))
    got = out.get().reshape(4, 16)
    n = csize or 1
    for c in range(4):
        rank, nxt = c % n, (c + 1) % n
        want = (rank << 24) + 48
        assert got[c, 0] == want and got[c, 1] == want and got[c, 2] == 48, (c, got[c])
        assert got[c, 3] == (nxt << 24) + 48 and got[c, 4:6].view(np.uint64)[0] == (nxt << 24) + 48
        assert list(got[c, 8:12]) == [int(n == 1), 1, 1, rank]


def test_mapa_to_a_rank_outside_the_cluster_maps_and_faults_only_when_used() -> None:
    """CUTLASS's SM120 cluster-launch-control pipeline (example 79b) maps every rank up to the largest cluster and
    predicates off the ``complete_tx`` for ranks outside it: ``mapa`` to rank 2 of a 2-CTA cluster (and to rank 1
    without a cluster) gives the address; a ``.shared::cluster`` store through it faults naming the rank.
    Without the fix the mapa itself faulted."""
    ptx = ADDRESSES.replace("mapa.shared::cluster.u32 %r5, %r3, 0;", "mapa.shared::cluster.u32 %r5, %r3, 2;")
    out = api.zeros(16 * 2, np.uint32)
    api.RawModule(code=ptx).get_function("k")(2, 32, (out,), cluster=(2, 1, 1))
    assert out.get().reshape(2, 16)[:, 2].tolist() == [(2 << 24) + 48] * 2
    ptx1 = ADDRESSES.replace("mapa.shared::cluster.u32 %r5, %r3, 0;", "mapa.shared::cluster.u32 %r5, %r3, 1;")
    out = api.zeros(16, np.uint32)
    api.RawModule(code=ptx1).get_function("k")(1, 32, (out,))
    assert out.get()[2] == (1 << 24) + 48
    bad = ptx.replace("  st.global.u32 [%rd3+8], %r5;", "  st.shared::cluster.u32 [%r5], %r1;")
    with pytest.raises(api.LaunchError, match=r"shared::cluster store at address 0x2000030 names cluster rank 2; "
                                              r"the cluster has 2 CTAs"):
        api.RawModule(code=bad).get_function("k")(2, 32, (api.zeros(32, np.uint32),), cluster=(2, 1, 1))


def test_a_shared_cta_access_naming_another_cta_is_a_fault() -> None:
    """Planted: ``st.shared`` (shared::cta) through a ``mapa`` address of the peer -- only ``.shared::cluster``
    may reach it; and a ``mapa`` of an address whose rank is outside the cluster."""
    ptx = ADDRESSES.replace("  st.global.u32 [%rd3+12], %r8;", "  st.shared.u32 [%r8], %r1;")
    with pytest.raises(api.LaunchError, match=r"shared::cta store at address 0x1000030 names the CTA of cluster "
                                              r"rank 1, not the executing CTA \(rank 0\).*\[CTA 0, thread 0\]"):
        api.RawModule(code=ptx).get_function("k")(2, 32, (api.zeros(32, np.uint32),), cluster=(2, 1, 1))
    ptx = ADDRESSES.replace("mapa.shared::cluster.u32 %r5, %r3, 0;", "mov.u32 %r5, 0x2000030;\n"
                            "  mapa.shared::cluster.u32 %r5, %r5, 0;")
    with pytest.raises(api.LaunchError, match=r"mapa.shared::cluster.u32: address 0x2000030 to cluster rank 0 -- "
                                              r"the cluster has 2 CTAs"):
        api.RawModule(code=ptx).get_function("k")(2, 32, (api.zeros(32, np.uint32),), cluster=(2, 1, 1))


DSMEM = _cluster_kernel("""  mov.u32 %r3, bar;
  setp.ne.u32 %p0, %r0, 0;
  @%p0 bra INIT_DONE;
  mbarrier.init.shared::cta.b64 [%r3], 1;
INIT_DONE:
  barrier.cluster.arrive.release.aligned;
  barrier.cluster.wait.acquire.aligned;
  xor.b32 %r4, %r1, 1;
  mov.u32 %r5, buf;
  shl.b32 %r6, %r0, 2;
  add.u32 %r5, %r5, %r6;
  mapa.shared::cluster.u32 %r7, %r5, %r4;
  mad.lo.u32 %r8, %r1, 1000, %r0;
  st.shared::cluster.u32 [%r7], %r8;
  bar.sync 0;
  @%p0 bra ARRIVED;
  mapa.shared::cluster.u32 %r9, %r3, %r4;
  mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r9];
ARRIVED:
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r3], 0;
  @!%p1 bra WAIT;
  ld.shared.u32 %r10, [%r5];
  ld.shared::cluster.u32 %r11, [%r7];
  mad.lo.u32 %r12, %r2, 32, %r0;
  mul.wide.u32 %rd3, %r12, 8;
  add.u64 %rd3, %rd1, %rd3;
  st.global.v2.u32 [%rd3], {%r10, %r11};
  barrier.cluster.arrive.release.aligned;
  barrier.cluster.wait.acquire.aligned;""", "  .shared .align 8 .b64 bar;\n  .shared .align 16 .b32 buf[32];\n")


def test_two_ctas_exchange_through_dsmem_and_a_remote_mbarrier_arrive() -> None:
    """Each CTA of a 2-CTA cluster writes its rank*1000+tid into the peer's ``buf`` (``mapa`` +
    ``st.shared::cluster``), then arrives on the peer's mbarrier (``.shared::cluster``); each waits on its own
    and reads the peer's values (and its own back through the cluster window). Planted fault: ``shared_target``
    ignoring the rank bits of a .shared::cluster address (every CTA writes its own buf) -> reads its own values."""
    out = api.zeros(4 * 32 * 2, np.uint32)
    api.RawModule(code=DSMEM).get_function("k")(4, 32, (out,), cluster=(2, 1, 1))
    got = out.get().reshape(4, 32, 2)
    for c in range(4):
        peer = (c % 2) ^ 1
        assert (got[c, :, 0] == peer * 1000 + np.arange(32)).all(), (c, got[c, :4])
        assert (got[c, :, 1] == (c % 2) * 1000 + np.arange(32)).all()


def test_a_remote_arrive_may_not_return_a_state() -> None:
    """Planted: the remote arrive writes its state into a register (the ISA allows only the sink ``_``)."""
    ptx = DSMEM.replace("shared::cluster.b64 _, [%r9]", "shared::cluster.b64 %rd9, [%r9]")
    with pytest.raises(api.LaunchError, match="an arrive on another CTA's mbarrier returns no state"):
        api.RawModule(code=ptx).get_function("k")(2, 32, (api.zeros(128, np.uint32),), cluster=(2, 1, 1))


ATOMS = _cluster_kernel("""  mov.u32 %r3, cnt;
  mapa.shared::cluster.u32 %r4, %r3, 0;
  setp.ne.u32 %p0, %r0, 0;
  @%p0 bra Z;
  st.shared.u32 [%r3], 0;
Z:
  barrier.cluster.arrive.release.aligned;
  barrier.cluster.wait.acquire.aligned;
  atom.shared::cluster.add.u32 %r5, [%r4], 1;
  red.shared::cluster.add.u32 [%r4], 2;
  barrier.cluster.arrive.release.aligned;
  barrier.cluster.wait.acquire.aligned;
  @%p0 bra SKIP;
  ld.shared::cluster.u32 %r6, [%r4];
  mul.wide.u32 %rd3, %r2, 4;
  add.u64 %rd3, %rd1, %rd3;
  st.global.u32 [%rd3], %r6;
SKIP:
  barrier.cluster.arrive.release.aligned;
  barrier.cluster.wait.acquire.aligned;""", "  .shared .align 4 .b32 cnt;\n")


def test_cluster_atomics_reach_the_addressed_cta() -> None:
    """Every thread of 4 CTAs adds 1 (``atom``) and 2 (``red``) to rank 0's counter: 4 * 32 * 3. Planted fault:
    the atomic's owner taken as the executing CTA -> each CTA's own location, 96."""
    out = api.zeros(4, np.uint32)
    api.RawModule(code=ATOMS).get_function("k")(4, 32, (out,), cluster=(4, 1, 1))
    assert (out.get() == 4 * 32 * 3).all()


# ------------------------------------------------------------------------------------------ TMA into other CTAs
TMA_LOAD = "cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
TMA_PARAMS = ".param .align 64 .b8 tmap[128], .param .u64 pout, .param .u32 mask"
TMA_SHARED = "  .reg .b16 %rs<4>;\n  .shared .align 128 .b8 buf[128];\n  .shared .align 8 .b64 bar;\n"
COPY_OUT = """  shl.b32 %r6, %r0, 2;
  add.u32 %r7, %r4, %r6;
  ld.shared.u32 %r8, [%r7];
  mad.lo.u32 %r9, %r2, 32, %r0;
  mul.wide.u32 %rd3, %r9, 4;
  add.u64 %rd3, %rd1, %rd3;
  st.global.u32 [%rd3], %r8;
  barrier.cluster.arrive.release.aligned;
  barrier.cluster.wait.acquire.aligned;"""

MULTICAST = _cluster_kernel("""  ld.param.u32 %r20, [mask];
  cvt.u16.u32 %rs1, %r20;
  mov.u32 %r3, bar;
  mov.u32 %r4, buf;
  shr.u32 %r21, %r20, %r1;
  and.b32 %r21, %r21, 1;
  setp.eq.u32 %p2, %r21, 1;
  setp.ne.u32 %p0, %r0, 0;
  @%p0 bra INIT_DONE;
  mbarrier.init.shared::cta.b64 [%r3], 1;
  @%p2 mbarrier.arrive.expect_tx.shared::cta.b64 %rd4, [%r3], 128;
  @!%p2 mbarrier.arrive.shared::cta.b64 %rd4, [%r3];
INIT_DONE:
  barrier.cluster.arrive.release.aligned;
  barrier.cluster.wait.acquire.aligned;
  setp.ne.u32 %p3, %r1, 0;
  or.pred %p3, %p3, %p0;
  @%p3 bra WAIT;
  mov.u32 %r5, 16;
  TMA_LOAD.multicast::cluster [%r4], [tmap, {%r5}], [%r3], %rs1;
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r3], 0;
  @!%p1 bra WAIT;
""".replace("TMA_LOAD", TMA_LOAD) + COPY_OUT, TMA_SHARED, TMA_PARAMS)


def _tma_args(mask: int) -> tuple:
    a = api.asarray(np.arange(64, dtype=np.uint32) * 3)
    return api.tensormap_tiled(a, (32,), by_value=True), api.zeros(8 * 32, np.uint32), np.uint32(mask)


def test_multicast_tma_writes_every_masked_cta_and_signals_each_ones_mbarrier() -> None:
    """Rank 0 of each 4-CTA cluster loads elements 16..47 once with ctaMask 0b1011: ranks 0, 1 and 3 receive
    them at the same offset and complete 128 bytes on their own mbarrier at the same offset; rank 2 (not in the
    mask) keeps zeros. Planted faults: the destinations taken as the issuing CTA only (ranks 1 and 3 deadlock on
    their mbarriers), a ctaMask naming rank 4 of a 4-CTA cluster."""
    tmap, out, mask = _tma_args(0b1011)
    api.RawModule(code=MULTICAST).get_function("k")(8, 32, (tmap, out, mask), cluster=(4, 1, 1))
    got = out.get().reshape(8, 32)
    for c in range(8):
        want = np.arange(16, 48) * 3 if (0b1011 >> (c % 4)) & 1 else np.zeros(32)
        assert (got[c] == want).all(), c
    with pytest.raises(api.LaunchError, match=r"ctaMask 0x0011 names no CTA or a rank past the cluster of 4 CTAs"):
        api.RawModule(code=MULTICAST).get_function("k")(4, 32, _tma_args(0b10001), cluster=(4, 1, 1))


def _init_expecting(skip: str, tx: int) -> str:
    """Threads not ``skip`` initialise the CTA's mbarrier ``bar`` (address in %r3) to expect ``tx`` bytes; then the
    cluster meets, so that every mbarrier exists before any CTA's copy signals it."""
    return (f"  @{skip} bra INIT_DONE;\n  mbarrier.init.shared::cta.b64 [%r3], 1;\n"
            f"  mbarrier.arrive.expect_tx.shared::cta.b64 %rd4, [%r3], {tx};\nINIT_DONE:\n"
            "  barrier.cluster.arrive.release.aligned;\n  barrier.cluster.wait.acquire.aligned;\n")


PAIR = _cluster_kernel("""  mov.u32 %r3, bar;
  mov.u32 %r4, buf;
  setp.ne.u32 %p0, %r0, 0;
  setp.ne.u32 %p4, %r1, 0;
  or.pred %p5, %p0, %p4;
""" + _init_expecting("%p5", 256) + """  @%p0 bra ISSUED;
  and.b32 %r10, %r3, 0xFEFFFFFF;
  mul.lo.u32 %r5, %r1, 32;
  TMA_LOAD.cta_group::2 [%r4], [tmap, {%r5}], [%r10];
ISSUED:
  @%p4 bra LEADER_DONE;
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r3], 0;
  @!%p1 bra WAIT;
LEADER_DONE:
  barrier.cluster.arrive.release.aligned;
  barrier.cluster.wait.acquire.aligned;
""".replace("TMA_LOAD", TMA_LOAD) + COPY_OUT, TMA_SHARED, TMA_PARAMS)


def test_cta_group_2_tma_signals_the_leader_ctas_mbarrier() -> None:
    """Both CTAs of a pair load their own half (coordinates 0 and 32) into their own ``buf`` and signal the
    even CTA's mbarrier (``bar & 0xFEFFFFFF``, CUTLASS's 2-SM load), which expects 256 bytes. Planted fault: the
    same kernel without ``.cta_group::2`` -- the peer CTA's copy may not signal the leader's mbarrier."""
    tmap, out, mask = _tma_args(0)
    api.RawModule(code=PAIR).get_function("k")(4, 32, (tmap, out, mask), cluster=(2, 1, 1))
    got = out.get().reshape(8, 32)[:4]
    for c in range(4):
        assert (got[c] == (np.arange(32) + 32 * (c % 2)) * 3).all(), c
    with pytest.raises(api.LaunchError, match=r"the mbarrier \(cluster rank 0\) is not in the destination's CTA "
                                              r"\(only .cta_group::2 may signal the peer CTA's\).*\[CTA 1, thread 0\]"):
        api.RawModule(code=PAIR.replace(".cta_group::2", "")).get_function("k")(2, 32, _tma_args(0),
                                                                                cluster=(2, 1, 1))


BULK = _cluster_kernel("""  mov.u32 %r3, bar;
  mov.u32 %r4, buf;
  shl.b32 %r6, %r0, 2;
  add.u32 %r7, %r4, %r6;
  mad.lo.u32 %r8, %r1, 100, %r0;
  st.shared.u32 [%r7], %r8;
  fence.proxy.async.shared::cta;
  bar.sync 0;
  setp.ne.u32 %p0, %r0, 0;
""" + _init_expecting("%p0", 128) + """  @%p0 bra WAIT;
  xor.b32 %r11, %r1, 1;
  mov.u32 %r12, buf2;
  mapa.shared::cluster.u32 %r13, %r12, %r11;
  mapa.shared::cluster.u32 %r14, %r3, %r11;
  cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%r13], [%r4], 128, [%r14];
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r3], 0;
  @!%p1 bra WAIT;
  mov.u32 %r4, buf2;
""" + COPY_OUT, TMA_SHARED + "  .shared .align 128 .b8 buf2[128];\n", ".param .u64 pout")


def test_bulk_copy_into_the_peer_ctas_shared_memory() -> None:
    """``cp.async.bulk.shared::cluster.shared::cta``: each CTA copies its 128 bytes into the peer's ``buf2`` and
    completes them on the peer's mbarrier. Planted faults: the source written without ``fence.proxy.async``
    (the async proxy reads it: a hazard); the destination CTA taken as the issuing one (its copy then signals
    the peer's mbarrier from another CTA: refused)."""
    out = api.zeros(8 * 32, np.uint32)
    api.RawModule(code=BULK).get_function("k")(4, 32, (out,), cluster=(2, 1, 1))
    got = out.get().reshape(8, 32)[:4]
    for c in range(4):
        assert (got[c] == ((c % 2) ^ 1) * 100 + np.arange(32)).all(), c
    with pytest.raises(api.LaunchError, match="reads shared memory byte 0x0 of CTA 0 written at line 22"):
        api.RawModule(code=BULK.replace("  fence.proxy.async.shared::cta;\n", "")).get_function("k")(
            2, 32, (out,), cluster=(2, 1, 1))


BULK_GLOBAL = HEAD + """.visible .entry k(.param .u64 pin, .param .u64 pout)
{
""" + REGS + """  .shared .align 128 .b8 buf[256];
  .shared .align 8 .b64 bar;
  ld.param.u64 %rd1, [pin];
  ld.param.u64 %rd2, [pout];
  mov.u32 %r0, %tid.x;
  setp.ne.u32 %p0, %r0, 0;
  @%p0 bra END;
  mov.u32 %r3, bar;
  mov.u32 %r4, buf;
  mbarrier.init.shared::cta.b64 [%r3], 1;
  mbarrier.arrive.expect_tx.shared::cta.b64 %rd4, [%r3], 240;
  add.u64 %rd5, %rd1, 16;
  cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [%r4], [%rd5], 240, [%r3];
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r3], 0;
  @!%p1 bra WAIT;
  cp.async.bulk.global.shared::cta.bulk_group [%rd2], [%r4], 240;
  cp.async.bulk.commit_group;
  cp.async.bulk.wait_group 0;
END:
  ret;
}
"""


def test_plain_bulk_copies_global_to_shared_and_back() -> None:
    """``cp.async.bulk`` global -> shared::cta (240 bytes from a 16-byte-aligned, not 240-aligned, address, completed
    on the mbarrier) and shared::cta -> global (``.bulk_group``). Planted faults: a source past the window; a
    natural-alignment check of the whole size (the copy from +16 is refused)."""
    src = api.asarray(np.arange(64, dtype=np.uint32))
    out = api.zeros(60, np.uint32)
    api.RawModule(code=BULK_GLOBAL).get_function("k")(1, 32, (src, out))
    assert (out.get() == np.arange(4, 64)).all()
    with pytest.raises(api.LaunchError, match="source of 288 bytes at shared 0x0 exceeds the 272-byte window"):
        api.RawModule(code=BULK_GLOBAL.replace("[%rd2], [%r4], 240;", "[%rd2], [%r4], 288;")).get_function("k")(
            1, 32, (src, api.zeros(68, np.uint32)))


ST_ASYNC = _cluster_kernel("""  mov.u32 %r3, bar;
  setp.ne.u32 %p0, %r0, 0;
""" + _init_expecting("%p0", 128) + """  xor.b32 %r11, %r1, 1;
  mov.u32 %r4, buf;
  shl.b32 %r6, %r0, 2;
  add.u32 %r12, %r4, %r6;
  mapa.shared::cluster.u32 %r13, %r12, %r11;
  mapa.shared::cluster.u32 %r14, %r3, %r11;
  mad.lo.u32 %r8, %r1, 100, %r0;
  st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%r13], %r8, [%r14];
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r3], 0;
  @!%p1 bra WAIT;
""" + COPY_OUT, TMA_SHARED, ".param .u64 pout")


def test_st_async_writes_the_peer_and_completes_on_its_mbarrier() -> None:
    """Each of the 32 threads of a CTA ``st.async``s 4 bytes into the peer's ``buf`` and completes them on the
    peer's mbarrier (which expects 128 bytes). Planted fault: the mbarrier named in the executing CTA while the
    store goes to the peer -> refused."""
    out = api.zeros(8 * 32, np.uint32)
    api.RawModule(code=ST_ASYNC).get_function("k")(4, 32, (out,), cluster=(2, 1, 1))
    got = out.get().reshape(8, 32)[:4]
    for c in range(4):
        assert (got[c] == ((c % 2) ^ 1) * 100 + np.arange(32)).all(), c
    with pytest.raises(api.LaunchError, match="the mbarrier is not in the CTA the store writes"):
        api.RawModule(code=ST_ASYNC.replace("[%r13], %r8, [%r14]", "[%r13], %r8, [%r3]")).get_function("k")(
            2, 32, (out,), cluster=(2, 1, 1))
