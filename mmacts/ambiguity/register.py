"""The ambiguity register: every question the spec leaves open, with its evidence.

The register is a data file (``register.yaml`` beside this module) so that people
edit questions, readings and sources as text, while the per-device answers
(``observations``) are written only by :func:`mmacts.ambiguity.observe.record_observations`
from run results. The loader is strict on purpose: a register that silently drops a
malformed entry would lose evidence, so every problem is a :class:`RegisterError`
naming the entry and the field.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from mmacts.cases.model import check_spec_ref

REGISTER_PATH = Path(__file__).with_name("register.yaml")
"""The register shipped with the package."""

SCHEMA_VERSION = 1
STATUSES: tuple[str, ...] = ("open", "decided")
SPEC_FILES: tuple[str, ...] = (
    "000_0899b586a78c7838.txt",
    "001_dfcd3e3a44822230.txt",
    "002_8ed9bf136d46fb3d.txt",
    "003_c11047b5735e2cad.txt",
    "004_5735ece6e5426e1a.txt",
    "cutlass-facts.md",
    "numeric-models.md",
    "peers-and-users.md",
    "OCP-MX-v1.0",
    "PTX-ISA-9.7-scalar",
    "CUDA-13-cuda.h",
)
"""Where a question may be anchored: the five PTX text files, or (for questions the
spec never states) the reference notes / the OCP MX spec that raise them, or the PTX ISA's scalar
chapters (9.7.1-9.7.9, not among the shared spec files) for what the VM's differential fuzzing found, or the CUDA 13
driver API header (``cuda.h`` of the nvidia-cuda wheel) for the host encoders' tensor-map rules."""

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_ID_PREFIX = "AMB-"
_ENTRY_KEYS = {
    "id", "title", "area", "spec", "readings", "sources", "decided_by", "observations", "status", "notes", "peers",
}
_PEER_KEYS = ("peer", "version", "run", "cases", "agree", "disagree", "observed")
_PEER_OPTIONAL = ("first_disagreement", "example")
_REQUIRED = ("id", "title", "area", "spec", "readings", "sources", "decided_by", "observations", "status")
_OBS_KEYS = ("device", "driver", "ptxas", "answer", "run", "date")
_OBS_OPTIONAL = ("case_id", "backend", "reading", "cases")


class RegisterError(ValueError):
    """A malformed register file; the message names the entry and the field."""


@dataclass(frozen=True)
class SpecPlace:
    """Where the spec says it: a file, table/section references and the quoted wording."""

    file: str
    refs: tuple[str, ...]
    text: str


@dataclass(frozen=True)
class Reading:
    """One way to read the text; ``id`` is what an observation's answer names."""

    id: str
    means: str


@dataclass(frozen=True)
class Source:
    """Another source (CUTLASS, Triton, a paper) and what it says about the question."""

    name: str
    where: str
    says: str


@dataclass(frozen=True)
class Observation:
    """One answer measured on one device/driver/ptxas, filled in from a run by code."""

    device: str
    driver: str
    ptxas: str
    answer: str
    run: str
    date: str
    case_id: str = ""
    """One case that gave this answer (the first by id); ``cases`` says how many did."""
    backend: str = ""
    reading: str = ""
    cases: int = 1
    """How many cases of the run gave this answer on this device: one line per answer, not per case,
    so a full-level run adds a handful of lines to an entry, not thousands."""

    def key(self) -> tuple[str, ...]:
        """Identity for de-duplication: recording the same run twice adds nothing."""
        return (self.device, self.driver, self.ptxas, self.run, self.answer)


@dataclass(frozen=True)
class Entry:
    """One open (or decided) question."""

    id: str
    title: str
    area: str
    spec: tuple[SpecPlace, ...]
    readings: tuple[Reading, ...]
    sources: tuple[Source, ...]
    decided_by: tuple[str, ...]
    observations: tuple[Observation, ...] = ()
    status: str = "open"
    notes: str = ""
    peers: tuple[dict[str, Any], ...] = ()
    """What each peer (Triton, CUTLASS) did where it exercises this entry's reading: written by code from a peers
    run (``python -m mmacts.ambiguity.peers RUN/results.parquet``), never by hand."""

    @property
    def spec_refs(self) -> tuple[str, ...]:
        """Every table/section reference of the entry, in file order."""
        return tuple(ref for place in self.spec for ref in place.refs)


