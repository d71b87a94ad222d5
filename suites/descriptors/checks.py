"""The known-answer checks of the descriptor tables (Tables 40, 42, 45, 53 and 9.7.16.3.3).

Each check has three parts kept apart on purpose:

* ``make``  -- the device inputs: descriptor words and shared-memory images, composed field by
  field at the positions the catalog rows give (``spec_readings``), the way a kernel author
  following the spec would write them;
* ``want``  -- the answer written from the spec text (a literal value, a printed example, the
  layout a table or a CuTe expression states), never computed by the code under test;
* ``run``   -- what the INDEPENDENT decoders of ``reference/tcgen05`` (``idesc.decode_idesc``,
  ``smem_desc.decode_smem_desc``, ``zero_col_mask.generate_mask``/``sub_masks``,
  ``smem_image.decode_operand``) produce from those inputs. The model backend runs this.

Outputs are small integer arrays (exact in float32, which the comparison uses).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from reference.tcgen05 import idesc as ID
from reference.tcgen05 import smem_desc as SD
from reference.tcgen05 import smem_image as SI
from reference.tcgen05 import zero_col_mask as ZC
from reference.tcgen05.smem_image import decode_operand
from suites.descriptors import spec_readings as R
from suites.tcgen05_blockscale.cases import smem_walk_rows


@dataclass(frozen=True)
class Check:
    """One known-answer check (one case)."""

    name: str
    rows: tuple[str, ...]
    make: Callable[[], dict[str, Any]]
    want: Callable[[], np.ndarray]
    run: Callable[[dict[str, Any]], np.ndarray]
    carrier: str = "smem"
    """Which descriptor a hardware kernel would pass: ``smem`` (a/b-desc), ``idesc:<kind>``, ``zcm``."""
    level: str = "standard"
    arch: str = "sm_100a"
    note: str = ""
    xfail: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


# =============================================================================================
# Table 40: field placement of the shared-memory descriptor

SDESC_COLUMNS = ("decodable", "start", "lbo", "sbo", "fixed_46_48", "base_offset", "lbo_mode", "fixed_53_60",
                 "swizzle_code", "strict_ok")
_SDESC_DEFAULT = dict(decodable=1, start=0, lbo=0, sbo=0, fixed_46_48=1, base_offset=0, lbo_mode=0,
                      fixed_53_60=0, swizzle_code=0, strict_ok=1)


def sdesc_vector(word: int) -> list[int]:
    """decode_smem_desc(word) as the columns ``SDESC_COLUMNS``; an undecodable word -> 0, then -1s.
    ``swizzle_code`` maps the decoder's mode name back through Table 40's list (``R.SWIZZLE_CODE``),
    so a decoder that named code 1 "128B" would show 2 here."""
    try:
        d = SD.decode_smem_desc(word)
    except ValueError:
        return [0] + [-1] * (len(SDESC_COLUMNS) - 1)
    try:
        SD.decode_smem_desc(word, strict=True)
        strict = 1
    except ValueError:
        strict = 0
    return [1, d.start_address, d.lbo, d.sbo, d.fixed_46_48, d.base_offset, int(d.lbo_absolute), d.fixed_53_60,
            R.SWIZZLE_CODE.get(d.swizzle, -2), strict]


def _sdesc_want(*rows: dict[str, int]) -> Callable[[], np.ndarray]:
    def want() -> np.ndarray:
        out = []
        for r in rows:
            if r.get("decodable", 1) == 0:
                out.append([0] + [-1] * (len(SDESC_COLUMNS) - 1))
            else:
                v = dict(_SDESC_DEFAULT, **r)
                out.append([v[c] for c in SDESC_COLUMNS])
        return np.array(out, dtype=np.float64)
    return want


def _sdesc_check(ref: str, tag: str, words: list[dict[str, int]], wants: list[dict[str, int]], *,
                 level: str = "standard", note: str = "") -> Check:
    def make() -> dict[str, Any]:
        return {"words": [R.smem_desc_word(**w) for w in words]}

    def run(inp: dict[str, Any]) -> np.ndarray:
        return np.array([sdesc_vector(w) for w in inp["words"]], dtype=np.float64)

    return Check(f"smem_desc.{ref}.{tag}", (ref,), make, _sdesc_want(*wants), run, level=level, note=note)


def table40_checks() -> list[Check]:
    full14 = R.ones("T40.1")
    return [
        _sdesc_check("T40.1", "start-address", [dict(start=0x3FFF0), dict(start=0x23450), dict(start=0x43450)],
                     [dict(start=full14 << 4), dict(start=0x23450), dict(start=0x03450)],
                     note="bits 0-13 hold matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4: byte address = field*16, "
                          "modulo 2^18"),
        _sdesc_check("T40.2", "leading-byte-offset",
                     [dict(lbo_field=R.ones("T40.2")), dict(lbo_field=16), dict(lbo_field=1)],
                     [dict(lbo=R.ones("T40.2") << 4), dict(lbo=256), dict(lbo=16)],
                     note="Figure 188: LBO = 64*sizeof(tf32) = 256 B, encoded 16; swizzled K-major 'assumed 1' = 16 B"),
        _sdesc_check("T40.3", "stride-byte-offset",
                     [dict(sbo_field=R.ones("T40.3")), dict(sbo_field=8), dict(sbo_field=64)],
                     [dict(sbo=R.ones("T40.3") << 4), dict(sbo=128), dict(sbo=1024)],
                     note="Figures 188/192: SBO 128 B encoded 8, 1024 B encoded 64"),
        _sdesc_check("T40.4", "fixed-0b001",
                     [dict(fixed_46_48=v) for v in (0b001, 0b000, 0b010, 0b100, 0b111)],
                     [dict(fixed_46_48=1), *(dict(fixed_46_48=v, strict_ok=0) for v in (0, 2, 4, 7))],
                     note="bits 46-48 must be 0b001: any other value is not a valid descriptor (strict decode)"),
        _sdesc_check("T40.5", "base-offset", [dict(base_offset=v, swizzle=2) for v in range(8)],
                     [dict(base_offset=v, swizzle_code=2) for v in range(8)]),
        _sdesc_check("T40.6", "lbo-mode", [dict(lbo_mode=0, swizzle=2), dict(lbo_mode=1, swizzle=2)],
                     [dict(lbo_mode=0, swizzle_code=2), dict(lbo_mode=1, swizzle_code=2)],
                     note="bit 52: 0 = LBO is a relative byte offset, 1 = an absolute byte address"),
        _sdesc_check("T40.7", "fixed-zero",
                     [dict(fixed_53_60=v) for v in (0, 0xFF, 0x01, 0x80)],
                     [dict(), dict(fixed_53_60=0xFF, strict_ok=0), dict(fixed_53_60=1, strict_ok=0),
                      dict(fixed_53_60=0x80, strict_ok=0)],
                     note="'0xb00000000' read as 0b00000000 (register AMB-SDESC-53-60, reading 'zero')"),
        _sdesc_check("T40.8", "swizzle-codes", [dict(swizzle=v) for v in range(8)],
                     [dict(swizzle_code=v) if v in (0, 1, 2, 4, 6) else dict(decodable=0) for v in range(8)],
                     level="smoke", note="0 none, 1 128B/32B atoms, 2 128B, 4 64B, 6 32B; 3, 5, 7 invalid"),
    ]


# =============================================================================================
# Shared-memory operands: the worked examples of 9.7.16.3.3 and the Table 53 atoms

ELEM_BYTES = {"b8": 1, "b16": 2, "b32": 4}


def _image(addresses: np.ndarray, tags: np.ndarray, elem_bytes: int) -> np.ndarray:
    """Shared-memory bytes holding ``tags`` (little endian) at ``addresses`` (MN, K, elem_bytes)."""
    flat = addresses.reshape(-1)
    if np.unique(flat).size != flat.size:
        raise ValueError("layout is not injective: two elements share a byte")
    smem = np.zeros(int(flat.max()) + 1, dtype=np.uint8)
    shifts = 8 * np.arange(elem_bytes)
    smem[addresses] = (tags[..., None].astype(np.int64) >> shifts) & 0xFF
    return smem


def _tag_planes(mn: int, k: int) -> np.ndarray:
    """(2, MN, K): the MN index and the K index of every element (each plane fits one byte here)."""
    g_mn, g_k = np.meshgrid(np.arange(mn), np.arange(k), indexing="ij")
    return np.stack([g_mn, g_k])


def _decode_planes(inp: dict[str, Any]) -> np.ndarray:
    return np.stack([SI.decode_operand(img, inp["word"], mn=inp["mn"], k=inp["k"], major=inp["major"],
                                       elem=inp["elem"]).astype(np.int64) for img in inp["images"]])


@dataclass(frozen=True)
class Example:
    """A worked example of 9.7.16.3.3: the exact CuTe layout and the encodings its table prints."""

    figure: int
    major: str
    swizzle: str
    elem: str
    shape: tuple
    stride: tuple
    lbo_field: int
    sbo_field: int
    swizzle_b: int
    note: str = ""


EXAMPLES: tuple[Example, ...] = (
    Example(188, "K", "none", "b32", ((8, 2), (4, 4)), ((4, 32), (1, 64)), 16, 8, 0),
    # Printed: ((8,2),(4,4)):((8,64),(1,4)) with k = 2 -- not injective (K chunks 2-3 land on the
    # next row: a 32-byte row holds 2 chunks). Checked on the first K atom, (4,2):(1,4), where it is.
    Example(189, "K", "32B", "b32", ((8, 2), (4, 2)), ((8, 64), (1, 4)), 1, 16, 1,
            note="K restricted to the first 32-byte swizzle row: the printed layout with k = 2 maps two "
                 "elements to one byte (finding, see the suite docstring)"),
    Example(190, "MN", "none", "b16", ((8, 1, 2), (8, 2)), ((1, 8, 64), (8, 128)), 16, 8, 0),
    Example(191, "MN", "32B", "b16", ((8, 2, 2), (8, 2)), ((1, 8, 128), (16, 256)), 16, 32, 1),
    Example(192, "MN", "64B", "b16", ((8, 4, 2), (8, 2)), ((1, 8, 256), (32, 512)), 32, 64, 2),
)
EXAMPLE_START = 2048
"""Where the examples' tiles start (a 1024-byte boundary: the swizzle phase is the offset's)."""


def _example_check(ex: Example) -> Check:
    eb = ELEM_BYTES[ex.elem]
    off = R.cute_offsets(ex.shape, ex.stride)  # (MN, K) element offsets
    mn, k = off.shape

    def addresses() -> np.ndarray:
        byte = off[..., None] * eb + np.arange(eb)
        return EXAMPLE_START + R.swizzle_bytes(byte, ex.swizzle_b)

    def make() -> dict[str, Any]:
        word = R.smem_desc_word(start=EXAMPLE_START, lbo_field=ex.lbo_field, sbo_field=ex.sbo_field,
                                swizzle=R.SWIZZLE_CODE[ex.swizzle])
        tags = 1 + np.arange(mn * k).reshape(mn, k)
        return {"word": word, "images": [_image(addresses(), tags, eb)], "mn": mn, "k": k,
                "major": ex.major, "elem": ex.elem}

    def want() -> np.ndarray:
        return (1 + np.arange(mn * k).reshape(1, mn, k)).astype(np.float64)

    rows = ["T40.1", "T40.3", "T40.8"]
    if ex.lbo_field != 1:
        rows[1:1] = ["T40.2", "T40.6"]
    name = f"canonical.fig{ex.figure}-{ex.major}-{ex.swizzle}-{ex.elem}"
    note = ex.note or f"Figure {ex.figure}: Swizzle<{ex.swizzle_b},4,3> o {ex.shape}:{ex.stride}"
    return Check(name, (*rows, "S9.7.16.3.3"), make, want, _decode_planes,
                 level="smoke" if ex.figure == 188 else "standard", note=note)


def example_checks() -> list[Check]:
    return [_example_check(ex) for ex in EXAMPLES]


T53_ELEMS: dict[int, tuple[str, ...]] = {
    # Table 52: 32-bit MN-major only with 32-byte atoms; 8/16-bit MN-major with every other mode;
    # K-major every size and mode.
    1: ("b32",), 3: ("b8", "b16"), 4: ("b8", "b16", "b32"), 5: ("b8", "b16"), 6: ("b8", "b16", "b32"),
    7: ("b8", "b16"), 8: ("b8", "b16", "b32"), 9: ("b8", "b16"), 10: ("b8", "b16", "b32"),
}


def _atom_check(index: int, elem: str) -> Check:
    ref = f"T53.{index}"
    eb = ELEM_BYTES[elem]

    def plan() -> R.AtomTile:
        return R.atom_plan(R.atom_of(ref), eb)

    def make() -> dict[str, Any]:
        t = plan()
        word = R.smem_desc_word(start=t.base, lbo_field=t.lbo >> 4, sbo_field=t.sbo >> 4,
                                swizzle=R.SWIZZLE_CODE[t.atom.swizzle])
        addr = t.addresses()
        images = [_image(addr, plane, eb) for plane in _tag_planes(t.mn, t.k)]
        return {"word": word, "images": images, "mn": t.mn, "k": t.k, "major": t.atom.major, "elem": elem}

    def want() -> np.ndarray:
        t = plan()
        return _tag_planes(t.mn, t.k).astype(np.float64)

    t = plan()
    a = t.atom
    rows = (ref, "S9.7.16.10.6", *smem_walk_rows(a.major, a.swizzle, t.rows, t.row_bytes))
    return Check(f"swizzle_atom.{ref}.{a.major}-{a.swizzle}-{elem}", rows, make, want, _decode_planes,
                 level="smoke" if (index, elem) == (4, "b8") else "standard",
                 note=f"atom {row_text(ref)}: {a.rows} rows x {a.width} B, {a.atomicity}-byte units; "
                      f"tile {t.rows} x {t.row_bytes} B, LBO {t.lbo} B, SBO {t.sbo} B")


def row_text(ref: str) -> str:
    v = R.row(ref).values
    return f"{v['swizzle']} / {v['leading_dimension']} / {v['atom']}"


def atom_checks() -> list[Check]:
    return [_atom_check(i, e) for i, elems in T53_ELEMS.items() for e in elems]


def t53_k_major_32b_atom_check() -> Check:
    """Table 53 row 2: the 128B swizzle with 32-byte atoms has no K-major layout, so the decoder
    must refuse such a descriptor rather than read some layout (result 1 = refused)."""

    def make() -> dict[str, Any]:
        word = R.smem_desc_word(start=0, lbo_field=1, sbo_field=1024 >> 4, swizzle=R.SWIZZLE_CODE["128B_base32B"])
        return {"word": word}

    def run(inp: dict[str, Any]) -> np.ndarray:
        try:
            decode_operand(np.zeros(4096, np.uint8), inp["word"], mn=8, k=32, major="K", elem="b8")
        except ValueError:
            return np.array([1.0])
        return np.array([0.0])

    return Check("swizzle_atom.T53.2.K-128B_base32B.refused", ("T53.2",), make, lambda: np.array([1.0]), run,
                 note="no K-major layout exists for the 128B-with-32B-atom swizzle (Table 53 row 2)")


def absolute_lbo_check() -> Check:
    """9.7.16.3.1.2: K = 48 B K-major with 128B swizzle, the row split at the 128-byte boundary.

    Reading (the spec only says the LBO address "can point to the second data chunk"): the first
    chunk is the bytes from the start address to the end of its 128-byte row, the second chunk has
    the same row structure (8 rows of 128 B, 8-row groups SBO apart) from the LBO address.
    """
    start, second, sbo, rows, kbytes = 1024 + 96, 4096, 1024, 16, 48

    def addresses() -> np.ndarray:
        r, b = np.meshgrid(np.arange(rows), np.arange(kbytes), indexing="ij")
        row_term = (r % 8) * 128 + (r // 8) * sbo
        first = b < 128 - start % 128
        addr = np.where(first, start + row_term + b, second + row_term + (b - (128 - start % 128)))
        return R.swizzle_bytes(addr, 3)[..., None]  # both chunks start on 1024-byte boundaries

    def make() -> dict[str, Any]:
        word = R.smem_desc_word(start=start, lbo_field=R.matrix_descriptor_encode(second), sbo_field=sbo >> 4,
                                lbo_mode=1, swizzle=R.SWIZZLE_CODE["128B"])
        images = [_image(addresses(), plane, 1) for plane in _tag_planes(rows, kbytes)]
        return {"word": word, "images": images, "mn": rows, "k": kbytes, "major": "K", "elem": "b8"}

    return Check("absolute_lbo.K48B-128B-b8", ("T40.2", "T40.6", "S9.7.16.3.1"), make,
                 lambda: _tag_planes(rows, kbytes).astype(np.float64), _decode_planes, arch="sm_103a",
                 note="absolute LBO mode (sm_103a): second 16-byte chunk of each row at the LBO address; "
                      "within-chunk row structure is a reading (cutlass-facts §4.5)")


# =============================================================================================
# Table 42: per-kind instruction-descriptor fields

T42_DECODER_FIELD: dict[int, str] = {
    1: "sparsity_selector", 2: "sparse", 3: "saturate", 4: "dtype", 6: "atype", 7: "btype", 8: "negate_a",
    9: "negate_b", 10: "transpose_a", 11: "transpose_b", 12: "n", 14: "m", 16: "max_shift",
}
"""Row -> decode_idesc key, from each row's description; the Reserved rows read ``reserved_bits``."""


