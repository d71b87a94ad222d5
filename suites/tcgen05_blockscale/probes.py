"""The facts of ``tcgen05.mma`` the spec leaves open, each a probe: recipe ``probe:<name>``, expectation mode
``observe`` (recorded, never pass/fail), and the question it asks.

A table of its own, read by the case enumeration (``cases.py``) and by the tcgen05.ld/st and shift cases
(``features.py``) alike: while it lived in ``cases.py``, ``cases`` and ``features`` imported each other.
"""

from __future__ import annotations

PROBES: dict[str, str] = {
    "sf_quadrant": "SF written into one TMEM lane quadrant only, decoys elsewhere: which quadrant does the "
                   "MMA read? (cutlass-facts §1.2/§9; model hypothesis: each D lane's own quadrant)",
    "sf_addr_bits30_31": "SF address operands carry the SF ID in bits 30-31 as CUTLASS passes them: ignored? "
                         "(cutlass-facts §1.3, §8 #10; model: ignored)",
    "a_tmem_holder": "4/6-bit A in a TMEM 8-bit holder: FP4 bits [5:2], FP6 bits [6:1]? (Figures 199-201 "
                     "missing; cutlass-facts §3.4)",
    "mn_major_sub8": "MN-major (transposed) FP4/FP6 under mxf8f6f4: Table 52 lists transposed layouts only for "
                     ">= 8-bit, Tables 43/49 allow transpose (cutlass-facts §8 #8)",
    "sparse_meta": "sparse metadata layout in TMEM (Figures 260/261/267 missing); model hypothesis "
                   "'lane_row_nibble'",
    "layoutB_sfb": "Layout B (M=128, cta_group::2) SFB split at N/2 for N other than 128/256 "
                   "(cutlass-facts §1.4 inference)",
    "cp_decompress": "tcgen05.cp .b8x16.b4x16_p64 / .b6x16_p32 then tcgen05.ld of the raw cells: where the "
                     "4/6-bit element lands in its 8-bit container (model: FP4 [5:2], FP6 [6:1]; Figures "
                     "195-198 missing, cutlass-facts §3.4) and that the padding bytes are dropped",
    "t52_excluded_swizzle": "8-bit MN-major (transposed) A with the 128B-with-32B-atom swizzle, a combination "
                            "Table 52 row 3 excludes: what does the hardware read? (observe; never a verdict)",
    "smem_base_offset": "operand starting inside its swizzle repeat, descriptor base offset = (start >> 7) & 7 "
                        "(9.7.16.4.1): the model subtracts it from the swizzle row phase "
                        "(register AMB-SDESC-BASEOFFSET)",
    "absolute_lbo": "K = 96 fp4 operands whose third MMA's 48-byte K slice straddles the 128-byte swizzle row, "
                    "read through the absolute LBO mode (Table 40 bit 52, 9.7.16.3.1.2): row r's bytes past the "
                    "row at LBO + the first chunk's row term (AMB-ABSOLUTE-LBO-CHUNKS reading same-row-term)",
    "sfb_peer_copy": "cta_group::2 with the peer CTA's SFB copy = the leader's x 2: whose copy scales the peer's D "
                     "lanes? (AMB-SF-2CTA-SFB-COPY; model: each CTA's own copy)",
    "collector_reuse": "collector::a::use/lastuse after A changed since the fill: the descriptor names a decoy A "
                       "(rows reversed), or the kernel overwrote A's shared memory with it once the fill completed; "
                       "reuse is 'opportunistic' (9.7.16.10; AMB-COLLECTOR-REUSE); model: the filled A",
    "ue4m3_nan_scale": "UE4M3 code 0x7F (the E4M3 NaN pattern) as one SFA and one SFB (AMB-UE4M3-SIGN reading "
                       "nan-7f: D row 5 and column 7 NaN)",
    "ldst_fragments": "tcgen05.ld/st register maps of the 16-lane shapes (Figures 183-187 missing; "
                      "AMB-LDST-FRAGMENTS): 'want' is the CUTLASS Copy_Traits reading of the reference",
    "ldst_lane_base": "tcgen05.ld/st .16x64b at lane 8 of each warp's quadrant (a base no multiple of 16; "
                      "AMB-LDST-LANE-BASE): 'want' is reading base-plus-lane (lanes base .. base+15 of the "
                      "quadrant, the 16-lane map of AMB-LDST-FRAGMENTS' cutlass-copy-traits reading)",
    "shift_row_scope": "tcgen05.shift.down at lane 0: one 32-lane block or every lane to 127 "
                       "(AMB-SHIFT-ROW-SCOPE): 'want' is the one-block (.31x256b) reading",
}
