// Launch the kernel of this folder (made by `mmacts repro`) with the CUDA driver API only, and compare
// every output buffer with its expected file. Build: nvcc -o launch launch.cpp -lcuda  (or g++ ... -lcuda)
// Run in this folder: ./launch   -> exit 0: match; 1: mismatch; 2: a CUDA or file error.
#include <cuda.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char* s_ = 0; cuGetErrorString(r_, &s_); \
  std::fprintf(stderr, "%s failed: %s\n", #x, s_ ? s_ : "?"); std::exit(2); } } while (0)

static std::vector<unsigned char> slurp(const char* path) {
  std::vector<unsigned char> v;
  FILE* f = std::fopen(path, "rb");
  if (!f) { std::fprintf(stderr, "cannot read %s\n", path); std::exit(2); }
  unsigned char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) v.insert(v.end(), buf, buf + n);
  std::fclose(f);
  return v;
}

static CUdeviceptr upload(const char* path, size_t nbytes) {
  std::vector<unsigned char> v = slurp(path);
  if (v.size() != nbytes) { std::fprintf(stderr, "%s: %zu bytes, want %zu\n", path, v.size(), nbytes); std::exit(2); }
  CUdeviceptr d;
  CK(cuMemAlloc(&d, nbytes ? nbytes : 1));
  if (nbytes) CK(cuMemcpyHtoD(d, v.data(), nbytes));
  return d;
}

static CUdeviceptr output(size_t nbytes, unsigned fill) {
  CUdeviceptr d;
  CK(cuMemAlloc(&d, nbytes ? nbytes : 1));
  if (nbytes) CK(cuMemsetD8(d, (unsigned char)fill, nbytes));
  return d;
}

// got vs want in hex for the first differing 32-bit words (bytes when the size is not a multiple of 4)
static int check(int index, CUdeviceptr d, const char* path, size_t nbytes) {
  std::vector<unsigned char> got(nbytes), want = slurp(path);
  if (nbytes) CK(cuMemcpyDtoH(got.data(), d, nbytes));
  if (want.size() != nbytes) { std::printf("output %d: %zu bytes, want %zu\n", index, nbytes, want.size()); return 1; }
  size_t w = nbytes % 4 == 0 ? 4 : 1, words = nbytes / w, bad = 0, shown = 0;
  for (size_t i = 0; i < words; ++i) {
    if (std::memcmp(&got[i * w], &want[i * w], w) == 0) continue;
    ++bad;
    if (shown++ >= 8) continue;
    unsigned g = 0, e = 0;
    for (size_t k = 0; k < w; ++k) { g |= (unsigned)got[i * w + k] << (8 * k); e |= (unsigned)want[i * w + k] << (8 * k); }
    std::printf("  word %zu (byte %zu): got 0x%0*x want 0x%0*x\n", i, i * w, (int)(2 * w), g, (int)(2 * w), e);
  }
  if (bad) std::printf("output %d: %zu of %zu %zu-bit words differ\n", index, bad, words, 8 * w);
  return bad ? 1 : 0;
}

int main() {
  CUdevice dev;
  CUcontext ctx;
  CUmodule mod;
  CUfunction fn;
  int bad = 0;
  CK(cuInit(0));
  CK(cuDeviceGet(&dev, 0));
  CK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CK(cuCtxSetCurrent(ctx));
  std::vector<unsigned char> image = slurp("@CUBIN@");
  CK(cuModuleLoadData(&mod, image.data()));
  // @LAUNCH@
  std::printf("%s\n", bad ? "MISMATCH" : "match: every output equals the expected bytes");
  return bad;
}
