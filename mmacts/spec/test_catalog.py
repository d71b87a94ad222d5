"""Transcription checks: every catalogued value occurs in the spec line it cites, rows are numbered
as printed, every table / Target ISA paragraph of the spec is catalogued, and bad data is refused.

The expectations here come from the spec text copy (data/spec_text/), read independently of the
YAML: a row counter walks the markdown tables itself, and captions are found by regex.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from mmacts.spec.catalog import DATA_DIR, CatalogError, Row, load
from mmacts.spec.spec_text import lines, normalise, span

CAT = load()
CHAPTER = "003_c11047b5735e2cad.txt"


# --------------------------------------------------------------------------------------------- helpers
def _leaves(v: Any):
    if isinstance(v, dict):
        for k, x in v.items():
            if isinstance(k, int) or (isinstance(k, str) and (k.startswith(".") or "::" in k)):
                yield k
            yield from _leaves(x)
    elif isinstance(v, (list, tuple)):
        for x in v:
            yield from _leaves(x)
    else:
        yield v


def _has_number(text: str, n: int) -> bool:
    return re.search(rf"(?<!\d){n}(?!\d)", text) is not None


_TOKEN_SPLIT = re.compile(r"[^A-Za-z0-9_.:%]+")


def _tokens(s: str) -> list[str]:
    """Qualifiers, type names and numbers inside a free-text string."""
    out = []
    for tok in _TOKEN_SPLIT.split(s):
        tok = tok.rstrip(".:")
        if tok and (any(c.isdigit() for c in tok) or tok.startswith(".") or "::" in tok):
            out.append(tok)
    return out


def _token_in(text: str, tok: str) -> bool:
    if tok.isdigit():
        return _has_number(text, int(tok))
    return tok.lower() in text.lower()


def _check_value(text: str, value: Any, printed_as: dict[Any, str] | None, where: str) -> list[str]:
    errors = []
    for leaf in _leaves(value):
        if isinstance(leaf, bool) or leaf is None:
            word = (printed_as or {}).get(leaf)
            if word is None:
                errors.append(f"{where}: {leaf!r} has no printed_as word")
            elif word not in text:
                errors.append(f"{where}: {leaf!r} printed as {word!r} not in text")
        elif isinstance(leaf, int):
            if not _has_number(text, leaf):
                errors.append(f"{where}: number {leaf} not in text")
        elif normalise(str(leaf)) not in text:
            errors.append(f"{where}: {leaf!r} not in text")
    return errors


def _row_text(row: Row) -> str:
    return span(row.source, row.source_line, row.source_line_end)


# --------------------------------------------------------------------------------------------- (a) values in text
def test_every_row_value_occurs_on_its_cited_line():
    errors: list[str] = []
    for table in CAT.tables(include_variants=True):
        for row in table.rows:
            for col, value in row.values.items():
                src = CAT.row(row.inferred_from[col]) if col in row.inferred else row
                errors += _check_value(_row_text(src), value, table.printed_as.get(col), f"{row.ref}.{col}")
    assert not errors, "\n".join(errors[:40])


def test_inferred_values_are_not_printed_on_their_own_line():
    """An `inferred` cell must really be missing from the row's line (else it was printed)."""
    suspicious = []
    for row in CAT.rows(include_variants=True):
        own = _row_text(row)
        for col in row.inferred:
            src = CAT.row(row.inferred_from[col])
            if src.source_line == row.source_line:
                continue  # a column span within the same printed line
            v = row.values[col]
            if isinstance(v, str) and len(v) > 3 and normalise(v) in own:
                suspicious.append(f"{row.ref}.{col}={v!r}")
    assert not suspicious, suspicious


def test_section_rule_tokens_occur_in_cited_lines():
    errors = []
    for rule in CAT.section_rules():
        text = span(rule.source, rule.source_line, rule.source_line_end)
        for leaf in _leaves(rule.data):
            if isinstance(leaf, bool):
                continue
            toks = [str(leaf)] if isinstance(leaf, int) else _tokens(str(leaf))
            errors += [f"{rule.id}: {t!r}" for t in toks if not _token_in(text, t)]
    assert not errors, errors


