"""The form and run-time records of the suite's cases, declared once (issue 25, item 1).

Each default here is the one the suite's readers assumed where they read a field (``rt.get("swizzle_a",
"128B")``, ``rt.get("sf_stage", "st")``, ...); code reads attributes (``case.form.kind``). Three kinds of
case share the suite, so three pairs of records:

* the block-scaled MMA cases (``cases.make_case``): :class:`Tcgen05Form` / :class:`Tcgen05Runtime`;
* the plain-kind cases (``plain.py``: ``.ws``, disable-output-lane, layouts F/A, ...): :class:`PlainForm`
  (a kernel form without block scaling) / :class:`PlainRuntime`;
* the ld/st and shift feature cases (``features.py``): :class:`FeatureCaseForm` / :class:`OperandRuntime`.

The plain and feature forms keep every MMA form field (the feature cases with kind ``"none"``), so code
outside the suite that reads any tcgen05 case's form through the mapping view keeps working. Values are kept
as the cases give them (``transpose_a=1`` stays an int): the case records serialise them unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

from mmacts.cases.model import Case
from mmacts.core.fields import Fields


@dataclass(frozen=True)
class Tcgen05Form(Fields):
    """Compile-time fields of a block-scaled ``tcgen05.mma`` kernel (``mmacts.ptx.tcgen05_kernels.KernelForm``)."""

    kind: str = ""
    """``mxf8f6f4`` | ``mxf4`` | ``mxf4nvf4`` (a plain kind in :class:`PlainForm`; ``none`` for features)."""
    scale_vec: str | None = None
    """The ``.scale_vec`` / ``.block<N>`` spelling; ``None``: the qualifier is omitted."""
    cta_group: int = 1
    sparse: bool = False
    a_tmem: bool = False
    collectors: tuple[str | None, ...] = (None,)
    """One entry per MMA issued: ``None`` or ``fill``/``use``/``lastuse``/``discard``."""
    arch: str = "sm_100a"
    a_overwrite: bool = False
    """Probe collector_reuse: A's shared memory is overwritten between the fill and the use."""


@dataclass(frozen=True)
class PlainForm(Tcgen05Form):
    """A ``tcgen05.mma`` kernel of a kind without block scaling (``.ws`` buffers, disable-output-lane)."""

    block_scale: bool = False
    ws: bool = False
    dol: bool = False


@dataclass(frozen=True)
class FeatureCaseForm(Tcgen05Form):
    """A ``tcgen05.ld``/``st`` or ``shift`` feature kernel (``mmacts.ptx.tcgen05_feature_kernels.FeatureForm``);
    the MMA fields stay, with kind ``none`` (no MMA is issued)."""

    kind: str = "none"
    feature: str = ""
    """``ldst`` | ``shift``."""
    shape: str = ""
    lane_base: int = 0
    pack: bool = False


@dataclass(frozen=True)
class OperandRuntime(Fields):
    """Run-time fields every case of the suite has: the MMA shape, operand and scale types, SF IDs and staging
    (the feature cases set them to ``0`` / ``"none"``: they issue no MMA)."""

    m: int = 128
    n: int = 64
    k96: bool = False
    """K = 96 (``sm_103a``)."""
    atype: str = "e2m1"
    btype: str = "e2m1"
    stype: str = "ue8m0"
    sfa_id: int = 0
    sfb_id: int = 0
    sf_stage: str = "st"
    """How the scale factors reach tensor memory: ``st`` (preloaded) or ``cp`` (``tcgen05.cp`` from smem)."""


@dataclass(frozen=True)
class Tcgen05Runtime(OperandRuntime):
    """Run-time fields of a block-scaled MMA case (``cases.make_case``; read by ``build.build``)."""

    swizzle_a: str = "128B"
    swizzle_b: str = "128B"
    transpose_a: int = 0
    transpose_b: int = 0
    negate_a: int = 0
    negate_b: int = 0
    enable_d: bool = False
    a_reuse: bool = False
    """Collector cases: every MMA of the sequence uses the first K slice of A."""
    a_decoy: bool = False
    a_base_shift: int = 0
    b_base_shift: int = 0
    lbo_absolute: bool = False
    sf_addr_dirty: bool = False
    sfb_peer_x2: bool = False
    sf_nan_7f: bool = False
    sf_quadrant_only: int | None = None
    """Probe sf_quadrant: the true SF copy only in this lane quadrant (``None``: every quadrant)."""
    sf_decoy: int = 0x7F
    """The decoy scale code of the quadrant probe (0x7F: 1.0 in UE8M0)."""
    cp_probe: str = ""
    """Raw ``tcgen05.cp`` decompression probe: the source format (``b4x16_p64`` | ``b6x16_p32``); empty: none."""
    cp_shape: str = "128x128b"
    drop_cps: bool = False
    """Control sf_cp_missing: the SF copies are never issued."""


@dataclass(frozen=True)
class PlainRuntime(OperandRuntime):
    """Run-time fields of a plain-kind case (``plain.py``)."""

    enable_d: bool = False
    negate_a: bool = False
    d_lane: int = 0
    """D's TMEM address lane (Layout F allows 0 or 16)."""
    d_type: str = ""
    """D's type when not the kind's 32-bit default (``f16``)."""
    dol: tuple[int, ...] | None = None
    """The disable-output-lane mask words; ``None``: no mask."""
    dol_index: int = 0


def mma_records(case: Case) -> tuple[Tcgen05Form, Tcgen05Runtime]:
    """``case``'s form and run-time records, checked: the block-scaled builder reads their fields, and a case of
    another record type (plain, feature) or with plain mappings is refused by name, not read by default.
    A case is changed with its records' ``replace``, which keeps the types."""
    fm, rt = case.form, case.runtime
    if not (isinstance(fm, Tcgen05Form) and isinstance(rt, Tcgen05Runtime)):
        raise TypeError(f"{case.case_id}: not a block-scaled tcgen05.mma case (records {type(fm).__name__}, "
                        f"{type(rt).__name__})")
    return fm, rt
