"""Independent numpy encoders/decoders for the tcgen05 (sm_100a/sm_103a) operand formats.

Every module is pinned to the PTX ISA section it implements (the tcgen05 chapter, 9.7.16) and
works on *codes* (uint8/uint16/uint32 bit patterns), never on values: converting codes to values
is ``reference.formats``' job.  Each encoder has an inverse decoder; decoders that model what
the hardware reads (``decode_operand``, ``read_sf``, ``read_a``, ``decode_d``, ``tcgen05_ld``,
``cp_to_tmem``) derive every address from the descriptors/addresses alone and share no code
with the encoders that produced the images.

Modules (public API):

``idesc``          Tables 42-44   encode_idesc(kind, fields, *, strict, reserved_bits, **kw) -> int
                                  decode_idesc(kind, word, *, strict) -> dict
                                  reserved_mask(kind), mma_k(kind, sparse=, k96=)
``smem_desc``      Tables 40-41   encode_smem_desc(start, lbo, sbo, *, swizzle, base_offset,
                                  lbo_absolute, strict, ...) -> int
                                  decode_smem_desc(word, *, strict) -> SmemDesc
                                  base_offset_for(pattern_start, swizzle)
``zero_col_mask``  Table 45       encode_zero_col_mask(...) -> int, decode_zero_col_mask(word)
                                  generate_mask(word, m, n, reading=) -> bool[N]
                                  sub_masks(...), b_columns(word, n)
``smem_image``     9.7.16.3, Table 52/53, 9.7.16.10.4.4/.6
                                  encode_operand(codes, *, major, swizzle, elem, base_address,
                                  atom_order, pad_value, smem_size) -> (smem, OperandImage)
                                  decode_operand(smem, desc_word, *, mn, k, major, elem,
                                  smem_base) -> codes (MN, K)
                                  decode_tile, walk_addresses, apply_swizzle,
                                  sf_atom_offsets, encode_sf_atoms, sf_atom_desc
``tmem_image``     9.7.16.1, 9.7.16.2.3, 9.7.16.8, 9.7.16.10.4/.5/.7
                                  scale factors: write_sf / read_sf / sf_cell
                                  A in TMEM: write_a / read_a
                                  accumulator: encode_d / decode_d / d_lane_col
                                  tcgen05.ld/st: ld_st_map / tcgen05_ld / tcgen05_st
``cp_decompress``  9.7.16.9       decompress_b4x16_p64 / compress_b4x16_p64,
                                  decompress_b6x16_p32 / compress_b6x16_p32,
                                  cp_lane_map(shape, multicast), cp_to_tmem(...)

The list of every inference about missing figures is ``AMBIGUITIES.md`` next to this file.
"""

from . import cp_decompress, idesc, smem_desc, smem_image, tmem_image, zero_col_mask

__all__ = ["cp_decompress", "idesc", "smem_desc", "smem_image", "tmem_image", "zero_col_mask"]
