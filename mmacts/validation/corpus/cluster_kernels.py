"""Corpus kernels for thread-block clusters: distributed shared memory and cluster-scope mbarriers, recorded on an
H100 so the VM's cluster address spaces are proved against silicon, not only against the spec text.

Why a group of their own (``cluster``): production Blackwell kernels (CUTLASS's 2-SM GEMMs, Gluon's 2-CTA kernels)
address a peer CTA's shared memory through ``shared::cluster`` addresses that carry the CTA's rank in their high
bits (``validation/probes/cluster-rank-lead``), derive the leader's barrier with a mask, arrive on remote
mbarriers and combine results with cluster-scope atomics. Each of those is one line of PTX the VM must read the
way the hardware does; Hopper answers all of them. They are recorded apart from the older corpus record, so
that record stays what it was.

No raw address is recorded (the generic window's base and the 1 KB reserved at the start of shared memory are
the machine's): only rank bits, differences between a peer's and one's own address, ``isspacep`` answers and
data moved through the addresses. Every data race is avoided by construction (each slot has one writer; only
commutative atomics share a word; remote accesses end before the cluster barrier that precedes the reads).
"""

from __future__ import annotations

from mmacts.validation.corpus.kernels import Body, Kernel, bounded_wait, int_slots

_DSMEM = """
mov.u32 %r0, %cluster_ctarank;
mov.u32 %r1, %cluster_nctarank;
mov.u32 %r2, %clusterid.x;
mov.u32 %r3, %cluster_ctaid.x;
st.global.v2.u32 [%gout+0], {%r0, %r1};
st.global.v2.u32 [%gout+8], {%r2, %r3};
mov.u32 %r4, %cluster_ctaid.y;
mov.u32 %r5, %nclusterid.x;
mov.u32 %r6, %cluster_nctaid.x;
mov.u32 %r7, %clusterid.y;
st.global.v2.u32 [%gout+16], {%r4, %r5};
st.global.v2.u32 [%gout+24], {%r6, %r7};
ld.global.u64 %rd0, [%gin+0];
ld.global.u32 %r8, [%gin+8];
ld.global.u32 %r40, [%gin+16];
ld.global.u32 %r41, [%gin+24];
mov.u32 %r9, cl_buf;
shr.u32 %r10, %r9, 24;
shl.b32 %r11, %gt, 3;
add.u32 %r12, %r9, %r11;
st.shared.u64 [%r12], %rd0;
mov.u32 %r20, cl_buf2;
add.u32 %r21, %r20, %r11;
shl.b32 %r42, %gbs, 3;
mov.u64 %rd20, 0xA5A5A5A5A5A5A5A5;
st.shared.u64 [%r21], %rd20;
add.u32 %r43, %r21, %r42;
st.shared.u64 [%r43], %rd20;
add.u32 %r43, %r43, %r42;
st.shared.u64 [%r43], %rd20;
add.u32 %r43, %r43, %r42;
st.shared.u64 [%r43], %rd20;
mov.u32 %r30, cl_cnt;
setp.eq.u32 %p9, %gt, 0;
@%p9 st.shared.u32 [%r30], 0;
barrier.cluster.arrive.release;
barrier.cluster.wait.acquire;
sub.u32 %r14, %r1, 1;
rem.u32 %r13, %r8, %r14;
add.u32 %r13, %r13, 1;
add.u32 %r13, %r13, %r0;
rem.u32 %r13, %r13, %r1;
mad.lo.u32 %r15, %gt, 7, %r8;
rem.u32 %r15, %r15, %gbs;
shl.b32 %r15, %r15, 3;
add.u32 %r16, %r9, %r15;
mapa.shared::cluster.u32 %r17, %r16, %r13;
ld.shared::cluster.u64 %rd1, [%r17];
st.global.u64 [%gout+32], %rd1;
xor.b32 %r18, %r17, %r16;
st.global.v2.u32 [%gout+40], {%r18, %r10};
mov.u64 %rd2, cl_buf;
cvt.u64.u32 %rd3, %r15;
add.u64 %rd2, %rd2, %rd3;
cvta.shared.u64 %rd4, %rd2;
mapa.u64 %rd5, %rd4, %r13;
ld.u64 %rd6, [%rd5];
st.global.u64 [%gout+48], %rd6;
sub.u64 %rd7, %rd5, %rd4;
st.global.u64 [%gout+56], %rd7;
isspacep.shared::cluster %p0, %rd5;
isspacep.shared %p1, %rd5;
isspacep.shared %p2, %rd4;
isspacep.global %p3, %rd5;
isspacep.shared::cluster %p4, %rd4;
selp.u32 %r50, 1, 0, %p0;
selp.u32 %r51, 2, 0, %p1;
selp.u32 %r52, 4, 0, %p2;
selp.u32 %r53, 8, 0, %p3;
selp.u32 %r54, 16, 0, %p4;
or.b32 %r50, %r50, %r51;
or.b32 %r50, %r50, %r52;
or.b32 %r50, %r50, %r53;
or.b32 %r50, %r50, %r54;
ld.shared::cluster.u64 %rd8, [%r12];
st.global.u64 [%gout+64], %rd8;
mad.lo.u32 %r22, %r0, %r42, %r11;
add.u32 %r22, %r20, %r22;
mapa.shared::cluster.u32 %r23, %r22, %r13;
cvt.u64.u32 %rd9, %r0;
shl.b64 %rd9, %rd9, 56;
xor.b64 %rd9, %rd9, %rd0;
st.shared::cluster.u64 [%r23], %rd9;
and.b32 %r24, %r8, 0xFFFF;
mapa.shared::cluster.u32 %r25, %r30, 0;
atom.shared::cluster.add.u32 %r26, [%r25], %r24;
mapa.shared::cluster.u32 %r27, %r30, %r14;
red.shared::cluster.add.u32 [%r27], 1;
and.b32 %r28, %r9, 0xFEFFFFFF;
ld.shared::cluster.u64 %rd10, [%r28];
barrier.cluster.arrive.release;
barrier.cluster.wait.acquire;
shl.b32 %r44, %gbs, 2;
rem.u32 %r45, %r40, %r44;
shl.b32 %r45, %r45, 3;
add.u32 %r45, %r20, %r45;
ld.shared.u64 %rd11, [%r45];
st.global.u64 [%gout+72], %rd11;
ld.shared.u32 %r31, [%r30];
st.global.v2.u32 [%gout+80], {%r31, %r50};
st.global.u64 [%gout+88], %rd10;
rem.u32 %r46, %r41, %gbs;
shl.b32 %r46, %r46, 3;
add.u32 %r46, %r9, %r46;
ld.shared.u64 %rd12, [%r46];
st.global.u64 [%gout+96], %rd12;
barrier.cluster.arrive.release;
barrier.cluster.wait.acquire;
"""

