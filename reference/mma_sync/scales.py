"""Scale-factor metadata registers of mma.sync block_scale and the selector semantics.

PTX ISA 9.7.14.3 (Tables 35-37): each lane passes a 32-bit ``scale-a-data`` and
``scale-b-data``; the selectors ``{byte-id, thread-id}`` pick which lanes and which bytes
supply SF_A and SF_B:

* SF_A of row r comes from the thread *pair* chosen by thread-id-a (0: lanes with
  lane % 4 in {0,1}; 1: lane % 4 in {2,3}); inside the pair, CUTLASS's SFALayout puts row
  r = lane/4 + 8*(lane % 2), i.e. row r is supplied by lane 4*(r % 8) + 2*tida + r // 8.
* SF_B of column n comes from lane 4*n + thread-id-b.
* Bytes: 1X: the one byte byte-id; 2X: the byte pair byte-id, byte-id+1 (byte-id in {0,2}),
  SF index j at byte byte-id + j; 4X: all four bytes (byte-id = 0), SF j at byte j.

The encoder writes the right SF values ONLY into the selected lanes/bytes and a *poison*
code into every other byte of every lane, drawn from values no real SF of the case takes.
So a kernel (or model) that reads a wrong lane, a wrong lane of the pair, or a wrong byte
gets a different scale and a wrong answer; the tests show that each such mistake is caught.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from reference.mma_sync.fragments import LANES, M, N

NSF: dict[str, int] = {"1X": 1, "2X": 2, "4X": 4}
"""Scale factors per row of A / column of B for each .scale_vec_size (Table 35)."""

VALID_SELECTORS: dict[str, dict[str, tuple[int, ...]]] = {
    "1X": {"bida": (0, 1, 2, 3), "tida": (0, 1), "bidb": (0, 1, 2, 3), "tidb": (0, 1, 2, 3)},
    "2X": {"bida": (0, 2), "tida": (0, 1), "bidb": (0, 2), "tidb": (0, 1, 2, 3)},
    "4X": {"bida": (0,), "tida": (0, 1), "bidb": (0,), "tidb": (0, 1, 2, 3)},
}
"""Table 37. The thread-id columns are printed once (merged cells) and read here as applying
to every .scale_vec_size; recorded as an ambiguity (register AMB-T37-BLANK-THREADID)."""

_POISON_POOL: dict[str, tuple[int, ...]] = {
    # 2^+6..2^+9 and 2^-6..2^-9: far from every SF a recipe uses (2^-2..2^2).
    "ue8m0": (133, 121, 134, 120, 135, 119, 136, 118),
    # 24, 0.03125 (2^-5), 26, 20, 28, 18, 30, 22: finite UE4M3 values, non-power-of-two mostly.
    "ue4m3": (0x5C, 0x10, 0x5D, 0x5A, 0x5E, 0x59, 0x5F, 0x5B),
}


@dataclass(frozen=True)
class Selectors:
    """``{byte-id-a, thread-id-a}`` and ``{byte-id-b, thread-id-b}``."""

    bida: int = 0
    tida: int = 0
    bidb: int = 0
    tidb: int = 0

    def tag(self) -> str:
        """Case-id fragment, e.g. ``bida2-tida1-bidb3-tidb0``."""
        return f"bida{self.bida}-tida{self.tida}-bidb{self.bidb}-tidb{self.tidb}"

    def as_tuple(self) -> tuple[int, int, int, int]:
        return (self.bida, self.tida, self.bidb, self.tidb)


def check_selectors(scale_vec: str, sel: Selectors) -> None:
    """Raise ``ValueError`` for a selector Table 37 leaves undefined."""
    valid = VALID_SELECTORS[scale_vec]
    for name, value in zip(("bida", "tida", "bidb", "tidb"), sel.as_tuple(), strict=True):
        if value not in valid[name]:
            raise ValueError(f"{name}={value} is undefined behaviour for scale_vec::{scale_vec}")


def all_selectors(scale_vec: str) -> list[Selectors]:
    """Every valid selector combination of Table 37 for ``scale_vec``."""
    v = VALID_SELECTORS[scale_vec]
    return [Selectors(a, b, c, d) for a in v["bida"] for b in v["tida"] for c in v["bidb"]
            for d in v["tidb"]]


def sfa_lane(rows: np.ndarray, tida: int) -> np.ndarray:
    """Lane that supplies SF_A of each row in ``rows``."""
    rows = np.asarray(rows)
    return 4 * (rows % 8) + 2 * tida + rows // 8


def sfb_lane(cols: np.ndarray, tidb: int) -> np.ndarray:
    """Lane that supplies SF_B of each column in ``cols``."""
    return 4 * np.asarray(cols) + tidb


def sfa_byte(bida: int, j: np.ndarray | int) -> np.ndarray | int:
    """Byte of a lane's scale-a-data holding SF index ``j``: byte-id-a + j (Table 36)."""
    return bida + j


