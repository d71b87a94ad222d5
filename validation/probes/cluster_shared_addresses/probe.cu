// Probe: how a shared::cluster address carries the CTA's rank on this GPU (sm_90a+).
//
// Why: the PTX VM (mmacts/ptxvm, memory.CLUSTER_RANK_SHIFT) gives a 32-bit shared address the layout
// (rank << 24) | offset, believed from CUTLASS's 0xFEFFFFFF peer mask; this kernel prints what the hardware
// gives, for clusters of 2 and 4 CTAs, so the VM's constant can be checked. One thread per CTA writes
// NWORDS words (see run.py for their names): the rank, cvta.to.shared of a shared variable, the raw
// `mov.u32 r, var` value, mapa.shared::cluster of that address to every rank, cvta.to.shared of mapa's
// generic (mapa.u64) result for every rank, and isspacep.shared::cta / ::cluster of those generic results.
#include <cstdint>

#define NWORDS 32

__device__ __forceinline__ uint32_t ctarank() {
    uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

template <int N>
__device__ void probe_body(uint32_t* out) {
    __shared__ alignas(16) unsigned char pad[48];
    __shared__ unsigned long long var;
    if (threadIdx.x != 0) return;
    pad[blockIdx.x % 48] = 1;  // keep pad alive so that var sits at a non-zero offset
    var = 0;
    uint32_t* o = out + blockIdx.x * NWORDS;
    uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(&var));
    uint32_t raw;
    asm volatile("{ .reg .u64 t; mov.u64 t, %1; cvta.to.shared.u64 t, t; cvt.u32.u64 %0, t; }"
                 : "=r"(raw) : "l"(&var));
    o[0] = ctarank();
    o[1] = a;
    o[2] = raw;
    o[3] = static_cast<uint32_t>(__cvta_generic_to_shared(pad));
    for (int r = 0; r < N; ++r) {
        uint32_t m;
        asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(m) : "r"(a), "r"(r));
        o[4 + r] = m;
        uint64_t g;
        asm volatile("mapa.u64 %0, %1, %2;" : "=l"(g) : "l"(&var), "r"(r));
        uint32_t s, cta, clu;
        asm volatile("{ .reg .u64 t; cvta.to.shared::cluster.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(s) : "l"(g));
        asm volatile("{ .reg .pred p; isspacep.shared::cta p, %1; selp.u32 %0, 1, 0, p; }" : "=r"(cta) : "l"(g));
        asm volatile("{ .reg .pred p; isspacep.shared::cluster p, %1; selp.u32 %0, 1, 0, p; }" : "=r"(clu) : "l"(g));
        o[8 + r] = s;
        o[12 + r] = cta | (clu << 1);
        o[16 + 2 * r] = static_cast<uint32_t>(g);
        o[17 + 2 * r] = static_cast<uint32_t>(g >> 32);
    }
    uint64_t gen = reinterpret_cast<uint64_t>(&var);
    o[24] = static_cast<uint32_t>(gen);
    o[25] = static_cast<uint32_t>(gen >> 32);
}

extern "C" __global__ void __cluster_dims__(2, 1, 1) probe2(uint32_t* out) { probe_body<2>(out); }
extern "C" __global__ void __cluster_dims__(4, 1, 1) probe4(uint32_t* out) { probe_body<4>(out); }