@dataclass(frozen=True)
class Register:
    """The whole register; ``entries`` keep file order, ids are unique."""

    entries: tuple[Entry, ...]
    schema: int = SCHEMA_VERSION
    path: Path | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for entry in self.entries:
            if entry.id in seen:
                raise RegisterError(f"duplicate register id {entry.id!r}")
            seen.add(entry.id)

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, entry_id: str) -> Entry:
        """The entry with ``entry_id``; ``KeyError`` naming it otherwise."""
        for entry in self.entries:
            if entry.id == entry_id:
                return entry
        raise KeyError(f"no register entry {entry_id!r}")

    def ids(self) -> tuple[str, ...]:
        return tuple(e.id for e in self.entries)

    def with_status(self, status: str | None) -> Register:
        """Only the entries with ``status`` (all when ``None``)."""
        if status is None:
            return self
        if status not in STATUSES:
            raise RegisterError(f"unknown status {status!r}; expected one of {', '.join(STATUSES)}")
        return replace(self, entries=tuple(e for e in self.entries if e.status == status))


# ---------------------------------------------------------------------------------------------
# parsing


def _need(where: str, value: Any, kind: type | tuple[type, ...], what: str) -> Any:
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise RegisterError(f"{where}: {what} must be {names}, got {type(value).__name__}")
    return value


def _text(where: str, value: Any, what: str) -> str:
    _need(where, value, str, what)
    if not value.strip():
        raise RegisterError(f"{where}: {what} is empty")
    return value.strip()


def _list(where: str, value: Any, what: str, *, allow_empty: bool = False) -> list:
    _need(where, value, list, what)
    if not value and not allow_empty:
        raise RegisterError(f"{where}: {what} is empty")
    return value


def _keys(where: str, data: Mapping, allowed: Iterable[str], required: Iterable[str]) -> None:
    extra = set(data) - set(allowed)
    if extra:
        raise RegisterError(f"{where}: unknown field(s) {', '.join(sorted(map(str, extra)))}")
    missing = [k for k in required if k not in data]
    if missing:
        raise RegisterError(f"{where}: missing field(s) {', '.join(missing)}")


def _spec_place(where: str, data: Any) -> SpecPlace:
    _need(where, data, dict, "spec item")
    _keys(where, data, ("file", "refs", "text"), ("file", "refs", "text"))
    file = _text(where, data["file"], "spec.file")
    if file not in SPEC_FILES:
        raise RegisterError(f"{where}: spec.file {file!r} is not one of {', '.join(SPEC_FILES)}")
    refs = []
    for ref in _list(where, data["refs"], "spec.refs", allow_empty=file not in SPEC_FILES[:5]):
        try:
            refs.append(check_spec_ref(_text(where, ref, "spec ref")))
        except ValueError as exc:
            raise RegisterError(f"{where}: {exc}") from None
    return SpecPlace(file=file, refs=tuple(refs), text=_text(where, data["text"], "spec.text"))


def _reading(where: str, data: Any) -> Reading:
    _need(where, data, dict, "reading")
    _keys(where, data, ("id", "means"), ("id", "means"))
    return Reading(id=_text(where, data["id"], "reading.id"), means=_text(where, data["means"], "reading.means"))


def _source(where: str, data: Any) -> Source:
    _need(where, data, dict, "source")
    _keys(where, data, ("name", "where", "says"), ("name", "where", "says"))
    return Source(
        name=_text(where, data["name"], "source.name"),
        where=_text(where, data["where"], "source.where"),
        says=_text(where, data["says"], "source.says"),
    )


def _scalar_text(where: str, value: Any, what: str) -> str:
    if isinstance(value, _dt.date | _dt.datetime):
        return value.isoformat()
    if isinstance(value, bool) or value is None:
        raise RegisterError(f"{where}: {what} must be text")
    if isinstance(value, int | float):
        return str(value)
    return _text(where, value, what)


