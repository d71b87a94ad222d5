"""The typed record of a case's form / run-time fields: attributes to decide, a mapping to serialise."""

from __future__ import annotations

from dataclasses import FrozenInstanceError, dataclass

import pytest

from mmacts.cases.model import Case
from mmacts.core.fields import Fields


@dataclass(frozen=True)
class _Form(Fields):
    kind: str = "mxf8f6f4"
    swizzle: str = "128B"
    collectors: tuple[str, ...] = ()


def test_defaults_are_written_once_and_read_as_attributes() -> None:
    f = _Form.of(kind="mxf4")
    assert (f.kind, f.swizzle, f.collectors) == ("mxf4", "128B", ())


def test_a_misspelt_field_is_refused_by_name_not_taken_for_the_default() -> None:
    with pytest.raises(TypeError, match="_Form has no field swizle"):
        _Form.of({"swizle": "64B"})


def test_the_record_is_frozen_and_hashable_so_equal_forms_share_one_module() -> None:
    a, b = _Form.of(kind="mxf4"), _Form(kind="mxf4")
    assert a == b and hash(a) == hash(b)
    with pytest.raises(FrozenInstanceError):
        a.kind = "x"  # type: ignore[misc]
    ca = Case("c1", "s", "i", "sm_100a", (), form=a)
    cb = Case("c2", "s", "i", "sm_100a", (), form=b)
    assert ca.form_key == cb.form_key
    assert ca.form_key != Case("c3", "s", "i", "sm_100a", (), form=a.replace(swizzle="64B")).form_key


def test_the_mapping_view_is_every_field_for_serialisation() -> None:
    f = _Form.of(kind="mxf4")
    assert dict(f) == {"kind": "mxf4", "swizzle": "128B", "collectors": ()}
    assert len(f) == 3 and list(f) == ["kind", "swizzle", "collectors"]
    with pytest.raises(KeyError):
        f["nope"]
