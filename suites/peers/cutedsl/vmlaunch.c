/* Stand-in for the two driver calls the CuTe DSL's JIT-compiled host code makes (mmacts suites/peers/cute_dsl.py):
   cuFuncSetAttribute does nothing; cuLaunchKernelEx records the launch (grid, block, dynamic shared memory, cluster)
   and the kernel's parameter bytes instead of launching. The DSL's host function then runs with no libcuda.so.1.
   Types are the driver ABI's (cuda.h, CUDA 12/13), declared here so that no CUDA header is needed. */
#include <string.h>

typedef int CUresult;
typedef void *CUfunction;
typedef struct {
  int id; /* CUlaunchAttributeID; CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4 */
  char pad[4];
  union {
    char pad[64];
    struct { unsigned x, y, z; } clusterDim;
  } value;
} LaunchAttribute;
typedef struct {
  unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
  void *hStream;
  LaunchAttribute *attrs;
  unsigned numAttrs;
} LaunchConfig;

#define MAX_PARAMS 64
#define MAX_BYTES 16384
static int n_params, sizes[MAX_PARAMS], launched;
static unsigned char blob[MAX_BYTES];
static unsigned shape[10]; /* grid xyz, block xyz, dynamic smem, cluster xyz */

/* The parameter sizes (from the PTX entry) must be set before the launch: kernelParams holds only pointers. */
int vml_set_sizes(int n, const int *s) {
  int total = 0;
  if (n < 0 || n > MAX_PARAMS) return 1;
  for (int i = 0; i < n; ++i) total += s[i];
  if (total > MAX_BYTES) return 1;
  n_params = n;
  memcpy(sizes, s, sizeof(int) * (size_t)n);
  launched = 0;
  return 0;
}
int vml_launched(void) { return launched; }
const unsigned char *vml_blob(void) { return blob; }
const unsigned *vml_shape(void) { return shape; }

CUresult cuFuncSetAttribute(CUfunction f, int attribute, int value) {
  (void)f; (void)attribute; (void)value;
  return 0;
}

CUresult cuLaunchKernelEx(const LaunchConfig *c, CUfunction f, void **params, void **extra) {
  size_t off = 0;
  (void)f; (void)extra;
  for (int i = 0; i < n_params; ++i) {
    memcpy(blob + off, params[i], (size_t)sizes[i]);
    off += (size_t)sizes[i];
  }
  unsigned s[10] = {c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY, c->blockDimZ,
                    c->sharedMemBytes, 1, 1, 1};
  for (unsigned i = 0; i < c->numAttrs; ++i)
    if (c->attrs[i].id == 4) {
      s[7] = c->attrs[i].value.clusterDim.x;
      s[8] = c->attrs[i].value.clusterDim.y;
      s[9] = c->attrs[i].value.clusterDim.z;
    }
  memcpy(shape, s, sizeof s);
  launched = 1;
  return 0;
}
