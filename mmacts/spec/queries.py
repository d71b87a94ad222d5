"""Typed questions the other layers ask the spec catalog, answered from the transcribed tables.

Why a layer of its own: the YAML keeps the spec's printed form (".kind::mxf4", "E2M1 = 1",
"M x 4"); case generators and encoders want plain values ("mxf4", {"E2M1": 1}, 4). Each function
here reads named tables, canonicalises, and returns frozen dataclasses whose `refs` cite the rows
it used, so a case built from an answer can report exactly which spec rows it covers.

Canonical spellings used in the answers: kinds without '.kind::' ("mxf8f6f4"), types lower case
without the dot ("e4m3", "ue8m0"), scale vector sizes as "scale_vec::1X" / "block32".
All functions take the Catalog as first argument and are bound as Catalog methods.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mmacts.spec.catalog import Catalog, Row


# --------------------------------------------------------------------------------------------- helpers
def canon_kind(s: str) -> str:
    """'.kind::mxf4' / 'kind::mxf4' -> 'mxf4'."""
    return s.strip().lstrip(".").removeprefix("kind::")


def canon_type(s: str) -> str:
    """'.E4M3' / 'e4m3' -> 'e4m3'."""
    return s.strip().lstrip(".").lower()


def canon_scale_vec(s: str) -> str:
    """'.scale_vec::1X' / 'scale_vec::1X' -> 'scale_vec::1X'; '.block32' -> 'block32'."""
    return s.strip().lstrip(".")


def expand_n(spec: dict[str, Any]) -> tuple[int, ...]:
    """N set of the catalog form {list: [...], from, to, step} -> sorted tuple of values."""
    vals = set(spec.get("list", ()))
    if "from" in spec:
        vals.update(range(spec["from"], spec["to"] + 1, spec["step"]))
    return tuple(sorted(vals))


def _as_list(v: Any) -> list[Any]:
    return list(v) if isinstance(v, (list, tuple)) else [v]


def _bits(printed: str) -> tuple[int, int]:
    """'17-22' -> (17, 22); '23' -> (23, 23)."""
    parts = printed.replace("–", "-").split("-")
    return int(parts[0]), int(parts[-1])


def _sf_count(shape: str) -> int:
    """'M x 4' or '4 x N' -> 4."""
    nums = re.findall(r"\d+", shape)
    if len(nums) != 1:
        raise ValueError(f"cannot read a scale-factor count from {shape!r}")
    return int(nums[0])


# --------------------------------------------------------------------------------------------- mma.sync
@dataclass(frozen=True)
class MmaSyncCombo:
    """One valid mma.sync block-scale qualifier combination (Tables 35 and 36)."""

    kind: str
    atype: str
    btype: str
    stype: str
    scale_vec: str
    sf_per_row: int  # columns of scale_A = rows of scale_B (Table 35)
    refs: tuple[str, ...]


def mma_sync_blockscale_combos(cat: Catalog) -> tuple[MmaSyncCombo, ...]:
    """Every (kind, atype, btype, stype, scale_vec) Table 36 allows, with the Table 35 shape.

    Table 36's element-type column lists the types allowed for .atype and .btype; they are
    independent, so each row expands to every ordered pair (25 for mxf8f6f4).
    """
    shapes = {canon_scale_vec(r["scale_vec"]): r for r in cat.table(35)}
    out: list[MmaSyncCombo] = []
    for row in cat.table(36):
        types = [canon_type(t) for t in row["element_types"]]
        for sv in row["scale_vec"]:
            sv_c = canon_scale_vec(sv)
            t35 = shapes[sv_c]
            n = _sf_count(t35["shape_scale_a"])
            for a in types:
                for b in types:
                    out.append(MmaSyncCombo(kind=canon_kind(row["kind"]), atype=a, btype=b,
                                            stype=canon_type(row["stype"]), scale_vec=sv_c, sf_per_row=n,
                                            refs=(row.ref, t35.ref)))
    return tuple(out)


@dataclass(frozen=True)
class MmaSyncSelectors:
    """Valid selector values for one .scale_vec_size (Table 37)."""

    scale_vec: str
    byte_id_a: tuple[int, ...]
    thread_id_a: tuple[int, ...]
    byte_id_b: tuple[int, ...]
    thread_id_b: tuple[int, ...]
    refs: tuple[str, ...]
    inferred: tuple[str, ...]  # selectors read from a merged cell (ambiguity register)


def mma_sync_selectors(cat: Catalog, scale_vec: str) -> MmaSyncSelectors:
    """Valid byte-id / thread-id values for `scale_vec` ('1X', 'scale_vec::2X' or '.scale_vec::4X')."""
    want = scale_vec.strip().lstrip(".")
    if not want.startswith("scale_vec::"):
        want = "scale_vec::" + want
    for row in cat.table(37):
        if canon_scale_vec(row["scale_vec"]) == want:
            return MmaSyncSelectors(
                scale_vec=want, byte_id_a=tuple(row["byte_id_a"]), thread_id_a=tuple(row["thread_id_a"]),
                byte_id_b=tuple(row["byte_id_b"]), thread_id_b=tuple(row["thread_id_b"]), refs=(row.ref,),
                inferred=row.inferred)
    raise KeyError(f"Table 37 has no row for {scale_vec!r}")


# --------------------------------------------------------------------------------------------- tcgen05 shapes
@dataclass(frozen=True)
class Tcgen05Shape:
    """One supported tcgen05.mma shape family from Table 39: fixed kind/ws/cta_group/sparsity/M/K."""

    kind: str
    ws: bool
    cta_group: int
    sparse: bool
    M: int
    N: tuple[int, ...]
    K: int
    dtypes: tuple[str, ...]
    ab_types: tuple[str, ...]
    scale_types: tuple[str, ...]
    refs: tuple[str, ...]


def tcgen05_shapes(cat: Catalog, kind: str | None = None) -> tuple[Tcgen05Shape, ...]:
    """Supported shapes of Table 39 (rows not marked Invalid), one record per (row, M, K).

    A row printing '128xNxK 256xNxK 256xNxK1, K = 64 K1 = 96' gives M=128/K=64, M=256/K=64 and
    M=256/K=96 (K=96 is sm_103a only: S9.7.16.2.1.1).
    """
    out: list[Tcgen05Shape] = []
    for row in cat.table(39):
        v = row.values
        if v.get("invalid") or (kind and canon_kind(v["kind"]) != canon_kind(kind)):
            continue
        pairs = [(m, v["K"]) for m in v["M"]] + [(m, v["K1"]) for m in v.get("M_K1", ())]
        for cta in _as_list(v["cta_group"]):
            for m, k in pairs:
                out.append(Tcgen05Shape(
                    kind=canon_kind(v["kind"]), ws=v["ws"] == ".ws", cta_group=int(cta),
                    sparse=v["sparsity"] == "Sparse", M=m, N=expand_n(v["N"]), K=k,
                    dtypes=tuple(canon_type(t) for t in v["dtype"]),
                    ab_types=tuple(canon_type(t) for t in v["atype_btype"]),
                    scale_types=tuple(canon_type(t) for t in v.get("scale", ())), refs=(row.ref,)))
    return tuple(out)


@dataclass(frozen=True)
class Tcgen05Invalid:
    """A (kind, ws, cta_group, sparsity) combination Table 39 marks Invalid."""

    kind: str
    ws: bool
    cta_group: tuple[int, ...]
    sparse: tuple[bool, ...]
    refs: tuple[str, ...]


def tcgen05_invalid_combos(cat: Catalog) -> tuple[Tcgen05Invalid, ...]:
    """Table 39's Invalid rows, for negative (must-not-assemble / must-not-run) cases."""
    out = []
    for row in cat.table(39):
        v = row.values
        if not v.get("invalid"):
            continue
        sp = {"Dense": (False,), "Sparse": (True,), "Either": (False, True)}[v["sparsity"]]
        out.append(Tcgen05Invalid(kind=canon_kind(v["kind"]), ws=v["ws"] == ".ws",
                                  cta_group=tuple(int(c) for c in _as_list(v["cta_group"])), sparse=sp,
                                  refs=(row.ref,)))
    return tuple(out)


