"""Access to the project's copy of the spec text (data/spec_text/), normalised for comparison.

Why: the catalog's tests check every transcribed value against the line of the spec it cites.
The spec files are markdown or plain text with escapes (`\\_`), backticks and links; comparing
against a normalised form keeps the check about content, not formatting.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

SPEC_TEXT_DIR = Path(__file__).resolve().parent / "data" / "spec_text"

_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def normalise(text: str) -> str:
    """Drop markdown escapes, backticks, emphasis and links; en dashes to '-'; collapse spaces."""
    t = _LINK.sub(r"\1", text)
    t = t.replace("\\_", "_").replace("\\*", "*").replace("`", "").replace("**", "")
    t = t.replace("–", "-").replace("\u00a0", " ")
    return " ".join(t.split())


@functools.lru_cache(maxsize=16)
def lines(source: str, spec_dir: Path = SPEC_TEXT_DIR) -> tuple[str, ...]:
    """Raw lines of one spec file (1-based access: lines(f)[n - 1])."""
    return tuple((spec_dir / source).read_text(encoding="utf-8").splitlines())


def span(source: str, first: int, last: int | None = None, spec_dir: Path = SPEC_TEXT_DIR) -> str:
    """Normalised text of lines first..last (inclusive, 1-based) of `source`."""
    ls = lines(source, spec_dir)
    return normalise(" ".join(ls[first - 1:(last or first)]))
