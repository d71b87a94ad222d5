"""Published-data loader: file shapes, counts and the two text encodings."""

from __future__ import annotations

import numpy as np
import pytest

from reference import published as P


def test_available_files_and_counts() -> None:
    have = P.available()
    assert sorted(have) == sorted((g, "E4M3", o) for g in ("B200", "H100", "H200") for o in ("fp16", "fp32"))
    for gpu in ("B200", "H100", "H200"):
        s = P.load(gpu)
        assert s.a.shape == (5000, 32) and s.c.shape == (5000,)
        assert {k: v.shape for k, v in s.d.items()} == {"fp32": (5000,), "fp16": (5000,)}
        # fp16 results are widened to binary32: the low 13 bits are zero
        assert (s.d["fp16"] & 0x1FFF == 0).all()
    assert (P.DATA_DIR / "LICENCE").exists() and (P.DATA_DIR / "README.md").exists()


def test_parsers() -> None:
    assert P.parse_hex_words("3f700000 bf800000 \n40200000 00000000\n").tolist() == [[0.9375, -1.0], [2.5, 0.0]]
    bits = P.parse_bit_strings("00111111100000000000000000000000\n")
    assert bits.tolist() == [0x3F800000]
    # a 16-character fp16 pattern is widened: 0x3C00 (1.0) -> 0x3F800000
    assert P.parse_bit_strings("0011110000000000\n").tolist() == [0x3F800000]
    assert P.float_to_bit_strings(np.array([1.0, np.nan])) == [format(0x3F800000, "032b"), format(0x7FFFFFFF, "032b")]
    assert P.parse_bit_strings(" 0011110000000000 \r\n\n").tolist() == [0x3F800000]
    for bad in ("", "0101\n", "2" * 32 + "\n", "0" * 8 + " " + "0" * 7 + "\n", "0" * 16 + " " + "0" * 16 + "\n"):
        with pytest.raises(ValueError):
            P.parse_bit_strings(bad)
    for bad in ("", "zz\n", "1 2\n3\n", "123456789\n"):
        with pytest.raises(ValueError):
            P.parse_hex_words(bad)


def test_bit_string_files_parse_as_int_per_line() -> None:
    """The vectorised parser gives what ``int(line, 2)`` gives for every line of the shipped c/d files."""
    for path in sorted(P.DATA_DIR.glob("*/*/[cd]_*.txt*")):
        text = P.open_text(path)
        want = [int(ln, 2) for ln in text.splitlines() if ln.strip()]
        got = P.parse_bit_strings(text)
        if len(text.split()[0]) == 16:  # pragma: no cover -- the shipped files widen fp16 themselves
            continue
        assert got.tolist() == want, path.name