def _observation(where: str, data: Any) -> Observation:
    _need(where, data, dict, "observation")
    _keys(where, data, _OBS_KEYS + _OBS_OPTIONAL, _OBS_KEYS)
    values = {k: _scalar_text(where, data[k], f"observation.{k}") for k in _OBS_KEYS}
    for k in _OBS_OPTIONAL:
        if k in data and data[k] is not None:
            values[k] = str(data[k])
    if "cases" in values:
        try:
            values["cases"] = int(values["cases"])
        except ValueError as exc:
            raise RegisterError(f"{where}: observation.cases must be a whole number") from exc
        if values["cases"] < 1:
            raise RegisterError(f"{where}: observation.cases must be at least 1")
    return Observation(**values)


def _peer(where: str, data: Any) -> dict[str, Any]:
    _need(where, data, dict, "peers item")
    _keys(where, data, _PEER_KEYS + _PEER_OPTIONAL, _PEER_KEYS)
    out: dict[str, Any] = {k: data[k] for k in _PEER_KEYS + _PEER_OPTIONAL if k in data}
    for k in ("cases", "agree", "disagree", "observed"):
        if not isinstance(out[k], int) or out[k] < 0:
            raise RegisterError(f"{where}: peers.{k} must be a whole number >= 0")
    return out


NO_DECIDER = "no case decides this yet"
"""What an entry's notes say when its ``decided_by`` is empty (no existing case or probe decides it)."""


def parse_entry(data: Any, index: int) -> Entry:
    """Validate one raw entry (a mapping from YAML) into an :class:`Entry`."""
    where = f"entry #{index + 1}"
    _need(where, data, dict, "entry")
    if "id" in data and isinstance(data["id"], str):
        where = f"entry {data['id']!r}"
    _keys(where, data, _ENTRY_KEYS, _REQUIRED)
    entry_id = _text(where, data["id"], "id")
    if not entry_id.startswith(_ID_PREFIX) or entry_id != entry_id.upper() or " " in entry_id:
        raise RegisterError(f"{where}: id must be upper case and start with {_ID_PREFIX!r}")
    status = _text(where, data["status"], "status")
    if status not in STATUSES:
        raise RegisterError(f"{where}: status {status!r} is not one of {', '.join(STATUSES)}")
    readings = tuple(_reading(where, r) for r in _list(where, data["readings"], "readings"))
    if len(readings) < 2:
        raise RegisterError(f"{where}: an open question needs at least two readings")
    rids = [r.id for r in readings]
    if len(set(rids)) != len(rids):
        raise RegisterError(f"{where}: duplicate reading ids {rids}")
    decided_by = tuple(_text(where, d, "decided_by item")
                       for d in _list(where, data["decided_by"], "decided_by", allow_empty=True))
    if not decided_by and NO_DECIDER not in str(data.get("notes") or ""):
        raise RegisterError(f"{where}: decided_by is empty; name the deciding cases or say {NO_DECIDER!r} in notes")
    observations = tuple(
        _observation(where, o) for o in _list(where, data["observations"], "observations", allow_empty=True)
    )
    peers = tuple(_peer(where, p) for p in _list(where, data.get("peers") or [], "peers", allow_empty=True))
    return Entry(
        peers=peers,
        id=entry_id,
        title=_text(where, data["title"], "title"),
        area=_text(where, data["area"], "area"),
        spec=tuple(_spec_place(where, s) for s in _list(where, data["spec"], "spec")),
        readings=readings,
        sources=tuple(_source(where, s) for s in _list(where, data["sources"], "sources", allow_empty=True)),
        decided_by=decided_by,
        observations=observations,
        status=status,
        notes=data["notes"].strip() if isinstance(data.get("notes"), str) else "",
    )


def parse_register(data: Any, path: Path | None = None) -> Register:
    """Validate a whole raw register document."""
    _need("register", data, dict, "document")
    _keys("register", data, ("schema", "entries"), ("schema", "entries"))
    if data["schema"] != SCHEMA_VERSION:
        raise RegisterError(f"register: schema {data['schema']!r} is not the supported {SCHEMA_VERSION}")
    entries = tuple(parse_entry(e, i) for i, e in enumerate(_list("register", data["entries"], "entries")))
    return Register(entries=entries, schema=SCHEMA_VERSION, path=path)