def sfb_byte(bidb: int, j: np.ndarray | int) -> np.ndarray | int:
    """Byte of a lane's scale-b-data holding SF index ``j``: byte-id-b + j (Table 36)."""
    return bidb + j


def _poison(stype: str, real_codes: np.ndarray, batch: tuple[int, ...]) -> np.ndarray:
    pool = np.array([p for p in _POISON_POOL[stype] if p not in set(np.unique(real_codes).tolist())],
                    dtype=np.uint32)
    if len(pool) < 4:
        raise ValueError("recipe scale values collide with the poison pool")
    lane, byte = np.meshgrid(np.arange(LANES), np.arange(4), indexing="ij")
    cells = pool[(lane * 3 + byte) % len(pool)]  # [32, 4], neighbouring bytes differ
    words = np.bitwise_or.reduce(cells << (8 * np.arange(4, dtype=np.uint32)), axis=-1)
    return np.broadcast_to(words.astype(np.uint32), batch + (LANES,)).copy()


def _place(words: np.ndarray, lanes: np.ndarray, byte_pos: np.ndarray, codes: np.ndarray) -> None:
    """Write ``codes`` [..., S] into byte ``byte_pos`` [S] of lane ``lanes`` [S] of ``words``."""
    sh = (8 * byte_pos).astype(np.uint32)
    cleared = words[..., lanes] & ~(np.uint32(0xFF) << sh)
    words[..., lanes] = cleared | (codes.astype(np.uint32) << sh)


def encode_sfa(codes: np.ndarray, scale_vec: str, stype: str, sel: Selectors) -> np.ndarray:
    """SF_A codes [..., 16, nsf] -> scale-a-data per lane [..., 32] with poison elsewhere."""
    codes = np.asarray(codes, dtype=np.uint32)
    nsf = NSF[scale_vec]
    if codes.shape[-2:] != (M, nsf):
        raise ValueError(f"SF_A must be [..., {M}, {nsf}], got {codes.shape}")
    words = _poison(stype, codes, codes.shape[:-2])
    rows = np.arange(M)
    for j in range(nsf):  # one byte position per pass: lanes are unique within a pass
        _place(words, sfa_lane(rows, sel.tida), np.full(M, sfa_byte(sel.bida, j)), codes[..., :, j])
    return words


def encode_sfb(codes: np.ndarray, scale_vec: str, stype: str, sel: Selectors) -> np.ndarray:
    """SF_B codes [..., nsf, 8] -> scale-b-data per lane [..., 32] with poison elsewhere."""
    codes = np.asarray(codes, dtype=np.uint32)
    nsf = NSF[scale_vec]
    if codes.shape[-2:] != (nsf, N):
        raise ValueError(f"SF_B must be [..., {nsf}, {N}], got {codes.shape}")
    words = _poison(stype, codes, codes.shape[:-2])
    cols = np.arange(N)
    for j in range(nsf):
        _place(words, sfb_lane(cols, sel.tidb), np.full(N, sfb_byte(sel.bidb, j)), codes[..., j, :])
    return words


def _bytes_at(words: np.ndarray, lanes: np.ndarray, byte_pos: np.ndarray) -> np.ndarray:
    return (words[..., lanes] >> (8 * byte_pos).astype(np.uint32)) & np.uint32(0xFF)


def decode_sfa(words: np.ndarray, scale_vec: str, sel: Selectors) -> np.ndarray:
    """scale-a-data [..., 32] -> the SF_A codes [..., 16, nsf] the selectors pick."""
    check_selectors(scale_vec, sel)
    words = np.asarray(words, dtype=np.uint32)
    r, j = np.meshgrid(np.arange(M), np.arange(NSF[scale_vec]), indexing="ij")
    return _bytes_at(words, sfa_lane(r, sel.tida), sfa_byte(sel.bida, j))


def decode_sfb(words: np.ndarray, scale_vec: str, sel: Selectors) -> np.ndarray:
    """scale-b-data [..., 32] -> the SF_B codes [..., nsf, 8] the selectors pick."""
    check_selectors(scale_vec, sel)
    words = np.asarray(words, dtype=np.uint32)
    j, n = np.meshgrid(np.arange(NSF[scale_vec]), np.arange(N), indexing="ij")
    return _bytes_at(words, sfb_lane(n, sel.tidb), sfb_byte(sel.bidb, j))
