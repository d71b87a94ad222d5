"""The CuTe DSL dense block-scaled GEMM peer (optional: needs ``MMACTS_CUTE_DSL_PYTHON`` and
``MMACTS_CUTE_DSL_EXAMPLE``, see :mod:`suites.peers.cute_dsl`; skipped in one line without them). Pins what was
found: with no GPU the DSL emits the kernel's PTX and its parameter block, and the run stops at the DSL's own
tensor-map encoding, named. The map check itself is tested here always, on a map the project's encoder wrote and
on one planted in another layout."""

from __future__ import annotations

import numpy as np
import pytest

from suites.peers import cute_dsl as D
from suites.peers.cutlass_peer import Unavailable


def test_foreign_map_check_reads_the_vm_layout() -> None:
    """A map from the project's encoder is readable; the same address in a map whose rank word holds packed
    fields (the DSL's captured map of A, 256 x 512 fp4) is named foreign; a parameter holding none of our
    addresses is ignored."""
    from mmacts.ptxvm.host.tensormap import encode_tiled

    base = 0x7F0000000000
    ours = bytes(np.asarray(encode_tiled("UINT8", 2, base, [256, 256], [256], [128, 128], [1, 1]), np.uint8))
    words = [0, 0x7F00, 0x465A2, 0x10, 0x1000, 0, 0, 0, 0x1FF, 0xFF, 0, 0, 0, 0xFF000000, 0x7F] + [0] * 17
    dsl = np.array(words, "<u4").tobytes()
    assert D.foreign_maps(ours + bytes(12), [128, 12], {"a": base}) == []
    got = D.foreign_maps(bytes(12) + dsl, [12, 128], {"a": base})
    assert len(got) == 1 and got[0].startswith("param 1 (map of a: rank word 0x465a2")
    assert D.foreign_maps(dsl, [128], {"b": base + 256}) == []


def test_sf_image_matches_the_512_byte_atom() -> None:
    codes = np.arange(256 * 8, dtype=np.uint8).reshape(256, 8) % 251
    img = D.sf_image(codes, 128, 16)
    assert img.size == 2 * 2 * 512
    assert img[0] == codes[0, 0] and img[16 * 5 + 4 * 2 + 3] == codes[64 + 5, 3] and img[512 + 1] == codes[0, 5]
    assert img[2 * 512 + 16 * 1] == codes[129, 0]


def test_dsl_compiles_without_a_gpu_and_stops_at_its_tensor_maps() -> None:
    try:
        D.configured()
        r = D.run_dense_blockscaled(256, 256, 512, seed=1)
    except Unavailable as e:
        pytest.skip(str(e))
    assert "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X" in r.stats["forms"], r.stats
    assert r.stats["block"] == [192, 1, 1] and r.stats["grid"] == [1, 1, 4]
    assert not r.ok and r.message.startswith("not-supported: the DSL's host code encodes its TMA descriptors"), \
        r.message