def _idesc_check(index: int, kind: str) -> Check:
    ref = f"T42.{index}"
    lo, width = R.field_bits(ref)
    cell = R.t42_cell(index, kind)
    reserved = R.t42_is_reserved(index)

    def make() -> dict[str, Any]:
        base = R.t42_base_word(kind) & ~(((1 << width) - 1) << lo)
        return {"words": [base | R.put(ref, v) for v in range(1 << width)]}

    def run(inp: dict[str, Any]) -> np.ndarray:
        out = []
        for w in inp["words"]:
            d = ID.decode_idesc(kind, w)
            val = d["reserved_bits"] if reserved else d[T42_DECODER_FIELD[index]]
            if cell.values is None:
                out.append([val])
                continue
            try:
                ID.decode_idesc(kind, w, strict=True)
                ok = 1
            except ValueError:
                ok = 0
            out.append([val, ok])
        return np.array(out, dtype=np.float64)

    def want() -> np.ndarray:
        v = np.arange(1 << width)
        if cell.values is None:
            return (v << cell.shift)[:, None].astype(np.float64)
        decoded = (v << lo) if reserved else v
        ok = np.isin(v, sorted(cell.values))
        return np.stack([decoded, ok], axis=1).astype(np.float64)

    desc = str(R.row(ref).values["description"])
    cell_text = R.row(ref).values[f"kind::{kind}"]
    return Check(f"idesc.{ref}.{kind}", (ref,), make, want, run, carrier=f"idesc:{kind}",
                 level="smoke" if (index, kind) == (6, "f8f6f4") else "standard",
                 note=f"bits {lo}-{lo + width - 1} '{desc}', kind::{kind}: '{cell_text}'; every raw value decoded, "
                      "strict decode accepts exactly the listed ones")


