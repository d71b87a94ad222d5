"""Loader for the published tensor-core test vectors (Khattak & Mikaitis, BSD-2-Clause).

The data (``reference/data/published_tensor_core/``, LICENCE and README beside them)
are 5000 inner products of length 32 measured on B200, H100 and H200. They are what
the numeric models are checked against bit for bit, so the loader keeps the raw bit
patterns (``d_*`` as uint32) rather than floats: a comparison must not depend on how a
NaN or a zero sign survives a float conversion.

File formats (checked against the files, which differ from their README on one point):
``a_``/``b_``: one test a line, 32 hex words, each the binary32 pattern of an E4M3 value;
``c_``/``d_``: one 32-character binary string a line (binary32 pattern). ``d_*_fp16``
holds the fp16 result *widened to binary32* (32 characters, low 13 bits zero), not a
16-character string as the README says.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from reference.formats import fp32_bits

DATA_DIR = Path(__file__).resolve().parent / "data" / "published_tensor_core"


@dataclass(frozen=True)
class PublishedSet:
    """One GPU's files for one input format."""

    gpu: str
    fmt: str
    a: np.ndarray
    """(n, 32) float64 values."""
    b: np.ndarray
    c: np.ndarray
    """(n,) float64 values of the fp32 addend as written in the c file."""
    d: dict[str, np.ndarray]
    """Output format (``fp32``/``fp16``) -> (n,) uint32 binary32 patterns the GPU returned."""


def open_text(path: Path) -> str:
    """Text of a data file, gzip-compressed (.gz) or plain."""
    if path.suffix == ".gz":
        with gzip.open(path, "rt", encoding="ascii") as fh:
            return fh.read()
    return path.read_text(encoding="ascii")


def _find(path_without_gz: Path) -> Path:
    gz = path_without_gz.with_name(path_without_gz.name + ".gz")
    if gz.exists():
        return gz
    if path_without_gz.exists():
        return path_without_gz
    raise FileNotFoundError(f"no published data file {path_without_gz}(.gz)")


def parse_hex_words(text: str) -> np.ndarray:
    """Lines of whitespace-separated 8-digit hex binary32 patterns -> (lines, words) float64."""
    rows = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
    if not rows:
        raise ValueError("no data lines")
    width = len(rows[0].split())
    n_chars = 9 * width - 1
    if all(len(r) == n_chars for r in rows):
        # the files' form, every line ``width`` words of 8 digits and single spaces (a space at every
        # 9th character says so, checked at C speed): one bytes.fromhex for the whole file, no int()
        # per word (70 ms -> 5 ms a file; three files per replay)
        chars = np.frombuffer("".join(rows).encode("ascii", "replace"), dtype=np.uint8).reshape(len(rows), n_chars)
        if (chars[:, 8::9] == ord(" ")).all():
            try:
                raw = bytes.fromhex(" ".join(rows))
            except ValueError:
                raw = None  # not plain hex digits ("0x..."): int() below decides, as it always did
            if raw is not None:
                bits32 = np.frombuffer(raw, dtype=">u4").reshape(len(rows), width)
                return bits32.astype(np.uint32).view(np.float32).astype(np.float64)
    lines = [ln.split() for ln in rows]
    if any(len(ln) != width for ln in lines):
        raise ValueError(f"every line must hold {width} words")
    try:
        bits = np.array([[int(w, 16) for w in ln] for ln in lines], dtype=np.uint64)
    except ValueError as exc:
        raise ValueError(f"bad hex word: {exc}") from None
    if (bits > 0xFFFFFFFF).any():
        raise ValueError("hex word wider than 32 bits")
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


def parse_bit_strings(text: str) -> np.ndarray:
    """Lines of 32 (or 16, an fp16 pattern widened here) '0'/'1' characters -> uint32 binary32 patterns."""
    if any(ch in text for ch in " \t\r\f\v"):  # blanks inside lines: strip each line, one word a line
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    else:  # the files' form, newlines only: split() is the lines (a set per line cost 25 ms a file)
        lines = text.split()
    if not lines:
        raise ValueError("no data lines")
    n = len(lines[0])
    joined = "".join(lines)
    if n not in (16, 32) or len(joined) != n * len(lines) or set(map(len, lines)) != {n}:
        raise ValueError("every line must be 32 (or 16) characters of 0 and 1")
    # one digit test over the whole text at C speed (a blank inside a line fails it too)
    arr = np.frombuffer(joined.encode("ascii", "replace"), dtype=np.uint8).reshape(len(lines), n) - ord("0")
    if (arr > 1).any():  # any other character (below '0' it wraps round to a large uint8)
        raise ValueError("every line must be 32 (or 16) characters of 0 and 1")
    weights = (np.uint64(1) << np.arange(n - 1, -1, -1, dtype=np.uint64))
    bits = (arr.astype(np.uint64) * weights).sum(axis=1)
    if n == 16:
        return np.asarray(bits, dtype=np.uint16).view(np.float16).astype(np.float32).view(np.uint32)
    return bits.astype(np.uint32)


def bits_to_float(bits: np.ndarray) -> np.ndarray:
    """uint32 binary32 patterns -> float64 values."""
    return np.asarray(bits, dtype=np.uint32).view(np.float32).astype(np.float64)


def float_to_bit_strings(values: np.ndarray) -> list[str]:
    """float64 values exact in binary32 -> 32-character strings (NaN as 0x7FFFFFFF)."""
    return [format(int(b), "032b") for b in fp32_bits(values)]


def available() -> list[tuple[str, str, str]]:
    """(gpu, input format, output format) of every d file present."""
    out = []
    for d in sorted(DATA_DIR.glob("*/*/d_*_*.txt*")):
        gpu, fmt = d.parts[-3], d.parts[-2]
        outfmt = d.name.split(".")[0].split("_")[-1]
        out.append((gpu, fmt, outfmt))
    return out


def load(gpu: str, fmt: str = "E4M3") -> PublishedSet:
    """Load one GPU's files (``gpu`` in B200/H100/H200; ``fmt`` as the folder spells it).

    Parsed once per process and shared (several cases replay the same file): the arrays are
    read-only; copy one to change it.
    """
    return _load(gpu, fmt)


def _hex_file(path: Path) -> np.ndarray:
    """:func:`parse_hex_words` of a file, parsed once per distinct content: the study gave every
    GPU the same a and b inputs (identical files), and each parse cost 30 ms on a GPU host."""
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest not in _HEX_BY_CONTENT:
        arr = parse_hex_words(open_text(path))
        arr.setflags(write=False)
        _HEX_BY_CONTENT[digest] = arr
    return _HEX_BY_CONTENT[digest]


_HEX_BY_CONTENT: dict[str, np.ndarray] = {}


@functools.lru_cache(maxsize=16)
def _load(gpu: str, fmt: str) -> PublishedSet:
    base = DATA_DIR / gpu / fmt
    a = _hex_file(_find(base / f"a_{gpu}_{fmt}.txt"))
    b = _hex_file(_find(base / f"b_{gpu}_{fmt}.txt"))
    c = bits_to_float(parse_bit_strings(open_text(_find(base / f"c_{gpu}_fp32.txt"))))
    d = {}
    for out in ("fp32", "fp16"):
        try:
            d[out] = parse_bit_strings(open_text(_find(base / f"d_{gpu}_{out}.txt")))
        except FileNotFoundError:
            pass
    for arr in (a, b, c, *d.values()):
        arr.setflags(write=False)
    return PublishedSet(gpu, fmt, a, b, c, d)
