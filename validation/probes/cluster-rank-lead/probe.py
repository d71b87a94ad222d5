"""Cluster shared-address probe: what cvta / mapa / mov-of-a-shared-symbol give per CTA rank on this GPU."""
import cupy as cp, numpy as np, json, sys

def ptx(cx):
    return f"""
.version 8.0
.target sm_90a
.address_size 64
.visible .entry probe(.param .u64 out)
.reqnctapercluster {cx}, 1, 1
{{
 .reg .pred %p<4>; .reg .b32 %r<40>; .reg .b64 %rd<40>;
 .shared .align 16 .b8 pad[48];
 .shared .align 16 .b8 buf[64];
 ld.param.u64 %rd10, [out];
 cvta.to.global.u64 %rd10, %rd10;
 mov.u32 %r1, %tid.x;
 mov.u32 %r2, %cluster_ctarank;
 mov.u32 %r6, %ctaid.x;
 // own buf = rank*1000 + 7
 mad.lo.u32 %r20, %r2, 1000, 7;
 setp.eq.u32 %p1, %r1, 0;
 @%p1 st.shared.u32 [buf], %r20;
 barrier.cluster.arrive; barrier.cluster.wait;
 setp.ne.u32 %p2, %r1, 0;
 @%p2 bra DONE;
 mov.u32 %r3, buf;
 mov.u64 %rd1, buf;
 cvta.shared.u64 %rd2, %rd1;
 cvta.to.shared.u64 %rd3, %rd2;
 mapa.shared::cluster.u32 %r4, %r3, 0;
 mapa.shared::cluster.u32 %r5, %r3, 1;
 mapa.u64 %rd4, %rd2, 0;
 mapa.u64 %rd5, %rd2, 1;
 cvt.u32.u64 %r7, %rd3;
 // read peer (rank^1) through shared::cluster
 xor.b32 %r8, %r2, 1;
 mapa.shared::cluster.u32 %r9, %r3, %r8;
 ld.shared::cluster.u32 %r10, [%r9];
 // read own through shared::cluster with the plain shared::cta address
 ld.shared::cluster.u32 %r11, [%r3];
 // read own through masked address (CUTLASS 0xFEFFFFFF)
 and.b32 %r12, %r3, 0xFEFFFFFF;
 ld.shared::cluster.u32 %r13, [%r12];
 // generic load through mapa.u64 of peer
 mapa.u64 %rd6, %rd2, %r8;
 ld.u32 %r14, [%rd6];
 mov.u32 %r15, pad;
 isspacep.shared::cluster %p3, %rd6;
 selp.u32 %r16, 1, 0, %p3;
 isspacep.shared %p3, %rd6;
 selp.u32 %r17, 1, 0, %p3;
 isspacep.shared %p3, %rd2;
 selp.u32 %r18, 1, 0, %p3;
 mul.wide.u32 %rd11, %r6, 128;
 add.u64 %rd12, %rd10, %rd11;
 st.global.v4.u32 [%rd12], {{%r2, %r3, %r7, %r4}};
 st.global.v4.u32 [%rd12+16], {{%r5, %r9, %r10, %r11}};
 st.global.v4.u32 [%rd12+32], {{%r13, %r14, %r15, %r16}};
 st.global.v4.u32 [%rd12+48], {{%r17, %r18, %r6, 0}};
 st.global.v2.u64 [%rd12+64], {{%rd2, %rd4}};
 st.global.v2.u64 [%rd12+80], {{%rd5, %rd6}};
 st.global.v2.u64 [%rd12+96], {{%rd1, %rd3}};
DONE:
 barrier.cluster.arrive; barrier.cluster.wait;
 ret;
}}
"""
names = ["rank","mov_buf_u32","cvta_to_shared","mapa0","mapa1","mapa_peer","ld_peer","ld_own_cluster","ld_masked","ld_generic_peer","mov_pad_u32","isspacep_cluster(peer generic)","isspacep_shared(peer generic)","isspacep_shared(own generic)","ctaid","_","generic_own","mapa_u64_0","mapa_u64_1","mapa_u64_peer","mov_buf_u64","cvta_to_shared_u64"]
res = {}
for cx in (2, 4):
    import tempfile, os
    fn = os.path.join(tempfile.mkdtemp(), "p.ptx"); open(fn, "w").write(ptx(cx))
    m = cp.RawModule(path=fn)
    f = m.get_function("probe")
    out = cp.zeros((cx * 2, 32), dtype=cp.uint32)
    f((cx * 2,), (32,), (out,))
    cp.cuda.runtime.deviceSynchronize()
    h = out.get()
    rows = []
    for r in h:
        u = list(map(int, r[:16])) + [int(x) for x in r[16:28].view(np.uint64)]
        rows.append({n: hex(v) for n, v in zip(names, u)})
    res[f"cluster{cx}"] = rows
print(json.dumps(res, indent=1))
print(cp.cuda.runtime.getDeviceProperties(0)["name"])
