"""Fuzz-record kernels where silicon and the VM disagree for a known reason that is not a VM defect.

Each entry names the kernel (``<record>/<name>``), the reason and the ambiguity-register entry that
holds the evidence. The replay test marks them strict xfail: a kernel that starts matching must leave
this list, and any other difference fails.

All of them are chains of two conversions (or a conversion and a shift) where ptxas 13.5.37 emits one
SASS instruction from the first source instead of the two steps the ISA defines (the reproducer in
``validation/fuzz/ptxas-cvt-chain`` shows ``F2I.U32.TRUNC.NTZ`` straight from the float for
``cvt.rzi.u64.f32`` then ``cvt.sat.u32.u64``, giving 0 for a NaN where the ISA's steps give 0xFFFFFFFF).
Every single instruction of these chains matches the ISA in the unit kernels.
"""

from __future__ import annotations

CVT_CHAIN = "ptxas fuses a cvt chain (AMB-FUZZ-CVT-CHAIN-FUSION)"

KNOWN: dict[str, str] = {
    "h100-2026-11-25/seed820": CVT_CHAIN + ": cvt.rz.f16.bf16 then cvt.rzi.sat.s8.f16",
    "h100-2026-11-25/seed890": CVT_CHAIN + ": cvt.rp.bf16.f16 then cvt.rzi.u16.f16 of those bits",
    "h100-2026-11-25/seed1411": CVT_CHAIN + ": cvt.rp.bf16.f16 then cvt.rzi.s16.f16 of those bits",
    "h100-2026-11-25/seed1892": CVT_CHAIN + ": cvt.rz.bf16.f16 then cvt.rzi.sat.u64.f16 of those bits",
    "h100-2026-11-25/seed1994": CVT_CHAIN + ": cvt.rpi.s64.f16 of NaN (2^63) then cvt.sat.s32.s64 gives 0",
    "h100-2026-11-25/seed2148": CVT_CHAIN + ": cvt.rm.f16.bf16 then cvt.rzi.sat.u8.f16",
    "h100-2026-11-25/seed2305": CVT_CHAIN + ": cvt.rzi.u64.f32 of NaN (2^63) then cvt.sat.u32.u64 gives 0",
    "h100-2026-11-25-heldout/seed10101": CVT_CHAIN + ": cvt.rmi.ftz.u32.f32 then cvt.sat.s16.u32 (-1, not 0)",
    "h100-2026-11-25-heldout/seed10267": CVT_CHAIN + ": cvt.rn.f16.bf16 then cvt.rzi.u8.f16",
    "h100-2026-11-25-heldout/seed10729": CVT_CHAIN + ": cvt.u8.s32 then shr.s16 of the result",
    "h200-2026-11-25-heldout2/seed20124": CVT_CHAIN + ": cvt.rn.bf16.f16 then cvt.rzi.u16.f16 of those bits",
    "h200-2026-11-25-heldout2/seed20130": CVT_CHAIN + ": cvt.rmi.ftz.s64.f32 then cvt.sat.s32.s64 gives 0",
    "h200-2026-11-25-heldout2/seed21257": CVT_CHAIN + ": max.ftz.f16 x, x, x folded into the next cvt.rzi.s8.f16, "
                                          "which loses its rounding (SASS F2I.FTZ.S8.F16.NTZ, no .TRUNC: -14.68 "
                                          "gives -15; unfused, F2I.S8.F16.TRUNC)",
    "h200-2026-11-25-heldout2/seed21467": CVT_CHAIN + ": cvt.rmi.u32.f32 as a shr.s16 amount becomes "
                                          "F2I.S16.FLOOR (a negative float shifts by a huge amount, not 0)",
}
