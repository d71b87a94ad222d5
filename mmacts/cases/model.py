"""The case model: what one conformance case is, independent of how it runs.

A case is an instruction *form* (the compile-time PTX qualifiers, which pick the
kernel module), *run-time fields* (descriptor values, SF IDs, selectors: they
vary per case inside one module), a *data recipe* and the *spec rows* it covers.
Keeping form and run-time fields apart is what lets one assembled module serve
many cases in one launch.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from mmacts.cases.status import ORDER
from mmacts.core.recipe import Recipe

LEVELS: tuple[str, ...] = ("smoke", "standard", "full")
"""Run levels, smallest first. A case belongs to its level and every larger one."""

STATUSES: tuple[str, ...] = ORDER
"""Every status a case can end with (:mod:`mmacts.cases.status`). Nothing that was not obtained is a ``pass``."""

_SPEC_REF = re.compile(r"^(T\d+\.\d+|S\d+(\.\d+)*)$")


def level_rank(level: str) -> int:
    """Position of ``level`` in :data:`LEVELS`; raises ``ValueError`` for an unknown level."""
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}; expected one of {', '.join(LEVELS)}")
    return LEVELS.index(level)


def check_spec_ref(ref: str) -> str:
    """Validate a spec-row reference: ``T<table>.<row>`` (rows from 1) or ``S<section>``."""
    if not _SPEC_REF.match(ref):
        raise ValueError(f"bad spec reference {ref!r}: expected T<table>.<row> or S<section>")
    return ref


def _freeze(value: Any) -> Any:
    if isinstance(value, Mapping):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    return value


@dataclass(frozen=True)
class Case:
    """One conformance case.

    ``case_id`` is stable and readable: it names the instruction form, the run-time
    fields and the data recipe, so ``-k`` can select by any of them and a case keeps
    its ID when other cases are added.
    """

    case_id: str
    suite: str
    instruction: str
    """The PTX instruction as the kernel spells it (opcode and every qualifier)."""
    arch: str
    """The target the kernel is assembled for, e.g. ``sm_120a``."""
    spec_rows: tuple[str, ...]
    level: str = "standard"
    form: Mapping[str, Any] = field(default_factory=dict)
    """Compile-time choices: equal forms share one kernel module."""
    runtime: Mapping[str, Any] = field(default_factory=dict)
    """Run-time fields (selectors, descriptors, SF IDs); free to vary inside one module."""
    recipe: str = "exact"
    """Data recipe, serialised: ``exact`` (exact by construction), ``random[:<model>]``, ``probe:<name>``,
    ``control:<name>``, ... (:mod:`mmacts.core.recipe`); read it as a value from :attr:`parsed_recipe`."""
    seed: int = 0
    expect: str = "accept"
    """For compile cases: ``accept`` or ``reject``."""
    xfail: str = ""
    """Ambiguity-register entry that explains an expected deviation, if any."""

    def __post_init__(self) -> None:
        level_rank(self.level)
        for ref in self.spec_rows:
            check_spec_ref(ref)
        if self.expect not in ("accept", "reject"):
            raise ValueError(f"{self.case_id}: expect must be accept or reject, not {self.expect!r}")
        try:
            _ = self.parsed_recipe  # parsed once, here: a malformed recipe fails where the case is made
        except ValueError as exc:
            raise ValueError(f"{self.case_id}: {exc}") from exc

    @cached_property
    def parsed_recipe(self) -> Recipe:
        """:attr:`recipe` as a :class:`~mmacts.core.recipe.Recipe` (kind and name), parsed once."""
        return Recipe.parse(self.recipe)

    @property
    def form_key(self) -> tuple:
        """Hashable key of the compile-time form: cases with equal keys share a module."""
        return (self.suite, self.instruction, self.arch, _freeze(self.form))

    def in_level(self, level: str) -> bool:
        """True when this case runs at ``level``."""
        return level_rank(self.level) <= level_rank(level)
