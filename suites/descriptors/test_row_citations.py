"""The Table 40 stride rows the tcgen05_blockscale cases cite are the ones their descriptors use.

``suites.tcgen05_blockscale.cases.layout_rows`` decides analytically whether one MMA's descriptor
walk uses LBO (T40.2, with its relative mode T40.6) and SBO (T40.3). This test re-derives it by
experiment: it records every (descriptor, shape) the CPU model decodes for a case, perturbs the
LBO / SBO field, decodes random shared memory both ways, and requires "the bytes read changed"
exactly where the case cites the row -- so no citation is padding and none is missing.
"""

from __future__ import annotations

import numpy as np
import pytest

from reference.tcgen05.smem_image import decode_operand
from reference.tcgen05_model import machine
from reference.tcgen05_model import operands as ops
from suites.tcgen05_blockscale import build as B
from suites.tcgen05_blockscale.cases import enumerate_cases, smem_walk_rows
from suites.tcgen05_blockscale.driver import _form

_RNG_IMAGE = np.random.default_rng(5).integers(0, 256, 1 << 20, dtype=np.uint8)


def _sample() -> list:
    exact = [c for c in enumerate_cases("standard") if c.recipe == "exact" and not c.runtime.get("cp_probe")]
    layout = [c for c in exact if any(k in c.runtime for k in ("swizzle_a", "swizzle_b", "transpose_a", "transpose_b"))]
    others = [c for c in exact if c not in layout and (c.form["cta_group"] == 2 or c.runtime["n"] <= 40)]
    return layout + others[::4]


def _walks(case, monkeypatch) -> list[tuple[int, int, int, str, str]]:
    calls: list[tuple[int, int, int, str, str]] = []
    real = ops.gather_smem

    def spy(smem, desc_word, rows, k, *, major, container):
        calls.append((int(desc_word), rows, k, major, container))
        return real(smem, desc_word, rows, k, major=major, container=container)

    monkeypatch.setattr(ops, "gather_smem", spy)
    machine.run(_form(case), B.build(case).programs)
    return calls


def _reads_change(word: int, rows: int, k: int, major: str, elem: str, lo: int) -> bool:
    bumped = word + (8 << lo)  # +128 bytes in the 14-bit field starting at bit lo
    base = decode_operand(_RNG_IMAGE, word, mn=rows, k=k, major=major, elem=elem)
    try:
        moved = decode_operand(_RNG_IMAGE, bumped, mn=rows, k=k, major=major, elem=elem)
    except IndexError:
        return True
    return not np.array_equal(base, moved)


@pytest.mark.parametrize("case", _sample(), ids=lambda c: c.case_id)
def test_stride_rows_match_the_descriptor_walk(case, monkeypatch) -> None:
    walks = _walks(case, monkeypatch)
    assert walks, "the model decoded no shared-memory operand"
    uses_lbo = any(_reads_change(*w, lo=16) for w in walks)
    uses_sbo = any(_reads_change(*w, lo=32) for w in walks)
    rows = set(case.spec_rows)
    assert uses_lbo == ("T40.2" in rows) == ("T40.6" in rows), (uses_lbo, sorted(rows))
    assert uses_sbo == ("T40.3" in rows), (uses_sbo, sorted(rows))
    assert {"T40.1", "T40.8"} <= rows


@pytest.mark.parametrize("k_rows", [4, 8, 12])
def test_sbo_citation_of_the_32b_atom_swizzle_follows_4_row_atoms(k_rows) -> None:
    """128B swizzle with 32B atoms (Table 53 8x4): SBO steps every 4 K rows, so an MN-major walk of
    more than 4 K rows uses SBO and cites T40.3 (AMB-T53-32B-ATOM-SIZE reading "atom-512")."""
    from reference.tcgen05.smem_desc import encode_smem_desc

    word = encode_smem_desc(0, 8192, 512, swizzle="128B_base32B")
    uses_sbo = _reads_change(word, 32, k_rows, "MN", "b32", lo=32)
    assert uses_sbo == (k_rows > 4)
    assert ("T40.3" in smem_walk_rows("MN", "128B_base32B", k_rows, 128)) == uses_sbo
