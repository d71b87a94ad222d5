// Stand-in for the driver's cuTensorMapEncodeTiled while the project's C library (libvmcuda) is not linked:
// it records every call's arguments as one JSON line in $MMACTS_TMAP_LOG and fills the map with a marker
// ("MMACTSTM" + call index) that cutlass_examples.py finds in the Params bytes and replaces with the map
// mmacts.ptxvm.host.tensormap.encode_tiled makes from the recorded arguments.
#include <cuda.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" CUresult CUDAAPI cuTensorMapEncodeTiled(CUtensorMap* map, CUtensorMapDataType dt, cuuint32_t rank,
    void* addr, const cuuint64_t* dim, const cuuint64_t* strides, const cuuint32_t* box,
    const cuuint32_t* estr, CUtensorMapInterleave il, CUtensorMapSwizzle sw, CUtensorMapL2promotion l2,
    CUtensorMapFloatOOBfill oob) {
  static unsigned calls = 0;
  const char* path = std::getenv("MMACTS_TMAP_LOG");
  FILE* f = path ? std::fopen(path, "a") : nullptr;
  if (!f) return CUDA_ERROR_INVALID_VALUE;
  std::fprintf(f, "{\"index\":%u,\"data_type\":%d,\"rank\":%u,\"address\":%llu,\"dim\":[", calls, int(dt), rank,
               (unsigned long long)(uintptr_t)addr);
  for (unsigned i = 0; i < rank; ++i) std::fprintf(f, "%s%llu", i ? "," : "", (unsigned long long)dim[i]);
  std::fprintf(f, "],\"strides\":[");
  for (unsigned i = 0; i + 1 < rank; ++i) std::fprintf(f, "%s%llu", i ? "," : "", (unsigned long long)strides[i]);
  std::fprintf(f, "],\"box\":[");
  for (unsigned i = 0; i < rank; ++i) std::fprintf(f, "%s%u", i ? "," : "", box[i]);
  std::fprintf(f, "],\"element_strides\":[");
  for (unsigned i = 0; i < rank; ++i) std::fprintf(f, "%s%u", i ? "," : "", estr[i]);
  std::fprintf(f, "],\"interleave\":%d,\"swizzle\":%d,\"l2\":%d,\"oob\":%d}\n", int(il), int(sw), int(l2), int(oob));
  std::fclose(f);
  std::memset(map, 0, sizeof(*map));
  std::memcpy(map, "MMACTSTM", 8);
  std::memcpy(reinterpret_cast<char*>(map) + 8, &calls, sizeof(calls));
  ++calls;
  return CUDA_SUCCESS;
}