def table42_checks() -> list[Check]:
    return [_idesc_check(i, k) for i in R.T42_ROWS for k in R.T42_KINDS]


# =============================================================================================
# Table 45: zero-column mask descriptor

ZCM_COLUMNS = ("sc0", "sc1", "sc2", "sc3", "fs0", "fs1", "fs2", "fs3", "non_zero_mask", "skip_span", "use_span",
               "column_shift", "reserved")
_ZCM_ROW_COLUMN = {**{i: i - 1 for i in range(1, 9)}, 10: 8, 11: 9, 12: 10, 13: 11, 9: 12}


def zcm_vector(word: int) -> list[int]:
    f = ZC.decode_zero_col_mask(word)
    return [*f["start_counts"], *f["first_spans"], f["non_zero_mask"], f["skip_span"], f["use_span"],
            f["column_shift"], f["reserved"]]


def _zcm_field_check(index: int) -> Check:
    ref = f"T45.{index}"
    lo, width = R.field_bits(ref)

    def want() -> np.ndarray:
        v = [0] * len(ZCM_COLUMNS)
        v[_ZCM_ROW_COLUMN[index]] = (R.ones(ref) << lo) if index == 9 else R.ones(ref)
        return np.array([v], dtype=np.float64)

    return Check(f"zcm.{ref}.field", (ref,), lambda: {"word": R.put(ref, R.ones(ref))}, want,
                 lambda inp: np.array([zcm_vector(inp["word"])], dtype=np.float64), carrier="zcm",
                 note=f"bits {lo}-{lo + width - 1} all ones: only '{R.row(ref).values['field']}' reads them")


