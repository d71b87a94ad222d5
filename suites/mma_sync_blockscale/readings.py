"""The readings an mma.sync block_scale case takes for granted: open ambiguity-register entries its form rests
on beyond what its cited spec rows link (the driver's ``form_readings``).

They were rules in ``mmacts/ambiguity/assumes.py`` keyed on the suite's name and read by string keys; the
register floor sits below the suites and cannot see :class:`MmaSyncForm`, so the suite states what its
fragment encoders and the VM assume for a form (where an FP6 or FP4 value sits in its 8-bit slot, which lane
carries which scale-factor row, what the unselected scale bytes do). ``assumes`` keeps only the open ones.
"""

from __future__ import annotations

from collections.abc import Callable

from mmacts.cases.model import Case
from suites.mma_sync_blockscale.fields import MmaSyncForm


def _sub8(fm: MmaSyncForm, *types: str) -> bool:
    return bool({fm.atype, fm.btype} & set(types))


FORM_RULES: tuple[tuple[str, str, Callable[[MmaSyncForm], bool]], ...] = (
    ("AMB-MMASYNC-FP6-CONTAINER", "FP6 in its mma.sync 8-bit slot at bits [5:0]",
     lambda fm: fm.kind == "mxf8f6f4" and _sub8(fm, "e2m3", "e3m2")),
    ("AMB-FP4-HOLDER-BITS", "E2M1 in its 8-bit mma.sync slot at bits [5:2]",
     lambda fm: fm.kind == "mxf8f6f4" and _sub8(fm, "e2m1")),
    ("AMB-MMASYNC-SFA-ROW-MAP", "which lane of the selected pair carries which SF_A row", lambda fm: True),
    ("AMB-MMASYNC-SF-UNSELECTED", "unselected SF lanes/bytes contribute nothing", lambda fm: True),
)
"""(register id, why, applies to the form record)."""


def form_readings(case: Case) -> tuple[tuple[str, str], ...]:
    """(register id, why) of every reading ``case``'s form takes for granted."""
    fm = case.form if isinstance(case.form, MmaSyncForm) else MmaSyncForm.of(case.form)
    return tuple((amb, why) for amb, why, applies in FORM_RULES if applies(fm))
