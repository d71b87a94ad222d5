// Scale factors of CUTLASS's SM100 block-scaled collective (sm100_blockscaled_mma_warpspecialized.hpp, mma_init/mma):
// smem SF layouts (Sm1xxBlockScaledConfig::deduce_smem_layoutSF{A,B}), the TMEM SF tensors (FrgTypeSF{A,B} =
// UMMA::tmem_sf_frg), the tcgen05.cp (UTCCP 4x32dp128bit) copies that move them, and per MMA k-block the SF
// TMEM addresses and the run-time instruction descriptor. Configuration: -DKIND=0 (mxf8f6f4, VS32, k-tile 128),
// 1 (mxf4, VS32, k-tile 256), 2 (mxf4nvf4 ue4m3, VS16, k-tile 256); -DCG=1|2; -DTILE_N=64|128|192|256.
#include "common.hpp"
#include <cute/arch/mma_sm100_desc.hpp>
#include <cute/atom/mma_traits_sm100.hpp>
#include <cute/atom/copy_traits_sm100.hpp>
#include <cutlass/detail/sm100_blockscaled_layout.hpp>
#include <cutlass/detail/sm100_tmem_helper.hpp>
using namespace cute;
using UMMA::Major;
constexpr int M = 128 * CG;
using E4 = cutlass::float_e4m3_t; using E21 = cutlass::float_e2m1_t;
using U8 = cutlass::float_ue8m0_t; using U4 = cutlass::float_ue4m3_t;
#if KIND == 0
constexpr int KT = 128; constexpr const char* KNAME = "mxf8f6f4";
using Atom = conditional_t<CG == 1, SM100_MMA_MXF8F6F4_SS<E4, E4, float, U8, M, TILE_N, Major::K, Major::K>,
                           SM100_MMA_MXF8F6F4_2x1SM_SS<E4, E4, float, U8, M, TILE_N, Major::K, Major::K>>;
#elif KIND == 1
constexpr int KT = 256; constexpr const char* KNAME = "mxf4";
using Atom = conditional_t<CG == 1, SM100_MMA_MXF4_SS<E21, E21, float, U8, M, TILE_N, 32, Major::K, Major::K>,
                           SM100_MMA_MXF4_2x1SM_SS<E21, E21, float, U8, M, TILE_N, 32, Major::K, Major::K>>;
#else
constexpr int KT = 256; constexpr const char* KNAME = "mxf4nvf4";
using Atom = conditional_t<CG == 1, SM100_MMA_MXF4_SS<E21, E21, float, U4, M, TILE_N, 16, Major::K, Major::K>,
                           SM100_MMA_MXF4_2x1SM_SS<E21, E21, float, U4, M, TILE_N, 16, Major::K, Major::K>>;
#endif

template <class Op, class S, class D>
void copies(const char* which, S const& s, D const& d) {
  auto s2 = group_modes<1, rank_v<S>>(s);
  auto d2 = group_modes<1, rank_v<D>>(d);
  std::vector<unsigned long long> desc, taddr;
  for (int i = 0; i < size<1>(s2); ++i) {
    desc.push_back(uint64_t(s2(_, i)[0]));
    taddr.push_back(uint32_t(raw_pointer_cast(d2(_, i).data())));
  }
  Json j;
  j.str("item", "utccp").str("which", which).arr("desc", desc).arr("taddr", taddr).emit();
}