@dataclass(frozen=True)
class ZcmExample:
    """One worked example of 9.7.16.4.3, fields as printed ({sc3, sc2, sc1, sc0} order reversed
    into index order here) and the printed output masks (MSB first, low bits only)."""

    number: int
    m: int
    n: int
    start_counts: tuple[int, int, int, int]
    first_spans: tuple[int, int, int, int]
    non_zero_mask: int
    skip_span: int
    use_span: int
    shift: int
    masks: tuple[str, ...]
    rows: tuple[str, ...]


ZCM_EXAMPLES: tuple[ZcmExample, ...] = (
    ZcmExample(1, 128, 64, (0, 0, 0, 0), (0, 0, 0, 0), 0, 4, 3, 0, ("0x0",), ("T45.10",)),
    ZcmExample(2, 128, 64, (0, 0, 0, 0), (0, 0, 0, 0), 1, 2, 3, 0, ("0b … 111 0000 111 0000",),
               ("T45.1", "T45.5", "T45.10", "T45.11", "T45.12")),
    ZcmExample(3, 64, 64, (0, 0, 0, 0), (1, 0, 0, 0), 1, 2, 3, 0,
               ("0b … 111 0000 111 0000 111", "0b … 0000 111 0000 111 0000"),
               ("T45.1", "T45.2", "T45.5", "T45.6", "T45.10", "T45.11", "T45.12")),
    ZcmExample(4, 32, 128, (0, 1, 2, 1), (1, 1, 0, 0), 1, 2, 3, 2,
               ("0b … 0000 111 0000 111", "0b … 0000 111 0000 11", "0b … 111 0000 111 00",
                "0b … 111 0000 111 000"),
               tuple(f"T45.{i}" for i in (1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13))),
)


