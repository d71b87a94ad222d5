/* libvmcuda: cuTensorMapEncodeTiled / cuTensorMapEncodeIm2col writing the mmacts VM's tensor-map layout, with the
 * validation rules CUDA 13's cuda.h documents and the driver's CUresult codes, corrected where the real driver
 * (580.159.04 on an H100, validation/probes/tma-im2col) disagrees: a limit on the bytes one box moves, globalDim up
 * to 2^32 in tiled maps (2^31 in im2col maps), no "interleave 32B needs swizzle 32B" rule, im2col channel rows of a
 * multiple of 16 bytes. The sm_100-only swizzles and packed types are accepted (the VM emulates sm_100a). Written from that documentation
 * and the PTX ISA's tensormap field list, independently of the Python encoder (mmacts/ptxvm/host/tensormap.py);
 * test_libvmcuda.py compares the two byte for byte and result for result.
 *
 * The map is written in the hardware layout the real driver writes (580.159.04 on an H200, 408 encoded calls,
 * validation/probes/tmap-bytes; table in validation/probes/tmap-bytes/LAYOUT.md), as 32-bit little-endian words:
 *   w0-1 globalAddress | w2 bit 0 im2col, bits 4-6 rank - 1, 7-10 type code, 11-12 interleave, 13-14 swizzle
 *   (NONE/32B/64B/128B), 15 oobFill, 16 tf32, 17-18 l2Promotion, 19-20 128B swizzle atom (sm_100, assumed)
 *   w3-6 globalStrides[i] >> 4 (low 32 bits) | w7 bits 4i..4i+3: bits 32-35 of globalStrides[i] >> 4
 *   w8-12 globalDim[i] - 1 | w13 bits 3i..3i+2 elementStrides[i] - 1, bits 24-31 boxDim[0] - 1 (im2col:
 *   channelsPerPixel - 1) | w14 byte i - 1: boxDim[i] - 1 (im2col: corners, lower from bit 0, upper from bit 16,
 *   16/8/5 bits each for rank 3/4/5) | w15 im2col pixelsPerColumn - 1 | w16 bytes one box moves (rounded down per
 *   dimension: boxDim / elementStrides) | w18 16 unswizzled, else 8 x the swizzle span. */
#include "vmcuda.h"

#include <stdio.h>
#include <string.h>

#define NTYPES 16
#define NSWIZZLES 7
#define BOX_BYTES_MAX (240u * 1024u) /* observed gap: 235520 accepted, 256480 refused (tiled) */

static _Thread_local char last_rule[256];

/* Per driver data type: the map's 4-bit type code (TFLOAT32 / _FTZ: FLOAT32 / _FTZ's code plus the tf32 bit; the
 * packed types' codes cannot be observed on sm_90: 11 is the CuTe DSL's fp4 code, 12 and 13 assumed), tf32 bit,
 * bits per element in global memory, floating point. */
static const unsigned char TYPE_CODE[NTYPES] = {0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 8, 7, 8, 11, 12, 13};
static const unsigned char TYPE_TF32[NTYPES] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0};
static const unsigned char TYPE_BITS[NTYPES] = {8, 16, 32, 32, 64, 64, 16, 32, 64, 16, 32, 32, 32, 4, 4, 6};
static const unsigned char TYPE_FLOAT[NTYPES] = {0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0};
/* Shared-memory bytes per 16 packed elements (data + padding); 0 for the byte-sized types. */
static const unsigned char PACKED_CHUNK[NTYPES] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 16, 16};
/* Per driver swizzle: swizzle field, 128B atom field (assumed place), span in bytes. */
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

/* OR the low `width` bits of v into 32-bit word `word` of the map from bit `lo`. */
static void bits(unsigned char *map, unsigned word, unsigned lo, unsigned width, unsigned long long v) {
    unsigned long long mask = width >= 64 ? ~0ull : (1ull << width) - 1;
    unsigned long long field = (v & mask) << lo;
    for (unsigned i = 0; i < 8 && 4 * word + i < 128; i++) map[4 * word + i] |= (unsigned char)(field >> (8 * i));
}

