"""The packed narrow-float cvt forms of sm_100a (PTX ISA 9.1, 9.7.9.21) against values worked out by hand
from the ISA's text, not from the VM's tables: e2m1 codes 0..7 are 0, 0.5, 1, 1.5, 2, 3, 4, 6 (sign 0x8);
e2m3 steps 0.125 below 1 and has MAX_NORM 7.5; e3m2 steps 0.0625 below 0.25 and has MAX_NORM 28; a ue8m0
code c is 2^(c - 127). Operand order per the ISA's Semantics block: ``a`` (the upper half of a packed
source) lands in the upper element of ``d``. No H100 can run these forms, so the fuzz record cannot check
them (``mmacts/validation/fuzz/forms.py`` NOT_FUZZED_FORMS)."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from mmacts.ptxvm import load_module

HEAD = ".version 9.1\n.target sm_100a\n.address_size 64\n"
INF, NAN = 0x7F800000, 0x7FC00000


def f32(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def _kernel(instr: str, dst: str) -> str:
    """One cvt per thread: a and b (32-bit words) from pin[2 * tid + 0/1] as %r1 / %r2 and %f1 / %f2,
    %rs3 (the low 16 bits of a) and %rb3 (its low byte); the result (``dst``: %r3, %rs1 or %rb1)
    zero-extended to pout[tid]."""
    widen = {"%r3": "", "%rs1": "  cvt.u32.u16 %r3, %rs1;\n", "%rb1": "  cvt.u32.u8 %r3, %rb1;\n"}[dst]
    return (HEAD + ".visible .entry k(.param .u64 pin, .param .u64 pout)\n{\n"
            "  .reg .b8 %rb<4>;\n  .reg .b16 %rs<4>;\n  .reg .b32 %r<8>;\n  .reg .f32 %f<4>;\n  .reg .b64 %rd<8>;\n"
            "  ld.param.u64 %rd0, [pin];\n  cvta.to.global.u64 %rd0, %rd0;\n"
            "  ld.param.u64 %rd1, [pout];\n  cvta.to.global.u64 %rd1, %rd1;\n  mov.u32 %r0, %tid.x;\n"
            "  mul.wide.u32 %rd2, %r0, 8;\n  add.u64 %rd4, %rd0, %rd2;\n"
            "  ld.global.b32 %r1, [%rd4];\n  ld.global.b32 %r2, [%rd4+4];\n"
            "  mov.b32 %f1, %r1;\n  mov.b32 %f2, %r2;\n  cvt.u16.u32 %rs3, %r1;\n  cvt.u8.u32 %rb3, %r1;\n"
            f"  mov.u32 %r3, 0;\n  {instr};\n{widen}"
            "  mul.wide.u32 %rd2, %r0, 4;\n  add.u64 %rd3, %rd1, %rd2;\n  st.global.b32 [%rd3], %r3;\n  ret;\n}\n")


def run(instr: str, dst: str, pairs: list[tuple[int, int]], profile: dict | None = None):
    mod = load_module(_kernel(instr, dst), profile=profile)
    din = mod.rt.to_device(np.array(pairs, dtype=np.uint32).reshape(-1))
    dout = mod.rt.empty((len(pairs),), np.uint32)
    res = mod.launch("k", (1,), (len(pairs),), [din, dout])
    return res, mod.rt.to_host(dout).tolist()


def ok(instr: str, dst: str, pairs: list[tuple[int, int]], profile: dict | None = None) -> list[int]:
    res, out = run(instr, dst, pairs, profile)
    assert res.status == "ok", res.message
    return out


# ------------------------------------------------------------------------------------------ to fp4 / fp6
def test_e2m1x2_from_f32_rounds_to_nearest_even_and_saturates() -> None:
    cases = {  # (a, b) -> d: a's code in bits 7:4
        (1.0, 0.5): 0x21, (6.0, -6.0): 0x7F,
        (0.25, 0.75): 0x02,  # ties: 0.25 -> 0 (code 0), 0.75 -> 1.0 (code 2), the even codes
        (2.5, 5.0): 0x46, (3.5, 1.25): 0x62, (-0.1, 0.26): 0x81,  # -0.1 rounds to -0 (code 8)
        (1e30, float("-inf")): 0x7F,  # .satfinite: sign-preserved MAX_NORM (6)
    }
    pairs = [(f32(a), f32(b)) for a, b in cases] + [(NAN, NAN | 0x80000000), (1, 0x80000001)]
    out = ok("cvt.rn.satfinite.e2m1x2.f32 %rb1, %f1, %f2", "%rb1", pairs)
    assert out == list(cases.values()) + [0x77, 0x08]  # NaN -> +MAX_NORM (no NaN in e2m1); 2^-149 -> +-0


def test_e2m1x2_relu() -> None:
    pairs = [(f32(-1.0), f32(1.0)), (NAN, f32(-0.0)), (f32(-7.0), f32(2.9))]
    out = ok("cvt.rn.satfinite.relu.e2m1x2.f32 %rb1, %f1, %f2", "%rb1", pairs)
    assert out == [0x02, 0x70, 0x05]  # negatives (and -0) -> +0; NaN -> +6


def test_e2m1x2_from_packed_halves() -> None:
    # bf16x2: upper 1.5 (0x3FC0) -> code 3, lower -3.0 (0xC040) -> code 0xD; f16x2: 0.5 (0x3800), 4.0 (0x4400)
    assert ok("cvt.rn.satfinite.e2m1x2.bf16x2 %rb1, %r1", "%rb1", [(0x3FC0C040, 0)]) == [0x3D]
    assert ok("cvt.rn.satfinite.e2m1x2.f16x2 %rb1, %r1", "%rb1", [(0x38004400, 0)]) == [0x16]


def test_fp6_from_f32() -> None:
    e2m3 = {(7.5, -1.0): 0x1F28, (100.0, 3.25): 0x1F15, (0.0625, 0.1875): 0x0002}
    pairs = [(f32(a), f32(b)) for a, b in e2m3] + [(NAN, f32(-8.0))]
    assert ok("cvt.rn.satfinite.e2m3x2.f32 %rs1, %f1, %f2", "%rs1", pairs) == list(e2m3.values()) + [0x1F3F]
    e3m2 = {(28.0, -28.0): 0x1F3F, (30.0, 1.0): 0x1F0C, (26.0, 0.03125): 0x1E00}
    pairs = [(f32(a), f32(b)) for a, b in e3m2]
    assert ok("cvt.rn.satfinite.e3m2x2.f32 %rs1, %f1, %f2", "%rs1", pairs) == list(e3m2.values())


def test_fp8_from_bf16x2() -> None:
    # e4m3: 448 (f16 0x5F00) is MAX_NORM 0x7E, -2^-6 is 0x88; e5m2 from bf16: 1.0 -> 0x3C, NaN -> 0x7F
    assert ok("cvt.rn.satfinite.e4m3x2.f16x2 %rs1, %r1", "%rs1", [(0x5F00A400, 0)]) == [0x7E88]
    assert ok("cvt.rn.satfinite.e5m2x2.bf16x2 %rs1, %r1", "%rs1", [(0x3F807FC0, 0)]) == [0x3C7F]


# ------------------------------------------------------------------------------------------ from fp4 / fp6
def test_f16x2_from_e2m1x2() -> None:
    pairs = [(0x7F, 0), (0x19, 0), (0x35, 0), (0x108, 0)]  # the upper bits of the 32-bit source are not read
    out = ok("cvt.rn.f16x2.e2m1x2 %r3, %rb3", "%r3", pairs)
    assert out == [0x4600C600, 0x3800B800, 0x3E004200, 0x00008000]  # 6|-6, 0.5|-0.5, 1.5|3, 0|-0
    assert ok("cvt.rn.relu.f16x2.e2m1x2 %r3, %rb3", "%r3", [(0x92, 0), (0x80, 0)]) == [0x00003C00, 0]


def test_f16x2_from_fp6() -> None:
    assert ok("cvt.rn.f16x2.e2m3x2 %r3, %rs3", "%r3", [(0x1F28, 0)]) == [0x4780BC00]  # 7.5 | -1.0
    assert ok("cvt.rn.f16x2.e3m2x2 %r3, %rs3", "%r3", [(0x1F0C, 0)]) == [0x4F003C00]  # 28 | 1.0
    res, _ = run("cvt.rn.f16x2.e2m3x2 %r3, %rs3", "%r3", [(0x4000, 0)])
    assert res.status == "error" and "PTX VM unsupported" in res.message and "two top bits" in res.message


# ------------------------------------------------------------------------------------------ ue8m0
def test_ue8m0x2_from_f32() -> None:
    rz = [(f32(1.0), f32(3.0)), (0x00600000, f32(2.0**127)), (NAN, 0x7F7FFFFF)]
    assert ok("cvt.rz.satfinite.ue8m0x2.f32 %rs1, %f1, %f2", "%rs1", rz) == [0x7F80, 0x00FE, 0xFFFE]
    rp = [(f32(1.0), f32(3.0)), (0, f32(2.0**-130)), (0x00400000, 0x00600000), (0x7F7FFFFF, INF),
          (f32(1.0), 0x3F800001)]
    out = ok("cvt.rp.satfinite.ue8m0x2.f32 %rs1, %f1, %f2", "%rs1", rp)
    assert out == [0x7F81, 0x0000, 0x0001, 0xFEFE, 0x7F80]


def test_ue8m0x2_from_bf16x2() -> None:
    # rz: 3.0 (0x4040) -> 2^1 (0x80), 0.5 (0x3F00) -> 0x7E; rp: 3.0 -> 2^2 (0x81)
    assert ok("cvt.rz.ue8m0x2.bf16x2 %rs1, %r1", "%rs1", [(0x40403F00, 0)]) == [0x807E]
    assert ok("cvt.rp.ue8m0x2.bf16x2 %rs1, %r1", "%rs1", [(0x40403F00, 0)]) == [0x817E]


@pytest.mark.parametrize("instr, a, b, what", [
    ("cvt.rp.satfinite.ue8m0x2.f32 %rs1, %f1, %f2", f32(-1.0), f32(1.0), "negative"),
    ("cvt.rz.satfinite.ue8m0x2.f32 %rs1, %f1, %f2", 0, f32(1.0), "below 2^-127"),
    ("cvt.rp.ue8m0x2.bf16x2 %rs1, %r1", 0x7F403F80, 0, "without .satfinite"),
    ("cvt.rp.ue8m0x2.bf16x2 %rs1, %r1", 0x7F803F80, 0, "without .satfinite"),
])
def test_ue8m0x2_open_inputs_are_refused_by_name(instr: str, a: int, b: int, what: str) -> None:
    res, _ = run(instr, "%rs1", [(a, b)])
    assert res.status == "error" and "PTX VM unsupported" in res.message
    assert what in res.message and "AMB-CVT-UE8M0-EDGES" in res.message


def test_bf16x2_from_ue8m0x2() -> None:
    assert ok("cvt.rn.bf16x2.ue8m0x2 %r3, %rs3", "%r3", [(0x7F80, 0), (0x01FE, 0)]) == [0x3F804000, 0x00807F00]
    for code in (0x7F00, 0x00FF):  # 2^-127 and NaN: the ISA gives no bf16 bits
        res, _ = run("cvt.rn.bf16x2.ue8m0x2 %r3, %rs3", "%r3", [(code, 0)])
        assert res.status == "error" and "PTX VM unsupported" in res.message and "AMB-CVT-UE8M0-EDGES" in res.message


@pytest.mark.parametrize("reading, bits", [("clamp", 0x00403F80), ("shift", 0x00003F80)])
def test_bf16x2_from_ue8m0x2_zero_under_a_named_reading(reading: str, bits: int) -> None:
    """Code 0x00 converts only under a reading the launch's profile names (CUTLASS's SM120 SFD epilogue converts a
    pair whose upper code is 0x00 and discards it); 0xFF stays refused. Planted: without the profile it is refused
    (test_bf16x2_from_ue8m0x2)."""
    profile = {"readings": {"AMB-CVT-UE8M0-EDGES": reading}}
    assert ok("cvt.rn.bf16x2.ue8m0x2 %r3, %rs3", "%r3", [(0x007F, 0)], profile) == [bits]
    res, _ = run("cvt.rn.bf16x2.ue8m0x2 %r3, %rs3", "%r3", [(0x00FF, 0)], profile)
    assert res.status == "error" and "AMB-CVT-UE8M0-EDGES" in res.message


@pytest.mark.parametrize("instr", [
    "cvt.rn.e2m1x2.f32 %rb1, %f1, %f2",  # .satfinite is mandatory
    "cvt.rz.satfinite.e2m1x2.f32 %rb1, %f1, %f2",
    "cvt.rn.satfinite.ue8m0x2.f32 %rs1, %f1, %f2",
    "cvt.rp.satfinite.relu.ue8m0x2.bf16x2 %rs1, %r1",
    "cvt.rs.satfinite.e2m1x4.f32 %rs1, {%f1, %f2, %f1, %f2}, %r1",
])
def test_forms_outside_the_isa_or_the_vm_are_refused(instr: str) -> None:
    res, _ = run(instr, "%rs1" if "%rs1" in instr else "%rb1", [(0, 0)])
    assert res.status == "error", res.message
