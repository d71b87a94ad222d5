/* libvmcuda: cuTensorMapEncodeTiled / cuTensorMapEncodeIm2col writing the mmacts VM's tensor-map layout, with the
 * validation rules CUDA 13's cuda.h documents and the driver's CUresult codes. Written from that documentation
 * and the PTX ISA's tensormap field list, independently of the Python encoder (mmacts/ptxvm/host/tensormap.py);
 * test_libvmcuda.py compares the two byte for byte and result for result.
 *
 * The VM's layout (little-endian; byte offsets):
 *   0 global_address u64 | 8 rank - 1 u32 | 12 PTX elemtype u32 | 16 box_dim u32[5] | 36 element_stride u32[5]
 *   56 global_dim u32[5] | 80 global_stride u64[4] | 112 interleave u32 | 116 swizzle_mode u32
 *   120 swizzle_atomicity u32 | 124 fill_mode u8 | 125 mode u8 (0 tiled, 1 im2col) | 126..127 zero
 * im2col maps put, in the box_dim slots: 16 channelsPerPixel u32 | 20 pixelsPerColumn u32
 *   24 pixelBoxLowerCorner s16[3] | 30 pixelBoxUpperCorner s16[3] (W first; unused entries zero). */
#include "vmcuda.h"

#include <stdio.h>
#include <string.h>

#define NTYPES 16
#define NSWIZZLES 7

static _Thread_local char last_rule[256];

/* Per driver data type: PTX tensormap elemtype, bits per element in global memory, floating point. */
static const unsigned char PTX_ELEMTYPE[NTYPES] = {0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 8, 11, 12, 13, 14, 15};
static const unsigned char TYPE_BITS[NTYPES] = {8, 16, 32, 32, 64, 64, 16, 32, 64, 16, 32, 32, 32, 4, 4, 6};
static const unsigned char TYPE_FLOAT[NTYPES] = {0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0};
/* Shared-memory bytes per 16 packed elements (data + padding); 0 for the byte-sized types. */
static const unsigned char PACKED_CHUNK[NTYPES] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 16, 16};
/* Per driver swizzle: PTX swizzle_mode, swizzle_atomicity, span in bytes. */
static const unsigned char SWZ_MODE[NSWIZZLES] = {0, 1, 2, 3, 3, 3, 3};
static const unsigned char SWZ_ATOM[NSWIZZLES] = {0, 0, 0, 0, 1, 2, 3};
static const unsigned short SWZ_SPAN[NSWIZZLES] = {0, 32, 64, 128, 128, 128, 128};

static CUresult refuse(const char *rule, long long a, long long b) {
    snprintf(last_rule, sizeof last_rule, rule, a, b);
    return CUDA_ERROR_INVALID_VALUE;
}

static int padded_packed(int dt) {
    return dt == CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B || dt == CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B;
}

static int swizzle_allowed_for(int dt, int sw) {
    if (!padded_packed(dt)) return 1;
    if (sw == CU_TENSOR_MAP_SWIZZLE_NONE || sw == CU_TENSOR_MAP_SWIZZLE_128B ||
        sw == CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B) return 1;
    return dt == CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B && sw == CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B;
}

static void put(unsigned char *map, unsigned off, unsigned long long v, unsigned nbytes) {
    for (unsigned i = 0; i < nbytes; i++) map[off + i] = (unsigned char)(v >> (8 * i));
}

/* The arguments both encoders share, checked by the rules they share. */
struct common {
    int dt, il, sw, fill;
    unsigned rank;
};

