"""The spec catalog: the PTX ISA tables and prose rules as typed, provenance-carrying data.

Why: every case the suite runs must say which spec row it covers (`T54.3`, `S9.7.16.10.5`), and
every test expectation must trace back to a line of the spec text. The tables live as YAML in
`data/` (one file per table, written by hand from `data/spec_text/`); this module loads them,
validates them (a malformed file fails loudly, naming file and row), and hands out frozen
dataclasses. Typed convenience queries live in `queries.py` and are bound as `Catalog` methods.

Row numbering: rows are numbered from 1 in the order the spec prints them; header lines are not
rows, and a printed line with no cell text at all (a lone "|") is not a row. A row that continues
cells from a row above (merged cells) states the filled-in values explicitly and lists them
under `inferred` (column -> row ref it came from).

    from mmacts.spec.catalog import load
    cat = load()
    cat.table(36).rows[0].values["kind"]      # '.kind::mxf8f6f4'
    cat.row("T37.2").inferred                 # ('thread_id_a', 'thread_id_b')
    cat.archs_for("tcgen05.shift")            # ('sm_100a', 'sm_101a', 'sm_110a', 'sm_103a')
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from mmacts.spec import queries

DATA_DIR = Path(__file__).resolve().parent / "data"
SPEC_TEXT_DIR = DATA_DIR / "spec_text"
TABLES_DIR = DATA_DIR / "tables"

_REF_RE = re.compile(r"^T(\d+)\.(\d+)(?:@(\w+))?$")


class CatalogError(ValueError):
    """A data file of the catalog is malformed; the message names the file and the row."""


# --------------------------------------------------------------------------------------------- types
@dataclass(frozen=True)
class Row:
    """One printed row of a spec table.

    `values` holds every cell (filled in where the spec merges cells); `inferred` names the
    columns whose value was not printed on this row but continued from `inferred_from[col]`.
    """

    ref: str
    table: int
    index: int
    values: dict[str, Any]
    source: str
    source_line: int
    source_line_end: int
    inferred: tuple[str, ...] = ()
    inferred_from: dict[str, str] = field(default_factory=dict)
    note: str | None = None
    ambiguity: str | None = None
    variant: str | None = None

    def __getitem__(self, column: str) -> Any:
        return self.values[column]

    def get(self, column: str, default: Any = None) -> Any:
        return self.values.get(column, default)


@dataclass(frozen=True)
class Table:
    """A spec table: caption, provenance, column docs and its rows (in printed order)."""

    number: int
    title: str
    source: str
    section: str
    caption_line: int
    columns: tuple[str, ...]
    column_docs: dict[str, str]
    rows: tuple[Row, ...]
    variant: str | None = None
    also_in: tuple[dict[str, Any], ...] = ()
    printed_as: dict[str, dict[Any, str]] = field(default_factory=dict)

    def row(self, index: int) -> Row:
        """Row by its printed number (1-based)."""
        if not 1 <= index <= len(self.rows):
            raise KeyError(f"Table {self.number} has rows 1..{len(self.rows)}, not {index}")
        return self.rows[index - 1]

    def __iter__(self) -> Iterator[Row]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)


@dataclass(frozen=True)
class SectionRule:
    """A rule stated in prose or an unnumbered table, cited as `S<section>`."""

    id: str
    ref: str
    source: str
    source_line: int
    source_line_end: int
    title: str
    data: Any
    inference: str | None = None
    ambiguity: str | None = None

    @property
    def section(self) -> str:
        return self.ref[1:]


@dataclass(frozen=True)
class ArchEntry:
    """One bullet of a Target ISA note (e.g. 'sm_100f or higher in the same family from 8.8')."""

    arch: str
    family: bool = False
    from_ptx: str | None = None
    renamed_to: str | None = None
    renamed_in_ptx: str | None = None
    except_: tuple[str, ...] = ()


@dataclass(frozen=True)
class TargetNote:
    """Which architectures and which minimum PTX ISA version support one instruction/qualifier."""

    subject: str
    archs: tuple[str, ...]
    ptx_isa: str | None
    ref: str
    source: str
    source_line: int
    source_line_end: int
    ptx_line: int | None
    entries: tuple[ArchEntry, ...]
    note: str | None = None


@dataclass(frozen=True)
class Ambiguity:
    """An entry of the ambiguity register (data/ambiguities.yaml)."""

    id: str
    place: tuple[str, ...]
    summary: str
    readings: tuple[str, ...]
    sources: tuple[str, ...]
    probe: str


# --------------------------------------------------------------------------------------------- catalog
class Catalog:
    """All tables, section rules, target notes and ambiguities, indexed for lookup."""

    def __init__(
        self,
        tables: dict[tuple[int, str | None], Table],
        rules: tuple[SectionRule, ...],
        notes: tuple[TargetNote, ...],
        ambiguities: tuple[Ambiguity, ...],
        data_dir: Path,
    ) -> None:
        self._tables = tables
        self._rules = rules
        self._notes = notes
        self._ambiguities = ambiguities
        self.data_dir = data_dir
        self._rows = {r.ref: r for t in tables.values() for r in t.rows}

    # ---- tables and rows
    def table(self, number: int, variant: str | None = None) -> Table:
        """Table `number` as printed in the chapter file; `variant="001"` for the file-001 copy."""
        try:
            return self._tables[(number, variant)]
        except KeyError:
            raise KeyError(f"no Table {number}" + (f" variant {variant}" if variant else "")) from None

    def tables(self, include_variants: bool = False) -> list[Table]:
        return [t for (n, v), t in sorted(self._tables.items(), key=lambda kv: (kv[0][0], kv[0][1] or ""))
                if include_variants or v is None]

    def rows(self, include_variants: bool = False) -> list[Row]:
        """Every row of every table (primary transcriptions; variants on request)."""
        return [r for t in self.tables(include_variants) for r in t.rows]

    def row(self, ref: str) -> Row:
        """Row by reference, e.g. 'T36.1' (or 'T44.14@001' for the file-001 transcription)."""
        try:
            return self._rows[ref]
        except KeyError:
            raise KeyError(f"no row {ref!r}") from None

    def has_ref(self, ref: str) -> bool:
        """True for a known row ref ('T54.3') or a section cited by a rule or note ('S9.7.16.10.5')."""
        if ref in self._rows:
            return True
        return any(r.ref == ref for r in self._rules) or any(n.ref == ref for n in self._notes)

    # ---- prose rules
    def section_rules(self) -> list[SectionRule]:
        return list(self._rules)

    def rule(self, rule_id: str) -> SectionRule:
        for r in self._rules:
            if r.id == rule_id:
                return r
        raise KeyError(f"no section rule {rule_id!r}")

    # ---- target notes
    def target_notes(self) -> list[TargetNote]:
        return list(self._notes)

    def target_note(self, subject: str) -> TargetNote:
        for n in self._notes:
            if n.subject == subject:
                return n
        raise KeyError(f"no target note for {subject!r}; known: {sorted({n.subject for n in self._notes})}")

    def archs_for(self, subject: str) -> tuple[str, ...]:
        """Architectures the spec names for `subject` (exact subject, e.g. 'tcgen05.mma .block32')."""
        return self.target_note(subject).archs

    # ---- ambiguities
    def ambiguities(self) -> list[Ambiguity]:
        return list(self._ambiguities)

    def ambiguity(self, amb_id: str) -> Ambiguity:
        for a in self._ambiguities:
            if a.id == amb_id:
                return a
        raise KeyError(f"no ambiguity {amb_id!r}")

    # ---- typed queries (see queries.py for what each one reads)
    mma_sync_blockscale_combos = queries.mma_sync_blockscale_combos
    mma_sync_selectors = queries.mma_sync_selectors
    tcgen05_shapes = queries.tcgen05_shapes
    tcgen05_invalid_combos = queries.tcgen05_invalid_combos
    scale_vec_rules = queries.scale_vec_rules
    ld_st_shapes = queries.ld_st_shapes
    transpose_negate = queries.transpose_negate
    transpose_b_n_rule = queries.transpose_b_n_rule
    idesc_fields = queries.idesc_fields
    smem_desc_fields = queries.smem_desc_fields
    smem_swizzle_modes = queries.smem_swizzle_modes
    zero_column_mask_fields = queries.zero_column_mask_fields
    datapath_layouts = queries.datapath_layouts


# --------------------------------------------------------------------------------------------- loading
@functools.lru_cache(maxsize=4)
def _load_cached(data_dir: Path) -> Catalog:
    return _load(data_dir)


def load(data_dir: str | Path | None = None) -> Catalog:
    """Load and validate the catalog (cached per directory). Raises CatalogError on bad data."""
    return _load_cached(Path(data_dir).resolve() if data_dir else DATA_DIR)


_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader where PyYAML has it: the same documents, ~10x faster (the catalog is read
by every process of a run: 0.5 s of pure-Python parsing each before)."""