/* The arguments both encoders share, checked by the rules they share. */
struct common {
    int dt, il, sw, fill;
    unsigned rank;
    unsigned long long dim_max; /* 2^32 tiled, 2^31 im2col */
    int l2;
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
        if (dim[i] == 0 || dim[i] > c->dim_max) return refuse("globalDim[%lld] = %lld out of range", i,
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
    if (c->dt == CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B && c->il != CU_TENSOR_MAP_INTERLEAVE_NONE)
        return refuse("16U6_ALIGN16B requires interleave NONE", 0, 0);
    if (!swizzle_allowed_for(c->dt, c->sw)) return refuse("swizzle %lld not supported for type %lld", c->sw, c->dt);
    if (c->fill != CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE && !TYPE_FLOAT[c->dt])
        return refuse("oobFill NaN needs a floating-point type, got %lld", c->dt, 0);
    return CUDA_SUCCESS;
}

/* Shared-memory bytes of n innermost elements (packed types: whole 16-element chunks, padding included). */
static unsigned long long row_bytes(const struct common *c, unsigned long long n) {
    return PACKED_CHUNK[c->dt] ? (n + 15) / 16 * PACKED_CHUNK[c->dt] : n * TYPE_BITS[c->dt] / 8;
}

/* The innermost box (boxDim[0] or channelsPerPixel: n elements) against the type and the swizzle span. */
static CUresult check_inner(const struct common *c, unsigned long long n) {
    if (padded_packed(c->dt) && n != 128) return refuse("inner box %lld of a 16-byte-aligned packed type != 128", n, 0);
    if (PACKED_CHUNK[c->dt] && n % 16) return refuse("inner box %lld of a packed type not a multiple of 16", n, 0);
    unsigned long long bytes = row_bytes(c, n);
    if (c->il == CU_TENSOR_MAP_INTERLEAVE_NONE && SWZ_SPAN[c->sw] && bytes > SWZ_SPAN[c->sw])
        return refuse("inner box of %lld bytes exceeds the %lld-byte swizzle span", bytes, SWZ_SPAN[c->sw]);
    return CUDA_SUCCESS;
}

/* The driver's limit on the bytes one box moves (not in cuda.h; observed on the real driver). */
static CUresult check_box_bytes(unsigned long long bytes) {
    if (bytes > BOX_BYTES_MAX) return refuse("the box moves %lld bytes, more than %lld", bytes, BOX_BYTES_MAX);
    return CUDA_SUCCESS;
}

/* Every field both kinds share; the caller writes the box (or im2col) fields. */
static void write_common(unsigned char *m, const struct common *c, uintptr_t addr, const cuuint64_t *dim,
                         const cuuint64_t *stride, const cuuint32_t *estr, unsigned long long box_bytes) {
    bits(m, 0, 0, 64, addr);
    bits(m, 2, 4, 3, c->rank - 1);
    bits(m, 2, 7, 4, TYPE_CODE[c->dt]);
    bits(m, 2, 11, 2, (unsigned)c->il);
    bits(m, 2, 13, 2, SWZ_MODE[c->sw]);
    bits(m, 2, 15, 1, (unsigned)c->fill);
    bits(m, 2, 16, 1, TYPE_TF32[c->dt]);
    bits(m, 2, 17, 2, (unsigned)c->l2);
    bits(m, 2, 19, 2, SWZ_ATOM[c->sw]);
    for (unsigned i = 0; i < c->rank; i++) {
        bits(m, 8 + i, 0, 32, dim[i] - 1);
        bits(m, 13, 3 * i, 3, estr[i] - 1);
        if (i + 1 < c->rank) {
            bits(m, 3 + i, 0, 32, stride[i] >> 4);
            bits(m, 7, 4 * i, 4, stride[i] >> 36);
        }
    }
    bits(m, 16, 0, 32, box_bytes);
    bits(m, 18, 0, 32, SWZ_SPAN[c->sw] ? 8u * SWZ_SPAN[c->sw] : 16u);
}

CUresult cuTensorMapEncodeTiled(CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType, cuuint32_t tensorRank,
                                void *globalAddress, const cuuint64_t *globalDim, const cuuint64_t *globalStrides,
                                const cuuint32_t *boxDim, const cuuint32_t *elementStrides,
                                CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                CUtensorMapL2promotion l2Promotion, CUtensorMapFloatOOBfill oobFill) {
    struct common c = {(int)tensorDataType, (int)interleave, (int)swizzle, (int)oobFill, tensorRank, 1ull << 32};
    c.l2 = (int)l2Promotion;
    uintptr_t addr = (uintptr_t)globalAddress;
    CUresult r = check_common(&c, tensorMap, 1, addr, globalDim, globalStrides, elementStrides, (int)l2Promotion);
    if (r != CUDA_SUCCESS) return r;
    if (!boxDim) return refuse("boxDim is NULL", 0, 0);
    for (unsigned i = 0; i < c.rank; i++)
        if (boxDim[i] == 0 || boxDim[i] > 256) return refuse("boxDim[%lld] = %lld not in [1, 256]", i, boxDim[i]);
    if ((r = check_inner(&c, boxDim[0])) != CUDA_SUCCESS) return r;
    if (c.il == CU_TENSOR_MAP_INTERLEAVE_NONE && (boxDim[0] * (unsigned long long)TYPE_BITS[c.dt]) % 128)
        return refuse("boxDim[0] = %lld elements is not a multiple of 16 bytes", boxDim[0], 0);
    /* elements moved per dimension: ceil(boxDim / elementStrides), dimension 0 included */
    unsigned long long bytes = row_bytes(&c, (boxDim[0] + elementStrides[0] - 1) / elementStrides[0]);
    for (unsigned i = 1; i < c.rank; i++) bytes *= (boxDim[i] + elementStrides[i] - 1) / elementStrides[i];
    if ((r = check_box_bytes(bytes)) != CUDA_SUCCESS) return r;
    unsigned char m[128];
    memset(m, 0, sizeof m);
    unsigned long long moved = TYPE_BITS[c.dt]; /* bits: the driver's box-bytes word rounds each dimension down */
    for (unsigned i = 0; i < c.rank; i++) moved *= boxDim[i] / elementStrides[i];
    bits(m, 13, 24, 8, boxDim[0] - 1);
    for (unsigned i = 1; i < c.rank; i++) bits(m, 14, 8 * (i - 1), 8, boxDim[i] - 1);
    write_common(m, &c, addr, globalDim, globalStrides, elementStrides, moved / 8);
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
    struct common c = {(int)tensorDataType, (int)interleave, (int)swizzle, (int)oobFill, tensorRank, 1ull << 31};
    c.l2 = (int)l2Promotion;
    uintptr_t addr = (uintptr_t)globalAddress;
    CUresult r = check_common(&c, tensorMap, 3, addr, globalDim, globalStrides, elementStrides, (int)l2Promotion);
    if (r != CUDA_SUCCESS) return r;
    if (!pixelBoxLowerCorner || !pixelBoxUpperCorner) return refuse("a pixel-box corner is NULL", 0, 0);
    int nb = c.rank == 3 ? 16 : c.rank == 4 ? 8 : 5; /* signed precision of each corner offset */
    long long lo_lim = -(1ll << (nb - 1)), hi_lim = (1ll << (nb - 1)) - 1;
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
    unsigned long long row = row_bytes(&c, channelsPerPixel);
    if (row % 16) return refuse("a pixel's channels are %lld bytes, not a multiple of 16", row, 0);
    if ((r = check_box_bytes(row * pixelsPerColumn)) != CUDA_SUCCESS) return r;
    unsigned char m[128];
    memset(m, 0, sizeof m);
    bits(m, 2, 0, 1, 1);
    bits(m, 13, 24, 8, channelsPerPixel - 1);
    bits(m, 15, 0, 10, pixelsPerColumn - 1);
    for (unsigned i = 0; i + 2 < c.rank; i++) {
        bits(m, 14, nb * i, nb, (unsigned long long)(long long)pixelBoxLowerCorner[i]);
        bits(m, 14, 16 + nb * i, nb, (unsigned long long)(long long)pixelBoxUpperCorner[i]);
    }
    write_common(m, &c, addr, globalDim, globalStrides, elementStrides,
                 (unsigned long long)channelsPerPixel * pixelsPerColumn * TYPE_BITS[c.dt] / 8);
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
