"""The oracle's reading of sparse A (9.7.16.10.8) on hand-worked rows."""

from __future__ import annotations

import numpy as np
import pytest

from reference import sparse as S


def test_two_of_four_positions_low_bits_first() -> None:
    # chunk 0: 0b1101 -> stored values at positions 1 and 3; chunk 1: 0b0110 -> first at 2, second at 1
    packed = np.array([[1, 2, 3, 4]], np.uint8)
    index = np.array([[0b1101, 0b0110]])
    assert S.expand(packed, index, "mxf8f6f4").tolist() == [[0, 1, 0, 2, 0, 4, 3, 0]]


def test_pairs_of_four_to_eight() -> None:
    # 0b1000: sub-chunks 0 and 2 of the 8-wide chunk hold (1, 2) and (3, 4)
    packed = np.array([[1, 2, 3, 4]], np.uint8)
    assert S.expand(packed, np.array([[0b1000]]), "mxf4nvf4").tolist() == [[1, 2, 0, 0, 3, 4, 0, 0]]


def test_unlisted_index_is_refused() -> None:
    with pytest.raises(ValueError, match="0b0000"):
        S.expand(np.ones((1, 2), np.uint8), np.array([[0]]), "mxf8f6f4")


def test_sparse_product_dense_count() -> None:
    """One ue8m0 scale per 64 logical K (dense-count) on an mxf8f6f4 row: 2 * 1 * 2 + 4 * 1 * 1 = 8 for K = 64."""
    k = 64
    packed = np.zeros((1, k // 2), np.uint8)
    packed[0, :2] = [0x38, 0x40]  # e4m3 1.0 and 2.0 stored at positions 1 and 3 of chunk 0
    index = np.full((1, k // 4), 0b0100)
    index[0, 0] = 0b1101
    b = np.zeros((k, 1), np.uint8)
    b[1, 0], b[3, 0] = 0x4, 0x2  # e2m1 2.0 and 1.0
    one = np.array([[127]], np.uint8)
    d = S.sparse_block_scaled_gemm(packed, index, b, np.array([[128]], np.uint8), one, kind="mxf8f6f4",
                                   a_fmt="e4m3", b_fmt="e2m1", scale_fmt="ue8m0")
    assert d.tolist() == [[2 * (1.0 * 2.0 + 2.0 * 1.0)]]
    with pytest.raises(ValueError, match="vector sizes"):  # the doubled reading needs 2 scales for K = 64
        S.sparse_block_scaled_gemm(packed, index, b, np.array([[128]], np.uint8), one, kind="mxf8f6f4",
                                   a_fmt="e4m3", b_fmt="e2m1", scale_fmt="ue8m0", sf_count="doubled")
