"""tcgen05 shared-memory matrix descriptor (64-bit ``a-desc`` / ``b-desc`` / ``s-desc``).

Implements PTX ISA 9.7.16.4.1, Table 40 (bit layout) and Table 41 (swizzle pattern alignment),
with the leading-dimension stride modes of 9.7.16.3.1 (bit 52: relative byte offset, or absolute
byte address on sm_103a for 48-byte K).

Table 40:
  0-13  start address, matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4
  16-29 leading dimension byte offset (relative) or byte address (absolute), same encoding
  32-45 stride dimension byte offset, same encoding
  46-48 fixed constant 0b001
  49-51 matrix base offset
  52    LBO mode: 0 relative offset, 1 absolute address
  53-60 fixed constant 0 (the table prints "0xb00000000", read as 0b00000000)
  61-63 swizzle: 0 none, 1 128B with 32B atoms, 2 128B, 4 64B, 6 32B; 3/5/7 invalid
Bits 14-15 and 30-31 are not listed by Table 40; they are treated as reserved (must be 0).

Decoding yields *byte* values (field << 4).  Because the encoding keeps only address bits 4-17,
a decoded address is the original modulo 2**18; ``strict`` encoding insists on 16-byte aligned
values below 2**18 so that decode(encode(x)) == x.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

#: Table 40 bits 61-63.
SWIZZLE_CODES: dict[str, int] = {"none": 0, "128B_base32B": 1, "128B": 2, "64B": 4, "32B": 6}
SWIZZLE_NAMES: dict[int, str] = {v: k for k, v in SWIZZLE_CODES.items()}
#: Table 41: the repeating pattern of each swizzle starts on this byte boundary.  The 32B-atom
#: 128B swizzle is not listed by Table 41; its atom is Table 53's 8x4 (MN x K, 16-byte units):
#: 4 K rows of 128 B = 512 B, which is also the period of its Swizzle<2,5,2> (reading "atom-512"
#: of AMB-T53-32B-ATOM-SIZE, AMBIGUITIES.md SDESC-3; CUTLASS's Layout_MN_SW128_32B_Atom agrees).
PATTERN_BYTES: dict[str, int] = {"128B": 1024, "64B": 512, "32B": 256, "128B_base32B": 512, "none": 16}
#: Width of one swizzle row in bytes (16 for no swizzle = one core-matrix row).
SWIZZLE_WIDTH: dict[str, int] = {"none": 16, "32B": 32, "64B": 64, "128B": 128, "128B_base32B": 128}

_RESERVED_MASK = (0b11 << 14) | (0b11 << 30)


def matrix_descriptor_encode(x: int) -> int:
    """Table 40 footnote: matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4."""
    return (int(x) & 0x3FFFF) >> 4


@dataclass(frozen=True)
class SmemDesc:
    """Decoded shared-memory descriptor, byte units.

    ``lbo`` is a byte offset when ``lbo_absolute`` is False, else a byte address.
    ``fixed_46_48`` should be 0b001 and ``fixed_53_60`` 0; ``reserved`` collects bits 14-15
    and 30-31.  They are kept so that a probe can build and a model can report malformed words.
    """

    start_address: int
    lbo: int
    sbo: int
    swizzle: str
    base_offset: int = 0
    lbo_absolute: bool = False
    fixed_46_48: int = 0b001
    fixed_53_60: int = 0
    reserved: int = 0

    @property
    def swizzle_code(self) -> int:
        return SWIZZLE_CODES[self.swizzle]

    def with_start(self, start_address: int) -> SmemDesc:
        """Same descriptor with another start address (how kernels step along K)."""
        return replace(self, start_address=start_address)

    def word(self, *, strict: bool = True) -> int:
        return encode_smem_desc(
            self.start_address,
            self.lbo,
            self.sbo,
            swizzle=self.swizzle,
            base_offset=self.base_offset,
            lbo_absolute=self.lbo_absolute,
            strict=strict,
            fixed_46_48=self.fixed_46_48,
            fixed_53_60=self.fixed_53_60,
            reserved=self.reserved,
        )


def encode_smem_desc(
    start_address: int,
    lbo: int,
    sbo: int,
    *,
    swizzle: str | int = "none",
    base_offset: int = 0,
    lbo_absolute: bool = False,
    strict: bool = True,
    fixed_46_48: int = 0b001,
    fixed_53_60: int = 0,
    reserved: int = 0,
) -> int:
    """Build the 64-bit descriptor word of Table 40 from byte quantities.

    ``strict`` requires: addresses/offsets 16-byte aligned and < 2**18 (so they survive the
    encode), base_offset in 0..7, a valid swizzle code, the fixed fields at their constants,
    no reserved bits, and absolute LBO mode only with 128B swizzle (9.7.16.3.1.2.1 #1) and
    base offset 0 (#3).  ``strict=False`` packs whatever fits, for probes.
    """
    sw_code = SWIZZLE_CODES[swizzle] if isinstance(swizzle, str) else int(swizzle)
    if not 0 <= sw_code <= 7:
        raise ValueError(f"swizzle code {sw_code} does not fit 3 bits")
    if strict:
        if sw_code not in SWIZZLE_NAMES:
            raise ValueError(f"swizzle code {sw_code} is invalid (Table 40: 3, 5 and 7 are invalid)")
        for name, v in (("start_address", start_address), ("lbo", lbo), ("sbo", sbo)):
            if v < 0 or v >= (1 << 18):
                raise ValueError(f"smem desc {name}={v} outside [0, 2**18) (14-bit field of 16-byte units)")
            if v % 16:
                raise ValueError(f"smem desc {name}={v} must be 16-byte aligned (9.7.16.4.1)")
        if not 0 <= base_offset <= 7:
            raise ValueError(f"base_offset={base_offset} outside 0..7")
        if fixed_46_48 != 0b001 or fixed_53_60 != 0 or reserved:
            raise ValueError("fixed fields must be 0b001 / 0 and reserved bits 0; use strict=False for probes")
        if lbo_absolute and (SWIZZLE_NAMES[sw_code] != "128B" or base_offset != 0):
            raise ValueError("absolute LBO mode needs 128B swizzle (16B atoms) and base offset 0 (9.7.16.3.1.2.1)")
    if not 0 <= base_offset <= 7 or not 0 <= fixed_46_48 <= 7 or not 0 <= fixed_53_60 <= 0xFF:
        raise ValueError("base_offset / fixed fields out of their bit widths")
    if reserved & ~_RESERVED_MASK:
        raise ValueError(f"reserved={reserved:#x} touches non-reserved bits")
    word = matrix_descriptor_encode(start_address)
    word |= matrix_descriptor_encode(lbo) << 16
    word |= matrix_descriptor_encode(sbo) << 32
    word |= fixed_46_48 << 46
    word |= base_offset << 49
    word |= int(bool(lbo_absolute)) << 52
    word |= fixed_53_60 << 53
    word |= sw_code << 61
    word |= reserved
    return word


def decode_smem_desc(word: int, *, strict: bool = False) -> SmemDesc:
    """Inverse of ``encode_smem_desc``: byte quantities from a 64-bit word.

    With ``strict`` an invalid swizzle code, a wrong fixed field or set reserved bits raise.
    Without it an invalid swizzle code raises anyway (it has no meaning to decode into).
    """
    word = int(word)
    if not 0 <= word < (1 << 64):
        raise ValueError(f"smem descriptor must be a 64-bit unsigned value, got {word:#x}")
    sw_code = (word >> 61) & 7
    if sw_code not in SWIZZLE_NAMES:
        raise ValueError(f"smem descriptor swizzle code {sw_code} is invalid (Table 40)")
    d = SmemDesc(
        start_address=(word & 0x3FFF) << 4,
        lbo=((word >> 16) & 0x3FFF) << 4,
        sbo=((word >> 32) & 0x3FFF) << 4,
        swizzle=SWIZZLE_NAMES[sw_code],
        base_offset=(word >> 49) & 7,
        lbo_absolute=bool((word >> 52) & 1),
        fixed_46_48=(word >> 46) & 7,
        fixed_53_60=(word >> 53) & 0xFF,
        reserved=word & _RESERVED_MASK,
    )
    if strict and (d.fixed_46_48 != 1 or d.fixed_53_60 != 0 or d.reserved):
        raise ValueError(f"smem descriptor {word:#018x}: fixed fields / reserved bits wrong")
    return d


def base_offset_for(pattern_start: int, swizzle: str = "128B") -> int:
    """9.7.16.4.1: 0 when the swizzle pattern starts on its Table 41 boundary, otherwise
    (pattern start addr >> 0x7) & 0x7.

    Only the low log2(pattern/128) bits of the value matter to the swizzle (see
    ``smem_image``), so for 64B/32B swizzle and the 512-byte pattern of the 32B-atom 128B
    swizzle the formula and the "0 when aligned" rule agree.
    """
    if int(pattern_start) % PATTERN_BYTES[swizzle] == 0:
        return 0
    return (int(pattern_start) >> 7) & 7
