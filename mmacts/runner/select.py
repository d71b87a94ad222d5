"""Which cases a run (or ``mmacts list``) selects: suites, level, ``-k``, ``--rows``, ``--arch``.

``-k`` is pytest's keyword expression: a case matches when a term is a *substring* of its ID or
of a spec row it cites (so ``-k T39.1`` also takes T39.10-T39.19 and ``-k e4m3`` also takes
``ue4m3``). ``--rows`` and ``--arch`` are exact:

- ``--rows T39.1,T54.3``: cases citing one of these spec rows exactly (``T39`` alone: any row
  of table 39; ``S9.7.16.3.3``: that section);
- ``--arch sm_100a,sm_103a``: cases assembled for exactly one of these targets.

- ``--caselist FILE``: exactly the case IDs FILE lists (one a line, ``#`` comments): what a
  partner's report names, or a CI job's fixed list;
- ``--fraction I/N``: part I (0-based) of N, by a hash of the case ID (independent of ``--shard``'s,
  so both combine), for quick nightly subsets that cover everything over N nights;
  ``--mandatory FILE`` lists cases run whatever the fraction (the smoke checks a night must never miss).

The options combine (a case must pass each one given). ``mmacts run`` hands ``--rows``/``--arch``
to :mod:`mmacts.runner.select_plugin`; ``mmacts list`` evaluates the same selection here, with
pytest's own expression parser for ``-k``, so ``list`` previews what ``run`` will do.
"""

from __future__ import annotations

import argparse
import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from mmacts.core.suites import SUITES_DIR, load_driver
from mmacts.runner.errors import UsageError

_ROW = re.compile(r"^(T\d+(\.\d+)?|S\d+(\.\d+)*)$")
_ARCH = re.compile(r"^sm_\d+[af]?$")


def _usage(msg: str) -> Exception:
    return UsageError(msg)


def split_list(values: Iterable[str] | None) -> tuple[str, ...]:
    """``["T39.1,T54.3", "T40.2"]`` (repeatable, comma separated) -> ``("T39.1", "T54.3", "T40.2")``."""
    out: list[str] = []
    for v in values or ():
        out += [x.strip() for x in str(v).split(",") if x.strip()]
    return tuple(dict.fromkeys(out))


def parse_rows(values: Iterable[str] | None) -> tuple[str, ...]:
    rows = split_list(values)
    for r in rows:
        if not _ROW.match(r):
            raise _usage(f"--rows: {r!r} is not a spec row (expected T<table>.<row>, T<table> or S<section>, "
                         f"e.g. T39.1)")
    return rows


def parse_arch(values: Iterable[str] | None) -> tuple[str, ...]:
    archs = split_list(values)
    for a in archs:
        if not _ARCH.match(a):
            raise _usage(f"--arch: {a!r} is not a target (expected e.g. sm_100a, sm_103f, sm_120a)")
    return archs


def check_k(expr: str | None) -> None:
    """Refuse a ``-k`` expression pytest could not parse, before anything is started or written."""
    if not expr:
        return
    from _pytest.mark.expression import Expression

    try:
        Expression.compile(expr)
    except Exception as exc:  # ParseError (pytest 8) / SyntaxError (pytest 9)
        why = getattr(exc, "message", None) or getattr(exc, "msg", None) or str(exc)
        raise _usage(f"-k {expr!r} is not a valid expression: {why}") from exc


def row_matches(spec_rows: Iterable[str], rows: tuple[str, ...]) -> bool:
    """True when a cited row is one of ``rows`` exactly (``T39`` means every row of table 39)."""
    for ref in spec_rows:
        for want in rows:
            if ref == want or ("." not in want and want.startswith("T") and ref.startswith(want + ".")):
                return True
    return False


@functools.lru_cache(maxsize=8)
def _compiled(expr: str) -> Any:
    from _pytest.mark.expression import Expression

    return Expression.compile(expr)


def keyword_names(case: Any) -> set[str]:
    """The names pytest's ``-k`` matches an ``mmacts run`` item against (see ``KeywordMatcher``)."""
    return {f"test_case[{case.case_id}]", "suites", "test_cases.py", "mmacts_case", "xdist_group", *case.spec_rows}


