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

namespace mm {
using Kernel = typename Gemm::GemmKernel;
using Mainloop = typename Kernel::CollectiveMainloop;
using Cfg = typename Mainloop::Sm1xxBlkScaledConfig;

template <class L>
std::vector<int> offsets(L const& layout, int rows, int cols, int step, int div) {
  // (row, col / step) -> layout(row, col) / div, row-major
  std::vector<int> out;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; c += step) out.push_back(int(layout(cute::make_coord(r, c, 0)) / div));
  return out;
}

void write_ints(std::string const& path, std::vector<int> const& v) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<char const*>(v.data()), std::streamsize(v.size() * sizeof(int)));
}

template <class T>
T* ptr(char const* hex) { return reinterpret_cast<T*>(std::strtoull(hex, nullptr, 16)); }

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
  write_ints(out + "/sfa.bin", offsets(lSFA, M, K, VS, 1));
  write_ints(out + "/sfb.bin", offsets(lSFB, N, K, VS, 1));
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
    dim3 grid = Kernel::get_grid_shape(params), block = Kernel::get_block_shape();
    using CS = typename Kernel::DispatchPolicy::ClusterShape;
    meta += ",\"grid\":[" + std::to_string(grid.x) + "," + std::to_string(grid.y) + "," + std::to_string(grid.z) + "]";
    meta += ",\"block\":[" + std::to_string(block.x) + "," + std::to_string(block.y) + "," + std::to_string(block.z) + "]";
    meta += ",\"cluster\":[" + std::to_string(int(cute::size<0>(CS{}))) + "," + std::to_string(int(cute::size<1>(CS{}))) +
            "," + std::to_string(int(cute::size<2>(CS{}))) + "]";
    meta += ",\"smem\":" + std::to_string(int(Kernel::SharedStorageSize));
    meta += ",\"params_size\":" + std::to_string(sizeof(params));
    std::ofstream f(out + "/params.bin", std::ios::binary);
    f.write(reinterpret_cast<char const*>(&params), sizeof(params));
  }
  std::ofstream(out + "/meta.json") << meta << "}\n";
  return 0;
}
}  // namespace mm

int main(int argc, char** argv) { return mm::run(argc, argv); }
