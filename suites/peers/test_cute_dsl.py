"""The CuTe DSL dense block-scaled GEMM peer (optional: needs ``MMACTS_CUTE_DSL_PYTHON`` and
``MMACTS_CUTE_DSL_EXAMPLE``, see :mod:`suites.peers.cute_dsl`; skipped in one line without them). Pins what was
found: with no GPU the DSL emits the kernel's PTX and its parameter block, whose tensor maps its own host code builds
in the hardware layout, which the VM reads. The map check itself is tested here always, on a map the project's
encoder wrote, on the DSL's captured map, and on one with a bit the VM does not know."""

from __future__ import annotations

import numpy as np
import pytest

from suites.peers import cute_dsl as D
from suites.peers.cutlass_peer import Unavailable


def test_foreign_map_check_reads_the_hardware_layout() -> None:
    """A map from the project's encoder and the DSL's captured map of A (256 x 512 fp4, hardware layout) are
    readable; the same map with a bit the VM does not know is named foreign; a parameter holding none of our
    addresses is ignored."""
    from mmacts.ptxvm.host.tensormap import encode_tiled

    base = 0x7F0000000000
    ours = bytes(np.asarray(encode_tiled("UINT8", 2, base, [256, 256], [256], [128, 128], [1, 1]), np.uint8))
    words = [0, 0x7F00, 0x465A2, 0x10, 0x1000, 0, 0, 0, 0x1FF, 0xFF, 0, 0, 0, 0xFF000000, 0x7F] + [0] * 17
    dsl = np.array(words, "<u4").tobytes()
    odd = np.array(words[:2] + [0x465A2 | 1 << 25] + words[3:], "<u4").tobytes()
    assert D.foreign_maps(ours + bytes(12) + dsl, [128, 12, 128], {"a": base}) == []
    got = D.foreign_maps(bytes(12) + odd, [12, 128], {"a": base})
    assert len(got) == 1 and got[0].startswith("param 1 (map of a: tensor map bits the VM does not know: word 2")
    assert D.foreign_maps(odd, [128], {"b": base + 256}) == []


def test_sf_image_matches_the_512_byte_atom() -> None:
    codes = np.arange(256 * 8, dtype=np.uint8).reshape(256, 8) % 251
    img = D.sf_image(codes, 128, 16)
    assert img.size == 2 * 2 * 512
    assert img[0] == codes[0, 0] and img[16 * 5 + 4 * 2 + 3] == codes[64 + 5, 3] and img[512 + 1] == codes[0, 5]
    assert img[2 * 512 + 16 * 1] == codes[129, 0]


def _run(m: int, n: int, k: int, **kw: object) -> D.CE.Result:
    try:
        D.configured()
        return D.run_dense_blockscaled(m, n, k, seed=1, **kw)
    except Unavailable as e:
        pytest.skip(str(e))


@pytest.mark.parametrize("mnk", [(256, 256, 512), (512, 512, 1024)])
def test_dsl_kernel_equals_the_exact_product_under_its_named_reading(mnk: tuple[int, int, int]) -> None:
    """256x256x512: one tile per CTA; 512x512x1024: four tiles per CTA of the persistent grid, both accumulator
    buffers reused. The verdict names the open reading it rests on (AMB-TCGEN05-LD-NO-WAIT-OVERWRITE)."""
    r = _run(*mnk)
    assert "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X" in r.stats["forms"], r.stats
    assert r.stats["block"] == [192, 1, 1] and r.stats["grid"] == [1, 1, 4]
    assert r.ok and "equals the exact product" in r.message, r.message
    assert "AMB-TCGEN05-LD-NO-WAIT-OVERWRITE register-read-completes" in r.message, r.message


TWO_CTA = D.Config(mma_tiler=(256, 128), cluster=(2, 1), max_active_clusters=2)
"""The example's 2-CTA configuration: an MMA tile of M = 256 makes it use ``tcgen05.mma.cta_group::2`` in a
cluster of 2 (TMA multicast with ``.cta_group::2``, tcgen05.cp/alloc/commit ``.cta_group::2``)."""


def test_dsl_two_cta_kernel_equals_the_exact_product() -> None:
    """The 2-CTA form of the same example: exact, and the planted SF-layout fault fails it too."""
    r = _run(512, 256, 512, cfg=TWO_CTA)
    assert "tcgen05.mma.cta_group::2.kind::mxf4nvf4.block_scale.scale_vec::4X" in r.stats["forms"], r.stats
    assert r.ok and "equals the exact product" in r.message, r.message


def test_dsl_two_cta_planted_fault_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    right = D.sf_image

    def swapped(codes: np.ndarray, k: int, vs: int) -> np.ndarray:
        return np.ascontiguousarray(right(codes, k, vs).reshape(-1, 32, 4, 4).transpose(0, 2, 1, 3)).reshape(-1)

    monkeypatch.setattr(D, "sf_image", swapped)
    r = _run(512, 256, 512, cfg=TWO_CTA)
    assert not r.ok and r.message.startswith("C (fp32):") and r.mismatches > 0, r.message


def test_dsl_kernel_stops_under_the_default_reading() -> None:
    """Its PTX has no tcgen05.wait::ld: under the VM's default wait-required the epilogue's second tcgen05.ld into
    the same registers is the anti-dependency hazard, and the message names the entry whose reading would allow it."""
    r = _run(256, 256, 512, readings=())
    assert not r.ok and "anti-dependency" in r.message and "AMB-TCGEN05-LD-NO-WAIT-OVERWRITE" in r.message, r.message
    assert "tensor map" not in r.message, r.message  # the DSL's own maps are read


def test_a_planted_scale_factor_layout_fault_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The peer's SF image with the 32-row and 4-row strides of the 512-byte atom swapped: the kernel then scales
    by the wrong codes and C differs from the exact product."""
    right = D.sf_image

    def swapped(codes: np.ndarray, k: int, vs: int) -> np.ndarray:
        return np.ascontiguousarray(right(codes, k, vs).reshape(-1, 32, 4, 4).transpose(0, 2, 1, 3)).reshape(-1)

    monkeypatch.setattr(D, "sf_image", swapped)
    r = _run(256, 256, 512)
    assert not r.ok and r.message.startswith("C (fp32):") and r.mismatches > 0, r.message