static CUresult check_common(const struct common *c, const CUtensorMap *map, unsigned lo_rank, uintptr_t addr,
                             const cuuint64_t *dim, const cuuint64_t *stride, const cuuint32_t *estr, int l2) {
    if (!map || (uintptr_t)map % 64) return refuse("tensorMap is NULL or not 64-byte aligned", 0, 0);
    if (c->dt < 0 || c->dt >= NTYPES) return refuse("tensorDataType %lld is not a valid enum value", c->dt, 0);
    if (c->il < 0 || c->il > 2) return refuse("interleave %lld is not a valid enum value", c->il, 0);
    if (c->sw < 0 || c->sw >= NSWIZZLES) return refuse("swizzle %lld is not a valid enum value", c->sw, 0);
    if (l2 < 0 || l2 > 3) return refuse("l2Promotion %lld is not a valid enum value", l2, 0);
    if (c->fill < 0 || c->fill > 1) return refuse("oobFill %lld is not a valid enum value", c->fill, 0);
    if (c->rank < lo_rank || c->rank > 5) return refuse("tensorRank %lld must be in [%lld, 5]", c->rank, lo_rank);
    if (c->il != CU_TENSOR_MAP_INTERLEAVE_NONE && c->rank < 3)
        return refuse("tensorRank %lld must be at least 3 with an interleave", c->rank, 0);
    if (!dim || (c->rank > 1 && !stride) || !estr) return refuse("a required array is NULL", 0, 0);
    unsigned align = (c->il == CU_TENSOR_MAP_INTERLEAVE_32B || padded_packed(c->dt)) ? 32 : 16;
    if (addr % align) return refuse("globalAddress %#llx is not %lld-byte aligned", (long long)addr, align);
    for (unsigned i = 0; i < c->rank; i++)
        if (dim[i] == 0 || dim[i] > (1ull << 31)) return refuse("globalDim[%lld] = %lld not in [1, 2^31]", i,
                                                                (long long)dim[i]);
    if (padded_packed(c->dt) && dim[0] % 128) return refuse("globalDim[0] = %lld not a multiple of 128",
                                                            (long long)dim[0], 0);
    if (c->dt == CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B && dim[0] % 2)
        return refuse("globalDim[0] = %lld not a multiple of 2", (long long)dim[0], 0);
    for (unsigned i = 0; i + 1 < c->rank; i++)
        if (stride[i] % align || stride[i] >= (1ull << 40))
            return refuse("globalStrides[%lld] = %lld not an aligned multiple below 2^40", i, (long long)stride[i]);
    for (unsigned i = 0; i < c->rank; i++)
        if (estr[i] == 0 || estr[i] > 8) return refuse("elementStrides[%lld] = %lld not in [1, 8]", i, estr[i]);
    if (c->il == CU_TENSOR_MAP_INTERLEAVE_32B && c->sw != CU_TENSOR_MAP_SWIZZLE_32B)
        return refuse("interleave 32B requires swizzle 32B, got %lld", c->sw, 0);
    if (c->dt == CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B && c->il != CU_TENSOR_MAP_INTERLEAVE_NONE)
        return refuse("16U6_ALIGN16B requires interleave NONE", 0, 0);
    if (!swizzle_allowed_for(c->dt, c->sw)) return refuse("swizzle %lld not supported for type %lld", c->sw, c->dt);
    if (c->fill != CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE && !TYPE_FLOAT[c->dt])
        return refuse("oobFill NaN needs a floating-point type, got %lld", c->dt, 0);
    return CUDA_SUCCESS;
}

/* The innermost box (boxDim[0] or channelsPerPixel: n elements) against the type and the swizzle span. */
static CUresult check_inner(const struct common *c, unsigned long long n) {
    if (padded_packed(c->dt) && n != 128) return refuse("inner box %lld of a 16-byte-aligned packed type != 128", n, 0);
    if (PACKED_CHUNK[c->dt] && n % 16) return refuse("inner box %lld of a packed type not a multiple of 16", n, 0);
    unsigned long long bytes = PACKED_CHUNK[c->dt] ? n / 16 * PACKED_CHUNK[c->dt] : n * TYPE_BITS[c->dt] / 8;
    if (c->il == CU_TENSOR_MAP_INTERLEAVE_NONE && SWZ_SPAN[c->sw] && bytes > SWZ_SPAN[c->sw])
        return refuse("inner box of %lld bytes exceeds the %lld-byte swizzle span", bytes, SWZ_SPAN[c->sw]);
    return CUDA_SUCCESS;
}

/* Everything but the box_dim slots (bytes 16..35), which the caller has written. */
static void write_common(unsigned char *m, const struct common *c, uintptr_t addr, const cuuint64_t *dim,
                         const cuuint64_t *stride, const cuuint32_t *estr) {
    put(m, 0, addr, 8);
    put(m, 8, c->rank - 1, 4);
    put(m, 12, PTX_ELEMTYPE[c->dt], 4);
    for (unsigned i = 0; i < c->rank; i++) {
        put(m, 36 + 4 * i, estr[i], 4);
        put(m, 56 + 4 * i, dim[i], 4);
        if (i + 1 < c->rank) put(m, 80 + 8 * i, stride[i], 8);
    }
    put(m, 112, (unsigned)c->il, 4);
    put(m, 116, SWZ_MODE[c->sw], 4);
    put(m, 120, SWZ_ATOM[c->sw], 4);
    put(m, 124, (unsigned)c->fill, 1);
}

CUresult cuTensorMapEncodeTiled(CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType, cuuint32_t tensorRank,
                                void *globalAddress, const cuuint64_t *globalDim, const cuuint64_t *globalStrides,
                                const cuuint32_t *boxDim, const cuuint32_t *elementStrides,
                                CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                CUtensorMapL2promotion l2Promotion, CUtensorMapFloatOOBfill oobFill) {
    struct common c = {(int)tensorDataType, (int)interleave, (int)swizzle, (int)oobFill, tensorRank};
    uintptr_t addr = (uintptr_t)globalAddress;
    CUresult r = check_common(&c, tensorMap, 1, addr, globalDim, globalStrides, elementStrides, (int)l2Promotion);
    if (r != CUDA_SUCCESS) return r;
    if (!boxDim) return refuse("boxDim is NULL", 0, 0);
    for (unsigned i = 0; i < c.rank; i++)
        if (boxDim[i] == 0 || boxDim[i] > 256) return refuse("boxDim[%lld] = %lld not in [1, 256]", i, boxDim[i]);
    if ((r = check_inner(&c, boxDim[0])) != CUDA_SUCCESS) return r;
    if (c.il == CU_TENSOR_MAP_INTERLEAVE_NONE && (boxDim[0] * (unsigned long long)TYPE_BITS[c.dt]) % 128)
        return refuse("boxDim[0] = %lld elements is not a multiple of 16 bytes", boxDim[0], 0);
    unsigned char m[128];
    memset(m, 0, sizeof m);
    for (unsigned i = 0; i < c.rank; i++) put(m, 16 + 4 * i, boxDim[i], 4);
    write_common(m, &c, addr, globalDim, globalStrides, elementStrides);
    memcpy(tensorMap, m, sizeof m);
    last_rule[0] = 0;
    return CUDA_SUCCESS;
}

