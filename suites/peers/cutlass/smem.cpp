// Shared-memory operand layouts and descriptors as CUTLASS's SM100 collectives build them:
// UMMA::Layout_{K,MN}_*_Atom -> UMMA::tile_to_mma_shape (K first, as the collective) -> make_fragment_B
// (one SmemDescriptor per MMA k-block), plus CuTe's (n, k) -> byte address of the whole tile.
#include "common.hpp"
#include <cute/arch/mma_sm100_desc.hpp>
#include <cute/atom/mma_traits_sm100.hpp>
using namespace cute;
using UMMA::Major;

constexpr uintptr_t BASE = 0x8000;

template <class T> constexpr int bits_of() { return int(sizeof_bits_v<T>); }

template <class Atom, class SmemT, class LayoutAtom, int N, int K, Major M>
void run(const char* elem, const char* swz, const char* atom_name) {
  auto tiled_mma = make_tiled_mma(Atom{});
  using TM = decltype(tiled_mma);
  auto shapeB = partition_shape_B(tiled_mma, make_shape(Int<N>{}, Int<K>{}));
  using Step_ = conditional_t<M == Major::MN, Step<_2, _1, _3>, Step<_1, _2, _3>>;
  auto layout = UMMA::tile_to_mma_shape(LayoutAtom{}, append(shapeB, Int<1>{}), Step_{});
  auto sB = make_tensor(make_smem_ptr(reinterpret_cast<SmemT*>(BASE)), layout);
  auto tCrB = TM::make_fragment_B(sB);
  constexpr int KB = decltype(size<2>(tCrB))::value;
  constexpr int MMA_K = decltype(size<0, 1>(shapeB))::value;
  constexpr int MMA_N = decltype(size<0, 0>(shapeB))::value;
  std::vector<unsigned long long> descs;
  for (int kb = 0; kb < KB; ++kb) descs.push_back(uint64_t(tCrB(0, 0, kb, 0)));
  // (n, k) -> byte offset from BASE through CuTe's swizzled smem pointer (4-bit: 2 * byte + nibble)
  auto ub = recast<uint8_t>(sB);
  std::vector<long long> off;
  off.reserve(N * K);
  for (int k = 0; k < K; ++k)
    for (int n = 0; n < N; ++n) {
      auto c = make_coord(make_coord(n % MMA_N, k % MMA_K), n / MMA_N, k / MMA_K, 0);
      if constexpr (bits_of<SmemT>() >= 8) {  // the swizzled smem pointer of element (n, k)
        off.push_back((long long)reinterpret_cast<uintptr_t>(raw_pointer_cast(&sB(c))) - (long long)BASE);
      } else {  // 4-bit (K-major only): the byte view's swizzled pointer; element k at nibble k % 2
        auto cb = make_coord(make_coord(n % MMA_N, (k % MMA_K) / 2), n / MMA_N, k / MMA_K, 0);
        long long byte = (long long)reinterpret_cast<uintptr_t>(raw_pointer_cast(&ub(cb))) - (long long)BASE;
        off.push_back(2 * byte + k % 2);
      }
    }
  Json j;
  j.str("item", "smem").str("elem", elem).str("swizzle", swz).str("major", M == Major::K ? "K" : "MN")
      .str("atom", atom_name).num("bits", bits_of<SmemT>()).num("N", N).num("K", K).num("mma_k", MMA_K)
      .u64("base", BASE).arr("desc", descs).arr("offset", off);
  j.emit();
}

using F8 = SM100_MMA_MXF8F6F4_SS<cutlass::float_e4m3_t, cutlass::float_e4m3_t, float, cutlass::float_ue8m0_t, 128, 256, Major::K, Major::K>;
using F8MN = SM100_MMA_MXF8F6F4_SS<cutlass::float_e4m3_t, cutlass::float_e4m3_t, float, cutlass::float_ue8m0_t, 128, 256, Major::MN, Major::MN>;
using H = SM100_MMA_F16BF16_SS<cutlass::half_t, cutlass::half_t, float, 128, 256, Major::K, Major::K>;
using HMN = SM100_MMA_F16BF16_SS<cutlass::half_t, cutlass::half_t, float, 128, 256, Major::MN, Major::MN>;
using F4 = SM100_MMA_MXF4_SS<cutlass::float_e2m1_t, cutlass::float_e2m1_t, float, cutlass::float_ue8m0_t, 128, 256, 32, Major::K, Major::K>;

