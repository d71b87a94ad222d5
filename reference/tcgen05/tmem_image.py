"""Tensor-memory images: scale factors, A operand, accumulator D, and tcgen05.ld/st fragments.

A TMEM image is one CTA's tensor memory as ``np.ndarray[uint32]`` of shape (128 lanes, 512
columns) (9.7.16.1).  An address is (lane << 16) | column (9.7.16.1.1); byte b of a cell is bits
[8b, 8b+8) (little endian).  cta_group::2 instructions touch two images (one per CTA of the
pair); functions that build both return a list indexed by CTA rank within the pair.

Sources (the figures 183-187, 199-201, 204-218, 231-258 are missing):
* scale factors: cutlass-facts §1 (CUTLASS tmem_sf_frg, computed) + PTX 9.7.16.10.7 prose
  ("SF ID = byte offset / half-word offset / must be 0", "duplicated to all 32 lane partitions");
* D layouts: cutlass-facts §5.1 and CUTLASS ``UMMA::tmem_frg`` (M=64 1-SM atom
  ((16,4),N):((1,32),128) -> Layout F; 2-SM "2x2" and "1x4" atoms -> Layouts B and G);
* tcgen05.ld/st: CUTLASS ``Copy_Traits<SM100_TMEM_LOAD_*>`` (DstLayout per thread/value),
  evaluated by hand for every shape (see ``ld_st_map``);
* A in TMEM: PTX 9.7.16.10.4.3 (4 8-bit containers per 32-bit word) and 9.7.16.10.4.5 (two
  E2M1 per byte), FP4 container bits [5:2] and FP6 [6:1] from the CuTe DSL note (cutlass-facts
  §3.4) -- both positions are parameters because the figures are missing.
Every inference is listed in AMBIGUITIES.md.
"""

from __future__ import annotations

import numpy as np

LANES = 128
COLS = 512

# ----------------------------------------------------------------------------------------------
# addresses
# ----------------------------------------------------------------------------------------------


def new_tmem() -> np.ndarray:
    """An all-zero (128, 512) uint32 TMEM image."""
    return np.zeros((LANES, COLS), dtype=np.uint32)


def taddr(lane: int, col: int) -> int:
    """9.7.16.1.1: address = lane in bits 31-16, column in bits 15-0."""
    return ((int(lane) & 0xFFFF) << 16) | (int(col) & 0xFFFF)


def split_taddr(addr: int, *, high_bits: str = "error") -> tuple[int, int]:
    """(lane, column) of an address.

    Only lanes 0-127 and columns 0-511 exist.  CUTLASS passes scale-factor addresses with the SF
    ID still in bits 30-31 (cutlass-facts §1.3/§8 #10) and relies on the hardware ignoring them:
    ``high_bits="ignore"`` models that (lane = bits 16-22, column = bits 0-8), ``"error"`` (the
    default) raises on any bit outside those ranges.
    """
    lane, col = (int(addr) >> 16) & 0xFFFF, int(addr) & 0xFFFF
    if high_bits == "ignore":
        return lane & 0x7F, col & 0x1FF
    if high_bits != "error":
        raise ValueError("high_bits must be 'error' or 'ignore'")
    if lane >= LANES or col >= COLS:
        raise ValueError(f"TMEM address {int(addr):#010x}: lane {lane} / column {col} outside 128x512")
    return lane, col


def _bytes_view(tmem: np.ndarray) -> np.ndarray:
    if tmem.shape != (LANES, COLS) or tmem.dtype != np.uint32 or not tmem.flags.c_contiguous:
        raise ValueError("TMEM image must be a C-contiguous (128, 512) uint32 array")
    return tmem.view("<u4").view(np.uint8).reshape(LANES, COLS * 4)


# ----------------------------------------------------------------------------------------------
# scale factors (9.7.16.10.7)
# ----------------------------------------------------------------------------------------------

#: scale_vec -> (SF per MMA row/column, block size VS).  3X/6X are the K=96 block32/block16 forms.
SCALE_VECS: dict[str, tuple[int, int]] = {"1X": (1, 32), "2X": (2, 32), "4X": (4, 16), "3X": (3, 32), "6X": (6, 16)}
#: valid SF IDs (9.7.16.10.7.2.x / .3.x prose and Figures 234-239 captions)
VALID_SF_IDS: dict[str, tuple[int, ...]] = {
    "1X": (0, 1, 2, 3),
    "2X": (0, 2),
    "4X": (0,),
    "3X": (0, 1, 2, 3),
    "6X": (0, 2),
}
DATAPATHS = ("4x1", "2x2")