_LOADED: dict[tuple[str, str], Register] = {}


def load_register(path: str | Path | None = None) -> Register:
    """Load and validate a register file (the packaged one by default).

    A file whose text this process has already parsed is not parsed again: a run's reports
    and its cases' ``assumes`` column each ask for the register, and parsing took a quarter of
    a second per ask on a GPU host. The value is immutable (frozen dataclasses, tuples).
    """
    p = Path(path) if path is not None else REGISTER_PATH
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise RegisterError(f"cannot read register {p}: {exc.strerror or exc}") from None
    key = (str(p), text)
    if key in _LOADED:
        return _LOADED[key]
    try:
        data = yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader (C if available)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise RegisterError(f"register {p} is not valid YAML{at}: {problem}") from None
    try:
        reg = parse_register(data, path=p)
    except RegisterError as exc:
        raise RegisterError(f"{p.name}: {exc}") from None
    _LOADED.clear()  # one register at a time is enough (the packaged one, or a test's file)
    _LOADED[key] = reg
    return reg


# ---------------------------------------------------------------------------------------------
# writing (observations are added by code, so the file must round-trip)


def entry_to_dict(entry: Entry) -> dict[str, Any]:
    """Plain-data form of an entry, in the field order of the file."""
    out: dict[str, Any] = {
        "id": entry.id,
        "title": entry.title,
        "area": entry.area,
        "status": entry.status,
        "spec": [{"file": s.file, "refs": list(s.refs), "text": s.text} for s in entry.spec],
        "readings": [{"id": r.id, "means": r.means} for r in entry.readings],
        "sources": [{"name": s.name, "where": s.where, "says": s.says} for s in entry.sources],
        "decided_by": list(entry.decided_by),
        "observations": [
            {k: getattr(o, k) for k in _OBS_KEYS + _OBS_OPTIONAL
             if (getattr(o, k) and (k != "cases" or o.cases > 1)) or k in _OBS_KEYS}
            for o in entry.observations
        ],
    }
    if entry.notes:
        out["notes"] = entry.notes
    if entry.peers:
        out["peers"] = [dict(p) for p in entry.peers]
    return out


def register_to_dict(register: Register) -> dict[str, Any]:
    return {"schema": register.schema, "entries": [entry_to_dict(e) for e in register.entries]}


HEADER = """\
# The ambiguity register: one entry per question the PTX text leaves open or contradicts.
#
# Edit questions, readings, sources and decided_by by hand. NEVER edit `observations` by hand:
# they are appended by mmacts.ambiguity.observe.record_observations from run results
# (`python -m mmacts.ambiguity.observe RUN/results.parquet`), per device, driver and ptxas; nor `peers`:
# written by mmacts.ambiguity.peers from a peers-suite run (what Triton / CUTLASS did where they exercise it).
# `decided_by` names a probe (`probes.<name>`, suites/probes/) or a case-id glob of another suite, and
# only ones that exist at level full (test_pointers.py); where nothing decides a question yet, decided_by
# is empty and notes say "no case decides this yet" (a planned probe is named there). Spec refs: T<table>.<row>
# (rows from 1 in printed order) or S<section>; spec files are those of shared/spec (copied to
# mmacts/spec/data/spec_text); questions the PTX text never raises cite the reference note.
"""


def dump_register(register: Register) -> str:
    """YAML text of the register; :func:`parse_register` of it gives the register back."""
    body = yaml.dump(register_to_dict(register), Dumper=_DUMPER, sort_keys=False, allow_unicode=True, width=110)
    return HEADER + body


def save_register(register: Register, path: str | Path) -> None:
    """Write atomically (a half-written register would lose the questions, not just answers)."""
    p = Path(path)
    tmp = p.with_name(p.name + ".tmp")
    tmp.write_text(dump_register(register), encoding="utf-8")
    tmp.replace(p)