def _read_yaml(path: Path) -> Any:
    try:
        with path.open(encoding="utf-8") as fh:
            return yaml.load(fh, Loader=_SAFE_LOADER)  # noqa: S506 -- a safe loader
    except yaml.YAMLError as exc:
        raise CatalogError(f"{path.name}: not valid YAML: {exc}") from exc


@functools.lru_cache(maxsize=16)
def _spec_line_count(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def _require(cond: bool, where: str, msg: str) -> None:
    if not cond:
        raise CatalogError(f"{where}: {msg}")


def _check_source(spec_dir: Path, source: Any, where: str) -> Path:
    _require(isinstance(source, str) and bool(source), where, "missing 'source' (spec file name)")
    path = spec_dir / source
    _require(path.is_file(), where, f"source {source!r} is not a file in {spec_dir}")
    return path


def _check_line(n: Any, nlines: int, where: str, what: str = "line") -> int:
    _require(isinstance(n, int) and not isinstance(n, bool), where, f"'{what}' must be an integer, got {n!r}")
    _require(1 <= n <= nlines, where, f"'{what}' {n} outside the spec file (1..{nlines})")
    return n


def _load_table(path: Path, spec_dir: Path, amb_ids: set[str]) -> Table:
    doc = _read_yaml(path)
    name = path.name
    _require(isinstance(doc, dict), name, "top level must be a mapping")
    for key in ("table", "title", "source", "section", "caption_line", "columns", "rows"):
        _require(key in doc, name, f"missing key {key!r}")
    number = doc["table"]
    _require(isinstance(number, int), name, "'table' must be an integer")
    variant = doc.get("variant")
    variant = str(variant) if variant is not None else None
    src_path = _check_source(spec_dir, doc["source"], name)
    nlines = _spec_line_count(src_path)
    caption_line = _check_line(doc["caption_line"], nlines, name, "caption_line")
    caption_text = src_path.read_text(encoding="utf-8").splitlines()[caption_line - 1]
    _require(f"Table {number}" in caption_text, name,
             f"caption_line {caption_line} does not contain 'Table {number}'")
    columns = doc["columns"]
    _require(isinstance(columns, dict) and columns, name, "'columns' must be a non-empty mapping")
    rows_doc = doc["rows"]
    _require(isinstance(rows_doc, list) and rows_doc, name, "'rows' must be a non-empty list")
    suffix = f"@{variant}" if variant else ""
    rows: list[Row] = []
    for i, rd in enumerate(rows_doc, start=1):
        where = f"{name}: row #{i}"
        _require(isinstance(rd, dict), where, "a row must be a mapping")
        unknown = set(rd) - {"row", "line", "line_end", "values", "inferred", "note", "ambiguity"}
        _require(not unknown, where, f"unknown keys {sorted(unknown)}")
        _require(rd.get("row") == i, where,
                 f"row numbers must run 1, 2, 3 ... in order; expected {i}, got {rd.get('row')!r}")
        line = _check_line(rd.get("line"), nlines, where)
        _require(line > caption_line, where, f"line {line} is before the caption (line {caption_line})")
        line_end = _check_line(rd.get("line_end", line), nlines, where, "line_end")
        _require(line_end >= line, where, "line_end before line")
        values = rd.get("values")
        _require(isinstance(values, dict) and values, where, "'values' must be a non-empty mapping")
        extra = set(values) - set(columns)
        _require(not extra, where, f"values for undeclared columns {sorted(extra)}")
        inferred = rd.get("inferred") or {}
        _require(isinstance(inferred, dict), where, "'inferred' must map column -> row ref")
        for col, ref in inferred.items():
            _require(col in values, where, f"inferred column {col!r} has no value")
            m = _REF_RE.match(str(ref))
            _require(bool(m) and int(m.group(1)) == number and 1 <= int(m.group(2)) <= i, where,
                     f"inferred {col!r} cites {ref!r}: must be a row of Table {number} at or above this one")
        amb = rd.get("ambiguity")
        _require(amb is None or amb in amb_ids, where, f"ambiguity {amb!r} is not in ambiguities.yaml")
        rows.append(Row(
            ref=f"T{number}.{i}{suffix}", table=number, index=i, values=dict(values), source=doc["source"],
            source_line=line, source_line_end=line_end, inferred=tuple(inferred),
            inferred_from={k: f"{v}{suffix}" for k, v in inferred.items()}, note=rd.get("note"),
            ambiguity=amb, variant=variant,
        ))
    return Table(
        number=number, title=str(doc["title"]), source=doc["source"], section=str(doc["section"]),
        caption_line=caption_line, columns=tuple(columns), column_docs=dict(columns), rows=tuple(rows),
        variant=variant, also_in=tuple(doc.get("also_in") or ()), printed_as=dict(doc.get("printed_as") or {}),
    )


def _load_rules(path: Path, spec_dir: Path, amb_ids: set[str]) -> tuple[SectionRule, ...]:
    doc = _read_yaml(path)
    _require(isinstance(doc, dict) and isinstance(doc.get("rules"), list), path.name, "needs a 'rules' list")
    out: list[SectionRule] = []
    seen: set[str] = set()
    for i, rd in enumerate(doc["rules"], start=1):
        where = f"{path.name}: rule #{i}"
        _require(isinstance(rd, dict), where, "a rule must be a mapping")
        for key in ("id", "ref", "source", "line", "title", "data"):
            _require(key in rd, where, f"missing key {key!r}")
        _require(rd["id"] not in seen, where, f"duplicate id {rd['id']!r}")
        seen.add(rd["id"])
        _require(bool(re.match(r"^S\d+(\.\d+)+$", str(rd["ref"]))), where, f"ref {rd['ref']!r} is not S<section>")
        nlines = _spec_line_count(_check_source(spec_dir, rd["source"], where))
        line = _check_line(rd["line"], nlines, where)
        line_end = _check_line(rd.get("line_end", line), nlines, where, "line_end")
        amb = rd.get("ambiguity")
        _require(amb is None or amb in amb_ids, where, f"ambiguity {amb!r} is not in ambiguities.yaml")
        out.append(SectionRule(id=rd["id"], ref=rd["ref"], source=rd["source"], source_line=line,
                               source_line_end=line_end, title=rd["title"], data=rd["data"],
                               inference=rd.get("inference"), ambiguity=amb))
    return tuple(out)


def _load_notes(path: Path, spec_dir: Path) -> tuple[TargetNote, ...]:
    doc = _read_yaml(path)
    _require(isinstance(doc, dict) and isinstance(doc.get("notes"), list), path.name, "needs a 'notes' list")
    nlines = _spec_line_count(_check_source(spec_dir, doc.get("source"), path.name))
    out: list[TargetNote] = []
    for i, nd in enumerate(doc["notes"], start=1):
        where = f"{path.name}: note #{i}"
        for key in ("subjects", "ref", "line", "archs", "ptx_isa"):
            _require(key in nd, where, f"missing key {key!r}")
        line = _check_line(nd["line"], nlines, where)
        line_end = _check_line(nd.get("line_end", line), nlines, where, "line_end")
        ptx_line = nd.get("ptx_line")
        if ptx_line is not None:
            _check_line(ptx_line, nlines, where, "ptx_line")
        entries: list[ArchEntry] = []
        for e in nd["archs"]:
            _require(isinstance(e, dict) and str(e.get("arch", "")).startswith("sm_"), where,
                     f"arch entry {e!r} needs 'arch: sm_...'")
            entries.append(ArchEntry(arch=e["arch"], family=bool(e.get("family", False)), from_ptx=e.get("from_ptx"),
                                     renamed_to=e.get("renamed_to"), renamed_in_ptx=e.get("renamed_in_ptx"),
                                     except_=tuple(e.get("except") or ())))
        archs: list[str] = []
        for e in entries:
            for a in (e.arch, e.renamed_to):
                if a and a not in archs:
                    archs.append(a)
        ptx = nd["ptx_isa"]
        _require(ptx is None or bool(re.match(r"^\d+\.\d+$", str(ptx))), where, f"ptx_isa {ptx!r} is not 'X.Y'")
        for subject in nd["subjects"]:
            out.append(TargetNote(subject=subject, archs=tuple(archs), ptx_isa=ptx, ref=nd["ref"], source=doc["source"],
                                  source_line=line, source_line_end=line_end, ptx_line=ptx_line,
                                  entries=tuple(entries), note=nd.get("note")))
    return tuple(out)


def _load_ambiguities(path: Path) -> tuple[Ambiguity, ...]:
    doc = _read_yaml(path)
    _require(isinstance(doc, dict) and isinstance(doc.get("ambiguities"), list), path.name,
             "needs an 'ambiguities' list")
    out = []
    for i, ad in enumerate(doc["ambiguities"], start=1):
        where = f"{path.name}: entry #{i}"
        for key in ("id", "place", "summary", "readings", "sources", "probe"):
            _require(key in ad, where, f"missing key {key!r}")
        out.append(Ambiguity(id=ad["id"], place=tuple(ad["place"]), summary=ad["summary"],
                             readings=tuple(ad["readings"]), sources=tuple(ad["sources"]), probe=ad["probe"]))
    ids = [a.id for a in out]
    _require(len(ids) == len(set(ids)), path.name, "duplicate ambiguity ids")
    return tuple(out)


def _load(data_dir: Path) -> Catalog:
    spec_dir = data_dir / "spec_text"
    _require(spec_dir.is_dir(), str(data_dir), "no spec_text/ folder")
    ambiguities = _load_ambiguities(data_dir / "ambiguities.yaml")
    amb_ids = {a.id for a in ambiguities}
    tables: dict[tuple[int, str | None], Table] = {}
    table_files = sorted((data_dir / "tables").glob("t*.yaml"))
    _require(bool(table_files), str(data_dir), "no tables/t*.yaml files")
    for path in table_files:
        t = _load_table(path, spec_dir, amb_ids)
        key = (t.number, t.variant)
        _require(key not in tables, path.name, f"Table {t.number} (variant {t.variant}) defined twice")
        tables[key] = t
    rules = _load_rules(data_dir / "sections.yaml", spec_dir, amb_ids)
    notes = _load_notes(data_dir / "target_notes.yaml", spec_dir)
    cat = Catalog(tables, rules, notes, ambiguities, data_dir)
    for a in ambiguities:
        for place in a.place:
            _require(cat.has_ref(place) or bool(re.match(r"^S\d+(\.\d+)+$", place)), "ambiguities.yaml",
                     f"{a.id}: place {place!r} is neither a row ref nor a section")
    return cat
