// sm_120 mma.sync block-scale fragments as CuTe's MMA_Traits state them: (thread, value) -> linear coordinate
// of A (M16 x K, col-major m + 16k), B (N8 x K, n + 8k), C (M16 x N8, m + 16n), SFA (m + 16k), SFB (n + 8k).
#include "common.hpp"
#include <cute/atom/mma_traits_sm120.hpp>
using namespace cute;
namespace BS = SM120::BLOCKSCALED;

template <class L> std::vector<long long> eval(L) {
  std::vector<long long> out;
  constexpr int T = decltype(size<0>(L{}))::value, V = decltype(size<1>(L{}))::value;
  for (int t = 0; t < T; ++t)
    for (int v = 0; v < V; ++v) out.push_back((long long)L{}(t, v));
  return out;
}

template <class Op>
void run(const char* kind, const char* scale_vec, const char* stype, int k, int vs) {
  using Tr = MMA_Traits<Op>;
  Json j;
  j.str("item", "sm120").str("kind", kind).str("scale_vec", scale_vec).str("stype", stype).num("K", k).num("vs", vs)
      .num("a_vals", size<1>(typename Tr::ALayout{})).num("b_vals", size<1>(typename Tr::BLayout{}))
      .num("c_vals", size<1>(typename Tr::CLayout{})).num("sf_vals", size<1>(typename Tr::SFALayout{}))
      .arr("A", eval(typename Tr::ALayout{})).arr("B", eval(typename Tr::BLayout{})).arr("C", eval(typename Tr::CLayout{}))
      .arr("SFA", eval(typename Tr::SFALayout{})).arr("SFB", eval(typename Tr::SFBLayout{}));
  j.emit();
}

int main() {
  using E4 = cutlass::float_e4m3_t; using E21 = cutlass::float_e2m1_t;
  using U8 = cutlass::float_ue8m0_t; using U4 = cutlass::float_ue4m3_t;
  run<BS::SM120_16x8x32_TN_VS<E4, E4, float, U8, 32>>("mxf8f6f4", "1X", "ue8m0", 32, 32);
  run<BS::SM120_16x8x64_TN_VS<E21, E21, float, U8, 32>>("mxf4nvf4", "2X", "ue8m0", 64, 32);
  run<BS::SM120_16x8x64_TN_VS<E21, E21, float, U8, 16>>("mxf4nvf4", "4X", "ue8m0", 64, 16);
  run<BS::SM120_16x8x64_TN_VS<E21, E21, float, U4, 16>>("mxf4nvf4", "4X", "ue4m3", 64, 16);
  return 0;
}