def test_target_note_archs_and_versions_occur_in_cited_lines():
    errors = []
    for note in CAT.target_notes():
        text = span(note.source, note.source_line, note.source_line_end)
        for e in note.entries:
            for tok in (e.arch, e.renamed_to, e.from_ptx, e.renamed_in_ptx, *e.except_):
                if tok and tok not in text:
                    errors.append(f"{note.subject}: {tok} not in lines {note.source_line}-{note.source_line_end}")
        if note.ptx_isa is not None:
            ptx_text = span(note.source, note.ptx_line)
            if f"version {note.ptx_isa}" not in ptx_text:
                errors.append(f"{note.subject}: 'version {note.ptx_isa}' not on line {note.ptx_line}")
        qual_text = text + " " + (span(note.source, note.ptx_line) if note.ptx_line else "")
        for tok in note.subject.split()[1:]:
            if tok.startswith(".") and tok not in qual_text:
                errors.append(f"{note.subject}: qualifier {tok} not stated")
    assert not errors, errors


def test_every_architecture_of_the_chapter_is_in_some_target_note():
    text = " ".join(lines(CHAPTER))
    named = set(re.findall(r"sm_\d+[af]", text))
    covered = {a for n in CAT.target_notes() for a in n.archs}
    assert named and named <= covered, named - covered


def test_every_target_isa_statement_is_catalogued():
    pattern = re.compile(
        r"upported on following|requires `sm_|only supported for target architecture|is supported on `sm_")
    stated = [i for i, line in enumerate(lines(CHAPTER), start=1) if pattern.search(line)]
    ranges = [(n.source_line, n.source_line_end) for n in CAT.target_notes()]
    missing = [i for i in stated if not any(a <= i <= b for a, b in ranges)]
    assert len(stated) >= 25 and not missing, missing


# --------------------------------------------------------------------------------------------- (c) numbering
def test_row_numbering_is_contiguous_from_one():
    for table in CAT.tables(include_variants=True):
        assert [r.index for r in table.rows] == list(range(1, len(table.rows) + 1)), table.number
        suffix = f"@{table.variant}" if table.variant else ""
        assert [r.ref for r in table.rows] == [f"T{table.number}.{i}{suffix}" for i in range(1, len(table) + 1)]
        lines_ = [r.source_line for r in table.rows]
        assert lines_ == sorted(lines_) and len(set(lines_)) == len(lines_), table.number


# Tables whose markdown has a second header line right after the '| --- |' rule (merged headers).
_SECOND_HEADER = {39, 42, 43, 44, 47, 48}


def _markdown_data_rows(source: str, caption_line: int, number: int) -> list[int]:
    """Independent row counter: data lines of the first markdown table after the caption."""
    ls = lines(source)
    i = caption_line
    while not ls[i].startswith("|"):
        i += 1
    assert ls[i + 1].startswith("| ---"), f"Table {number}: no header rule"
    i += 2 + (1 if number in _SECOND_HEADER else 0)
    rows = []
    while i < len(ls) and ls[i].startswith("|"):
        if any(c.strip() for c in ls[i].strip().strip("|").split("|")):
            rows.append(i + 1)
        i += 1
    return rows


def _plain_text_rows(source: str, caption_line: int) -> list[int]:
    """Rows of a flattened plain-text table (file 004): lines after the header up to a blank."""
    ls = lines(source)
    i = caption_line + 2  # blank line, header line
    rows = []
    while i < len(ls) and ls[i].strip():
        rows.append(i + 1)
        i += 1
    return rows


def test_rows_match_an_independent_count_of_printed_rows():
    for table in CAT.tables():
        if table.source.startswith("004"):
            expected = _plain_text_rows(table.source, table.caption_line)
        else:
            expected = _markdown_data_rows(table.source, table.caption_line, table.number)
        assert [r.source_line for r in table.rows] == expected, f"Table {table.number}"


def test_file_001_rows_match_its_printed_rows():
    for number in (42, 43, 44):
        t = CAT.table(number, "001")
        ls = lines(t.source)
        nxt = next((i for i in range(t.caption_line, len(ls)) if ls[i].startswith("Table ")), len(ls))
        expected = [i + 1 for i in range(t.caption_line, nxt) if re.match(r"\| \d", ls[i])]
        assert [r.source_line for r in t.rows] == expected
        assert len(t) == len(CAT.table(number))


