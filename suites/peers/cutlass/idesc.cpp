// Instruction descriptors CUTLASS's SM100 block-scaled MMA atoms build (MMA_Traits<...>::idesc_, then
// make_runtime_instr_desc_block_scaled with SF IDs carried in bits 30-31 of the SF TMEM addresses).
#include "common.hpp"
#include <cute/arch/mma_sm100_desc.hpp>
#include <cute/atom/mma_traits_sm100.hpp>
using namespace cute;
namespace cd = cutlass::detail;
using UMMA::Major;
using UMMA::ScaleIn;

template <class T> const char* nm();
template <> const char* nm<cutlass::float_e4m3_t>() { return "e4m3"; }
template <> const char* nm<cutlass::float_e5m2_t>() { return "e5m2"; }
template <> const char* nm<cd::float_e2m3_unpacksmem_t>() { return "e2m3"; }
template <> const char* nm<cd::float_e3m2_unpacksmem_t>() { return "e3m2"; }
template <> const char* nm<cd::float_e2m1_unpacksmem_t>() { return "e2m1"; }
template <> const char* nm<cutlass::float_e2m1_t>() { return "e2m1"; }
template <> const char* nm<cutlass::float_ue8m0_t>() { return "ue8m0"; }
template <> const char* nm<cutlass::float_ue4m3_t>() { return "ue4m3"; }
const char* mj(Major m) { return m == Major::K ? "K" : "MN"; }

template <class Traits>
void emit(const char* kind, const char* atom, const char* a, const char* b, const char* sf, int M, int N, int cg,
          Major am, Major bm, int na, int nb, int vs) {
  Traits t{};
  for (int ida = 0; ida < 4; ++ida)
    for (int idb = 0; idb < 4; ++idb) {
      uint32_t sfa = (uint32_t(ida) << 30) | 0x100u, sfb = (uint32_t(idb) << 30) | 0x104u;
      uint64_t e = UMMA::make_runtime_instr_desc_block_scaled<>(t.idesc_, sfa, sfb);
      Json j;
      j.str("item", "idesc").str("kind", kind).str("atom", atom).str("atype", a).str("btype", b).str("stype", sf)
          .num("M", M).num("N", N).num("cta_group", cg).str("a_major", mj(am)).str("b_major", mj(bm))
          .num("negate_a", na).num("negate_b", nb).num("vs", vs).num("sfa_id", ida).num("sfb_id", idb)
          .u64("word", uint32_t(e >> 32)).u64("static_word", uint32_t(t.idesc_));
      j.emit();
    }
}

template <class A, class B, int M, int N, Major am, Major bm, ScaleIn na = ScaleIn::One, ScaleIn nb = ScaleIn::One>
void f8() {
  using SF = cutlass::float_ue8m0_t;
  if constexpr (M == 128)
    emit<MMA_Traits<SM100_MMA_MXF8F6F4_SS<A, B, float, SF, M, N, am, bm, na, nb>>>(
        "mxf8f6f4", "SM100_MMA_MXF8F6F4_SS", nm<A>(), nm<B>(), "ue8m0", M, N, 1, am, bm, int(na), int(nb), 32);
  else
    emit<MMA_Traits<SM100_MMA_MXF8F6F4_2x1SM_SS<A, B, float, SF, M, N, am, bm, na, nb>>>(
        "mxf8f6f4", "SM100_MMA_MXF8F6F4_2x1SM_SS", nm<A>(), nm<B>(), "ue8m0", M, N, 2, am, bm, int(na), int(nb), 32);
}

