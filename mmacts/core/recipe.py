"""The data recipe of a case as a value: a kind and, for most kinds, a name (issue 25, item 1).

A case's recipe says where its input data comes from. Its written form is a short string, kept as the
serialised form (the ``recipe`` field of :class:`~mmacts.cases.model.Case`, the case records, the results
store, the answer-cache key): ``exact``, ``random`` or ``random:<model>``, ``probe:<name>``,
``control:<name>``, ``plain:<name>``, ``feature:<name>``, ``known-answer``, ``peer``. Code that asks what
kind of data a case has reads :attr:`Case.parsed_recipe <mmacts.cases.model.Case.parsed_recipe>`, this
value, instead of taking the string apart with ``startswith``/``split`` where it needs it.

Why a value of its own: the recipe language was taken apart with ``startswith``/``split``/``partition`` in
some thirty places over seven files, each restating where the kind ends and the name begins; one parse, at
case construction, gives one answer. The kinds are not closed here: a suite may name its own, and the value
carries it unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

EXACT = "exact"
"""Exact by construction: every product and sum representable, so the answer is bit-exact."""
RANDOM = "random"
"""Random data, compared with a numeric model (``random:<model>`` names it)."""
PROBE = "probe"
"""``probe:<name>``: data built to observe one reading the spec leaves open."""
CONTROL = "control"
"""``control:<name>``: a control of the comparator itself (a deliberately perturbed result)."""
PLAIN = "plain"
"""``plain:<name>``: the tcgen05 suite's plain (non-block-scaled) forms."""
FEATURE = "feature"
"""``feature:<name>``: the tcgen05 suite's feature cases (ld/st, shift, ...)."""


@dataclass(frozen=True)
class Recipe:
    """One data recipe: ``kind`` (before the first ``:``) and ``name`` (after it; empty when absent)."""

    kind: str
    name: str = ""

    @staticmethod
    def parse(text: str) -> Recipe:
        """The recipe written as ``text`` (``kind`` or ``kind:name``); equal texts give the same object."""
        return _parse(text)

    def __str__(self) -> str:
        """The serialised form: ``kind`` or ``kind:name`` (``str(Recipe.parse(t)) == t``)."""
        return f"{self.kind}:{self.name}" if self.name else self.kind

    def is_kind(self, *kinds: str) -> bool:
        """True when this recipe is of one of ``kinds`` (``r.is_kind(EXACT, CONTROL)``)."""
        return self.kind in kinds


@cache
def _parse(text: str) -> Recipe:
    if not isinstance(text, str) or not text:
        raise ValueError(f"a data recipe is a non-empty string, not {text!r}")
    kind, sep, name = text.partition(":")
    if sep and not name:
        raise ValueError(f"data recipe {text!r}: nothing after ':' (write {kind!r} alone)")
    return Recipe(kind, name)