def _zcm_example_check(ex: ZcmExample, *, reading_masks: tuple[str, ...] | None = None, tag: str = "",
                       rows: tuple[str, ...] | None = None, xfail: str = "", note: str = "") -> Check:
    masks = reading_masks or ex.masks

    def make() -> dict[str, Any]:
        return {"word": R.zcm_word(start_counts=ex.start_counts, first_spans=ex.first_spans,
                                   non_zero_mask=ex.non_zero_mask, skip_span=ex.skip_span, use_span=ex.use_span,
                                   column_shift=ex.shift)}

    def run(inp: dict[str, Any]) -> np.ndarray:
        w = inp["word"]
        if masks == ("0x0",):
            parts = [ZC.generate_mask(w, ex.m, ex.n)]
        else:
            subs = ZC.sub_masks(w, ex.m, ex.n)
            parts = [s[:len(R.printed_bits(t))] for s, t in zip(subs, masks, strict=False)]
        if ex.shift:
            parts.append(ZC.b_columns(w, ex.n))
        return np.concatenate([np.asarray(p, dtype=np.float64) for p in parts])

    def want() -> np.ndarray:
        if masks == ("0x0",):
            parts = [np.zeros(ex.n)]
        else:
            parts = [R.printed_bits(t) for t in masks]
        if ex.shift:  # "If N = 128 then B Matrix with columns from 2 to 129 will be used"
            parts.append(np.arange(ex.shift, ex.shift + ex.n))
        return np.concatenate([np.asarray(p, dtype=np.float64) for p in parts])

    return Check(f"zcm.example{ex.number}{tag}.M{ex.m}N{ex.n}", (*(rows or ex.rows), "S9.7.16.4.3"), make, want,
                 run, carrier="zcm", level="smoke" if ex.number == 4 and not tag else "standard", xfail=xfail,
                 note=note or f"Example {ex.number}: printed masks {masks}")