template <class SF, int VS, int M, int N, int CG, ScaleIn na = ScaleIn::One, ScaleIn nb = ScaleIn::One>
void f4() {
  using E = cutlass::float_e2m1_t;
  const char* kind = VS == 32 ? "mxf4" : "mxf4nvf4";
  if constexpr (CG == 1)
    emit<MMA_Traits<SM100_MMA_MXF4_SS<E, E, float, SF, M, N, VS, Major::K, Major::K, na, nb>>>(
        kind, "SM100_MMA_MXF4_SS", "e2m1", "e2m1", nm<SF>(), M, N, 1, Major::K, Major::K, int(na), int(nb), VS);
  else
    emit<MMA_Traits<SM100_MMA_MXF4_2x1SM_SS<E, E, float, SF, M, N, VS, Major::K, Major::K, na, nb>>>(
        kind, "SM100_MMA_MXF4_2x1SM_SS", "e2m1", "e2m1", nm<SF>(), M, N, 2, Major::K, Major::K, int(na), int(nb), VS);
}

using E4 = cutlass::float_e4m3_t; using E5 = cutlass::float_e5m2_t;
using F23 = cd::float_e2m3_unpacksmem_t; using F32_ = cd::float_e3m2_unpacksmem_t; using F21 = cd::float_e2m1_unpacksmem_t;

template <class A, Major am, Major bm> void f8_row() {
  f8<A, E4, 128, 256, am, bm>(); f8<A, E5, 128, 256, am, bm>(); f8<A, F23, 128, 256, am, bm>();
  f8<A, F32_, 128, 256, am, bm>(); f8<A, F21, 128, 256, am, bm>();
}
template <Major am, Major bm> void f8_pairs() { f8_row<E4, am, bm>(); f8_row<E5, am, bm>(); f8_row<F23, am, bm>(); f8_row<F32_, am, bm>(); f8_row<F21, am, bm>(); }

template <int... Ns> void f8_n1(std::integer_sequence<int, Ns...>) { (f8<E4, F21, 128, 8 * (Ns + 1), Major::K, Major::K>(), ...); }
template <int... Ns> void f8_n2(std::integer_sequence<int, Ns...>) { (f8<E4, F21, 256, 16 * (Ns + 1), Major::K, Major::K>(), ...); }
template <class SF, int VS, int M, int CG, int STEP, int... Ns> void f4_n(std::integer_sequence<int, Ns...>) {
  (f4<SF, VS, M, STEP * (Ns + 1), CG>(), ...);
}

int main() {
  f8_pairs<Major::K, Major::K>(); f8_pairs<Major::MN, Major::MN>(); f8_pairs<Major::K, Major::MN>(); f8_pairs<Major::MN, Major::K>();
  f8_n1(std::make_integer_sequence<int, 32>{});
  f8_n2(std::make_integer_sequence<int, 16>{});
  f8<E4, E4, 128, 128, Major::K, Major::K, ScaleIn::Neg, ScaleIn::One>();
  f8<E4, E4, 128, 128, Major::K, Major::K, ScaleIn::One, ScaleIn::Neg>();
  f8<E4, E4, 128, 128, Major::K, Major::K, ScaleIn::Neg, ScaleIn::Neg>();
  f8<E4, E4, 256, 128, Major::K, Major::K, ScaleIn::Neg, ScaleIn::Neg>();
  using U8 = cutlass::float_ue8m0_t; using U4 = cutlass::float_ue4m3_t;
  f4_n<U8, 32, 128, 1, 8>(std::make_integer_sequence<int, 32>{});
  f4_n<U8, 16, 128, 1, 8>(std::make_integer_sequence<int, 32>{});
  f4_n<U4, 16, 128, 1, 8>(std::make_integer_sequence<int, 32>{});
  f4_n<U8, 32, 256, 2, 16>(std::make_integer_sequence<int, 16>{});
  f4_n<U4, 16, 256, 2, 16>(std::make_integer_sequence<int, 16>{});
  f4_n<U8, 32, 128, 2, 16>(std::make_integer_sequence<int, 16>{});
  f4_n<U4, 16, 128, 2, 16>(std::make_integer_sequence<int, 16>{});
  f4<U8, 32, 128, 128, 1, ScaleIn::Neg, ScaleIn::Neg>();
  f4<U4, 16, 128, 128, 1, ScaleIn::Neg, ScaleIn::One>();
  f4<U4, 16, 256, 256, 2, ScaleIn::One, ScaleIn::Neg>();
  return 0;
}
