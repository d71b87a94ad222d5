"""Fuzz-record kernels where silicon and the VM disagree for a known reason that is not a VM defect.

Each entry names the kernel (``<record>/<name>``), the reason and the ambiguity-register entry that
holds the evidence. The replay test marks them strict xfail: a kernel that starts matching must leave
this list, and any other difference fails.
"""

from __future__ import annotations

CVT_CHAIN = ("ptxas 13.5.37 fuses two chained cvt instructions into one conversion; the ISA defines them "
             "step by step and the VM follows the ISA (AMB-FUZZ-CVT-CHAIN-FUSION)")

KNOWN: dict[str, str] = {
    "h100-2026-11-25/seed578": CVT_CHAIN + ": cvt.rp.bf16.f16 then cvt.rzi.sat.s32.f16",
    "h100-2026-11-25/seed820": CVT_CHAIN + ": cvt.rz.f16.bf16 then cvt.rzi.sat.s8.f16",
    "h100-2026-11-25/seed1068": CVT_CHAIN + ": cvt.sat.s16.s64 then cvt.ftz.sat.f32.f16 (a NaN pattern kept)",
    "h100-2026-11-25/seed1326": CVT_CHAIN + ": cvt.rp.f16.bf16 then cvt.rzi.sat.u64.f16",
    "h100-2026-11-25/seed1892": CVT_CHAIN + ": cvt.rz.bf16.f16 then cvt.rzi.sat.u64.f16",
    "h100-2026-11-25/seed1969": CVT_CHAIN + ": cvt.rp.f16.bf16 then cvt.rzi.sat.s16.f16",
    "h100-2026-11-25/seed1994": CVT_CHAIN + ": cvt.rpi.s64.f16 of NaN (2^63) then cvt.sat.s32.s64 gives 0",
    "h100-2026-11-25/seed2148": CVT_CHAIN + ": cvt.rzi.sat.u8.f16 after an f16/bf16 conversion chain",
    "h100-2026-11-25/seed2305": CVT_CHAIN + ": cvt.rzi.u64.f32 of NaN (2^63) then cvt.sat.u32.u64 gives 0",
}