CUresult cuTensorMapEncodeIm2col(CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType, cuuint32_t tensorRank,
                                 void *globalAddress, const cuuint64_t *globalDim, const cuuint64_t *globalStrides,
                                 const int *pixelBoxLowerCorner, const int *pixelBoxUpperCorner,
                                 cuuint32_t channelsPerPixel, cuuint32_t pixelsPerColumn,
                                 const cuuint32_t *elementStrides, CUtensorMapInterleave interleave,
                                 CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,
                                 CUtensorMapFloatOOBfill oobFill) {
    struct common c = {(int)tensorDataType, (int)interleave, (int)swizzle, (int)oobFill, tensorRank};
    uintptr_t addr = (uintptr_t)globalAddress;
    CUresult r = check_common(&c, tensorMap, 3, addr, globalDim, globalStrides, elementStrides, (int)l2Promotion);
    if (r != CUDA_SUCCESS) return r;
    if (!pixelBoxLowerCorner || !pixelBoxUpperCorner) return refuse("a pixel-box corner is NULL", 0, 0);
    int bits = c.rank == 3 ? 16 : c.rank == 4 ? 8 : 5; /* signed precision of each corner offset */
    long long lo_lim = -(1ll << (bits - 1)), hi_lim = (1ll << (bits - 1)) - 1;
    for (unsigned i = 0; i + 2 < c.rank; i++) {
        long long lo = pixelBoxLowerCorner[i], hi = pixelBoxUpperCorner[i];
        if (lo < lo_lim || lo > hi_lim) return refuse("pixelBoxLowerCorner[%lld] = %lld out of range", i, lo);
        if (hi < lo_lim || hi > hi_lim) return refuse("pixelBoxUpperCorner[%lld] = %lld out of range", i, hi);
        if ((long long)globalDim[i + 1] - 1 + hi < lo) return refuse("pixel box empty in dimension %lld", i + 1, 0);
    }
    if (channelsPerPixel == 0 || channelsPerPixel > 256)
        return refuse("channelsPerPixel = %lld not in [1, 256]", channelsPerPixel, 0);
    if (pixelsPerColumn == 0 || pixelsPerColumn > 1024)
        return refuse("pixelsPerColumn = %lld not in [1, 1024]", pixelsPerColumn, 0);
    if ((r = check_inner(&c, channelsPerPixel)) != CUDA_SUCCESS) return r;
    unsigned char m[128];
    memset(m, 0, sizeof m);
    put(m, 16, channelsPerPixel, 4);
    put(m, 20, pixelsPerColumn, 4);
    for (unsigned i = 0; i + 2 < c.rank; i++) {
        put(m, 24 + 2 * i, (unsigned long long)(unsigned short)(short)pixelBoxLowerCorner[i], 2);
        put(m, 30 + 2 * i, (unsigned long long)(unsigned short)(short)pixelBoxUpperCorner[i], 2);
    }
    write_common(m, &c, addr, globalDim, globalStrides, elementStrides);
    m[125] = 1;
    memcpy(tensorMap, m, sizeof m);
    last_rule[0] = 0;
    return CUDA_SUCCESS;
}

CUresult cuInit(unsigned int Flags) {
    return Flags == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuDriverGetVersion(int *driverVersion) {
    if (!driverVersion) return CUDA_ERROR_INVALID_VALUE;
    *driverVersion = 13000;
    return CUDA_SUCCESS;
}

static const char *error_text(CUresult error, int name) {
    switch (error) {
    case CUDA_SUCCESS: return name ? "CUDA_SUCCESS" : "no error";
    case CUDA_ERROR_INVALID_VALUE: return name ? "CUDA_ERROR_INVALID_VALUE" : "invalid argument";
    case CUDA_ERROR_NOT_INITIALIZED: return name ? "CUDA_ERROR_NOT_INITIALIZED" : "initialization error";
    case CUDA_ERROR_NOT_SUPPORTED: return name ? "CUDA_ERROR_NOT_SUPPORTED" : "operation not supported";
    case CUDA_ERROR_UNKNOWN: return name ? "CUDA_ERROR_UNKNOWN" : "unknown error";
    default: return NULL;
    }
}

CUresult cuGetErrorString(CUresult error, const char **pStr) {
    if (!pStr) return CUDA_ERROR_INVALID_VALUE;
    *pStr = error_text(error, 0);
    return *pStr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorName(CUresult error, const char **pStr) {
    if (!pStr) return CUDA_ERROR_INVALID_VALUE;
    *pStr = error_text(error, 1);
    return *pStr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

const char *vmcudaLastRule(void) {
    return last_rule;
}