# --------------------------------------------------------------------------------------------- block scaling
@dataclass(frozen=True)
class ScaleVecRule:
    """One valid tcgen05 block-scale combination: Table 54 row x Table 55 row for one kind."""

    kind: str
    scale_vec: str  # as spelled in the instruction: 'scale_vec::2X' or 'block32'
    element_types: tuple[str, ...]  # allowed for A and for B independently
    stype: str
    K: tuple[int, ...]  # the K values this row applies to
    sf_per_row: int  # columns of scale_A = rows of scale_B
    block_size: tuple[int, ...]  # K / sf_per_row for each K (elements sharing one scale)
    aliases: tuple[str, ...]  # other spelling(s) Table 55 pairs with this one
    refs: tuple[str, ...]
    notes: tuple[str, ...] = ()


def _kind_ks(cat: Catalog, kind: str) -> tuple[int, ...]:
    return tuple(sorted({s.K for s in tcgen05_shapes(cat, kind) if not s.ws}))


def scale_vec_rules(cat: Catalog) -> tuple[ScaleVecRule, ...]:
    """Join Tables 54 and 55 (and Table 39 for 'All supported values of K').

    Reading used for K: 'All supported values of K' = the kind's K values in Table 39, except
    that a .scale_vec::NX spelling does not cover K = 96 (the alias prose of S9.7.16.10.9.1 gives
    NX only for K = 64/128; K = 96 has 3 or 6 scale factors, 'semantically equivalent to
    scale_vec::3X / 6X'). That exclusion is recorded in `notes`.
    """
    t55 = list(cat.table(55))
    out: list[ScaleVecRule] = []
    for r54 in cat.table(54):
        spelling = canon_scale_vec(r54["scale_vectorsize"])
        n = _sf_count(r54["shape_scale_a"])
        for kind_p in r54["kinds"]:
            kind = canon_kind(kind_p)
            ks = _kind_ks(cat, kind)
            notes: list[str] = []
            cond = r54["K"]
            if cond == "K = 96":
                kv = tuple(k for k in ks if k == 96)
            elif cond == "All supported values of K except 96":
                kv = tuple(k for k in ks if k != 96)
            elif cond == "All supported values of K":
                kv = ks
                if spelling.startswith("scale_vec::") and 96 in ks:
                    kv = tuple(k for k in ks if k != 96)
                    notes.append("K = 96 excluded for scale_vec::NX (alias prose S9.7.16.10.9.1)")
            else:
                raise ValueError(f"{r54.ref}: unknown K condition {cond!r}")
            for r55 in t55:
                if canon_kind(r55["kind"]) != kind:
                    continue
                for pair in r55["scale_vectorsize"]:
                    spellings = [canon_scale_vec(p) for p in pair]
                    if spelling in spellings:
                        out.append(ScaleVecRule(
                            kind=kind, scale_vec=spelling,
                            element_types=tuple(canon_type(t) for t in r55["element_types"]),
                            stype=canon_type(r55["scale_type"]), K=kv, sf_per_row=n,
                            block_size=tuple(k // n for k in kv),
                            aliases=tuple(s for s in spellings if s != spelling),
                            refs=(r54.ref, r55.ref), notes=tuple(notes)))
    return tuple(out)


# --------------------------------------------------------------------------------------------- ld / st
@dataclass(frozen=True)
class LdStShape:
    """Register count of one tcgen05.ld / tcgen05.st (.shape, .num) combination (Tables 47/48)."""

    op: str  # 'ld' or 'st'
    shape: str  # '.32x32b'
    num: str  # '.x4'
    regs: int
    refs: tuple[str, ...]


def ld_st_shapes(cat: Catalog) -> tuple[LdStShape, ...]:
    """Every allowed (op, shape, num) with its register count; 'NA' cells are left out."""
    out: list[LdStShape] = []
    for op, number in (("ld", 47), ("st", 48)):
        for row in cat.table(number):
            for col, regs in row.values.items():
                if col == "num" or regs is None:
                    continue
                for shape in col.split("/"):
                    out.append(LdStShape(op=op, shape="." + shape.strip().lstrip("."), num=row["num"],
                                         regs=int(regs), refs=(row.ref,)))
    return tuple(out)


# --------------------------------------------------------------------------------------------- transpose / negate
@dataclass(frozen=True)
class TransposeNegate:
    kind: str
    transpose: bool
    negate: bool
    refs: tuple[str, ...]


def transpose_negate(cat: Catalog, kind: str) -> TransposeNegate:
    """Whether `kind` supports the transpose and negate idesc bits (Table 49)."""
    for row in cat.table(49):
        if canon_kind(row["kind"]) == canon_kind(kind):
            return TransposeNegate(canon_kind(kind), bool(row["transpose"]), bool(row["negate"]), (row.ref,))
    raise KeyError(f"Table 49 has no kind {kind!r}")


@dataclass(frozen=True)
class NRule:
    cta_group: int
    N: tuple[int, ...]
    refs: tuple[str, ...]


def transpose_b_n_rule(cat: Catalog) -> tuple[NRule, ...]:
    """Allowed N per cta_group when B is an 8-bit type and transposed (Table 50)."""
    return tuple(NRule(int(r["cta_group"]), expand_n(r["N"]), (r.ref,)) for r in cat.table(50))


# --------------------------------------------------------------------------------------------- descriptors
@dataclass(frozen=True)
class DescField:
    """One bit field of a descriptor.

    Exactly one of `fixed` (reserved / constant), `encodings` (name -> code), `values` (allowed
    integers) or `formula` (e.g. 'N >> 3') says what may go there; `printed` is the spec cell.
    """

    lo: int
    hi: int
    name: str
    printed: str
    fixed: int | None = None
    encodings: dict[str, int] = field(default_factory=dict)
    values: tuple[int, ...] = ()
    formula: str | None = None
    refs: tuple[str, ...] = ()
    ambiguities: tuple[str, ...] = ()

    @property
    def width(self) -> int:
        return self.hi - self.lo + 1


def parse_value_cell(cell: str) -> dict[str, Any]:
    """Read an idesc 'Values' cell: '0', '0 (NA)', '0-3', '0 or 2', 'N >> 3', or 'A = 0 B = 1' lists."""
    c = " ".join(cell.replace("–", "-").replace(";", " ").split())
    if re.fullmatch(r"\d+( \(NA\))?", c):
        return {"fixed": int(c.split()[0])}
    if m := re.fullmatch(r"(\d+)-(\d+)", c):
        return {"values": tuple(range(int(m.group(1)), int(m.group(2)) + 1))}
    if re.fullmatch(r"\d+( or \d+)+", c):
        return {"values": tuple(int(x) for x in c.split(" or "))}
    if re.fullmatch(r"[MN] >> \d+", c):
        return {"formula": c}
    pairs = re.findall(r"(\(.*?\)|[A-Za-z][\w ]*?) = (\d+)", c)
    if pairs:
        return {"encodings": {name.strip().strip("()"): int(v) for name, v in pairs}}
    raise ValueError(f"cannot read idesc value cell {cell!r}")


_IDESC_TABLE = {"tf32": 42, "f16": 42, "f8f6f4": 42, "i8": 42, "mxf8f6f4": 43, "mxf4": 44, "mxf4nvf4": 44}


def idesc_fields(cat: Catalog, kind: str) -> tuple[DescField, ...]:
    """Instruction-descriptor layout for `kind` (Tables 42/43/44 of file 003, cross-read with 001).

    Where 003 and 001 print different values for the same cell, the encodings are the union and
    the field lists the ambiguity id; refs then cite both transcriptions (e.g. 'T44.14@001').
    """
    k = canon_kind(kind)
    number = _IDESC_TABLE[k]
    col = f"kind::{k}"
    alt = cat.table(number, "001")
    out: list[DescField] = []
    for row in cat.table(number):
        lo, hi = _bits(row["bits"])
        parsed = parse_value_cell(row[col])
        refs = [row.ref]
        ambs = [row.ambiguity] if row.ambiguity else []
        alt_row = alt.row(row.index)
        alt_parsed = parse_value_cell(alt_row[col])
        if alt_parsed != parsed:
            refs.append(alt_row.ref)
            if "encodings" in parsed and "encodings" in alt_parsed:
                parsed = {"encodings": {**alt_parsed["encodings"], **parsed["encodings"]}}
        out.append(DescField(lo=lo, hi=hi, name=row["description"], printed=row[col], refs=tuple(refs),
                             ambiguities=tuple(ambs), **parsed))
    return tuple(out)


_SMEM_NAMES = {
    (0, 13): "start_address", (16, 29): "leading_byte_offset", (32, 45): "stride_byte_offset",
    (46, 48): "fixed_0b001", (49, 51): "base_offset", (52, 52): "lbo_mode", (53, 60): "fixed_zero",
    (61, 63): "swizzle",
}


def smem_desc_fields(cat: Catalog) -> tuple[DescField, ...]:
    """Shared-memory descriptor fields (Table 40), short snake_case names, constants decoded.

    The address-like fields hold matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4 (formula);
    bits 53-60 are read as 0 (printed '0xb00000000', ambiguity A10).
    """
    out: list[DescField] = []
    for row in cat.table(40):
        lo, hi = _bits(row["bits"])
        desc = row["description"]
        kw: dict[str, Any] = {}
        if desc.startswith("matrix-descriptor-encode"):
            kw["formula"] = "(x & 0x3FFFF) >> 4"
        elif "0b001" in desc:
            kw["fixed"] = 0b001
        elif "0xb00000000" in desc:
            kw["fixed"] = 0
        elif lo == 52:
            kw["encodings"] = {"byte offset relative": 0, "byte address absolute": 1}
        elif lo == 61:
            kw["encodings"] = {m.group(2).strip(): int(m.group(1))
                               for m in re.finditer(r"(\d)\. ([^.]*?)(?= \d\.| Note|$)", desc)}
        else:
            kw["values"] = tuple(range(1 << (hi - lo + 1)))
        out.append(DescField(lo=lo, hi=hi, name=_SMEM_NAMES[(lo, hi)], printed=desc, refs=(row.ref,),
                             ambiguities=(row.ambiguity,) if row.ambiguity else (), **kw))
    return tuple(out)


@dataclass(frozen=True)
class SwizzleMode:
    code: int  # value of smem descriptor bits 61-63
    name: str
    pattern_bytes: int | None  # repeating-pattern alignment (Table 41); None for no swizzling
    refs: tuple[str, ...]


def smem_swizzle_modes(cat: Catalog) -> tuple[SwizzleMode, ...]:
    """Swizzle codes of Table 40 joined with Table 41's pattern alignment (by swizzle width)."""
    sw = next(f for f in smem_desc_fields(cat) if f.name == "swizzle")
    starts = {int(re.match(r"(\d+)", r["swizzle"]).group(1)): r for r in cat.table(41)}
    out = []
    for name, code in sorted(sw.encodings.items(), key=lambda kv: kv[1]):
        m = re.match(r"(\d+)-Byte", name)
        width = int(m.group(1)) if m else None
        if width == 128 and "32B atomic" in name:
            t41 = None  # Table 41 does not say where the 32B-atomic 128B pattern starts
        else:
            t41 = starts.get(width) if width else None
        pattern = int(re.match(r"(\d+)", t41["pattern_start"]).group(1)) if t41 else None
        out.append(SwizzleMode(code=code, name=name, pattern_bytes=pattern,
                               refs=sw.refs + ((t41.ref,) if t41 else ())))
    return tuple(out)


def zero_column_mask_fields(cat: Catalog) -> tuple[DescField, ...]:
    """Zero-column mask descriptor fields (Table 45) with snake_case names (sc0, fs0, skip_span ...)."""
    out: list[DescField] = []
    for row in cat.table(45):
        lo, hi = _bits(row["bits"])
        field_name = row["field"]
        m = re.search(r"\((\w+)\)", field_name)
        name = m.group(1) if m else field_name.lower().replace("-", "_").replace(" ", "_")
        kw: dict[str, Any] = {"fixed": 0} if field_name == "Reserved" else {"values": tuple(range(1 << (hi - lo + 1)))}
        out.append(DescField(lo=lo, hi=hi, name=name, printed=row["description"], refs=(row.ref,),
                             ambiguities=(row.ambiguity,) if row.ambiguity else (), **kw))
    return tuple(out)


# --------------------------------------------------------------------------------------------- datapath
@dataclass(frozen=True)
class DatapathLayout:
    layout: str  # 'A'..'G'
    M: int
    cta_group: int
    sparsity: str  # 'Dense', 'Sparse' or 'Either'
    ws: str  # 'Yes', 'No', 'Either' or 'N/A'
    organization: str
    lane_alignment: tuple[int, ...]
    refs: tuple[str, ...]


def datapath_layouts(cat: Catalog) -> tuple[DatapathLayout, ...]:
    """Tensor Memory datapath layouts A-G (S9.7.16.10.5)."""
    rule = cat.rule("datapath_layouts")
    return tuple(DatapathLayout(layout=d["layout"], M=d["M"], cta_group=int(d["cta_group"].strip(":")),
                                sparsity=d["sparsity"], ws=d["ws"], organization=d["organization"],
                                lane_alignment=tuple(d["lane_alignment"]), refs=(rule.ref,))
                 for d in rule.data["layouts"])


def rows_citing(cat: Catalog, ambiguity_id: str) -> tuple[Row, ...]:
    """Rows that name `ambiguity_id` (what a probe result would confirm or overturn)."""
    return tuple(r for r in cat.rows(include_variants=True) if r.ambiguity == ambiguity_id)
