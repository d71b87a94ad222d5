// Host side of a CUTLASS block-scaled *sparse* GEMM example (84a, 84b) for the PTX VM
// (mmacts suites/peers/cutlass_examples.py). As example_host.cu, but for the sparse mainloop's arguments:
// A is given compressed (M x K/2 values) with its metadata tensor E, both placed by the example's own
// SparseConfig::fill_layoutA / fill_layoutE. The example's compressor kernel is never run: the project writes
// compressed A and E itself from the offsets written here, so the layout of the metadata bits inside E is the
// project's reading, not CUTLASS's.
//   OUT/meta.json    grid, block, cluster, dynamic shared memory, sizes of Params and of every tensor
//   OUT/params.bin   the kernel's Params, byte for byte
//   OUT/sfa.bin ...  int32 offsets: for each logical (row, k-block) its element offset in the SF tensor
//   OUT/a.bin        int32: for each (row, compressed column kc < K/2) its offset in compressed-A elements
//   OUT/e.bin        int32: for each (row, metadata byte j < K / e_logical) its byte offset in E
// Usage: prog sizes M N K OUT
//        prog params M N K OUT A B E SFA SFB C D WORKSPACE   (addresses in hex)
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>
#define main cutlass_example_main
#include MMACTS_EXAMPLE
#undef main
#include "example_io.hpp"

namespace mm {
using Kernel = typename Gemm::GemmKernel;
using Mainloop = typename Kernel::CollectiveMainloop;
using Cfg = typename Mainloop::Sm1xxBlkScaledConfig;

int run(int argc, char** argv) {
  if (argc < 6) { std::fprintf(stderr, "usage: sizes|params M N K OUT [addresses]\n"); return 2; }
  std::string mode = argv[1], out = argv[5];
  int M = std::atoi(argv[2]), N = std::atoi(argv[3]), K = std::atoi(argv[4]);
  ProblemShape shape = cute::make_tuple(M, N, K, 1);
  auto sA = cutlass::make_cute_packed_stride(StrideA{}, {M, K, 1});
  auto sB = cutlass::make_cute_packed_stride(StrideB{}, {N, K, 1});
  auto sC = cutlass::make_cute_packed_stride(StrideC{}, {M, N, 1});
  auto sD = cutlass::make_cute_packed_stride(StrideD{}, {M, N, 1});
  auto lA = SparseConfig::fill_layoutA(shape);
  auto lE = SparseConfig::fill_layoutE(shape);
  auto lSFA = Cfg::tile_atom_to_shape_SFA(shape);
  auto lSFB = Cfg::tile_atom_to_shape_SFB(shape);
  CompressorUtility util(shape, sA);
  constexpr int VS = Cfg::SFVecSize;
  constexpr int ESP = int(typename SparseConfig::ElementEMmaSparsity{});  // logical K per metadata byte
  std::string meta = "{\"example\":\"" MMACTS_EXAMPLE_NAME "\",\"sf_vec\":" + std::to_string(VS);
  meta += ",\"sfa_size\":" + std::to_string(cute::size(cute::filter_zeros(lSFA)));
  meta += ",\"sfb_size\":" + std::to_string(cute::size(cute::filter_zeros(lSFB)));
  meta += ",\"a_size\":" + std::to_string(util.get_tensorA_m_physical() * util.get_tensorA_k_physical());
  meta += ",\"e_size\":" + std::to_string(util.get_tensor_E_bytes());
  meta += ",\"e_logical\":" + std::to_string(ESP);
  meta += ",\"chunk\":" + std::to_string(int(typename SparseConfig::LogicalElemsAPerChunk{}));
  write_ints(out + "/sfa.bin", offsets(lSFA, M, K, VS));
  write_ints(out + "/sfb.bin", offsets(lSFB, N, K, VS));
  // layout_A and layout_E count logical (uncompressed) K: compressed element = offset / 2, E byte = offset / ESP
  write_ints(out + "/a.bin", offsets(lA, M, K, 2, 2));
  write_ints(out + "/e.bin", offsets(lE, M, K, ESP, ESP));
  typename Gemm::Arguments args{cutlass::gemm::GemmUniversalMode::kGemm, {M, N, K, 1}, {}, {}};
  args.hw_info.device_id = 0;
  args.hw_info.sm_count = 148;
  meta += ",\"workspace\":" + std::to_string(Kernel::get_workspace_size(args));
  if (mode == "params") {
    if (argc < 14) { std::fprintf(stderr, "params needs 8 addresses\n"); return 2; }
    using EA = typename Mainloop::ArrayElementA; using EB = typename Mainloop::ArrayElementB;
    using EE = typename Mainloop::ElementE; using SF = typename Mainloop::ElementSF;
    args.mainloop = {ptr<EA>(argv[6]), lA, ptr<EB>(argv[7]), sB, ptr<EE>(argv[8]), lE,
                     ptr<SF>(argv[9]), lSFA, ptr<SF>(argv[10]), lSFB};
    args.epilogue.dC = sC; args.epilogue.dD = sD;
    args.epilogue.ptr_C = ptr<ElementC>(argv[11]);
    args.epilogue.ptr_D = ptr<ElementD>(argv[12]);
    args.epilogue.thread.alpha = 1.0f;
    args.epilogue.thread.beta = 0.0f;
    if (!Kernel::can_implement(args)) { std::fprintf(stderr, "cannot implement\n"); return 3; }
    typename Kernel::Params params = Kernel::to_underlying_arguments(args, ptr<uint8_t>(argv[13]));
    write_launch<Kernel>(meta, out, params);
  }
  std::ofstream(out + "/meta.json") << meta << "}\n";
  return 0;
}
}  // namespace mm

int main(int argc, char** argv) { return mm::run(argc, argv); }