_DSMEM_SHARED = (".shared .align 16 .b8 cl_pad[48];\n.shared .align 16 .b64 cl_buf[128];\n"
                 ".shared .align 16 .b64 cl_buf2[512];\n.shared .align 4 .b32 cl_cnt;")


def dsmem(name: str, cluster: tuple[int, int, int], grid: tuple[int, int, int]) -> Kernel:
    return Kernel(name, f"""
Distributed shared memory in a cluster of {cluster} (grid {grid}): cluster special registers; rank bits of a
shared variable's 32-bit address (>> 24); after barrier.cluster each thread reads a random slot of a random
other CTA through mapa.shared::cluster + ld.shared::cluster and through mapa (generic) + ld, records the
peer/own address differences (rank << 24 on Hopper), isspacep.shared/.shared::cluster/.global of own and peer
generic addresses, its own slot through ld.shared::cluster with its plain address; stores into the peer's
second buffer (one writer per slot) with st.shared::cluster, atom.shared::cluster.add into rank 0's counter and
red.shared::cluster.add into the last rank's, and reads rank (r & ~1)'s buffer through the 0xFEFFFFFF leader
mask; after a second barrier.cluster it reads a random slot of its own second buffer (0xA5.. where no peer
wrote), its counter and a random slot of its first buffer.""", _DSMEM, 4, 13,
                  int_slots(64, 32, 32, 32, relate=False), block=(32, 2, 1), grid=grid, shared=_DSMEM_SHARED,
                  group="cluster", cluster=cluster)