def resolve_scale_vec(kind: str, qualifier: str | None, *, k96: bool = False) -> str:
    """Map a PTX qualifier (``scale_vec::NX``, ``block16``, ``block32`` or None) to 1X..6X (Table 54)."""
    q = None if qualifier is None else qualifier.replace(".", "").replace("scale_vec::", "")
    if q in ("1X", "2X", "4X"):
        if k96:
            raise ValueError("K=96 uses .block16/.block32 (Table 54)")
        return q
    if q == "block16":
        return "6X" if k96 else "4X"
    if q == "block32":
        if kind == "mxf8f6f4":
            return "1X"
        return "3X" if k96 else "2X"
    if q is None:
        # Table 54 lists no default; CUTLASS emits mxf8f6f4 without a qualifier (implied 1X) and
        # the tcgen05.mma text gives block32 as the default for mxf4 (cutlass-facts §8 #9).
        if kind == "mxf8f6f4":
            return "1X"
        if kind == "mxf4":
            return "3X" if k96 else "2X"
        raise ValueError("kind::mxf4nvf4 must name its scale vector size")
    raise ValueError(f"unknown scale vector qualifier {qualifier!r}")


def sf_group_columns(which: str, *, datapath: str = "4x1", n: int | None = None) -> int:
    """Columns between consecutive 4-SF groups (cutlass-facts §1.1, §1.4, §1.6).

    SFA: 4 (4x1, 128 rows/CTA) or 2 (2x2, 64 rows/CTA).  SFB: 4*ceil(N/128) for 4x1 (the reason
    PTX has separate K=96 SFB figures for N<=128 and N>128); 4 for 2x2 (each N half <= 128 in its
    own quadrant pair -- inference).
    """
    if which == "A":
        return 4 if datapath == "4x1" else 2
    if n is None:
        raise ValueError("SFB layout needs N")
    return 4 * -(-n // 128) if datapath == "4x1" else 4


def sf_rows_per_cta(which: str, *, datapath: str = "4x1", n: int | None = None) -> int:
    """How many MN indices one CTA's SF image covers: SFA 128 (4x1) / 64 (2x2); SFB all N."""
    if which == "A":
        return 128 if datapath == "4x1" else 64
    if n is None:
        raise ValueError("SFB layout needs N")
    return n


def sf_byte(g: np.ndarray) -> np.ndarray:
    """Byte of its 32-bit cell that holds SF index ``g`` (counted from byte 0 of the base column): g % 4,
    the SF ID being a byte offset (9.7.16.10.7.2)."""
    return g % 4


def sf_partition_lane(x: np.ndarray) -> np.ndarray:
    """Lane, inside a 32-lane partition, holding the scale factors of (this half's) MN index ``x``: x % 32."""
    return x % 32


SF_REPLICA_LANES: dict[str, tuple[int, ...]] = {"quadrants": (0, 32, 64, 96), "2x2-SFB": (0, 32)}
"""First lane of each copy of a scale factor: one per 32-lane partition ("duplicated to all 32 lane
partitions", 9.7.16.10.7) for the 4x1 layouts and 2x2 SFA; Layout B's SFB, one N half per lane pair
of quadrants, has two copies per half."""

SFB_2X2_SECOND_HALF_LANE = 64
"""Layout B (2x2) SFB: the second N half starts at lane 64 (its own quadrant pair, inference)."""


def sf_cell(which: str, x: np.ndarray, g: np.ndarray, *, datapath: str = "4x1", n: int | None = None):
    """Where SF index ``g`` (counted from byte 0 of the base column) of MN index ``x`` lives.

    Returns (lanes, col_off, byte): ``lanes`` has a trailing axis over the replicas (4 for every
    4x1 layout and for 2x2 SFA, 2 for 2x2 SFB), ``col_off`` is relative to the base column.
      4x1 (Layouts A, D):  lane (x%32)+32q, q=0..3; column x//32 + C*(g//4); byte g%4
      2x2 (Layout B) SFA:  x<64 local rows, same formula with C=2
      2x2 (Layout B) SFB:  n<N/2 -> lanes (n%32)+{0,32}, column n//32;
                           n>=N/2 -> lanes 64+((n-N/2)%32)+{0,32}, column (n-N/2)//32
    """
    if which not in ("A", "B"):
        raise ValueError("which must be 'A' or 'B'")
    if datapath not in DATAPATHS:
        raise ValueError(f"datapath must be one of {DATAPATHS}")
    x = np.asarray(x, dtype=np.int64)
    g = np.asarray(g, dtype=np.int64)
    rows = sf_rows_per_cta(which, datapath=datapath, n=n)
    if x.size and (x.min() < 0 or x.max() >= rows):
        raise ValueError(f"MN index outside 0..{rows - 1} for SF{which} ({datapath})")
    c = sf_group_columns(which, datapath=datapath, n=n)
    byte = sf_byte(g)
    if which == "B" and datapath == "2x2":
        half = n // 2
        h = (x >= half).astype(np.int64)
        xl = x - h * half
        lanes = (sf_partition_lane(xl)[..., None] + SFB_2X2_SECOND_HALF_LANE * h[..., None]
                 + np.array(SF_REPLICA_LANES["2x2-SFB"]))
        col = xl // 32 + c * (g // 4)
    else:
        lanes = sf_partition_lane(x)[..., None] + np.array(SF_REPLICA_LANES["quadrants"])
        col = x // 32 + c * (g // 4)
    return lanes, col, byte


def write_sf(
    tmem: np.ndarray,
    sf: np.ndarray,
    *,
    addr: int,
    which: str,
    datapath: str = "4x1",
    n: int | None = None,
    replicas: tuple[int, ...] | None = None,
) -> np.ndarray:
    """Store an (X, G) block of SF bytes into one CTA's TMEM image (in place; returns ``tmem``).

    ``sf[x, g]`` = SF index g (from byte 0 of the base column of ``addr``) of MN index x of this
    CTA.  ``replicas`` selects which copies are written (default all; a probe writes one).
    """
    lane0, col0 = split_taddr(addr)
    if lane0:
        raise ValueError("scale factors are addressed from lane 0 (the layout spans all lanes)")
    sf = np.asarray(sf, dtype=np.uint8)
    xs, gs = np.meshgrid(np.arange(sf.shape[0]), np.arange(sf.shape[1]), indexing="ij")
    lanes, col, byte = sf_cell(which, xs, gs, datapath=datapath, n=n)
    if replicas is not None:
        lanes = lanes[..., list(replicas)]
    bcol = (col0 + col) * 4 + byte
    if bcol.size and bcol.max() >= COLS * 4:
        raise ValueError("scale factors run past column 511")
    view = _bytes_view(tmem)
    view[lanes, np.broadcast_to(bcol[..., None], lanes.shape)] = np.broadcast_to(sf[..., None], lanes.shape)
    return tmem


class ReplicaMismatch(ValueError):
    """The replicated copies of a scale factor disagree (which one the hardware reads is open)."""


def read_sf(
    tmem: np.ndarray,
    addr: int,
    sf_id: int,
    scale_vec: str,
    count: int,
    which: str,
    *,
    datapath: str = "4x1",
    n: int | None = None,
    quadrant: int | str | None = None,
    strict: bool = True,
    high_bits: str = "error",
) -> np.ndarray:
    """Scale factors one MMA uses: (count, V) uint8, row x = MN index, column j = k-block j.

    Reading rule (cutlass-facts §1.2/§1.6, PTX 9.7.16.10.7.2/3): k-block j of MN index x comes
    from SF index g = sf_id + j, i.e. column base + x//32 + C*(g//4), byte g%4.  For 1X/2X/4X
    with valid IDs g < 4; for the K=96 forms (3X, 6X) an MMA can straddle into the next group.
    ``strict`` rejects SF IDs the spec does not allow for ``scale_vec``.

    ``quadrant`` -- which replica is read (not established, cutlass-facts §1.2):
      None   read every replica and raise ReplicaMismatch if they differ;
      int q  read the copy in lanes 32q..32q+31 (for 2x2 SFB only the 2 quadrants holding x);
      "own"  SFA only: the quadrant of the datapath that computes D row x (4x1: x//32).
    """
    if scale_vec not in SCALE_VECS:
        raise ValueError(f"scale_vec must be one of {tuple(SCALE_VECS)}")
    if strict and sf_id not in VALID_SF_IDS[scale_vec]:
        raise ValueError(f"SF ID {sf_id} not allowed for scale_vec {scale_vec} (valid {VALID_SF_IDS[scale_vec]})")
    if not 0 <= sf_id <= 3:
        raise ValueError("SF ID is a 2-bit field")
    lane0, col0 = split_taddr(addr, high_bits=high_bits)
    if lane0:
        raise ValueError("scale-factor address must have lane 0")
    v = SCALE_VECS[scale_vec][0]
    xs, js = np.meshgrid(np.arange(count), np.arange(v), indexing="ij")
    lanes, col, byte = sf_cell(which, xs, sf_id + js, datapath=datapath, n=n)
    bcol = (col0 + col) * 4 + byte
    if bcol.max() >= COLS * 4:
        raise ValueError("scale-factor read runs past column 511")
    view = _bytes_view(tmem)
    copies = view[lanes, np.broadcast_to(bcol[..., None], lanes.shape)]  # (count, V, replicas)
    if quadrant is None:
        if not (copies == copies[..., :1]).all():
            bad = np.argwhere((copies != copies[..., :1]).any(axis=-1))[0]
            raise ReplicaMismatch(f"SF{which} replicas differ at MN index {bad[0]}, k-block {bad[1]}")
        return copies[..., 0].copy()
    if quadrant == "own":
        if which != "A":
            raise ValueError("quadrant='own' is defined for SFA only (every quadrant needs all of SFB)")
        q = (np.arange(count) // 32) % 4
        return np.take_along_axis(copies, np.broadcast_to(q[:, None, None], (count, v, 1)), axis=-1)[..., 0]
    q = int(quadrant)
    hit = (lanes // 32) == q
    if not hit.any(axis=-1).all():
        raise ValueError(f"quadrant {q} does not hold every SF{which} row for this layout")
    idx = np.argmax(hit, axis=-1)[..., None]
    return np.take_along_axis(copies, idx, axis=-1)[..., 0]


# ----------------------------------------------------------------------------------------------
# A in tensor memory (9.7.16.10.4.3, 9.7.16.10.4.5)
# ----------------------------------------------------------------------------------------------

#: element containers for A in TMEM: codes per 32-bit cell
A_ELEMS: dict[str, int] = {"b8": 4, "fp4": 4, "fp6": 4, "fp4x2": 8, "b16": 2, "b32": 1}
A_DATAPATHS = ("4x1", "2x2", "half")


def a_lanes(m: int, *, datapath: str = "4x1", lane_align: int = 0) -> np.ndarray:
    """Lanes holding A row m of this CTA: (m_count, replicas).

    4x1 (Layouts A, D): lane m.  2x2 (Layout B): CUTLASS TmemAllocMode::Duplicated -- local row
    m' in lanes m' and 64+m'.  half (Layouts C, F): lane 32*(m//16) + m%16 + lane_align, the
    1-SM M=64 CUTLASS atom ((16,4)):((1,32)) (same alignment for A, D and metadata, 9.7.16.10.5).
    """
    rows = np.arange(m)
    if datapath == "4x1":
        return rows[:, None]
    if datapath == "2x2":
        return rows[:, None] + np.array([0, 64])
    if datapath == "half":
        if lane_align not in (0, 16):
            raise ValueError("half-datapath layouts use lane alignment 0 or 16")
        return (32 * (rows // 16) + rows % 16 + lane_align)[:, None]
    raise ValueError(f"datapath must be one of {A_DATAPATHS}")


def a_slot(kk: np.ndarray, elem: str) -> np.ndarray:
    """Slot of its 32-bit cell (counted from the low bits) that holds A's K index ``kk``: kk mod the
    codes per cell, the lowest k lowest (inference: the spec only says "contiguously packed")."""
    return kk % A_ELEMS[elem]


def _a_geometry(k: int, elem: str):
    per = A_ELEMS[elem]
    kk = np.arange(k)
    col = kk // per
    width = 4 if elem == "fp4x2" else 32 // per
    bitpos = width * a_slot(kk, elem)
    return col, bitpos, width


def write_a(
    tmem: np.ndarray,
    codes: np.ndarray,
    *,
    addr: int,
    elem: str,
    datapath: str = "4x1",
    fp4_shift: int = 2,
    fp6_shift: int = 1,
) -> np.ndarray:
    """Store this CTA's A rows (M_cta, K) into TMEM (in place; returns ``tmem``).

    Within a cell the lowest k sits in the lowest bits (inference: the spec only says the 8-bit
    containers are "contiguously packed").  ``fp4``/``fp6`` are 4/6-bit codes inside 8-bit
    containers at bits [fp4_shift+3 : fp4_shift] / [fp6_shift+5 : fp6_shift] (defaults [5:2] and
    [6:1], cutlass-facts §3.4, unconfirmed for FP6).  ``fp4x2`` packs two E2M1 per byte, even k in
    the low nibble (mxf4/mxf4nvf4, 9.7.16.10.4.5).
    """
    lane_align, col0 = split_taddr(addr)
    codes = np.asarray(codes).astype(np.uint64)
    m, k = codes.shape
    if elem not in A_ELEMS:
        raise ValueError(f"elem must be one of {tuple(A_ELEMS)}")
    if k % A_ELEMS[elem]:
        raise ValueError("K must fill whole 32-bit cells")
    cont = codes
    if elem == "fp4":
        cont = codes << np.uint64(fp4_shift)
    elif elem == "fp6":
        cont = codes << np.uint64(fp6_shift)
    col, bitpos, _ = _a_geometry(k, elem)
    ncols = k // A_ELEMS[elem]
    cells = np.zeros((m, ncols), dtype=np.uint64)
    np.add.at(cells, (slice(None), col), cont << bitpos.astype(np.uint64)[None, :])
    lanes = a_lanes(m, datapath=datapath, lane_align=lane_align if datapath == "half" else 0)
    if datapath != "half" and lane_align:
        raise ValueError("A address lane must be 0 for 4x1/2x2 layouts")
    if col0 + ncols > COLS:
        raise ValueError("A runs past column 511")
    for r in range(lanes.shape[1]):
        tmem[lanes[:, r], col0 : col0 + ncols] = cells.astype(np.uint32)
    return tmem


def read_a(
    tmem: np.ndarray,
    addr: int,
    m: int,
    k: int,
    elem: str,
    *,
    datapath: str = "4x1",
    fp4_shift: int = 2,
    fp6_shift: int = 1,
    check_container: bool = False,
) -> np.ndarray:
    """Read an (M_cta, K) A operand from TMEM (hardware model; inverse of ``write_a``).

    For 2x2 the first replica (lanes 0-63) is read.  ``check_container`` raises if bits of an
    8-bit container outside the FP4/FP6 payload are set (whether hardware ignores them is open).
    """
    lane_align, col0 = split_taddr(addr)
    if elem not in A_ELEMS:
        raise ValueError(f"elem must be one of {tuple(A_ELEMS)}")
    lanes = a_lanes(m, datapath=datapath, lane_align=lane_align if datapath == "half" else 0)[:, 0]
    col, bitpos, width = _a_geometry(k, elem)
    cells = tmem[lanes[:, None], col0 + col[None, :]].astype(np.uint64)
    field = (cells >> bitpos.astype(np.uint64)[None, :]) & np.uint64((1 << width) - 1)
    if elem in ("fp4", "fp6"):
        shift, bits = (fp4_shift, 4) if elem == "fp4" else (fp6_shift, 6)
        payload = (field >> np.uint64(shift)) & np.uint64((1 << bits) - 1)
        if check_container and (field & ~np.uint64(((1 << bits) - 1) << shift)).any():
            raise ValueError(f"{elem} container has bits set outside the payload position")
        field = payload
    dtype = {"b32": np.uint32, "b16": np.uint16}.get(elem, np.uint8)
    return field.astype(dtype)


# ----------------------------------------------------------------------------------------------
# accumulator D (9.7.16.10.4.1, 9.7.16.10.5)
# ----------------------------------------------------------------------------------------------

D_LAYOUTS: dict[str, tuple[int, int]] = {
    # layout -> (M, CTAs)
    "A": (256, 2),
    "B": (128, 2),
    "C": (128, 2),
    "D": (128, 1),
    "E": (64, 1),
    "F": (64, 1),
    "G": (32, 1),
}


def d_lane_col(layout: str, n: int, *, lane_align: int = 0):
    """(cta, lane, col_off) arrays of shape (M, N) for D(m, n) of an instruction-wide M x N.

      D  M=128 ::1         (m, n)
      A  M=256 ::2         CTA m//128: (m%128, n)
      B  M=128 ::2 dense   CTA m//64, m'=m%64: n<N/2 -> (m', n); n>=N/2 -> (64+m', n-N/2)
      C  M=128 ::2 sparse  CTA m//64: (32*(m'//16) + m'%16 + align, n)        [inference]
      F  M=64  ::1         (32*(m//16) + m%16 + align, n)                    [CUTLASS atom]
      E  M=64  .ws         the spec says "2x3"; modelled as 2x2: n<N/2 -> (m, n),
                           n>=N/2 -> (64+m, n-N/2)                            [inference]
      G  M=32  .ws (1x4)   q = n // (N/4): (32q + m, n % (N/4))             [CUTLASS 2-SM M=32 atom]
    """
    if layout not in D_LAYOUTS:
        raise ValueError(f"layout must be one of {tuple(D_LAYOUTS)}")
    m_total, _ = D_LAYOUTS[layout]
    mm, nn = np.meshgrid(np.arange(m_total), np.arange(n), indexing="ij")
    cta = np.zeros_like(mm)
    if layout in ("C", "F") and lane_align not in (0, 16):
        raise ValueError("Layouts C and F use lane alignment 0 or 16")
    if layout not in ("C", "F") and lane_align:
        raise ValueError(f"Layout {layout} uses lane alignment 0")
    if layout == "D":
        lane, col = mm, nn
    elif layout == "A":
        cta, lane, col = mm // 128, mm % 128, nn
    elif layout in ("B", "E"):
        if n % 2:
            raise ValueError("N must be even")
        if layout == "B":
            cta = mm // 64
        ml = mm % 64
        h = nn >= n // 2
        lane, col = ml + 64 * h, nn - h * (n // 2)
    elif layout in ("C", "F"):
        if layout == "C":
            cta = mm // 64
        ml = mm % 64
        lane, col = 32 * (ml // 16) + ml % 16 + lane_align, nn
    else:  # G
        if n % 4:
            raise ValueError("N must be a multiple of 4 for Layout G")
        q = nn // (n // 4)
        lane, col = 32 * q + mm, nn % (n // 4)
    return cta, lane, col


def encode_d(d_bits: np.ndarray, layout: str, *, addr: int = 0, tmems: list[np.ndarray] | None = None):
    """Write D (M, N) 32-bit patterns into TMEM image(s); returns the list of per-CTA images.

    16-bit D elements go in the low 16 bits of a cell (9.7.16.10.4.1): pass them as uint16 and
    they are zero-extended.
    """
    d_bits = np.asarray(d_bits)
    m_total, nctas = D_LAYOUTS[layout]
    if d_bits.shape[0] != m_total:
        raise ValueError(f"Layout {layout} has M={m_total}")
    lane_align, col0 = split_taddr(addr)
    cta, lane, col = d_lane_col(layout, d_bits.shape[1], lane_align=lane_align)
    if tmems is None:
        tmems = [new_tmem() for _ in range(nctas)]
    if (col0 + col).max() >= COLS:
        raise ValueError("D runs past column 511")
    for c in range(nctas):
        sel = cta == c
        tmems[c][lane[sel], col0 + col[sel]] = d_bits[sel].astype(np.uint32)
    return tmems


def decode_d(tmems: list[np.ndarray], layout: str, n: int, *, addr: int = 0, bits: int = 32) -> np.ndarray:
    """Read D (M, N) from per-CTA TMEM images (inverse of ``encode_d``); ``bits=16`` returns
    the low halves as uint16."""
    lane_align, col0 = split_taddr(addr)
    cta, lane, col = d_lane_col(layout, n, lane_align=lane_align)
    stacked = np.stack(tmems)
    out = stacked[cta, lane, col0 + col]
    return out.astype(np.uint16) if bits == 16 else out


# ----------------------------------------------------------------------------------------------
# tcgen05.ld / tcgen05.st (9.7.16.2.3, 9.7.16.8, Table 47)
# ----------------------------------------------------------------------------------------------

LD_SHAPES = ("32x32b", "16x64b", "16x128b", "16x256b", "16x32bx2")
_REGS_PER_NUM = {"32x32b": 1, "16x64b": 1, "16x128b": 2, "16x256b": 4, "16x32bx2": 1}
_MAX_NUM = {"32x32b": 128, "16x64b": 128, "16x128b": 64, "16x256b": 32, "16x32bx2": 128}


def ld_st_map(shape: str, num: int, *, pack: bool = False, split: int | None = None):
    """(lane_off, col_off), each (32 threads, R registers), relative to ``taddr``.

    R = Table 47 register count.  Thread t, register r (derived from CUTLASS Copy_Traits):
      32x32b    lane t,                        col r
      16x64b    lane t//4 + 8*(t%2),           col (t//2)%2 + 2r
      16x128b   lane t//4 + 8*(r%2),           col t%4 + 4*(r//2)
      16x256b   lane t//4 + 8*((r//2)%2),      col 2*(t%4) + r%2 + 8*(r//4)
      16x32bx2  lane t%16,                     col r + split*(t//16)   (split = immHalfSplitoff;
                                                CUTLASS uses split = num)
    With ``pack`` (.pack::16b / .unpack::16b) every 32-bit register unit covers two adjacent
    columns: the returned col_off is the first of the pair (2*col), low half = that column.
    """
    if shape not in LD_SHAPES:
        raise ValueError(f"shape must be one of {LD_SHAPES}")
    if num not in (1, 2, 4, 8, 16, 32, 64, 128) or num > _MAX_NUM[shape]:
        raise ValueError(f".x{num} is not valid for .{shape} (Table 47)")
    nregs = _REGS_PER_NUM[shape] * num
    t = np.arange(32)[:, None]
    r = np.arange(nregs)[None, :]
    if shape == "32x32b":
        lane, col = t + 0 * r, r + 0 * t
    elif shape == "16x64b":
        lane, col = t // 4 + 8 * (t % 2) + 0 * r, (t // 2) % 2 + 2 * r
    elif shape == "16x128b":
        lane, col = t // 4 + 8 * (r % 2), t % 4 + 4 * (r // 2)
    elif shape == "16x256b":
        lane, col = t // 4 + 8 * ((r // 2) % 2), 2 * (t % 4) + r % 2 + 8 * (r // 4)
    else:
        s = num if split is None else int(split)
        lane, col = t % 16 + 0 * r, r + s * (t // 16)
    if split is not None and shape != "16x32bx2":
        raise ValueError("split (immHalfSplitoff) only exists for .16x32bx2")
    if pack:
        col = 2 * col
    return lane, col


def _ld_st_addresses(shape, num, addr, warp, pack, split):
    lane0, col0 = split_taddr(addr)
    lane_off, col_off = ld_st_map(shape, num, pack=pack, split=split)
    lanes = lane0 + lane_off
    cols = col0 + col_off
    if warp is not None:
        q = warp % 4
        if lanes.min() < 32 * q or lanes.max() >= 32 * q + 32:
            raise ValueError(f"warp {warp} may only access lanes {32 * q}-{32 * q + 31} (9.7.16.8.1)")
    if lanes.max() >= LANES or cols.max() + (1 if pack else 0) >= COLS:
        raise ValueError("tcgen05.ld/st access runs outside tensor memory")
    return lanes, cols


def tcgen05_ld(
    tmem: np.ndarray,
    shape: str,
    num: int,
    addr: int,
    *,
    warp: int | None = None,
    pack: bool = False,
    split: int | None = None,
) -> np.ndarray:
    """Registers (32 threads, R) a warp gets from ``tcgen05.ld.sync.aligned.<shape>.x<num>``."""
    lanes, cols = _ld_st_addresses(shape, num, addr, warp, pack, split)
    if not pack:
        return tmem[lanes, cols].copy()
    lo = tmem[lanes, cols] & 0xFFFF
    hi = tmem[lanes, cols + 1] & 0xFFFF
    return (lo | (hi << 16)).astype(np.uint32)


def tcgen05_st(
    tmem: np.ndarray,
    regs: np.ndarray,
    shape: str,
    num: int,
    addr: int,
    *,
    warp: int | None = None,
    unpack: bool = False,
    split: int | None = None,
) -> np.ndarray:
    """Apply ``tcgen05.st.sync.aligned.<shape>.x<num>`` of registers (32, R) to ``tmem`` (in place).

    With ``unpack`` each register's halves go to the low 16 bits of two adjacent columns (the
    upper 16 bits of those cells are written as 0 -- inference, Figure 193 is missing).
    """
    lanes, cols = _ld_st_addresses(shape, num, addr, warp, unpack, split)
    regs = np.asarray(regs, dtype=np.uint32)
    if regs.shape != lanes.shape:
        raise ValueError(f"expected registers of shape {lanes.shape}")
    if not unpack:
        tmem[lanes, cols] = regs
    else:
        tmem[lanes, cols] = regs & 0xFFFF
        tmem[lanes, cols + 1] = regs >> 16
    return tmem
