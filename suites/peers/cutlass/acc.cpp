// Accumulator placement in TMEM as CUTLASS's SM100 block-scaled MMA atoms state it (FrgTypeC = UMMA::tmem_frg):
// per CTA v of the pair, thr_mma(v).partition_C of the (M, N) coordinates against make_fragment_C's TMEM addresses.
#include "common.hpp"
#include <cute/atom/mma_traits_sm100.hpp>
using namespace cute;
using UMMA::Major;
using E4 = cutlass::float_e4m3_t; using E21 = cutlass::float_e2m1_t; using U8 = cutlass::float_ue8m0_t;

template <class Atom, int M, int N, int CG>
void run(const char* atom) {
  auto tiled_mma = make_tiled_mma(Atom{});
  using TM = decltype(tiled_mma);
  std::vector<int> cta(M * N, -1), lane(M * N, -1), col(M * N, -1);
  for (int v = 0; v < CG; ++v) {
    auto thr = tiled_mma.get_slice(v);
    auto crd = thr.partition_C(make_identity_tensor(make_shape(Int<M>{}, Int<N>{})));
    auto acc = TM::make_fragment_C(shape(crd));
    for (int i = 0; i < size(crd); ++i) {
      auto mn = crd(i);
      int m = get<0>(mn), n = get<1>(mn);
      uint32_t a = raw_pointer_cast(acc.data() + acc.layout()(i));
      cta[m * N + n] = v; lane[m * N + n] = int(a >> 16); col[m * N + n] = int(a & 0xFFFF);
    }
  }
  Json j;
  j.str("item", "acc").str("atom", atom).num("M", M).num("N", N).num("cta_group", CG)
      .arr("cta", cta).arr("lane", lane).arr("col", col).emit();
}

template <int N> using A1 = SM100_MMA_MXF8F6F4_SS<E4, E4, float, U8, 128, N, Major::K, Major::K>;
template <int N> using A2 = SM100_MMA_MXF8F6F4_2x1SM_SS<E4, E4, float, U8, 256, N, Major::K, Major::K>;
template <int N> using A3 = SM100_MMA_MXF4_2x1SM_SS<E21, E21, float, U8, 128, N, 32, Major::K, Major::K>;

int main() {
  run<A1<8>, 128, 8, 1>("SM100_MMA_MXF8F6F4_SS"); run<A1<16>, 128, 16, 1>("SM100_MMA_MXF8F6F4_SS");
  run<A1<24>, 128, 24, 1>("SM100_MMA_MXF8F6F4_SS"); run<A1<64>, 128, 64, 1>("SM100_MMA_MXF8F6F4_SS");
  run<A1<120>, 128, 120, 1>("SM100_MMA_MXF8F6F4_SS"); run<A1<128>, 128, 128, 1>("SM100_MMA_MXF8F6F4_SS");
  run<A1<192>, 128, 192, 1>("SM100_MMA_MXF8F6F4_SS"); run<A1<256>, 128, 256, 1>("SM100_MMA_MXF8F6F4_SS");
  run<A2<16>, 256, 16, 2>("SM100_MMA_MXF8F6F4_2x1SM_SS"); run<A2<64>, 256, 64, 2>("SM100_MMA_MXF8F6F4_2x1SM_SS");
  run<A2<128>, 256, 128, 2>("SM100_MMA_MXF8F6F4_2x1SM_SS"); run<A2<192>, 256, 192, 2>("SM100_MMA_MXF8F6F4_2x1SM_SS");
  run<A2<256>, 256, 256, 2>("SM100_MMA_MXF8F6F4_2x1SM_SS");
  run<A3<16>, 128, 16, 2>("SM100_MMA_MXF4_2x1SM_SS"); run<A3<64>, 128, 64, 2>("SM100_MMA_MXF4_2x1SM_SS");
  run<A3<128>, 128, 128, 2>("SM100_MMA_MXF4_2x1SM_SS"); run<A3<256>, 128, 256, 2>("SM100_MMA_MXF4_2x1SM_SS");
  return 0;
}