_MBAR = """
mov.u32 %r0, %cluster_ctarank;
mov.u32 %r1, %cluster_nctarank;
mov.u32 %r2, cl_mbar;
setp.eq.u32 %p0, %gt, 0;
shl.b32 %r3, %r1, 1;
@%p0 mbarrier.init.shared::cta.b64 [%r2], %r3;
@%p0 fence.mbarrier_init.release.cluster;
barrier.cluster.arrive.release;
barrier.cluster.wait.acquire;
mbarrier.test_wait.parity.shared::cta.b64 %p1, [%r2], 0;
and.b32 %r4, %gt, 31;
setp.eq.u32 %p2, %r4, 0;
mov.u32 %r5, 0;
$L_arr:
@!%p2 bra $L_arr_done;
mapa.shared::cluster.u32 %r6, %r2, %r5;
mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r6];
add.u32 %r5, %r5, 1;
setp.lt.u32 %p3, %r5, %r1;
@%p3 bra $L_arr;
$L_arr_done:
""" + bounded_wait(0, "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 %p4, [%r2], 0;") + """\
mbarrier.test_wait.parity.shared::cta.b64 %p5, [%r2], 1;
barrier.cluster.arrive.release;
barrier.cluster.wait.acquire;
setp.eq.u32 %p6, %gt, 1;
add.u32 %r7, %r0, 1;
rem.u32 %r7, %r7, %r1;
mapa.shared::cluster.u32 %r8, %r2, %r7;
@%p6 mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r8], %r3;
""" + bounded_wait(1, "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 %p7, [%r2], 1;") + """\
barrier.cluster.arrive.release;
barrier.cluster.wait.acquire;
mbarrier.test_wait.parity.shared::cta.b64 %p8, [%r2], 0;
mbarrier.test_wait.parity.shared::cta.b64 %p9, [%r2], 1;
"""


def remote_mbarrier(name: str, cluster: tuple[int, int, int], grid: tuple[int, int, int]) -> Kernel:
    b = Body()
    b(_MBAR)
    b.pred_mask(["%p1", "%p4", "%p5", "%p7", "%p8", "%p9"])
    return Kernel(name, f"""
Cluster-scope mbarriers in a cluster of {cluster} (grid {grid}): each CTA inits its barrier with 2 x cluster
size (fence.mbarrier_init.release.cluster, barrier.cluster); lane 0 of each of the two warps arrives remotely
(mapa.shared::cluster, mbarrier.arrive.release.cluster.shared::cluster) on every CTA's barrier, then all wait
(try_wait.parity.acquire.cluster, bounded); phase 1 completes by one remote arrive with count from the
previous rank. Bits of slot 0: p1 (phase 0 before arrivals) p4 p5 p7 p8 p9.""", b.text(), 1, b.slot,
                  int_slots(32), block=(32, 2, 1), grid=grid, shared=".shared .align 8 .b64 cl_mbar;",
                  group="cluster", cluster=cluster)


def cluster_corpus() -> list[Kernel]:
    """The cluster group, in a fixed order (recorded apart: ``record build --group cluster``)."""
    return [dsmem("dsmem_c2", (2, 1, 1), (4, 1, 1)), dsmem("dsmem_c4", (4, 1, 1), (8, 1, 1)),
            dsmem("dsmem_c2x2", (2, 2, 1), (4, 2, 1)),
            remote_mbarrier("mbarrier_remote_c2", (2, 1, 1), (4, 1, 1)),
            remote_mbarrier("mbarrier_remote_c4", (4, 1, 1), (4, 2, 1)),
            tma_multicast("tma_multicast_c2", 2, 4), tma_multicast("tma_multicast_c4", 4, 4)]


