"""The figures README.md quotes about the case set, as ``mmacts list`` prints them.

README's numbers drifted from the tool (issue 24: peers 12/286/504 in README, 12/292/516 from
``mmacts list``; 71 citation-only rows, 156 listed). Every such figure is now read from
``mmacts list`` output by this module; ``test_readme_figures.py`` fails when README disagrees, and
``python -m mmacts.runner.readme_figures`` prints what to write there.
"""

from __future__ import annotations

import contextlib
import io
import re

from mmacts.cases.model import LEVELS
from mmacts.core.suites import suite_names
from mmacts.runner import cli

_CASES = re.compile(r"^# (\d+) cases at level (\w+)")
_COVERAGE = re.compile(r"^# (\d+) cited rows covered by a failing mutant, (\d+) by citation only")


def _list(*argv: str) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = cli.main(["list", *argv, "--rows-only"])
    if rc != 0:
        raise RuntimeError(f"mmacts list {' '.join(argv)} exited {rc}")
    return buf.getvalue()


def case_counts(suite: str) -> tuple[int, ...]:
    """Cases of ``suite`` per level (smoke, standard, full), from ``mmacts list``'s summary line."""
    out = []
    for level in LEVELS:
        m = next(filter(None, (_CASES.match(line) for line in _list("--suite", suite, "--level", level)
                              .splitlines())))
        out.append(int(m.group(1)))
    return tuple(out)


def coverage_counts(level: str = "full") -> tuple[int, int]:
    """(cited rows a failing mutant covers, cited rows only a citation covers), as ``mmacts list`` says."""
    for line in _list("--level", level).splitlines():
        m = _COVERAGE.match(line)
        if m:
            return int(m.group(1)), int(m.group(2))
    raise RuntimeError("mmacts list printed no coverage line")


def main() -> None:
    for s in suite_names():
        print(f"`{s}`: {' / '.join(map(str, case_counts(s)))}")
    mutant, citation = coverage_counts()
    print(f"spec rows: a failing mutant covers ({mutant}), only a citation covers ({citation})")


if __name__ == "__main__":
    main()