def test_every_table_caption_of_the_spec_is_catalogued():
    known = {(t.source, t.caption_line) for t in CAT.tables(include_variants=True)}
    known |= {(a["source"], a["caption_line"]) for t in CAT.tables() for a in t.also_in}
    for source in ("000_0899b586a78c7838.txt", "001_dfcd3e3a44822230.txt", "002_8ed9bf136d46fb3d.txt",
                   CHAPTER, "004_5735ece6e5426e1a.txt"):
        for i, line in enumerate(lines(source), start=1):
            if re.match(r"^Table \d+ [A-Z]", line):
                assert (source, i) in known, f"{source}:{i}: {line[:60]}"


def test_also_in_copies_print_the_same_table():
    for t in CAT.tables():
        for a in t.also_in:
            assert normalise(lines(a["source"])[a["caption_line"] - 1]).startswith(f"Table {t.number} {t.title}")


def test_expected_table_set_and_counts():
    counts = {t.number: len(t) for t in CAT.tables()}
    assert set(counts) == {35, 36, 37, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55}
    assert counts[39] == 56 and counts[54] == 8 and counts[55] == 4 and counts[37] == 3


def test_ambiguity_ids_are_cited_and_resolvable():
    cited = {r.ambiguity for r in CAT.rows(True) if r.ambiguity} | {r.ambiguity for r in CAT.section_rules()
                                                                   if r.ambiguity}
    ids = {a.id for a in CAT.ambiguities()}
    assert cited <= ids
    for a in CAT.ambiguities():
        for place in a.place:
            assert CAT.has_ref(place) or place.startswith("S"), (a.id, place)


def test_merged_cells_of_the_brief_are_marked_inferred():
    assert CAT.row("T54.5").inferred == ("scale_vectorsize", "kinds")
    assert CAT.row("T54.7").inferred_from["scale_vectorsize"] == "T54.6"
    assert CAT.row("T55.4").inferred_from == {"kind": "T55.3"}
    assert set(CAT.row("T37.2").inferred) == {"thread_id_a", "thread_id_b"}
    assert CAT.row("T37.2").ambiguity == "A01"


# --------------------------------------------------------------------------------------------- (d) bad data
@pytest.fixture()
def data_copy(tmp_path: Path) -> Path:
    dst = tmp_path / "data"
    shutil.copytree(DATA_DIR, dst)
    return dst


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.mark.parametrize(
    ("file", "old", "new", "message"),
    [
        ("tables/t35.yaml", "{row: 2, line: 27", "{row: 3, line: 27", "row numbers must run"),
        ("tables/t35.yaml", "shape_scale_b: \"1 x N\"", "shape_scale_c: \"1 x N\"", "undeclared columns"),
        ("tables/t37.yaml", "inferred: {thread_id_a: T37.1, thread_id_b: T37.1}\n    note: >-\n      Printed",
         "inferred: {thread_id_a: T37.3, thread_id_b: T37.1}\n    note: >-\n      Printed", "at or above"),
        ("tables/t36.yaml", "rows:\n", "rows: [\n", "not valid YAML"),
        ("tables/t40.yaml", "source: 003_c11047b5735e2cad.txt", "source: 009_missing.txt", "is not a file"),
        ("tables/t41.yaml", "line: 490", "line: 99999", "outside the spec file"),
        ("tables/t44.yaml", "ambiguity: A09}", "ambiguity: A99}", "not in ambiguities.yaml"),
        ("tables/t50.yaml", "caption_line: 1868", "caption_line: 1869", "does not contain 'Table 50'"),
        ("sections.yaml", "ref: S9.7.16.2.3\n", "ref: 9.7.16.2.3\n", "is not S<section>"),
        ("target_notes.yaml", "ptx_isa: \"8.8\"", "ptx_isa: \"eight\"", "is not 'X.Y'"),
    ],
)
def test_loader_rejects_malformed_data(data_copy: Path, file: str, old: str, new: str, message: str):
    _edit(data_copy / file, old, new)
    with pytest.raises(CatalogError) as exc:
        load(data_copy)
    assert message in str(exc.value)
    assert Path(file).name in str(exc.value) or "yaml" in str(exc.value)


def test_loader_accepts_an_unmodified_copy(data_copy: Path):
    cat = load(data_copy)
    assert len(cat.rows()) == len(CAT.rows())