_TMA_MC = """
mov.u32 %r0, %cluster_ctarank;
mov.u32 %r1, %clusterid.x;
mov.u32 %r2, tm_map;
mov.u32 %r3, tm_mbar;
mov.u32 %r4, tm_buf;
setp.eq.u32 %p0, %gt, 0;
setp.lt.u32 %p1, %gt, 32;
mul.lo.u32 %r13, %gb, %gbs;
mul.wide.u32 %rd11, %r13, 128;
add.u64 %rd12, %gout0, %rd11;
@!%p0 bra $L_map_done;
mov.u64 %rd0, 0;
st.shared.v2.u64 [%r2+0], {%rd0, %rd0};
st.shared.v2.u64 [%r2+16], {%rd0, %rd0};
st.shared.v2.u64 [%r2+32], {%rd0, %rd0};
st.shared.v2.u64 [%r2+48], {%rd0, %rd0};
st.shared.v2.u64 [%r2+64], {%rd0, %rd0};
st.shared.v2.u64 [%r2+80], {%rd0, %rd0};
st.shared.v2.u64 [%r2+96], {%rd0, %rd0};
st.shared.v2.u64 [%r2+112], {%rd0, %rd0};
tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%r2], %gin0;
tensormap.replace.tile.rank.shared::cta.b1024.b32 [%r2], 1;
tensormap.replace.tile.elemtype.shared::cta.b1024.b32 [%r2], 2;
tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%r2], 0, 8;
tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%r2], 1, 32;
tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%r2], 0, 8;
tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%r2], 1, {rows};
tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [%r2], 0, 32;
tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%r2], 0, 1;
tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%r2], 1, 1;
tensormap.replace.tile.interleave_layout.shared::cta.b1024.b32 [%r2], 0;
tensormap.replace.tile.swizzle_mode.shared::cta.b1024.b32 [%r2], 0;
tensormap.replace.tile.fill_mode.shared::cta.b1024.b32 [%r2], 0;
mbarrier.init.shared::cta.b64 [%r3], 1;
fence.mbarrier_init.release.cluster;
$L_map_done:
bar.sync 0;
@%p1 tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%rd12], [%r2], 128;
@%p0 fence.proxy.tensormap::generic.acquire.gpu [%rd12], 128;
barrier.cluster.arrive.release;
barrier.cluster.wait.acquire;
@!%p0 bra $L_issued;
mbarrier.arrive.expect_tx.shared::cta.b64 %rd1, [%r3], {total};
shl.b32 %r5, %r0, 10;
add.u32 %r6, %r4, %r5;
shl.b32 %r7, %r1, {cshift};
shl.b32 %r8, %r0, 5;
add.u32 %r7, %r7, %r8;
mov.u32 %r9, 0;
mov.u16 %h0, {mask};
{tma_load}
$L_issued:
""" + bounded_wait(0, "mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r3], 0;") + """\
barrier.cluster.arrive.release;
barrier.cluster.wait.acquire;
shl.b32 %r10, %gt, 5;
add.u32 %r10, %r4, %r10;
ld.shared.v2.u64 {%rd2, %rd3}, [%r10];
ld.shared.v2.u64 {%rd4, %rd5}, [%r10+16];
shl.b32 %r11, %gt, 5;
add.u32 %r11, %r11, {half};
and.b32 %r11, %r11, {wrap};
add.u32 %r11, %r4, %r11;
ld.shared.v2.u64 {%rd6, %rd7}, [%r11];
ld.shared.v2.u64 {%rd8, %rd9}, [%r11+16];
selp.u32 %r12, 1, 0, %p2;
cvt.u64.u32 %rd10, %r12;
st.global.u64 [%gout+0], %rd2;
st.global.u64 [%gout+8], %rd3;
st.global.u64 [%gout+16], %rd4;
st.global.u64 [%gout+24], %rd5;
st.global.u64 [%gout+32], %rd6;
st.global.u64 [%gout+40], %rd7;
st.global.u64 [%gout+48], %rd8;
st.global.u64 [%gout+56], %rd9;
st.global.u64 [%gout+64], %rd10;
st.global.u64 [%gout+72], %rd10;
st.global.u64 [%gout+80], %rd10;
st.global.u64 [%gout+88], %rd10;
st.global.u64 [%gout+96], %rd10;
st.global.u64 [%gout+104], %rd10;
st.global.u64 [%gout+112], %rd10;
st.global.u64 [%gout+120], %rd10;
"""


_TMA_LOAD = ("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
             "[%r6], [%rd12, {%r9, %r7}], [%r3], %h0;")


def tma_multicast(name: str, cluster_x: int, grid_x: int) -> Kernel:
    """Each CTA of a 1-D cluster loads one 32-row box of the input (seen as a u32 tensor of 8 columns) with
    ``cp.async.bulk.tensor ... .multicast::cluster`` to every CTA of the cluster, at rank x 1 KB."""
    rows = grid_x * 64
    total = 1024 * cluster_x
    body = _TMA_MC
    for key, val in (("rows", rows), ("total", total), ("cshift", 5 + cluster_x.bit_length() - 1),
                     ("mask", (1 << cluster_x) - 1), ("half", total // 2), ("wrap", total - 1),
                     ("tma_load", _TMA_LOAD)):
        body = body.replace("{" + key + "}", str(val))
    return Kernel(name, f"""
TMA multicast in a cluster of {cluster_x} (grid {grid_x}, 64 threads per CTA): thread 0 of each CTA builds a
tensor map in shared memory from zeros with tensormap.replace (the input buffer as a u32 tensor of
{rows} rows x 8 columns, box 8 x 32, no swizzle), copies it into its own 16 output slots with
tensormap.cp_fenceproxy, and after barrier.cluster loads the 32-row box of its rank with
cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster to every CTA of the
cluster (ctaMask all) at offset rank x 1 KB; each CTA's mbarrier expects cluster x 1 KB. Every thread then
records 64 bytes of its CTA's buffer (32 at gt x 32 and 32 half the buffer further, wrapping) and the wait's outcome,
overwriting the map.""", body, 4, 16, int_slots(64, 64, 64, 64, relate=False), block=(32, 2, 1),
                  grid=(grid_x, 1, 1), shared=".shared .align 128 .b8 tm_map[128];\n.shared .align 8 .b64 tm_mbar;\n"
                  f".shared .align 1024 .b8 tm_buf[{1024 * cluster_x}];", group="cluster",
                  cluster=(cluster_x, 1, 1))
