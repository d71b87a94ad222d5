"""The compile suite's case records: one form record per instruction family, on one common base.

Declared once here (issue 25, item 1). A compile case's form is the instruction under test and its
qualifiers; which qualifiers exist depends on the instruction (``op``), so each family has its record and
:func:`compile_form` picks it by ``op``. Why not one record for all: the qualifier sets barely overlap
(tcgen05.mma has fifteen, tcgen05.wait one), and a default the module generator assumes for one family
(``shared_cta`` true for tcgen05.alloc, ``order`` ``syntax`` for tcgen05.shift, all-zero selectors for
mma.sync) would be a false statement about the others.

The generators write their forms as dicts (the case name is derived from the keys they set); the case holds
the record. :mod:`mmacts.ptx.compile_forms` and :mod:`mmacts.toolchain.conformance` read it through the
mapping view, where a field the case did not set reads as its default (``None``/``False``: absent).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mmacts.core.fields import Fields


@dataclass(frozen=True)
class CompileForm(Fields):
    """What every compile form has: the instruction (``op``, which picks the module generator), the PTX ISA
    version its module declares, and what the case records about itself (``why``: the rule that judged it;
    ``sass_mma_family``: the SASS MMA unit an accepted form must use; ``version_probe``: the version is part
    of the question, so it is named in the case id)."""

    op: str = ""
    ptx_version: str | None = None
    version_probe: bool = False
    why: str = ""
    sass_mma_family: str = ""


@dataclass(frozen=True)
class TcMmaForm(CompileForm):
    """tcgen05.mma (Table 39, the block-scale qualifiers, the operand options); ``None``/``False``: the
    qualifier or operand is absent."""

    kind: str | None = None
    cta_group: int | None = None
    ws: bool = False
    sparse: bool = False
    block_scale: bool = False
    scale_vec: str | None = None
    a_tmem: bool = False
    ashift: bool = False
    collector_a: str | None = None
    collector_b: str | None = None
    dol: int = 0
    """disable-output-lane vector size (0: absent)."""
    sid: int | None = None
    """scale-input-d immediate."""
    zcm: bool = False
    idesc: str | None = None
    """An immediate instruction descriptor (``None``: a register)."""
    idesc_tag: str | None = None


@dataclass(frozen=True)
class LdRed(Fields):
    """The ``.red`` qualifiers of tcgen05.ld.red."""

    op: str = "min"
    dtype: str = "u32"
    abs: bool = False
    nan: bool = False


@dataclass(frozen=True)
class LdStForm(CompileForm):
    """tcgen05.ld / tcgen05.st: shape, count, packing, immHalfSplitoff (``None``: absent), register-count
    override (``None``: what the shape needs), ``.red`` (``None``: a plain load)."""

    shape: str = ""
    num: int = 1
    pack: bool = False
    unpack: bool = False
    split: int | None = None
    nregs: int | None = None
    red: LdRed | None = None


@dataclass(frozen=True)
class CtaGroupForm(CompileForm):
    """A tcgen05 instruction whose one qualifier is ``.cta_group`` (tcgen05.dealloc, relinquish_alloc_permit),
    and the base of those with more."""

    cta_group: int = 1


@dataclass(frozen=True)
class CpForm(CtaGroupForm):
    """tcgen05.cp: ``multicast`` (``None``: none) and ``src_fmt`` (``None``: no decompression)."""

    shape: str = ""
    multicast: str | None = None
    src_fmt: str | None = None


@dataclass(frozen=True)
class AllocForm(CtaGroupForm):
    """tcgen05.alloc (``shared_cta``: the ``.shared::cta`` destination, what the generator writes when the
    form does not say)."""

    shared_cta: bool = True


@dataclass(frozen=True)
class ShiftForm(CtaGroupForm):
    """tcgen05.shift (``order``: how the module spells it, see ``mmacts.ptx.instructions.tcgen05_shift``)."""

    order: str = "syntax"


@dataclass(frozen=True)
class CommitForm(CtaGroupForm):
    """tcgen05.commit: ``multicast`` (a mask operand), ``shared_cluster`` (the mbarrier's state space)."""

    multicast: bool = False
    shared_cluster: bool = False


@dataclass(frozen=True)
class WaitFenceForm(CompileForm):
    """tcgen05.wait / tcgen05.fence: ``which`` (``ld``/``st``, ``before_thread_sync``/``after_thread_sync``)."""

    which: str = ""


@dataclass(frozen=True)
class MixedCtaForm(CompileForm):
    """Two tcgen05 instructions of different ``.cta_group`` in one kernel; ``first``: ``shift`` or ``cp``."""

    first: str = "cp"


@dataclass(frozen=True)
class MmaSyncBsForm(CompileForm):
    """mma.sync block_scale: kind, shape, types, ``scale_vec`` (``None``: omitted), the selectors (bida, tida,
    bidb, tidb) and whether they are registers instead of immediates."""

    kind: str = ""
    shape: str = ""
    atype: str = ""
    btype: str = ""
    stype: str = ""
    scale_vec: str | None = None
    sel: tuple[int, int, int, int] = (0, 0, 0, 0)
    sel_regs: bool = False


FORMS: dict[str, type[CompileForm]] = {
    "tcgen05.mma": TcMmaForm,
    "tcgen05.ld": LdStForm,
    "tcgen05.st": LdStForm,
    "tcgen05.cp": CpForm,
    "tcgen05.alloc": AllocForm,
    "tcgen05.dealloc": CtaGroupForm,
    "tcgen05.relinquish_alloc_permit": CtaGroupForm,
    "tcgen05.shift": ShiftForm,
    "tcgen05.commit": CommitForm,
    "tcgen05.wait": WaitFenceForm,
    "tcgen05.fence": WaitFenceForm,
    "tcgen05.mixed_cta_group": MixedCtaForm,
    "mma.sync.block_scale": MmaSyncBsForm,
}
"""The record of each instruction (``op``)."""


def compile_form(form: Mapping[str, Any]) -> CompileForm:
    """The record of a generator's form dict: its ``op``'s record (a key the record lacks is a ``TypeError``
    naming it; ``.red`` becomes its own record)."""
    values = dict(form)
    if isinstance(values.get("red"), Mapping):
        values["red"] = LdRed.of(values["red"])
    return FORMS[values["op"]].of(values)