int main() {
  auto tiled_mma = make_tiled_mma(Atom{});
  using TM = decltype(tiled_mma);
  constexpr int VS = TM::SFVecSize;
  constexpr int MMA_K = decltype(size<2>(typename TM::Shape_MNK{}))::value;
  constexpr int NSF = MMA_K / VS;
  using Cfg = cutlass::detail::Sm1xxBlockScaledConfig<VS>;
  auto tile = make_shape(Int<M>{}, Int<TILE_N>{}, Int<KT>{});
  auto sfa = Cfg::deduce_smem_layoutSFA(tiled_mma, tile);
  auto sfb = Cfg::deduce_smem_layoutSFB(tiled_mma, tile);
  auto tCtSFA = make_tensor<typename TM::FrgTypeSFA>(shape(sfa));
  auto tCtSFB = make_tensor<typename TM::FrgTypeSFB>(shape(sfb));
  constexpr uint32_t SFA_COL = 256;  // the collective puts SFA right after the accumulator columns
  tCtSFA.data() = tCtSFA.data().get() + SFA_COL;
  tCtSFB.data() = tCtSFA.data().get() + cutlass::detail::find_tmem_tensor_col_offset(tCtSFA);
  constexpr int XA = decltype(size<0, 0>(sfa))::value, XB = decltype(size<0, 0>(sfb))::value;  // MN extents
  constexpr int F = KT / VS;
  std::vector<long long> sa, sb, ta, tb;  // smem byte offsets [x][f]; tmem addresses [x][f][replica]
  constexpr int RA = decltype(size<0, 0>(tCtSFA))::value / XA, RB = decltype(size<0, 0>(tCtSFB))::value / XB;
  for (int x = 0; x < XA; ++x)
    for (int f = 0; f < F; ++f) {
      int k = f * VS;
      sa.push_back((long long)sfa(make_coord(make_coord(x, k % MMA_K), 0, k / MMA_K)));
      for (int r = 0; r < RA; ++r)
        ta.push_back((long long)raw_pointer_cast(tCtSFA.data() + tCtSFA.layout()(make_coord(make_coord(x + XA * r, k % MMA_K), 0, k / MMA_K))));
    }
  for (int x = 0; x < XB; ++x)
    for (int f = 0; f < F; ++f) {
      int k = f * VS;
      sb.push_back((long long)sfb(make_coord(make_coord(x, k % MMA_K), 0, k / MMA_K)));
      for (int r = 0; r < RB; ++r)
        tb.push_back((long long)raw_pointer_cast(tCtSFB.data() + tCtSFB.layout()(make_coord(make_coord(x + XB * r, k % MMA_K), 0, k / MMA_K))));
    }
  // per MMA k-block: SF addresses (tCtSF(_,_,k_block)), the odd-tile SFB shift of CTA N 64/192, the run-time idesc
  typename TM::Atom::Traits traits{};
  std::vector<unsigned long long> a_addr, b_addr, b_odd, idesc, idesc_odd;
  constexpr bool shift = TILE_N == 64 || TILE_N == 192;
  for (int kb = 0; kb < KT / MMA_K; ++kb) {
    uint32_t a = raw_pointer_cast(tCtSFA(_, _, kb).data());
    auto tb_ = tCtSFB;
    uint32_t b = raw_pointer_cast(tb_(_, _, kb).data());
    if constexpr (shift) tb_.data() = tb_.data().get() + 2;
    uint32_t bo = raw_pointer_cast(tb_(_, _, kb).data());
    a_addr.push_back(a); b_addr.push_back(b); b_odd.push_back(bo);
    idesc.push_back(uint32_t(UMMA::make_runtime_instr_desc_block_scaled<>(traits.idesc_, a, b) >> 32));
    idesc_odd.push_back(uint32_t(UMMA::make_runtime_instr_desc_block_scaled<>(traits.idesc_, a, bo) >> 32));
  }
  Json j;
  j.str("item", "sf").str("kind", KNAME).num("cta_group", CG).num("M", M).num("N", TILE_N).num("k_tile", KT)
      .num("vs", VS).num("mma_k", MMA_K).num("nsf", NSF).num("xa", XA).num("xb", XB).num("ra", RA).num("rb", RB)
      .num("odd_shift", shift).arr("smem_sfa", sa).arr("smem_sfb", sb).arr("tmem_sfa", ta).arr("tmem_sfb", tb)
      .arr("sfa_addr", a_addr).arr("sfb_addr", b_addr).arr("sfb_addr_odd", b_odd).arr("idesc", idesc)
      .arr("idesc_odd", idesc_odd).emit();
  // tcgen05.cp: as mma_init builds them (compact tensors, make_utccp_copy, get_utccp_smem_desc_tensor)
  using UtccpOp = conditional_t<CG == 2, SM100_UTCCP_4x32dp128bit_2cta, SM100_UTCCP_4x32dp128bit_1cta>;
  constexpr uintptr_t SA_BASE = 0x10000, SB_BASE = 0x14000;
  auto sA = make_tensor(make_smem_ptr(reinterpret_cast<typename TM::ValTypeSFA*>(SA_BASE)), sfa);
  auto sB = make_tensor(make_smem_ptr(reinterpret_cast<typename TM::ValTypeSFB*>(SB_BASE)), sfb);
  auto sA_c = make_tensor(sA.data(), filter_zeros(sA.layout()));
  auto tA_c = make_tensor(tCtSFA.data(), filter_zeros(tCtSFA.layout()));
  auto sB_c = make_tensor(sB.data(), filter_zeros(sB.layout()));
  auto tB_c = make_tensor(tCtSFB.data(), filter_zeros(tCtSFB.layout()));
  auto cpA = make_utccp_copy(UtccpOp{}, tA_c);
  auto cpB = make_utccp_copy(UtccpOp{}, tB_c);
  auto thrA = cpA.get_slice(0);
  auto thrB = cpB.get_slice(0);
  copies<UtccpOp>("A", get_utccp_smem_desc_tensor<UtccpOp>(thrA.partition_S(sA_c)), thrA.partition_D(tA_c));
  copies<UtccpOp>("B", get_utccp_smem_desc_tensor<UtccpOp>(thrB.partition_S(sB_c)), thrB.partition_D(tB_c));
  Json b;
  b.str("item", "sf_base").u64("sfa_smem", SA_BASE).u64("sfb_smem", SB_BASE).emit();
  return 0;
}