def read_caselist(path: str | None, flag: str = "--caselist") -> tuple[str, ...] | None:
    """Case IDs of a caselist file: one a line, blank lines and ``#`` comments ignored."""
    if not path:
        return None
    try:
        text = open(path, encoding="utf-8").read()  # noqa: SIM115 -- read at once
    except (OSError, UnicodeDecodeError) as exc:
        raise _usage(f"{flag}: cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from exc
    ids = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    return tuple(dict.fromkeys(ids))


def parse_fraction(spec: str | None) -> tuple[int, int] | None:
    if not spec:
        return None
    parts = spec.split("/")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise _usage(f"--fraction must be I/N (0-based part I of N), got {spec!r}")
    i, n = int(parts[0]), int(parts[1])
    if n < 1:
        raise _usage(f"--fraction {spec}: N must be at least 1")
    if not 0 <= i < n:
        raise _usage(f"--fraction {spec}: part {i} is outside 0..{n - 1}")
    return i, n


def fraction_of(case_id: str, n: int) -> int:
    """The part of ``n`` a case falls in: its ID's hash, salted so that it is independent of the shard's."""
    import hashlib

    return int(hashlib.sha1(b"fraction:" + case_id.encode()).hexdigest()[:8], 16) % n


@dataclass(frozen=True)
class Selection:
    """What a run selects, beyond suite and level."""

    k: str | None = None
    rows: tuple[str, ...] = ()
    arch: tuple[str, ...] = ()
    caselist: tuple[str, ...] | None = None
    fraction: tuple[int, int] | None = None
    mandatory: tuple[str, ...] = ()
    files: tuple[str | None, str | None] = (None, None)
    """The caselist and mandatory files as given (absolute), for the test process and run.json."""

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Selection:
        import os

        k = getattr(args, "k", None)
        check_k(k)
        cl, mand = getattr(args, "caselist", None), getattr(args, "mandatory", None)
        fraction = parse_fraction(getattr(args, "fraction", None))
        if mand and not fraction:
            raise _usage("--mandatory lists the cases a --fraction always runs: give --fraction I/N too")
        return cls(k or None, parse_rows(getattr(args, "rows", None)), parse_arch(getattr(args, "arch", None)),
                   read_caselist(cl), fraction, read_caselist(mand, "--mandatory") or (),
                   (os.path.abspath(cl) if cl else None, os.path.abspath(mand) if mand else None))

    def exact(self, case: Any) -> bool:
        """``--rows``, ``--arch``, ``--caselist`` and ``--fraction`` (what :mod:`select_plugin` applies in a run)."""
        if self.caselist is not None and case.case_id not in self._caselist_set:
            return False
        if self.rows and not row_matches(case.spec_rows, self.rows):
            return False
        if self.arch and case.arch not in self.arch:
            return False
        if self.fraction is not None and case.case_id not in self._mandatory_set:
            return fraction_of(case.case_id, self.fraction[1]) == self.fraction[0]
        return True

    @functools.cached_property
    def _caselist_set(self) -> frozenset[str]:
        return frozenset(self.caselist or ())

    @functools.cached_property
    def _mandatory_set(self) -> frozenset[str]:
        return frozenset(self.mandatory)

    def matches(self, case: Any) -> bool:
        if not self.exact(case):
            return False
        if not self.k:
            return True
        names = [n.lower() for n in keyword_names(case)]
        return _compiled(self.k).evaluate(lambda sub, **_: any(sub.lower() in n for n in names))

    def describe(self) -> str:
        parts = [f"-k {self.k!r}"] if self.k else []
        parts += [f"--rows {','.join(self.rows)}"] if self.rows else []
        parts += [f"--arch {','.join(self.arch)}"] if self.arch else []
        parts += [f"--caselist {self.files[0]}"] if self.caselist is not None else []
        parts += [f"--fraction {self.fraction[0]}/{self.fraction[1]}"] if self.fraction else []
        return " ".join(parts) or "this selection"

    def pytest_args(self) -> list[str]:
        """Arguments for :mod:`mmacts.runner.select_plugin` in the test process."""
        out = []
        if self.rows:
            out.append(f"--mmacts-rows={','.join(self.rows)}")
        if self.arch:
            out.append(f"--mmacts-arch={','.join(self.arch)}")
        if self.caselist is not None:
            out.append(f"--mmacts-caselist={self.files[0]}")
        if self.fraction:
            out.append(f"--mmacts-fraction={self.fraction[0]}/{self.fraction[1]}")
        if self.files[1]:
            out.append(f"--mmacts-mandatory={self.files[1]}")
        return out


_SUITE_CASES: dict[tuple[str, str], tuple[Any, tuple[Any, ...]]] = {}
"""(suite, level) -> (the driver asked, its cases): a run lists the cases two or three times
(prepare_run, check_exact_names, the console's totals) and a suite's enumeration can cost."""


def suite_cases(name: str, level: str) -> tuple[Any, ...]:
    """``load_driver(name).cases(level)``, enumerated once per process and (suite, level).

    The cases are shared: callers treat them as read-only (``Case`` is frozen). Only the
    checkout's own suites are remembered; a suite from ``MMACTS_EXTRA_SUITES_DIR`` (the runner's
    test doubles, which read the environment when listed) is asked every time. A different
    driver object under the same name (a test that swaps it) is asked afresh, and
    :func:`clear_case_cache` forgets everything.
    """
    driver = load_driver(name)
    key = (name, level)
    hit = _SUITE_CASES.get(key)
    if hit is not None and hit[0] is driver:
        return hit[1]
    listed = tuple(driver.cases(level))
    if (SUITES_DIR / name / "driver.py").is_file():
        _SUITE_CASES[key] = (driver, listed)
    return listed


def clear_case_cache() -> None:
    """Forget every suite's remembered cases (:func:`suite_cases`)."""
    _SUITE_CASES.clear()


def cases(suites: list[str], level: str, sel: Selection) -> Iterator[Any]:
    """The cases of ``suites`` at ``level`` that ``sel`` selects, in the order a run collects them."""
    for name in suites:
        for case in suite_cases(name, level):
            if case.in_level(level) and sel.matches(case):
                yield case


def check_exact_names(suites: list[str], level: str, sel: Selection) -> None:
    """Every ``--rows`` / ``--arch`` value must name something these suites have at this level:
    a typo is one line naming what exists, not a run that silently selects less."""
    if not (sel.rows or sel.arch or sel.caselist is not None or sel.mandatory):
        return
    archs: set[str] = set()
    refs: set[str] = set()
    ids: set[str] = set()
    for name in suites:
        for case in suite_cases(name, level):
            if case.in_level(level):
                archs.add(case.arch)
                refs.update(case.spec_rows)
                ids.add(case.case_id)
    where = f"suites {', '.join(suites)} at level {level}"
    for flag, listed, path in (("--caselist", sel.caselist or (), sel.files[0]),
                               ("--mandatory", sel.mandatory, sel.files[1])):
        unknown = [c for c in listed if c not in ids]
        if unknown:  # an exact list: an ID that names no case is a typo or a renamed case, never ignored
            raise _usage(f"{flag} {path}: {unknown[0]!r} is no case of {where}"
                         + (f" (and {len(unknown) - 1} more IDs)" if len(unknown) > 1 else ""))
    if sel.caselist is not None and not sel.caselist:
        raise _usage(f"--caselist {sel.files[0]} lists no case")
    for a in sel.arch:
        if a not in archs:
            raise _usage(f"--arch {a}: no case targets it in {where} (targets: {', '.join(sorted(archs))})")
    missing = [r for r in sel.rows if not row_matches(refs, (r,))]
    if missing and len(missing) == len(sel.rows):
        raise _usage(f"--rows {','.join(missing)}: no case cites {'it' if len(missing) == 1 else 'them'} in {where} "
                     f"(mmacts list --level {level} shows the cases per row)")
    if missing:
        import sys

        print(f"mmacts: warning: no case cites {', '.join(missing)} in {where}", file=sys.stderr)


_TERM = re.compile(r"[\w:+\-.\[\]\\/]+")
_WORD = re.compile(r"[A-Za-z0-9]+")


def _terms(k: str) -> list[str]:
    return [t for t in _TERM.findall(k) if t.lower() not in ("and", "or", "not")]


def substring_hints(k: str | None, selected: Iterable[Any]) -> list[str]:
    """Where ``-k`` took more than it says: a term inside a longer row number (``T39.1`` in
    ``T39.10``) or a longer word (``e4m3`` in ``ue4m3``, ``mxf4`` in ``mxf4nvf4``), with the fix."""
    if not k:
        return []
    selected = list(selected)
    hints = []
    for term in dict.fromkeys(_terms(k)):
        low = term.lower()
        if re.fullmatch(r"T\d+\.\d+", term):
            longer = sorted({r for c in selected for r in c.spec_rows if r.startswith(term) and r != term},
                            key=lambda r: int(r.split(".")[1]))
            if longer:
                n = sum(1 for c in selected if not any(r == term for r in c.spec_rows))
                hints.append(f"-k {term} also selects {', '.join(longer[:4])}{' ...' if len(longer) > 4 else ''} "
                             f"({n} cases that do not cite {term}); --rows {term} selects exactly that row")
            continue
        if not _WORD.fullmatch(term):
            continue
        words: dict[str, int] = {}
        only_longer = 0
        for c in selected:  # a case that has the term only inside longer words ("x" joins type pairs)
            found = [w for w in _WORD.findall(c.case_id) if low in w.lower()]
            exact = [w for w in found if w.lower() == low or w.lower().startswith(low + "x")
                     or w.lower().endswith("x" + low)]
            if found and not exact:
                only_longer += 1
                for w in dict.fromkeys(found):
                    words[w] = words.get(w, 0) + 1
        if only_longer:
            top = sorted(words, key=lambda w: -words[w])[:3]
            hints.append(f"-k {term} also selects {', '.join(top)} ({only_longer} cases); "
                         f"exclude them with -k '{term} and not {top[0]}'")
    return hints


def add_arguments(p: argparse.ArgumentParser, *, k: bool = True) -> None:
    """The selection options ``run`` and ``list`` share (``run`` has its own ``-k``)."""
    if k:
        p.add_argument("-k", default=None, help="pytest -k expression over case IDs and cited spec rows "
                       "(substring match: T39.1 also matches T39.10)")
    p.add_argument("--rows", action="append", default=None, metavar="T39.1,T54.3",
                   help="only cases citing one of these spec rows exactly (T39: any row of table 39); repeatable")
    p.add_argument("--caselist", default=None, metavar="FILE",
                   help="exactly the case IDs FILE lists (one a line, # comments)")
    p.add_argument("--fraction", default=None, metavar="I/N",
                   help="part I (0-based) of N of the selected cases, by case ID (quick nightly subsets)")
    p.add_argument("--mandatory", default=None, metavar="FILE",
                   help="with --fraction: case IDs run whatever the fraction (one a line)")
    p.add_argument("--arch", action="append", default=None, metavar="sm_100a",
                   help="only cases assembled for one of these targets exactly; repeatable, comma separated")
