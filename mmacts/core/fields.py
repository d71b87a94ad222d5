"""A case's form and run-time fields as a typed, frozen record (issue 25, item 1).

Each suite declares its records once: a frozen dataclass derived from :class:`Fields`, one attribute per field,
the default written beside it. Code reads ``case.form.kind``, not ``case.form["kind"]`` with the default
restated where it is read (the swizzle default ``"128B"`` was written in six places before).

A record is also a read-only :class:`~collections.abc.Mapping` of every field to its value. That view is the
record as data: the module key that groups equal forms into one launch (``Case.form_key``), the JSON a report
keeps, ``dict(case.form)`` handed to a generator that takes keyword fields. Code that *decides* something reads
attributes; only serialisation walks the mapping.

Why the base refuses unknown fields by name (:meth:`Fields.of`): a misspelt field in a dict was silently the
default; in a record it is a ``TypeError`` where the case is made.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any, TypeVar

F = TypeVar("F", bound="Fields")


@cache
def _names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls))


class Fields(Mapping[str, Any]):
    """Base of a suite's form and run-time records. Derive with ``@dataclass(frozen=True)``; every field needs a
    default (a case sets only what it varies) and a hashable value (tuples, not lists: equal forms share a module).
    """

    def __getitem__(self, key: str) -> Any:
        if key not in _names(type(self)):
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        return iter(_names(type(self)))

    def __len__(self) -> int:
        return len(_names(type(self)))

    def replace(self: F, **changes: Any) -> F:
        """This record with ``changes`` (a new record; this one is frozen)."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def of(cls: type[F], values: Mapping[str, Any] | None = None, **more: Any) -> F:
        """The record holding ``values`` and ``more``; an unknown field is a ``TypeError`` naming it and the
        record (a misspelt dict key used to be the default without a word)."""
        given = {**(values or {}), **more}
        unknown = sorted(set(given) - set(_names(cls)))
        if unknown:
            raise TypeError(f"{cls.__name__} has no field {', '.join(unknown)} (fields: {', '.join(_names(cls))})")
        return cls(**given)
