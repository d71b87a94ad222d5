// Host side of a CUTLASS grouped (ptr-array) block-scaled GEMM example for the PTX VM (mmacts
// suites/peers/cutlass_examples.py; example 79d). The example file is included as shipped (its main renamed); this
// program builds the example's own grouped Gemm::Arguments the way its args_from_options does with
// host_problem_shapes_available = false (the example's main: every problem shape is read on the device, the grid is
// the persistent SM count) and scalar alpha 1, beta 0, lowers them with GemmKernel::to_underlying_arguments and writes
//   OUT/meta.json     grid, block, cluster, dynamic shared memory, workspace and per-group tensor sizes
//   OUT/params.bin    the kernel's Params, byte for byte
//   OUT/arena.bin     the device-side argument arrays (problem shapes, pointer arrays, strides, SF layouts) as they
//                     lie at the ARENA address
//   OUT/sfa<g>.bin .. int32 offsets: for each logical (row, k-block) of group g its element offset in the SF tensor
// Input OUT/in.txt: "G SMS" then G lines "M N K"; for params also a line "NORM WORKSPACE ARENA" and G lines
// "A B SFA SFB C D SFD" (addresses in hex).
// Usage: prog sizes OUT | prog params OUT
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>
#define main cutlass_example_main
#include MMACTS_EXAMPLE
#undef main

namespace mm {
using Kernel = typename Gemm::GemmKernel;
using Shape3 = typename ProblemShape::UnderlyingProblemShape;
using EA = typename Gemm::ElementA;
using EB = typename Gemm::ElementB;
using ESF = typename Kernel::CollectiveMainloop::ElementSF;
using EC = typename Gemm::ElementC;
using ED = typename Gemm::EpilogueOutputOp::ElementOutput;

template <class L>
std::vector<int> sf_offsets(L const& layout, int rows, int cols, int vec) {
  std::vector<int> out;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; c += vec) out.push_back(int(layout(cute::make_coord(r, c, 0))));
  return out;
}

void write_ints(std::string const& path, std::vector<int> const& v) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<char const*>(v.data()), std::streamsize(v.size() * sizeof(int)));
}

// The arena: every device-side argument array at a 16-byte aligned offset.
struct Arena {
  std::vector<unsigned char> bytes;
  size_t put(void const* src, size_t n) {
    size_t off = (bytes.size() + 15) / 16 * 16;
    bytes.resize(off + n);
    if (src) std::memcpy(bytes.data() + off, src, n);
    return off;
  }
};

template <class T>
size_t put_vec(Arena& a, std::vector<T> const& v) { return a.put(v.data(), v.size() * sizeof(T)); }

