"""The ``descriptors`` suite's case records: the carrier instruction's form and the check a case runs.

Declared once here (issue 25, item 1). The form is the tcgen05.mma that would consume the descriptor a check
decodes (:func:`suites.descriptors.driver.carrier_form`); its fields are the keys of
:mod:`mmacts.ptx.compile_forms`, which assembles it from the mapping view (``dict(case.form)``).
"""

from __future__ import annotations

from dataclasses import dataclass

from mmacts.core.fields import Fields


@dataclass(frozen=True)
class CarrierForm(Fields):
    """A tcgen05.mma carrier (defaults: the shared-memory descriptor's carrier, ``kind::f16`` cta_group::1,
    A from shared memory, no block scale). ``scale_vec`` ``None``: the qualifier is omitted."""

    op: str = "tcgen05.mma"
    kind: str = "f16"
    cta_group: int = 1
    ws: bool = False
    sparse: bool = False
    block_scale: bool = False
    scale_vec: str | None = None
    a_tmem: bool = False
    zcm: bool = False


@dataclass(frozen=True)
class CheckRuntime(Fields):
    """The known-answer check a case runs: a name of ``suites.descriptors.checks.all_checks``."""

    check: str = ""