def table45_checks() -> list[Check]:
    out = [_zcm_field_check(i) for i in range(1, 14)]
    out += [_zcm_example_check(ex) for ex in ZCM_EXAMPLES]
    # Table 45's descriptions of Skip/Use Span, applied to Example 2's fields: Skip Span + 1 = 3 used
    # (0-bit) columns, Use Span + 1 = 4 zeroed (1-bit) columns, fs0 = 0 -> a 0-run first. The
    # examples print the opposite; the decoder follows the examples (AMB-ZCM-SPAN).
    out.append(_zcm_example_check(ZCM_EXAMPLES[1], reading_masks=("0b … 1111 000 1111 000",),
                                  tag="-table-descriptions", rows=("T45.11", "T45.12"), xfail="AMB-ZCM-SPAN",
                                  note="Table 45 text reading of Skip/Use Span (contradicts Example 2)"))
    return out


def all_checks() -> list[Check]:
    """Every check, in a fixed order (case IDs are the names)."""
    out = (table40_checks() + example_checks() + atom_checks() + [t53_k_major_32b_atom_check(), absolute_lbo_check()]
           + table42_checks()
           + table45_checks())
    names = [c.name for c in out]
    if len(set(names)) != len(names):
        raise AssertionError("duplicate check names")
    return out