int run(int argc, char** argv) {
  if (argc < 3) { std::fprintf(stderr, "usage: sizes|params OUT\n"); return 2; }
  std::string mode = argv[1], out = argv[2];
  std::ifstream in(out + "/in.txt");
  int G = 0, sms = 0;
  in >> G >> sms;
  std::vector<Shape3> shapes;
  std::vector<StrideA> sA; std::vector<StrideB> sB; std::vector<StrideC> sC; std::vector<StrideD> sD;
  std::vector<LayoutSFA> lA; std::vector<LayoutSFB> lB;
  std::string meta = "{\"example\":\"" MMACTS_EXAMPLE_NAME "\",\"sf_vec\":" +
                     std::to_string(int(Sm1xxBlkScaledConfig::SFVecSize)) + ",\"sfd_vec\":" +
                     std::to_string(OutputSFVectorSize) + ",\"groups\":[";
  for (int g = 0; g < G; ++g) {
    int M, N, K;
    in >> M >> N >> K;
    shapes.push_back({M, N, K});
    sA.push_back(cutlass::make_cute_packed_stride(StrideA{}, {M, K, 1}));
    sB.push_back(cutlass::make_cute_packed_stride(StrideB{}, {N, K, 1}));
    sC.push_back(cutlass::make_cute_packed_stride(StrideC{}, {M, N, 1}));
    sD.push_back(cutlass::make_cute_packed_stride(StrideD{}, {M, N, 1}));
    lA.push_back(Sm1xxBlkScaledConfig::tile_atom_to_shape_SFA(cute::make_shape(M, N, K, 1)));
    lB.push_back(Sm1xxBlkScaledConfig::tile_atom_to_shape_SFB(cute::make_shape(M, N, K, 1)));
    auto lD = Sm1xxBlockScaledOutputConfig::tile_atom_to_shape_SFD(cute::make_shape(M, N, K, 1));
    constexpr int VS = Sm1xxBlkScaledConfig::SFVecSize;
    std::string gs = std::to_string(g);
    write_ints(out + "/sfa" + gs + ".bin", sf_offsets(lA.back(), M, K, VS));
    write_ints(out + "/sfb" + gs + ".bin", sf_offsets(lB.back(), N, K, VS));
    write_ints(out + "/sfd" + gs + ".bin", sf_offsets(lD, M, N, OutputSFVectorSize));
    meta += std::string(g ? "," : "") + "{\"sfa_size\":" + std::to_string(cute::size(cute::filter_zeros(lA.back()))) +
            ",\"sfb_size\":" + std::to_string(cute::size(cute::filter_zeros(lB.back()))) +
            ",\"sfd_size\":" + std::to_string(cute::size(cute::filter_zeros(lD))) + "}";
  }
  meta += "]";
  std::vector<Shape3> device_shapes = shapes;
  unsigned long long norm = 0, ws = 0, arena_base = 0;
  std::vector<EA const*> pA(G); std::vector<EB const*> pB(G); std::vector<ESF const*> pSFA(G), pSFB(G);
  std::vector<EC const*> pC(G); std::vector<ED*> pD(G); std::vector<ESF*> pSFD(G);
  if (mode == "params") {
    in >> std::hex >> norm >> ws >> arena_base;
    for (int g = 0; g < G; ++g) {
      unsigned long long a, b, sfa, sfb, c, d, sfd;
      in >> a >> b >> sfa >> sfb >> c >> d >> sfd;
      pA[g] = reinterpret_cast<EA const*>(a); pB[g] = reinterpret_cast<EB const*>(b);
      pSFA[g] = reinterpret_cast<ESF const*>(sfa); pSFB[g] = reinterpret_cast<ESF const*>(sfb);
      pC[g] = reinterpret_cast<EC const*>(c); pD[g] = reinterpret_cast<ED*>(d); pSFD[g] = reinterpret_cast<ESF*>(sfd);
    }
  }
  Arena arena;
  size_t o_shapes = put_vec(arena, device_shapes), o_A = put_vec(arena, pA), o_B = put_vec(arena, pB),
         o_SFA = put_vec(arena, pSFA), o_SFB = put_vec(arena, pSFB), o_C = put_vec(arena, pC),
         o_D = put_vec(arena, pD), o_SFD = put_vec(arena, pSFD), o_sA = put_vec(arena, sA), o_sB = put_vec(arena, sB),
         o_lA = put_vec(arena, lA), o_lB = put_vec(arena, lB), o_sC = put_vec(arena, sC), o_sD = put_vec(arena, sD);
  meta += ",\"arena\":" + std::to_string(arena.bytes.size());
  auto at = [&](size_t off) { return reinterpret_cast<void*>(arena_base + off); };

  typename Gemm::Arguments args;
  decltype(args.epilogue.thread) fusion_args;
  fusion_args.alpha = 1.0f; fusion_args.alpha_ptr = nullptr; fusion_args.alpha_ptr_array = nullptr;
  fusion_args.dAlpha = {cute::_0{}, cute::_0{}, 0};
  fusion_args.beta = 0.0f; fusion_args.beta_ptr = nullptr; fusion_args.beta_ptr_array = nullptr;
  fusion_args.dBeta = {cute::_0{}, cute::_0{}, 0};
  fusion_args.block_scale_factor_ptr = static_cast<ESF**>(at(o_SFD));
  fusion_args.norm_constant_ptr = reinterpret_cast<ElementAccumulator const*>(norm);
  typename Kernel::TileSchedulerArguments scheduler;
  scheduler.raster_order = RasterOrderOptions::AlongN;  // the example's default
  cutlass::KernelHardwareInfo hw_info;
  hw_info.device_id = 0;
  hw_info.sm_count = sms;
  args = typename Gemm::Arguments{
      cutlass::gemm::GemmUniversalMode::kGrouped,
      {G, static_cast<Shape3*>(at(o_shapes)), nullptr},
      {static_cast<EA const**>(at(o_A)), static_cast<StrideA*>(at(o_sA)), static_cast<EB const**>(at(o_B)),
       static_cast<StrideB*>(at(o_sB)), static_cast<ESF const**>(at(o_SFA)), static_cast<LayoutSFA*>(at(o_lA)),
       static_cast<ESF const**>(at(o_SFB)), static_cast<LayoutSFB*>(at(o_lB))},
      {fusion_args, static_cast<EC const**>(at(o_C)), static_cast<StrideC*>(at(o_sC)), static_cast<ED**>(at(o_D)),
       static_cast<StrideD*>(at(o_sD))},
      hw_info, scheduler};
  meta += ",\"workspace\":" + std::to_string(Kernel::get_workspace_size(args));
  if (mode == "params") {
    if (!Kernel::can_implement(args)) { std::fprintf(stderr, "cannot implement\n"); return 3; }
    typename Kernel::Params params = Kernel::to_underlying_arguments(args, reinterpret_cast<void*>(ws));
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
    std::ofstream fa(out + "/arena.bin", std::ios::binary);
    fa.write(reinterpret_cast<char const*>(arena.bytes.data()), std::streamsize(arena.bytes.size()));
  }
  std::ofstream(out + "/meta.json") << meta << "}\n";
  return 0;
}
}  // namespace mm

int main(int argc, char** argv) { return mm::run(argc, argv); }
