// What a CUTLASS example's host program writes for the PTX VM (mmacts suites/peers/cutlass_examples.py), shared
// by example_host.cu (dense mainloops) and example_sparse_host.cu (sparse ones). Included after the example, so
// CuTe and the example's types are already declared.
#pragma once
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace mm {

// (row, col / step) -> layout(row, col, 0) / div, row-major over [rows, cols / step]
template <class L>
std::vector<int> offsets(L const& layout, int rows, int cols, int step, int div = 1) {
  std::vector<int> out;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; c += step) out.push_back(int(layout(cute::make_coord(r, c, 0)) / div));
  return out;
}

inline void write_ints(std::string const& path, std::vector<int> const& v) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<char const*>(v.data()), std::streamsize(v.size() * sizeof(int)));
}

// a device address given in hex on the command line
template <class T>
T* ptr(char const* hex) { return reinterpret_cast<T*>(std::strtoull(hex, nullptr, 16)); }

// Appends the launch shape (grid, block, cluster, dynamic shared memory, sizeof Params) to meta and writes the
// Params bytes to OUT/params.bin.
template <class Kernel>
void write_launch(std::string& meta, std::string const& out, typename Kernel::Params const& params) {
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

}  // namespace mm
