// Host side of a CUTLASS example's GEMM for the PTX VM (mmacts suites/peers/cutlass_examples.py).
// The example file is included as shipped (its main renamed); this program builds the example's own
// Gemm::Arguments for M, N, K and the device addresses the VM allocated, lowers them with
// GemmKernel::to_underlying_arguments (no CUDA runtime call on that path: hw_info.sm_count is given) and writes
//   OUT/meta.json    grid, block, cluster, dynamic shared memory, sizes of Params and of every tensor
//   OUT/params.bin   the kernel's Params, byte for byte
//   OUT/sfa.bin ...  int32 offsets: for each logical (row, k-block) its element offset in the SF tensor
// Usage: prog sizes M N K OUT            (tensor sizes only; the VM allocates after reading them)
//        prog params M N K OUT A B SFA SFB C D SFD NORM WORKSPACE   (addresses in hex)
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <type_traits>
#include <vector>
#define main cutlass_example_main
#include MMACTS_EXAMPLE
#undef main

#ifndef MMACTS_SFD
#define MMACTS_SFD 0
#endif

namespace mm {
using Kernel = typename Gemm::GemmKernel;
using Cfg = typename Kernel::CollectiveMainloop::Sm1xxBlkScaledConfig;

template <class L>
std::vector<int> sf_offsets(L const& layout, int rows, int cols, int vec) {
  // (row, col-block) -> offset, row-major over [rows, cols / vec]
  std::vector<int> out;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; c += vec) out.push_back(int(layout(cute::make_coord(r, c, 0))));
  return out;
}

void write_ints(std::string const& path, std::vector<int> const& v) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<char const*>(v.data()), std::streamsize(v.size() * sizeof(int)));
}

template <class T>
void* ptr(char const* hex) { return reinterpret_cast<T*>(std::strtoull(hex, nullptr, 16)); }

int run(int argc, char** argv) {
  if (argc < 6) { std::fprintf(stderr, "usage: sizes|params M N K OUT [addresses]\n"); return 2; }
  std::string mode = argv[1], out = argv[5];
  int M = std::atoi(argv[2]), N = std::atoi(argv[3]), K = std::atoi(argv[4]);
  auto sA = cutlass::make_cute_packed_stride(StrideA{}, {M, K, 1});
  auto sB = cutlass::make_cute_packed_stride(StrideB{}, {N, K, 1});
  auto sC = cutlass::make_cute_packed_stride(StrideC{}, {M, N, 1});
  auto sD = cutlass::make_cute_packed_stride(StrideD{}, {M, N, 1});
  auto lSFA = Cfg::tile_atom_to_shape_SFA(cute::make_shape(M, N, K, 1));
  auto lSFB = Cfg::tile_atom_to_shape_SFB(cute::make_shape(M, N, K, 1));
  constexpr int VS = Cfg::SFVecSize;
  std::string meta = "{\"example\":\"" MMACTS_EXAMPLE_NAME "\",\"sf_vec\":" + std::to_string(VS);
  meta += ",\"sfa_size\":" + std::to_string(cute::size(cute::filter_zeros(lSFA)));
  meta += ",\"sfb_size\":" + std::to_string(cute::size(cute::filter_zeros(lSFB)));
  write_ints(out + "/sfa.bin", sf_offsets(lSFA, M, K, VS));
  write_ints(out + "/sfb.bin", sf_offsets(lSFB, N, K, VS));
#if MMACTS_SFD
  auto lSFD = SfdOutputCfg::tile_atom_to_shape_SFD(cute::make_shape(M, N, K, 1));
  meta += ",\"sfd_size\":" + std::to_string(cute::size(cute::filter_zeros(lSFD)));
  meta += ",\"sfd_vec\":" + std::to_string(OutputSFVectorSize);
  write_ints(out + "/sfd.bin", sf_offsets(lSFD, M, N, OutputSFVectorSize));
#endif
  typename Gemm::Arguments args{cutlass::gemm::GemmUniversalMode::kGemm, {M, N, K, 1}, {}, {}};
  args.hw_info.device_id = 0;
  args.hw_info.sm_count = 148;
  meta += ",\"workspace\":" + std::to_string(Kernel::get_workspace_size(args));
  if (mode == "params") {
    if (argc < 15) { std::fprintf(stderr, "params needs 9 addresses\n"); return 2; }
    // Element types as the mainloop's Arguments hold them (72/79 name nv_float4_t pairs, 89 the plain types).
    using MA = typename Kernel::CollectiveMainloop::Arguments;
    using EA = std::remove_const_t<std::remove_pointer_t<decltype(MA::ptr_A)>>;
    using EB = std::remove_const_t<std::remove_pointer_t<decltype(MA::ptr_B)>>;
    using SA = std::remove_const_t<std::remove_pointer_t<decltype(MA::ptr_SFA)>>;
    using SB = std::remove_const_t<std::remove_pointer_t<decltype(MA::ptr_SFB)>>;
    args.mainloop = {static_cast<EA*>(ptr<EA>(argv[6])), sA, static_cast<EB*>(ptr<EB>(argv[7])), sB,
                     static_cast<SA*>(ptr<SA>(argv[8])), lSFA, static_cast<SB*>(ptr<SB>(argv[9])), lSFB};
    args.epilogue.dC = sC; args.epilogue.dD = sD;
    args.epilogue.ptr_C = static_cast<ElementC const*>(ptr<ElementC>(argv[10]));
    args.epilogue.ptr_D = static_cast<ElementD*>(ptr<ElementD>(argv[11]));
    args.epilogue.thread.alpha = 1.0f;
    args.epilogue.thread.beta = 0.0f;
#if MMACTS_SFD
    args.epilogue.thread.block_scale_factor_ptr = static_cast<ElementSFD*>(ptr<ElementSFD>(argv[12]));
    args.epilogue.thread.norm_constant_ptr = static_cast<ElementCompute const*>(ptr<ElementCompute>(argv[13]));
#endif
    if (!Kernel::can_implement(args)) { std::fprintf(stderr, "cannot implement\n"); return 3; }
    typename Kernel::Params params = Kernel::to_underlying_arguments(args, ptr<uint8_t>(argv[14]));
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