int main() {
  using u8 = uint8_t; using h = cutlass::half_t; using e21 = cutlass::float_e2m1_t;
  run<F8, u8, UMMA::Layout_K_INTER_Atom<u8>, 256, 64, Major::K>("b8", "none", "Layout_K_INTER_Atom");
  run<F8, u8, UMMA::Layout_K_SW32_Atom<u8>, 256, 128, Major::K>("b8", "32B", "Layout_K_SW32_Atom");
  run<F8, u8, UMMA::Layout_K_SW64_Atom<u8>, 256, 128, Major::K>("b8", "64B", "Layout_K_SW64_Atom");
  run<F8, u8, UMMA::Layout_K_SW128_Atom<u8>, 256, 256, Major::K>("b8", "128B", "Layout_K_SW128_Atom");
  run<F8MN, u8, UMMA::Layout_MN_INTER_Atom<u8>, 256, 64, Major::MN>("b8", "none", "Layout_MN_INTER_Atom");
  run<F8MN, u8, UMMA::Layout_MN_SW32_Atom<u8>, 256, 64, Major::MN>("b8", "32B", "Layout_MN_SW32_Atom");
  run<F8MN, u8, UMMA::Layout_MN_SW64_Atom<u8>, 256, 64, Major::MN>("b8", "64B", "Layout_MN_SW64_Atom");
  run<F8MN, u8, UMMA::Layout_MN_SW128_Atom<u8>, 256, 64, Major::MN>("b8", "128B", "Layout_MN_SW128_Atom");
  run<F8MN, u8, UMMA::Layout_MN_SW128_32B_Atom<u8>, 256, 64, Major::MN>("b8", "128B_base32B", "Layout_MN_SW128_32B_Atom");
  run<H, h, UMMA::Layout_K_INTER_Atom<h>, 256, 32, Major::K>("b16", "none", "Layout_K_INTER_Atom");
  run<H, h, UMMA::Layout_K_SW32_Atom<h>, 256, 64, Major::K>("b16", "32B", "Layout_K_SW32_Atom");
  run<H, h, UMMA::Layout_K_SW64_Atom<h>, 256, 64, Major::K>("b16", "64B", "Layout_K_SW64_Atom");
  run<H, h, UMMA::Layout_K_SW128_Atom<h>, 256, 128, Major::K>("b16", "128B", "Layout_K_SW128_Atom");
  run<HMN, h, UMMA::Layout_MN_INTER_Atom<h>, 256, 32, Major::MN>("b16", "none", "Layout_MN_INTER_Atom");
  run<HMN, h, UMMA::Layout_MN_SW32_Atom<h>, 256, 32, Major::MN>("b16", "32B", "Layout_MN_SW32_Atom");
  run<HMN, h, UMMA::Layout_MN_SW64_Atom<h>, 256, 32, Major::MN>("b16", "64B", "Layout_MN_SW64_Atom");
  run<HMN, h, UMMA::Layout_MN_SW128_Atom<h>, 256, 32, Major::MN>("b16", "128B", "Layout_MN_SW128_Atom");
  run<HMN, h, UMMA::Layout_MN_SW128_32B_Atom<h>, 256, 32, Major::MN>("b16", "128B_base32B", "Layout_MN_SW128_32B_Atom");
  run<F4, e21, UMMA::Layout_K_INTER_Atom<e21>, 256, 128, Major::K>("fp4x2", "none", "Layout_K_INTER_Atom");
  run<F4, e21, UMMA::Layout_K_SW32_Atom<e21>, 256, 256, Major::K>("fp4x2", "32B", "Layout_K_SW32_Atom");
  run<F4, e21, UMMA::Layout_K_SW64_Atom<e21>, 256, 256, Major::K>("fp4x2", "64B", "Layout_K_SW64_Atom");
  run<F4, e21, UMMA::Layout_K_SW128_Atom<e21>, 256, 512, Major::K>("fp4x2", "128B", "Layout_K_SW128_Atom");
  return 0;
}
