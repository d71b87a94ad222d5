"""Pins: the SASS parser and the fingerprint of real cubins (emulation is visible)."""

from __future__ import annotations

from mmacts.ptx import instructions as I
from mmacts.ptx.module import Entry, module
from mmacts.toolchain.assemble import assemble
from mmacts.toolchain.sass import is_tcgen05_related, parse_disassembly, sass

TEXT = """
        /*0000*/                   LDC R1, c[0x0][0x37c] ;
        /*0370*/                   UTCOMMA.4X gdesc[UR10], gdesc[UR12], tmem[UR6], tmem[UR4], idesc[UR5], UP0 ;
        /*0380*/               @P1 PLOP3.LUT P0, PT, P1, PT, PT, 0x8, 0x80 ;
        /*0390*/              @!P0 UTCBAR [UR4], URZ ;
        /*05b0*/                   LDTM.x2 R4, tmem[UR6] ;
"""


def test_parser_counts_mnemonics_with_predicates_and_modifiers():
    counts, first = parse_disassembly(TEXT)
    assert counts == {"LDC": 1, "UTCOMMA.4X": 1, "PLOP3.LUT": 1, "UTCBAR": 1, "LDTM.x2": 1}
    assert first == "UTCOMMA.4X"
    assert is_tcgen05_related("LDTM.x2") and is_tcgen05_related("UTCBAR") and not is_tcgen05_related("LDC")


def _mma_sync_fp8(arch: str) -> bytes:
    e = Entry("k", params=[("u64", "p")])
    g = e.load_param_u64("p")
    d, a, b, c = e.regs.new("f32", 4), e.regs.new("b32", 4), e.regs.new("b32", 2), e.regs.new("f32", 4)
    for i, r in enumerate(a + b):
        e.emit(f"ld.global.b32 {r}, [{g}+{4 * i}];")
    for r in c:
        e.emit(f"mov.f32 {r}, 0f00000000;")
    e.emit(I.mma_sync_fp8("e4m3", "e5m2", d, a, b, c))
    for i, r in enumerate(d):
        e.emit(f"st.global.f32 [{g}+{4 * i}], {r};")
    r = assemble(module(arch, [e], "8.7"), arch)
    assert r.ok, r.log
    return r.cubin


def test_fp8_mma_sync_is_native_on_sm120a_and_emulated_on_sm100a():
    native = sass(_mma_sync_fp8("sm_120a"))
    emulated = sass(_mma_sync_fp8("sm_100a"))
    assert native.mma_family == "QMMA" and "F2FP" not in native.summary()
    assert emulated.mma_family == "HMMA" and "F2FP" in emulated.summary()


def test_sass_result_is_cached_and_identical():
    cubin = _mma_sync_fp8("sm_120a")
    assert sass(cubin) == sass(cubin)
