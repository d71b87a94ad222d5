"""CUTLASS's own fp4 and ue8m0 converters (``NumericArrayConverter``, the code its block-scaled
epilogues run), compiled by nvcc for sm_100a, run on the VM and give what the ISA says (issue 23).

Why: CUTLASS's spellings are not the suite's: ``.reg .b8`` registers packed with ``mov.b32 {b0, b1, b2,
b3}``, and its operand order (``cvt... byte0, %2, %1``: element 1 as ``a``, so element 0 lands in the low
nibble, which is CuTe's sub-byte order) only agrees with the VM's packing if ``a`` goes to the upper
element. Expected values are worked out by hand (e2m1 codes 0..7 = 0, 0.5, 1, 1.5, 2, 3, 4, 6)."""

from __future__ import annotations

import numpy as np

from mmacts.ptxvm import api
from mmacts.ptxvm.test_cutlass_spellings import _ptx

SOURCE = r"""
#include <cutlass/numeric_conversion.h>

// per thread: 8 floats to e2m1 and back; 4 floats to ue8m0 (rounding up, CUTLASS's scale-factor rule) and back
extern "C" __global__ void cv(const float* x, const float* y, unsigned* packed, float* back) {
  int t = threadIdx.x;
  cutlass::Array<float, 8> f;
  for (int i = 0; i < 8; ++i) f[i] = x[8 * t + i];
  auto p = cutlass::NumericArrayConverter<cutlass::float_e2m1_t, float, 8>::convert(f);
  packed[2 * t] = reinterpret_cast<uint32_t const&>(p);
  auto b = cutlass::NumericArrayConverter<float, cutlass::float_e2m1_t, 8>::convert(p);
  for (int i = 0; i < 8; ++i) back[12 * t + i] = b[i];
  cutlass::Array<float, 4> g;
  for (int i = 0; i < 4; ++i) g[i] = y[4 * t + i];
  using Ue8 = cutlass::NumericArrayConverter<cutlass::float_ue8m0_t, float, 4,
                                             cutlass::FloatRoundStyle::round_toward_infinity>;
  auto e = Ue8::convert(g);
  packed[2 * t + 1] = reinterpret_cast<uint32_t const&>(e);
  auto h = cutlass::NumericArrayConverter<float, cutlass::float_ue8m0_t, 4>::convert(e);
  for (int i = 0; i < 4; ++i) back[12 * t + 8 + i] = h[i];
}
"""


def test_cutlass_fp4_and_ue8m0_converters() -> None:
    ptx = _ptx(SOURCE)
    for form in ("cvt.rn.satfinite.e2m1x2.f32", "cvt.rn.f16x2.e2m1x2", "cvt.rp.satfinite.ue8m0x2.f32",
                 "cvt.rn.bf16x2.ue8m0x2", ".reg .b8"):
        assert form in ptx, form
    x = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0,
                  -0.25, 0.75, 5.0, -7.0, 2.5, 1e9, -0.0, 3.5], dtype=np.float32)
    y = np.array([1.0, 3.0, 0.125, 1000.0, 0.75, 0.5, 2.0**100, 7.0], dtype=np.float32)
    packed, back = api.zeros(4, np.uint32), api.zeros(24, np.float32)
    api.RawModule(code=ptx).get_function("cv")(1, 2, (api.asarray(x), api.asarray(y), packed, back))
    # thread 1: -0.25 ties to -0 (code 8), 0.75 to 1.0 (2), 5 to 4 (6), -7 saturates (F), 2.5 to 2 (4),
    # 1e9 saturates (7), -0 (8), 3.5 to 4 (6); element i in bits 4i+3:4i
    # ue8m0 rounds up to a power of two: 1 -> 0x7F, 3 -> 4 (0x81), 2^-3 -> 0x7C, 1000 -> 2^10 (0x89); 0.75 -> 1,
    # 0.5 -> 0x7E, 2^100 -> 0xE3, 7 -> 8 (0x82); element i in byte i
    assert packed.get().tolist() == [0x76543210, 0x897C817F, 0x6874F628, 0x82E37E7F]
    want = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 1.0, 4.0, 0.125, 1024.0,
            -0.0, 1.0, 4.0, -6.0, 2.0, 6.0, -0.0, 4.0, 1.0, 0.5, 2.0**100, 8.0]
    got = back.get()
    assert got.tolist() == want and np.array_equal(np.signbit(got), np.signbit(np.array(want)))
