"""The mma.sync block_scale suite's case records: the instruction form and the Table 37 selectors.

Declared once here (issue 25, item 1): the driver builds ``Case(form=MmaSyncForm(...),
runtime=Selectors(...))`` and reads attributes. Readers elsewhere that still go through the mapping view
(the mutant registry) see the same keys as before.
"""

from __future__ import annotations

from dataclasses import dataclass

from mmacts.core.fields import Fields


@dataclass(frozen=True)
class MmaSyncForm(Fields):
    """Compile-time qualifiers (one kernel module per form). Defaults: the first form of Tables 35/36."""

    kind: str = "mxf8f6f4"
    atype: str = "e4m3"
    btype: str = "e4m3"
    stype: str = "ue8m0"
    scale_vec: str = "1X"
    """Without the ``.scale_vec::`` prefix: ``1X``, ``2X`` or ``4X``."""


@dataclass(frozen=True)
class SelectorFields(Fields):
    """Run-time operands (``.b16`` registers): byte-id and thread-id of SF_A and SF_B (Table 37). Default 0:
    the value every scale_vec allows, and the one a form without selectors would mean."""

    bida: int = 0
    tida: int = 0
    bidb: int = 0
    tidb: int = 0
