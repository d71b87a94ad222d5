"""The mutant registry: every planted fault the suites must catch, as data.

Families (``Mutant.family``):

* ``idesc-host`` / ``idesc-vm`` -- every field of Tables 43 and 44 shifted one bit up, dropped (never
  written / never read) or swapped with its same-width partner, in the host encoder
  (``reference.tcgen05.idesc.FIELDS``) and in the VM's own decoder (``mmacts.ptxvm.tcgen05.decode``);
  ``t42-host`` / ``t45-host`` -- the same for Table 42 (kinds f16, tf32, f8f6f4, i8) and Table 45 (zero-column
  mask) in the reference decoders the ``descriptors`` suite judges;
* ``sdesc-host`` / ``sdesc-vm`` -- Table 40 fields (start, LBO, SBO, fixed bits, LBO mode, swizzle) and
  swizzle codes; ``swizzle-host`` / ``swizzle-vm`` -- Table 53 swizzle atoms;
* ``sf-host`` / ``sf-vm`` -- scale-factor cells in tensor memory: byte, lane, column, quadrant, group
  stride, SF ID;
* ``atmem-host`` / ``atmem-vm`` -- A in tensor memory: byte / nibble order, column, lane;
* ``dplace-host`` / ``dplace-vm`` -- D placement per datapath layout (A, B, D);
* ``packed-host`` / ``packed-vm`` -- 4/6-bit positions in shared memory (fp4x2 nibbles, padded chunks) and in
  mma.sync register slots;
* ``mmasync-host`` / ``mmasync-vm`` -- mma.sync A/B/C-D fragments, SF_A / SF_B lanes and bytes (thread-id,
  byte-id);
* ``comparator`` -- every compare mode: NaN on one or both sides, -0, infinities, ulp and bound tolerance;
  caught by the comparator controls (recipe ``control:*`` of ``tcgen05_blockscale``);
* ``kernel`` -- the planted PTX faults of :mod:`mmacts.mutants.kernel_faults`.

Each mutant names the spec rows whose reading it changes; ``coverage.json`` (written by
``mmacts selftest --mutants --write-coverage``) records which cases citing those rows caught it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from mmacts.cases.model import Case
from mmacts.compare.compare import ulp_distance
from mmacts.core import recipe as recipes
from mmacts.mutants import kernel_faults as KF
from mmacts.mutants.engine import Mutant, combine, rebind, setitem, wrap
from reference.tcgen05 import idesc
from reference.tcgen05.tmem_image import A_ELEMS
from suites.mma_sync_blockscale.fields import MmaSyncForm, SelectorFields
from suites.tcgen05_blockscale.fields import FeatureCaseForm, OperandRuntime, Tcgen05Form, Tcgen05Runtime

TC = "tcgen05_blockscale"
MS = "mma_sync_blockscale"
DS = "descriptors"
PE = "peers"


# ------------------------------------------------------------------------------------------ case picks
def tc(
    *,
    kind: tuple[str, ...] | str | None = None,
    cg: int | None = None,
    m: int | None = None,
    a_tmem: bool | None = None,
    recipe: str = "exact",
    where: Callable[[Case], bool] | None = None,
) -> Callable[[Case], bool]:
    """A ``tcgen05_blockscale`` case of ``recipe`` (``None``: any), the kinds, CTA group, M and A source given, for
    which ``where`` holds; ``where`` sees only cases whose records are a :class:`Tcgen05Form` (block-scaled, plain
    or feature) and an :class:`OperandRuntime` (every case of the suite)."""
    kinds = (kind,) if isinstance(kind, str) else kind

    def pick(c: Case) -> bool:
        f, r = c.form, c.runtime
        return (
            (recipe is None or c.recipe == recipe)
            and isinstance(f, Tcgen05Form) and isinstance(r, OperandRuntime)
            and (kinds is None or f.kind in kinds)
            and (cg is None or f.cta_group == cg)
            and (m is None or r.m == m)
            and (a_tmem is None or bool(f.a_tmem) == a_tmem)
            and (where is None or where(c))
        )

    return pick


def ms(where: Callable[[Case], bool] | None = None) -> Callable[[Case], bool]:
    """An ``mma_sync_blockscale`` case (records :class:`MmaSyncForm` / :class:`SelectorFields`) for which ``where``
    holds."""
    return lambda c: (isinstance(c.form, MmaSyncForm) and isinstance(c.runtime, SelectorFields)
                      and (where is None or where(c)))


def _mma_rt(test: Callable[[Tcgen05Runtime], object]) -> Callable[[Case], bool]:
    """``test`` of a block-scaled MMA case's run-time record (swizzles, transposes, negations: fields a plain-kind
    or feature case has not, for which the pick is False)."""
    return lambda c: isinstance(c.runtime, Tcgen05Runtime) and bool(test(c.runtime))


# ------------------------------------------------------------------------------------------ word transforms
def _bits(lo: int, width: int) -> int:
    return ((1 << width) - 1) << lo


def word_shift(lo: int, width: int) -> Callable[[int], int]:
    """The field at ``lo`` written one bit higher (the encoder's ``lo`` off by one)."""
    return lambda w: (w & ~_bits(lo, width)) | (((w >> lo) & ((1 << width) - 1)) << (lo + 1))


def word_drop(lo: int, width: int) -> Callable[[int], int]:
    return lambda w: w & ~_bits(lo, width)


def word_swap(lo1: int, lo2: int, width: int) -> Callable[[int], int]:
    def t(w: int) -> int:
        a, b = (w >> lo1) & ((1 << width) - 1), (w >> lo2) & ((1 << width) - 1)
        w &= ~(_bits(lo1, width) | _bits(lo2, width))
        return w | (a << lo2) | (b << lo1)

    return t


def word_set(lo: int) -> Callable[[int], int]:
    return lambda w: w | (1 << lo)


def _on_result(transform: Callable[[int], int]) -> Callable[[Callable], Callable]:
    return lambda orig: lambda *a, **k: transform(orig(*a, **k))


def _on_arg(transform: Callable[[int], int], pos: int) -> Callable[[Callable], Callable]:
    def factory(orig):
        def f(*a, **k):
            a = list(a)
            a[pos] = transform(int(a[pos]))
            return orig(*a, **k)

        return f

    return factory


# ------------------------------------------------------------------------------------------ Tables 43/44
IDESC_ROWS: dict[str, dict[str, int]] = {
    "T43": {
        "sparse": 2,
        "sfb_id": 4,
        "atype": 6,
        "btype": 7,
        "negate_a": 8,
        "negate_b": 9,
        "transpose_a": 10,
        "transpose_b": 11,
        "n": 12,
        "scale_type": 13,
        "m": 15,
        "sfa_id": 16,
    },
    "T44": {
        "sparse": 2,
        "sfb_id": 4,
        "atype": 6,
        "btype": 7,
        "negate_a": 9,
        "negate_b": 10,
        "transpose_a": 11,
        "transpose_b": 12,
        "n": 13,
        "scale_type": 14,
        "m": 16,
        "sfa_id": 17,
        "k96": 18,
    },
}
IDESC_KINDS = {"T43": ("mxf8f6f4",), "T44": ("mxf4", "mxf4nvf4")}
SWAPS = (("sfa_id", "sfb_id"), ("atype", "btype"), ("transpose_a", "transpose_b"), ("sparse", "scale_type"))
"""Same-width partners. Not negate_a <-> negate_b: negating A or B gives the same product (an equivalent
mutant, no data can tell them apart)."""
INVALID = (
    r"idesc|not a Table 39|Table 39|sparsity|scale factors per row|not valid|not allowed|needs sm_103"
    r"|shared-memory address .* outside"
)
"""An MMA the VM refuses because the mutated idesc is one the tables make invalid."""


def _idesc_pick(table: str, key: str) -> Callable[[Case], bool]:
    kinds = IDESC_KINDS[table]
    special = {
        "negate_a": _mma_rt(lambda r: r.negate_a),
        "negate_b": _mma_rt(lambda r: r.negate_b),
        "transpose_a": _mma_rt(lambda r: r.transpose_a),
        "transpose_b": _mma_rt(lambda r: r.transpose_b),
        "sfa_id": lambda c: bool(c.runtime.sfa_id),
        "sfb_id": lambda c: bool(c.runtime.sfb_id),
        "k96": lambda c: bool(c.runtime.k96),
        # a non-zero code (E4M3 = 0 survives a shift or a drop) that differs from the other operand's
        "atype": (lambda c: c.runtime.atype not in ("e4m3", c.runtime.btype))
        if table == "T43"
        else (lambda c: True),
        "btype": (lambda c: c.runtime.btype not in ("e4m3", c.runtime.atype))
        if table == "T43"
        else (lambda c: True),
        "scale_type": (lambda c: True) if table == "T43" else (lambda c: c.runtime.stype == "ue8m0"),
        "m": lambda c: c.form.cta_group == 2,
        # N > 128: the shifted or dropped N is one Table 39 does not list. (N <= 128 doubled is an
        # equivalent mutant: the extra columns of D are never read back, and in Layout B the per-CTA halves
        # of B move with it.)
        "n": lambda c: c.runtime.n > 128 and c.form.cta_group == 1,
        "sparse": lambda c: True,
    }
    if table == "T44" and key.startswith("transpose"):
        return tc(kind=kinds, where=lambda c: True)
    if key == "sparse":  # only the (probe) sparse cases carry a 1 here; the VM refuses a mismatch
        return tc(kind=kinds, recipe=None, where=lambda c: bool(c.form.sparse))
    return tc(kind=kinds, where=special[key])


def _host_fields(kind: str):
    return {f.name: f for f in idesc.FIELDS[kind]}


def _idesc_mutants() -> list[Mutant]:
    """Per instruction-descriptor field of Tables 43/44: host encoder and VM decoder each shifted, dropped, and
    every allowed pair of fields swapped (a field Table 44 fixes at 0 is set to 1 instead)."""
    out: list[Mutant] = []
    for table, rows in IDESC_ROWS.items():
        kinds = IDESC_KINDS[table]
        hf = _host_fields(kinds[0])
        for key, row in rows.items():
            ref, pick = (f"{table}.{row}",), _idesc_pick(table, key)
            if table == "T44" and key.startswith("transpose"):
                # Table 44 allows only 0 here: shifting or dropping a 0 changes nothing; a stray 1 must show
                out += _idesc_set_mutants(table, key, kinds, hf[key], ref, pick)
            else:
                out += _idesc_field_mutants(table, key, kinds, hf[key], ref, pick)
        out += _idesc_swap_mutants(table, rows, kinds, hf)
    return out


def _idesc_set_mutants(table: str, key: str, kinds: tuple[str, ...], f: Any, ref: tuple[str, ...],
                       pick: Callable[[Case], bool]) -> list[Mutant]:
    """A field that must be 0 set to 1, by the host encoder and by the VM decoder."""
    out: list[Mutant] = []
    for side, plant in (
        ("host", wrap("reference.tcgen05.idesc", "encode_idesc", _on_result(word_set(f.lo)))),
        ("vm", wrap("mmacts.ptxvm.tcgen05.decode", "decode_idesc", _vm_idesc_word(kinds, word_set(f.lo)))),
    ):
        out.append(
            Mutant(
                f"idesc-{side}.{table}.{key}.set",
                f"idesc-{side}",
                f"{table} {key} (must be 0) set to 1 ({side})",
                ref,
                plant,
                TC,
                pick,
                refusal=INVALID,
            )
        )
    return out


def _idesc_field_mutants(table: str, key: str, kinds: tuple[str, ...], f: Any, ref: tuple[str, ...],
                         pick: Callable[[Case], bool]) -> list[Mutant]:
    """One field one bit higher / never written, by the host encoder's table and by the VM decoder's."""
    out: list[Mutant] = []
    # host: the encoder's table (FIELDS) moved one bit up / the field never written
    shift_host = combine(*(setitem("reference.tcgen05.idesc", "FIELDS", k, _field_lo(key, +1)) for k in kinds))
    out.append(
        Mutant(
            f"idesc-host.{table}.{key}.shift",
            "idesc-host",
            f"host encoder writes {table} {key} one bit higher (bit {f.lo + 1})",
            ref,
            shift_host,
            TC,
            pick,
            refusal=INVALID,
            fast=key in ("sfa_id",),
        )
    )
    out.append(
        Mutant(
            f"idesc-host.{table}.{key}.drop",
            "idesc-host",
            f"host encoder never writes {table} {key} (bits {f.lo}-{f.lo + f.width - 1})",
            ref,
            wrap("reference.tcgen05.idesc", "encode_idesc", _on_result(word_drop(f.lo, f.width))),
            TC,
            pick,
            refusal=INVALID,
        )
    )
    # VM: the decoder's own field table read one bit higher / the field ignored (reads 0)
    out.append(
        Mutant(
            f"idesc-vm.{table}.{key}.shift",
            "idesc-vm",
            f"VM decoder reads {table} {key} one bit higher",
            ref,
            wrap("mmacts.ptxvm.tcgen05.decode", "idesc_layout", _vm_layout_shift(kinds, key)),
            TC,
            pick,
            refusal=INVALID,
            fast=key in ("negate_b",),
        )
    )
    out.append(
        Mutant(
            f"idesc-vm.{table}.{key}.drop",
            "idesc-vm",
            f"VM decoder ignores {table} {key} (reads 0)",
            ref,
            wrap("mmacts.ptxvm.tcgen05.decode", "decode_idesc", _vm_idesc_drop(kinds, f.lo, f.width)),
            TC,
            pick,
            refusal=INVALID,
        )
    )
    return out


def _idesc_swap_mutants(table: str, rows: dict[str, str], kinds: tuple[str, ...], hf: Any) -> list[Mutant]:
    """Two fields' bit positions swapped (host) / read from each other's bits (VM)."""
    out: list[Mutant] = []
    for a, b in SWAPS:
        if a not in hf or b not in hf or (table == "T44" and a in ("atype", "transpose_a")):
            continue  # Table 44 allows one value for both fields (E2M1 / no transpose): an equivalent swap
        fa, fb = hf[a], hf[b]
        width = min(fa.width, fb.width)
        ref = (f"{table}.{rows[a]}", f"{table}.{rows[b]}")
        pick = (lambda pa, pb: lambda c: pa(c) or pb(c))(_idesc_pick(table, a), _idesc_pick(table, b))
        out.append(
            Mutant(
                f"idesc-host.{table}.{a}<->{b}",
                "idesc-host",
                f"host encoder swaps the {table} {a} and {b} bit positions",
                ref,
                combine(*(setitem("reference.tcgen05.idesc", "FIELDS", k, _field_swap(a, b)) for k in kinds)),
                TC,
                pick,
                refusal=INVALID if a == "sparse" else "",
                fast=(table, a) in (("T44", "sfa_id"),),
                limit=8,
            )
        )
        out.append(
            Mutant(
                f"idesc-vm.{table}.{a}<->{b}",
                "idesc-vm",
                f"VM decoder reads {table} {a} from {b}'s bits and back",
                ref,
                wrap(
                    "mmacts.ptxvm.tcgen05.decode",
                    "decode_idesc",
                    _vm_idesc_word(kinds, word_swap(fa.lo, fb.lo, width)),
                ),
                TC,
                pick,
                refusal=INVALID if a == "sparse" else "",
                limit=8,
            )
        )
    return out


def _field_lo(key: str, delta: int):
    return lambda fields: tuple(replace(f, lo=f.lo + delta) if f.name == key else f for f in fields)


def _field_swap(a: str, b: str):
    def t(fields):
        lo = {f.name: f.lo for f in fields}
        return tuple(
            replace(f, lo=lo[b]) if f.name == a else replace(f, lo=lo[a]) if f.name == b else f for f in fields
        )

    return t


def _vm_layout_shift(kinds: tuple[str, ...], key: str):
    def factory(orig):
        def layout(kind):
            fs = orig(kind)
            if kind not in kinds:
                return fs
            return tuple(replace(f, lo=f.lo + 1, hi=f.hi + 1) if f.key == key else f for f in fs)

        return layout

    return factory


def _vm_idesc_word(kinds: tuple[str, ...], transform: Callable[[int], int]):
    def factory(orig):
        def dec(kind, word, *a, **k):
            return orig(kind, transform(int(word)) if kind in kinds else word, *a, **k)

        return dec

    return factory


def _vm_idesc_drop(kinds, lo, width):
    return _vm_idesc_word(kinds, word_drop(lo, width))


# ------------------------------------------------------------------------------------------ Table 40
SDESC_FIELDS = {
    "start": (0, 14, 1),
    "lbo": (16, 14, 2),
    "sbo": (32, 14, 3),
    "fixed_46_48": (46, 3, 4),
    "base_offset": (49, 3, 5),
    "lbo_mode": (52, 1, 6),
    "fixed_53_60": (53, 8, 7),
    "swizzle": (61, 3, 8),
}
SDESC_INVALID = r"descriptor|shared-memory address|outside|smem operand|swizzle|must be"


def _sdesc_pick(key: str) -> Callable[[Case], bool]:
    none_sw = _mma_rt(lambda r: r.swizzle_a == "none" or r.swizzle_b == "none")
    mn = _mma_rt(lambda r: r.transpose_a or r.transpose_b)
    return {
        "start": tc(where=lambda c: c.runtime.n >= 64),
        "lbo": tc(where=lambda c: none_sw(c) or mn(c)),
        "sbo": tc(where=lambda c: True),
        "swizzle": tc(where=_mma_rt(lambda r: r.swizzle_a != "none")),
        # absolute LBO mode only changes rows longer than 128 B (none here): with a non-128B swizzle the
        # word is one 9.7.16.3.1.2.1 forbids
        "lbo_mode": tc(where=_mma_rt(lambda r: r.swizzle_a not in ("128B", "128B_base32B"))),
    }.get(key, tc(where=lambda c: True))


def _host_sdesc(transform) -> Callable[[], object]:
    return wrap("reference.tcgen05.smem_desc", "encode_smem_desc", _on_result(transform))


def _vm_sdesc(transform) -> Callable[[], object]:
    return wrap("mmacts.ptxvm.tcgen05.decode", "decode_smem_desc", _on_arg(transform, 0))


def _swizzle_code_swap(a: int, b: int) -> Callable[[int], int]:
    def t(w: int) -> int:
        code = (w >> 61) & 7
        new = b if code == a else a if code == b else code
        return (w & ~(7 << 61)) | (new << 61)

    return t


def _sdesc_mutants() -> list[Mutant]:
    out: list[Mutant] = []
    for key, (lo, width, row) in SDESC_FIELDS.items():
        ref = (f"T40.{row}",)
        pick = _sdesc_pick(key)
        fixed = key in ("fixed_46_48", "fixed_53_60", "lbo_mode")
        ops = [("shift", word_shift(lo, width) if not fixed else word_set(lo + (1 if key == "fixed_46_48" else 0)))]
        if key != "fixed_53_60" and key != "lbo_mode":
            ops.append(("drop", word_drop(lo, width)))
        if key == "base_offset":
            ops = [("set", word_set(lo))]  # exact cases carry base offset 0: a stray 1 must show
        for op, t in ops:
            for side, plant in (("host", _host_sdesc(t)), ("vm", _vm_sdesc(t))):
                out.append(
                    Mutant(
                        f"sdesc-{side}.T40.{key}.{op}",
                        f"sdesc-{side}",
                        f"{'host encoder writes' if side == 'host' else 'VM decoder reads'} Table 40 {key} {op}",
                        ref,
                        plant,
                        TC,
                        pick,
                        refusal=SDESC_INVALID,
                        fast=(key, op, side) == ("sbo", "drop", "host"),
                    )
                )
    swaps = (("lbo", "sbo"), ("start", "lbo"))
    for a, b in swaps:
        (la, wa, ra), (lb, _, rb) = SDESC_FIELDS[a], SDESC_FIELDS[b]
        for side, wrapper in (("host", _host_sdesc), ("vm", _vm_sdesc)):
            out.append(
                Mutant(
                    f"sdesc-{side}.T40.{a}<->{b}",
                    f"sdesc-{side}",
                    f"Table 40 {a} and {b} swapped ({side})",
                    (f"T40.{ra}", f"T40.{rb}"),
                    wrapper(word_swap(la, lb, wa)),
                    TC,
                    tc(where=lambda c: True),
                    refusal=SDESC_INVALID,
                )
            )
    for a, b, na, nb in ((2, 4, "128B", "64B"), (4, 6, "64B", "32B"), (0, 6, "none", "32B")):
        pick = tc(
            where=_mma_rt(lambda r, x=na, y=nb: r.swizzle_a in (x, y) or r.swizzle_b in (x, y))
        )
        out.append(
            Mutant(
                f"sdesc-host.T40.swizzle-code-{na}<->{nb}",
                "sdesc-host",
                f"host encoder swaps the swizzle codes of {na} and {nb}",
                ("T40.8",),
                _host_sdesc(_swizzle_code_swap(a, b)),
                TC,
                pick,
                refusal=SDESC_INVALID,
            )
        )
        out.append(
            Mutant(
                f"sdesc-vm.T40.swizzle-code-{na}<->{nb}",
                "sdesc-vm",
                f"VM decoder maps swizzle code {a} to {nb} and {b} to {na}",
                ("T40.8",),
                wrap(
                    "mmacts.ptxvm.tcgen05.decode",
                    "swizzle_codes",
                    lambda orig, a=a, b=b: lambda: {**orig(), a: orig()[b], b: orig()[a]},
                ),
                TC,
                pick,
                refusal=SDESC_INVALID,
            )
        )
    return out


# ------------------------------------------------------------------------------------------ Table 53 atoms
SMI = "reference.tcgen05.smem_image"
T53_ROWS = {("K", "128B"): 4, ("MN", "128B"): 3, ("K", "64B"): 6, ("MN", "64B"): 5, ("K", "32B"): 8, ("MN", "32B"): 7}


def _swizzle_mutants() -> list[Mutant]:
    out = []
    host = {  # what the chunk index of atom row rr is XORed with (smem_image.ATOM_CHUNK_XOR)
        "128B": lambda rr: rr >> 1,
        "64B": lambda rr: rr & 1,
        "32B": lambda rr: rr >> 1 & 1,
    }
    for sw, vm_new in (("128B", (2, 4, 3, 128)), ("64B", (1, 4, 3, 64)), ("32B", (1, 5, 3, 32))):
        rows = (f"T53.{T53_ROWS[('K', sw)]}", f"T53.{T53_ROWS[('MN', sw)]}")
        pick = tc(where=_mma_rt(lambda r, s=sw: r.swizzle_a == s or r.swizzle_b == s))
        out.append(
            Mutant(
                f"swizzle-host.T53.{sw}",
                "swizzle-host",
                f"host image: the {sw} atom permutes chunks wrongly",
                rows,
                setitem(SMI, "ATOM_CHUNK_XOR", sw, lambda _xor, f=host[sw]: f),
                TC,
                pick,
                fast=sw == "64B",
            )
        )
        out.append(
            Mutant(
                f"swizzle-vm.T53.{sw}",
                "swizzle-vm",
                f"VM swizzle {sw} as Swizzle{vm_new[:3]}",
                rows,
                setitem("mmacts.ptxvm.tcgen05.smem_operand", "SWIZZLES", sw, lambda _o, v=vm_new: v),
                TC,
                pick,
            )
        )
    return out


def _base32b_rows_mutants() -> list[Mutant]:
    """Table 53's 8x4 atom of the 128B swizzle with 32B atoms (4 K rows per SBO step, AMB-T53-32B-ATOM-SIZE):
    back to 8 rows per group, on each side alone."""
    pick = lambda c: ".SW128_32B." in c.case_id  # noqa: E731  (CUTLASS's values for this layout: peers)
    return [
        Mutant("atom-rows-host.T53.1", "swizzle-host", "reference walk: 128B/32B-atom groups of 8 K rows, not 4",
               ("T53.1",), wrap(SMI, "mn_rows_per_sbo_step", lambda _rows: lambda swizzle: 8), PE, pick,
               limit=20),
        Mutant("atom-rows-vm.T53.1", "swizzle-vm", "VM: 128B/32B-atom operands read with 8 K rows per SBO step",
               ("T53.1",), setitem("mmacts.ptxvm.tcgen05.smem_operand", "MN_ATOM_ROWS", "128B_base32B", lambda _o: 8),
               PE, pick, limit=20),
    ]


# ------------------------------------------------------------------------------------------ scale factors
SF_ROWS = ("S9.7.16.10.7",)
SFID_ROWS = ("S9.7.16.10.7.2", "S9.7.16.10.7.3")
TI = "reference.tcgen05.tmem_image"


def _sfa_groups_8_apart(sf_group_columns: Callable[..., int]) -> Callable[..., int]:
    """``tmem_image.sf_group_columns`` with SFA's 4-SF groups 8 columns apart on the 4x1 datapath (the spec: 4).

    A mutant against a named seam (issue 25, item 4): the function is replaced by name, so a rewrite of its
    body that keeps what it answers keeps the mutant valid (a regex over its source would not)."""
    def mutated(which: str, *, datapath: str = "4x1", n: int | None = None) -> int:
        if which == "A" and datapath == "4x1":
            return 8
        return sf_group_columns(which, datapath=datapath, n=n)
    return mutated


def _written_one_column_right(write: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
    """A host TMEM writer (``tmem_image.write_sf`` / ``write_a``) that writes everything one column right of
    its address: the address it is given, column + 1."""
    def mutated(tmem: np.ndarray, data: np.ndarray, *, addr: int, **kw: object) -> np.ndarray:
        return write(tmem, data, addr=addr + 1, **kw)
    return mutated


def _reversed_slots(*elems: str) -> Callable[[Callable[..., np.ndarray]], Callable[..., np.ndarray]]:
    """``tmem_image.a_slot`` with the slots of a cell in reverse order (highest k lowest) for ``elems``."""
    def factory(a_slot: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
        def mutated(kk: np.ndarray, elem: str) -> np.ndarray:
            slot = a_slot(kk, elem)
            return A_ELEMS[elem] - 1 - slot if elem in elems else slot
        return mutated
    return factory

VMMMA = "mmacts.ptxvm.tcgen05.mma"
BUILD = "suites.tcgen05_blockscale.build"
VMTO = "mmacts.ptxvm.tcgen05.tmem_operand"
VMDP = "mmacts.ptxvm.tcgen05.datapath"


def _sfb_groups_4_apart(sf_group_stride: Callable[..., int]) -> Callable[..., int]:
    """The VM's ``tcgen05.mma.sf_group_stride`` with SFB's 4-SF groups 4 columns apart for every N (4x1)."""
    def mutated(which: str, two_x_two: bool, n: int) -> int:
        return 4 if which == "B" and not two_x_two else sf_group_stride(which, two_x_two, n)
    return mutated


def _a_slot_reversed(bits: int) -> Callable[[Callable[..., tuple]], Callable[..., tuple]]:
    """A wrap factory for the VM's ``tmem_operand.a_tmem_slot``: elements of ``bits`` bits highest-k-first in
    their TMEM cell (the other widths untouched)."""
    def factory(a_tmem_slot: Callable[..., tuple]) -> Callable[..., tuple]:
        def mutated(width: int, k: np.ndarray) -> tuple:
            col, bit = a_tmem_slot(width, k)
            return (col, 32 - width - bit) if width == bits else (col, bit)
        return mutated
    return factory


def _leader_sfb(sf_copy_read_by: Callable[..., tuple]) -> Callable[..., tuple]:
    """The VM's ``tcgen05.mma.sf_copy_read_by`` with every D cell reading the leader CTA's SFB copy."""
    def mutated(which: str, cta: np.ndarray, lane: np.ndarray) -> tuple:
        copy_cta, quadrant = sf_copy_read_by(which, cta, lane)
        return (copy_cta if which == "A" else copy_cta * 0), quadrant
    return mutated


def _ue4m3_7f_as_480(applies: Callable[..., bool]) -> Callable[[Callable[..., np.ndarray]], Callable[..., np.ndarray]]:
    """A wrap factory for a VM scale-value table (``tcgen05.mma.value_table``, ``warpmma.formats.scale_table``):
    UE4M3 code 0x7F decoded as 480 (not NaN) in the tables ``applies(*args)`` selects."""
    def factory(table: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
        def mutated(*args: str) -> np.ndarray:
            t = table(*args)
            if not applies(*args):
                return t
            t = t.copy()
            t[0x7F] = 480.0
            return t
        return mutated
    return factory


def _dol_msb_first(dol_bit: Callable[..., tuple]) -> Callable[..., tuple]:
    """The VM's ``datapath.dol_bit`` counting the bits of each disable-output-lane word from the top."""
    def mutated(lane: np.ndarray) -> tuple:
        word, bit = dol_bit(lane)
        return word, 31 - bit
    return mutated


_SF_K96_WIDE = tc(where=lambda c: bool(c.runtime.k96) and c.runtime.n > 128)
_SF_LAY_B = tc(cg=2, m=128)
_SF_SFID = tc(where=lambda c: bool(c.runtime.sfa_id or c.runtime.sfb_id))
_SF_ANYC = tc()


def _sf_mutants() -> list[Mutant]:
    return _sf_host_mutants() + _sf_vm_mutants()


def _sf_host_mutants() -> list[Mutant]:
    """The host's scale-factor images (tensor-memory layout, SF IDs, copies) misplaced."""
    return [
        Mutant(
            "sf-host.byte-order",
            "sf-host",
            "host writes SF index g at byte 3 - g%4 of its cell",
            SFID_ROWS,
            wrap(TI, "sf_byte", lambda _byte: lambda g: 3 - g % 4),
            TC,
            _SF_SFID,
            fast=True,
        ),
        Mutant(
            "sf-host.lane+1",
            "sf-host",
            "host writes SF of MN index x one lane up",
            SF_ROWS,
            wrap(TI, "sf_partition_lane", lambda _lane: lambda x: (x + 1) % 32),
            TC,
            _SF_ANYC,
        ),
        Mutant(
            "sf-host.column+1",
            "sf-host",
            "host writes the SF columns one column right",
            SF_ROWS,
            wrap(TI, "write_sf", _written_one_column_right),
            TC,
            _SF_ANYC,
        ),
        Mutant(
            "sf-host.quadrant0-only",
            "sf-host",
            "host writes the SF copies into lane quadrant 0 only",
            SF_ROWS,
            setitem(TI, "SF_REPLICA_LANES", "quadrants", lambda _lanes: (0, 0, 0, 0)),
            TC,
            tc(m=256),
            fast=True,
        ),
        Mutant(
            "sf-host.layoutB-sfb-half",
            "sf-host",
            "host puts the second N half of Layout B SFB at lane 32, not 64",
            SF_ROWS + ("S9.7.16.10.5",),
            lambda: rebind(TI, "SFB_2X2_SECOND_HALF_LANE", 32),
            TC,
            _SF_LAY_B,
        ),
        Mutant(
            "sf-host.group-stride",
            "sf-host",
            "host SFA 4-SF groups 8 columns apart (4x1)",
            SF_ROWS,
            wrap(TI, "sf_group_columns", _sfa_groups_8_apart),
            TC,
            # only a K = 96 MMA reads SFs of two groups (SF ID 2-3 + 3 or 6 scales); elsewhere the host's
            # per-MMA address already steps over whole groups with the same stride
            tc(where=lambda c: bool(c.runtime.k96) and c.runtime.sfa_id >= 2),
        ),
        Mutant(
            "sf-host.sf-id-slot",
            "sf-host",
            "host puts scale f at slot sf_id + f + 1",
            SFID_ROWS,
            wrap(BUILD, "sf_slots", lambda sf_slots: lambda sf, sf_id: sf_slots(sf, sf_id + 1)),
            TC,
            _SF_ANYC,
        ),
    ]


def _sf_vm_mutants() -> list[Mutant]:
    """The VM's scale-factor reads (byte, lane, column, group stride, copies) misplaced."""
    return [
        Mutant(
            "sf-vm.byte-order",
            "sf-vm",
            "VM reads SF index g from byte 3 - g%4",
            SFID_ROWS,
            wrap(VMMMA, "sf_byte", lambda sf_byte: lambda g: 3 - sf_byte(g)),
            TC,
            _SF_SFID,
        ),
        Mutant(
            "sf-vm.lane+1",
            "sf-vm",
            "VM reads SF of MN index x one lane up",
            SF_ROWS,
            wrap(VMMMA, "sf_lane", lambda sf_lane: lambda quadrant, x: sf_lane(quadrant, x + 1)),
            TC,
            _SF_ANYC,
        ),
        Mutant(
            "sf-vm.column+1",
            "sf-vm",
            "VM reads the SF columns one column right",
            SF_ROWS,
            wrap(VMMMA, "sf_column", lambda sf_column: lambda *a: sf_column(*a) + 1),
            TC,
            _SF_ANYC,
            fast=True,
        ),
        Mutant(
            "sf-vm.sf-id-ignored",
            "sf-vm",
            "VM ignores the SF ID (g = j)",
            SFID_ROWS,
            wrap(VMMMA, "sf_index", lambda sf_index: lambda sf_id, j: sf_index(0, j)),
            TC,
            _SF_SFID,
        ),
        Mutant(
            "sf-vm.sfb-group-stride",
            "sf-vm",
            "VM SFB groups 4 columns apart for every N (4x1)",
            SF_ROWS + ("T54.4", "T54.6"),
            wrap(VMMMA, "sf_group_stride", _sfb_groups_4_apart),
            TC,
            _SF_K96_WIDE,
        ),
    ]


# ------------------------------------------------------------------------------------------ A in TMEM
AT_ROWS8 = ("S9.7.16.10.4.3", "T51.2")
AT_ROWS4 = ("S9.7.16.10.4.5", "T51.2")


def _atmem_mutants() -> list[Mutant]:
    a8 = tc(kind="mxf8f6f4", a_tmem=True)
    a4 = tc(kind=("mxf4", "mxf4nvf4"), a_tmem=True)
    anya = tc(a_tmem=True)
    return [
        Mutant(
            "atmem-host.byte-order",
            "atmem-host",
            "host packs A bytes highest-k-first in a TMEM cell",
            AT_ROWS8,
            wrap(TI, "a_slot", _reversed_slots(*(e for e in A_ELEMS if e != "fp4x2"))),
            TC,
            a8,
            fast=True,
        ),
        Mutant(
            "atmem-host.nibble-order",
            "atmem-host",
            "host packs mxf4 A nibbles highest-k-first",
            AT_ROWS4,
            wrap(TI, "a_slot", _reversed_slots("fp4x2")),
            TC,
            a4,
        ),
        Mutant(
            "atmem-host.column+1",
            "atmem-host",
            "host writes A one TMEM column right",
            AT_ROWS8 + AT_ROWS4[:1],
            wrap(TI, "write_a", _written_one_column_right),
            TC,
            anya,
        ),
        Mutant(
            "atmem-host.lane+1",
            "atmem-host",
            "host writes A row x in lane x + 1",
            AT_ROWS8 + AT_ROWS4[:1],
            wrap(TI, "a_lanes", lambda a_lanes: lambda m, **kw: (a_lanes(m, **kw) + 1) % 128),
            TC,
            anya,
        ),
        Mutant(
            "atmem-vm.byte-order",
            "atmem-vm",
            "VM reads A bytes highest-k-first",
            AT_ROWS8,
            wrap(VMTO, "a_tmem_slot", _a_slot_reversed(8)),
            TC,
            a8,
        ),
        Mutant(
            "atmem-vm.nibble-order",
            "atmem-vm",
            "VM reads mxf4 A nibbles highest-k-first",
            AT_ROWS4,
            wrap(VMTO, "a_tmem_slot", _a_slot_reversed(4)),
            TC,
            a4,
        ),
        Mutant(
            "atmem-vm.lane+1",
            "atmem-vm",
            "VM reads A row x from lane x + 1",
            AT_ROWS8 + AT_ROWS4[:1],
            wrap(VMTO, "a_tmem_lanes", lambda a_tmem_lanes: lambda rows, copy: np.roll(a_tmem_lanes(rows, copy), -1)),
            TC,
            anya,
        ),
    ]


# ------------------------------------------------------------------------------------------ D placement
D_ROWS = ("S9.7.16.10.5",)
MACHINE = "reference.tcgen05_model.machine"


_Placement = tuple[np.ndarray, np.ndarray, np.ndarray]
"""What ``machine.d_placement`` answers: (cta, lane, column) of every D(m, n)."""


def _placement_of(layout: str, change: Callable[[np.ndarray, np.ndarray, np.ndarray], _Placement]
                  ) -> Callable[[Callable[..., _Placement]], Callable[..., _Placement]]:
    """A wrap factory for a D placement function -- the host's ``machine.d_placement``, the VM's
    ``tcgen05.datapath.d_cells``, both ``(layout, M, N) -> (cta, lane, column)`` -- whose arrays for ``layout`` go
    through ``change``; the other layouts are untouched (a mutant against the named function, not its source)."""
    def factory(d_placement: Callable[..., _Placement]) -> Callable[..., _Placement]:
        def mutated(which: str, m_total: int, n: int, *rest: object) -> _Placement:
            out = d_placement(which, m_total, n, *rest)  # rest: the host's lane_align where given
            return change(*out) if which == layout else out
        return mutated
    return factory


def _dplace_mutants() -> list[Mutant]:
    return [
        Mutant(
            "dplace-host.layoutD-lane",
            "dplace-host",
            "host reads Layout D row m from lane m+1",
            D_ROWS,
            wrap(MACHINE, "d_placement", _placement_of("D", lambda cta, lane, col: (cta, (lane + 1) % 128, col))),
            TC,
            tc(cg=1),
            fast=True,
        ),
        Mutant(
            "dplace-host.layoutA-cta",
            "dplace-host",
            "host reads Layout A rows 0-127 from CTA 1",
            D_ROWS,
            wrap(MACHINE, "d_placement", _placement_of("A", lambda cta, lane, col: (1 - cta, lane, col))),
            TC,
            tc(m=256),
        ),
        Mutant(
            "dplace-host.layoutB-half",
            "dplace-host",
            "host reads Layout B's second N half from lane 32+m",
            D_ROWS,
            # lane = m % 64 + 64 * (N half): the second half read 32 lanes up instead of 64
            wrap(MACHINE, "d_placement",
                 _placement_of("B", lambda cta, lane, col: (cta, lane % 64 + 32 * (lane // 64), col))),
            TC,
            tc(cg=2, m=128),
        ),
        Mutant(
            "dplace-vm.layoutD-lane",
            "dplace-vm",
            "VM writes Layout D row m to lane m+1",
            D_ROWS,
            wrap(VMDP, "d_cells", _placement_of("D", lambda cta, lane, col: (cta, (lane + 1) % 128, col))),
            TC,
            tc(cg=1),
        ),
        Mutant(
            "dplace-vm.layoutA-cta",
            "dplace-vm",
            "VM writes Layout A rows 0-127 to CTA 1",
            D_ROWS,
            wrap(VMDP, "d_cells", _placement_of("A", lambda cta, lane, col: (1 - cta, lane, col))),
            TC,
            tc(m=256),
        ),
        Mutant(
            "dplace-vm.layoutB-half",
            "dplace-vm",
            "VM writes Layout B's second N half to lane 32+m",
            D_ROWS,
            wrap(VMDP, "d_cells", _placement_of("B", lambda cta, lane, col: (cta, lane % 64 + 32 * (lane // 64),
                                                                         col))),
            TC,
            tc(cg=2, m=128),
        ),
    ]


# ------------------------------------------------------------------------------------------ packed 4/6-bit
SMO = "mmacts.ptxvm.tcgen05.smem_operand"
FRAG = "reference.mma_sync.fragments"
VMMS = "mmacts.ptxvm.warpmma.mma_sync"


def _register_pair_swapped(applies: Callable[..., bool] = lambda *_: True) -> Callable[[Callable], Callable]:
    """A wrap factory for a VM mma.sync fragment map (``_a_where``/``_b_where``/``_cd_where``: element -> lane,
    register, bit): registers 2i and 2i + 1 trade places (the other row half / K half / column) where
    ``applies(*args)``."""
    def factory(where: Callable) -> Callable:
        def mutated(*args: object) -> object:
            w = where(*args)
            return replace(w, reg=w.reg ^ 1) if applies(*args) else w
        return mutated
    return factory


def _byte_id_ignored(operand: str) -> Callable[[Callable[..., np.ndarray]], Callable[..., np.ndarray]]:
    """A wrap factory for the VM's ``mma_sync.sf_byte``: operand ``operand``'s byte-id read as 0."""
    def factory(sf_byte: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
        def mutated(op: str, byte_id: int, j: np.ndarray) -> np.ndarray:
            return sf_byte(op, 0 if op == operand else byte_id, j)
        return mutated
    return factory


def _sub8(c: Case) -> bool:
    return c.runtime.atype in ("e2m1", "e2m3", "e3m2") or c.runtime.btype in ("e2m1", "e2m3", "e3m2")


def _packed_mutants() -> list[Mutant]:
    # A in TMEM: the same nibble swap in A and B permutes both alike and leaves every dot product as it was
    fp4x2 = tc(kind=("mxf4", "mxf4nvf4"), a_tmem=True)
    padded = tc(kind="mxf8f6f4", where=_sub8)
    ms_fp4 = ms(lambda c: c.form.kind == "mxf8f6f4" and "e2m1" in (c.form.atype, c.form.btype))
    ms_fp6 = ms(lambda c: c.form.kind == "mxf8f6f4" and bool({"e2m3", "e3m2"} & {c.form.atype, c.form.btype}))
    return [
        Mutant(
            "packed-host.fp4x2-nibbles",
            "packed-host",
            "host packs two E2M1 per byte with the higher k low",
            ("S9.7.16.10.4.6",),
            wrap(SMI, "fp4x2_byte", lambda fp4x2_byte: lambda even, odd: fp4x2_byte(odd, even)),
            TC,
            fp4x2,
            fast=True,
        ),
        Mutant(
            "packed-host.padded-order",
            "packed-host",
            "host packs the 16 codes of a padded chunk last-first",
            ("S9.7.16.10.4.4",),
            wrap(SMI, "padded_slot", lambda _slot: lambda e: np.uint64(15) - e),
            TC,
            padded,
        ),
        Mutant(
            "packed-vm.fp4x2-nibbles",
            "packed-vm",
            "VM reads two E2M1 per byte with the higher k low",
            ("S9.7.16.10.4.6",),
            wrap(SMO, "fp4x2_slot", lambda fp4x2_slot: lambda e: (fp4x2_slot(e)[0], 4 - fp4x2_slot(e)[1])),
            TC,
            fp4x2,
        ),
        Mutant(
            "packed-vm.padded-order",
            "packed-vm",
            "VM reads the codes of a padded chunk last-first",
            ("S9.7.16.10.4.4",),
            wrap(SMO, "padded_bit", lambda padded_bit: lambda e, bits: padded_bit(15 - e % 16, bits)),
            TC,
            padded,
        ),
        Mutant(
            "packed-host.mma-sync-fp4-slot",
            "packed-host",
            "host puts E2M1 at bits [3:0] of its mma.sync slot",
            ("T36.1",),
            lambda: rebind(FRAG, "FP4_SHIFT_MXF8F6F4", 0),
            MS,
            ms_fp4,
            limit=4,
        ),
        Mutant(
            "packed-host.mma-sync-fp6-slot",
            "packed-host",
            "host puts E2M3/E3M2 at bits [6:1] of its slot",
            ("T36.1",),
            wrap("reference.mma_sync.recipes", "encode_case",
                 lambda encode_case: lambda form, case, sel, fp6_shift=1: encode_case(form, case, sel, fp6_shift)),
            MS,
            ms_fp6,
            limit=4,
        ),
        Mutant(
            "packed-vm.mma-sync-fp4-slot",
            "packed-vm",
            "VM reads E2M1 at bits [3:0] of its mma.sync slot",
            ("T36.1",),
            lambda: rebind(VMMS, "FP4_SHIFT_8BIT_SLOT", 0),
            MS,
            ms_fp4,
            limit=4,
        ),
        Mutant(
            "packed-vm.mma-sync-fp6-slot",
            "packed-vm",
            "VM reads E2M3/E3M2 at bits [6:1]",
            ("T36.1",),
            lambda: rebind(VMMS, "FP6_SHIFT", 1),
            MS,
            ms_fp6,
            limit=4,
        ),
    ]


# ------------------------------------------------------------------------------------------ mma.sync
SCALES = "reference.mma_sync.scales"


def _sfa_lane_tida(rows: np.ndarray, tida: int) -> np.ndarray:
    """``scales.sfa_lane`` taking thread-id-a once where the spec's rule takes it twice (``2 * tida``)."""
    rows = np.asarray(rows)
    return 4 * (rows % 8) + tida + rows // 8


def _sfb_lane_no_tidb(cols: np.ndarray, tidb: int) -> np.ndarray:
    """``scales.sfb_lane`` that ignores thread-id-b."""
    return 4 * np.asarray(cols)
MS_SEL = ("S9.7.14.3", "T37.1", "T37.2", "T37.3")


_MS_K32 = ms(lambda c: c.form.kind == "mxf8f6f4")
_MS_K64 = ms(lambda c: c.form.kind != "mxf8f6f4")
_MS_TIDA = ms(lambda c: c.runtime.tida == 1)
_MS_TIDB = ms(lambda c: c.runtime.tidb != 0)
_MS_BIDA = ms(lambda c: c.runtime.bida != 0)
_MS_BIDB = ms(lambda c: c.runtime.bidb != 0)


def _mmasync_mutants() -> list[Mutant]:
    return _mmasync_host_mutants() + _mmasync_vm_mutants()


def _mmasync_host_mutants() -> list[Mutant]:
    """The host's mma.sync fragments and scale selectors misread."""
    return [
        Mutant(
            "mmasync-host.a-row-half",
            "mmasync-host",
            "host A fragment: registers r%2 hold the other row half",
            ("T35.1", "T35.2", "T35.3"),
            wrap(FRAG, "a_row_half", lambda _half: lambda r: 1 - r % 2),
            MS,
            _MS_K32,
            limit=3,
            fast=True,
        ),
        Mutant(
            "mmasync-host.a-k-half",
            "mmasync-host",
            "host A fragment: registers r//2 hold the other K half",
            ("T35.2", "T35.3"),
            wrap(FRAG, "a_k_half", lambda _half: lambda r: 1 - r // 2),
            MS,
            _MS_K64,
            limit=3,
        ),
        Mutant(
            "mmasync-host.b-k-half",
            "mmasync-host",
            "host B fragment: register r holds the other K half",
            ("T35.1", "T35.2", "T35.3"),
            wrap(FRAG, "b_k_half", lambda _half: lambda r: 1 - r),
            MS,
            _MS_K32,
            limit=3,
        ),
        Mutant(
            "mmasync-host.cd-col",
            "mmasync-host",
            "host C/D fragment: the two columns of a thread swapped",
            ("T35.1", "T35.2", "T35.3"),
            wrap(FRAG, "cd_col_of_pair", lambda _col: lambda r: 1 - r % 2),
            MS,
            _MS_K32,
            limit=3,
        ),
        Mutant(
            "mmasync-host.sfa-lane-tida",
            "mmasync-host",
            "host SF_A lane rule uses tida instead of 2*tida",
            MS_SEL,
            wrap(SCALES, "sfa_lane", lambda _lane: _sfa_lane_tida),
            MS,
            _MS_TIDA,
            limit=6,
            fast=True,
        ),
        Mutant(
            "mmasync-host.sfb-lane-tidb",
            "mmasync-host",
            "host SF_B ignores thread-id-b",
            MS_SEL,
            wrap(SCALES, "sfb_lane", lambda _lane: _sfb_lane_no_tidb),
            MS,
            _MS_TIDB,
            limit=6,
        ),
        Mutant(
            "mmasync-host.sfa-byte",
            "mmasync-host",
            "host SF_A ignores byte-id-a",
            MS_SEL,
            wrap(SCALES, "sfa_byte", lambda _byte: lambda bida, j: j),
            MS,
            _MS_BIDA,
            limit=6,
        ),
        Mutant(
            "mmasync-host.sfb-byte",
            "mmasync-host",
            "host SF_B ignores byte-id-b",
            MS_SEL,
            wrap(SCALES, "sfb_byte", lambda _byte: lambda bidb, j: j),
            MS,
            _MS_BIDB,
            limit=6,
        ),
    ]


def _mmasync_vm_mutants() -> list[Mutant]:
    """The VM's mma.sync fragments and scale selectors misread."""
    return [
        Mutant(
            "mmasync-vm.a-row-half",
            "mmasync-vm",
            "VM A fragment: the other row half per register",
            ("T35.1", "T35.2", "T35.3"),
            wrap(VMMS, "_a_where", _register_pair_swapped()),
            MS,
            _MS_K32,
            limit=3,
        ),
        Mutant(
            "mmasync-vm.b-k-half",
            "mmasync-vm",
            "VM B fragment: the other K half per register",
            ("T35.1", "T35.2", "T35.3"),
            wrap(VMMS, "_b_where", _register_pair_swapped()),
            MS,
            _MS_K64,
            limit=3,
        ),
        Mutant(
            "mmasync-vm.cd-col",
            "mmasync-vm",
            "VM C/D fragment: the two columns of a thread swapped",
            ("T35.1", "T35.2", "T35.3"),
            wrap(VMMS, "_cd_where", _register_pair_swapped(lambda f16: not f16)),
            MS,
            _MS_K32,
            limit=3,
        ),
        Mutant(
            "mmasync-vm.sfa-lane-tida",
            "mmasync-vm",
            "VM SF_A lane rule uses tida instead of 2*tida",
            MS_SEL,
            wrap(VMMS, "sfa_lane", lambda sfa_lane: lambda row, tida: sfa_lane(row, tida) - tida),
            MS,
            _MS_TIDA,
            limit=6,
        ),
        Mutant(
            "mmasync-vm.sfb-lane-tidb",
            "mmasync-vm",
            "VM SF_B ignores thread-id-b",
            MS_SEL,
            wrap(VMMS, "sfb_lane", lambda sfb_lane: lambda col, tidb: sfb_lane(col, 0)),
            MS,
            _MS_TIDB,
            limit=6,
        ),
        Mutant(
            "mmasync-vm.sfa-byte",
            "mmasync-vm",
            "VM SF_A ignores byte-id-a",
            MS_SEL,
            wrap(VMMS, "sf_byte", _byte_id_ignored("A")),
            MS,
            _MS_BIDA,
            limit=6,
        ),
        Mutant(
            "mmasync-vm.sfb-byte",
            "mmasync-vm",
            "VM SF_B ignores byte-id-b",
            MS_SEL,
            wrap(VMMS, "sf_byte", _byte_id_ignored("B")),
            MS,
            _MS_BIDB,
            limit=6,
        ),
    ]


# ------------------------------------------------------------------------------------------ Tables 42 / 45
def _t42_mutants() -> list[Mutant]:
    rows = {
        "sparsity_selector": 1,
        "sparse": 2,
        "saturate": 3,
        "dtype": 4,
        "atype": 6,
        "btype": 7,
        "negate_a": 8,
        "negate_b": 9,
        "transpose_a": 10,
        "transpose_b": 11,
        "n": 12,
        "m": 14,
        "max_shift": 16,
    }
    kinds = ("f16", "tf32", "f8f6f4", "i8")
    out = []
    for key, row in rows.items():
        f = next(x for x in idesc.FIELDS["f16"] if x.name == key)
        pick = lambda c: c.case_id.startswith("descriptors.idesc")  # noqa: E731
        out.append(
            Mutant(
                f"t42-host.T42.{key}.shift",
                "t42-host",
                f"reference idesc reads Table 42 {key} one bit up",
                (f"T42.{row}",),
                combine(*(setitem("reference.tcgen05.idesc", "FIELDS", k, _field_lo(key, +1)) for k in kinds)),
                DS,
                pick,
                limit=200,
                fast=key == "dtype",
            )
        )
        out.append(
            Mutant(
                f"t42-host.T42.{key}.drop",
                "t42-host",
                f"reference idesc ignores Table 42 {key}",
                (f"T42.{row}",),
                wrap("reference.tcgen05.idesc", "decode_idesc", _vm_idesc_word(kinds, word_drop(f.lo, f.width))),
                DS,
                pick,
                limit=200,
            )
        )
    return out


T45 = {
    "sc0": (0, 8, 1),
    "sc1": (8, 8, 2),
    "sc2": (16, 8, 3),
    "sc3": (24, 8, 4),
    "fs0": (32, 1, 5),
    "fs1": (33, 1, 6),
    "fs2": (34, 1, 7),
    "fs3": (35, 1, 8),
    "nzm": (39, 1, 10),
    "skip_span": (40, 8, 11),
    "use_span": (48, 8, 12),
    "shift": (56, 6, 13),
}


def _t45_mutants() -> list[Mutant]:
    out = []
    pick = lambda c: ".zcm." in c.case_id  # noqa: E731
    for key, (lo, width, row) in T45.items():
        for op, t in (("shift", word_shift(lo, width)), ("drop", word_drop(lo, width))):
            out.append(
                Mutant(
                    f"t45-host.T45.{key}.{op}",
                    "t45-host",
                    f"reference zero-column mask decoder: {key} {op}",
                    (f"T45.{row}",),
                    wrap("reference.tcgen05.zero_col_mask", "decode_zero_col_mask", _on_arg(t, 0)),
                    DS,
                    pick,
                    limit=200,
                    fast=key == "skip_span",
                )
            )
    out.append(
        Mutant(
            "t45-host.T45.skip<->use",
            "t45-host",
            "reference zero-column mask: Skip/Use Span swapped",
            ("T45.11", "T45.12"),
            wrap("reference.tcgen05.zero_col_mask", "decode_zero_col_mask", _on_arg(word_swap(40, 48, 8), 0)),
            DS,
            pick,
            limit=200,
        )
    )
    return out


# ------------------------------------------------------------------------------------------ comparator
CMP = "mmacts.compare.compare"
CONTROL = lambda c: c.parsed_recipe.kind == recipes.CONTROL  # noqa: E731


def _cmp(name: str, what: str, plant: Callable[[], object], controls: tuple[str, ...], fast: bool = False) -> Mutant:
    """A comparator mutant (one of ``compare``'s named agreement rules replaced), judged by the controls
    (``C.CONTROLS``) that must catch it."""
    return Mutant(
        f"comparator.{name}",
        "comparator",
        what,
        (),
        plant,
        TC,
        tc(recipe=None, where=lambda c: CONTROL(c) and c.parsed_recipe.name in controls),
        limit=len(controls),
        fast=fast,
    )


def _also_agree(extra: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Callable[[], object]:
    """``compare.exact_agreement`` that also accepts the elements where ``extra(got, want)`` holds."""
    return wrap(CMP, "exact_agreement",
                lambda agree: lambda got, want, **kw: agree(got, want, **kw) | extra(got, want))


def _comparator_mutants() -> list[Mutant]:
    return [
        _cmp(
            "nan-either-equal",
            "exact mode: a NaN on either side counts as equal",
            wrap(CMP, "nans_equal", lambda _nans: lambda nan_got, nan_want: nan_got | nan_want),
            ("nan_got", "sf_cp_missing"),
            fast=True,
        ),
        _cmp(
            "nan-never-equal",
            "exact mode: NaN never equals NaN",
            wrap(CMP, "nans_equal", lambda _nans: lambda nan_got, nan_want: np.zeros_like(nan_got)),
            ("nan_both",),
        ),
        _cmp(
            "signed-zero-strict",
            "+0 and -0 always differ (the register leaves the sign open)",
            wrap(CMP, "values_equal",
                 lambda _eq: lambda got, want, *, signed_zero: got.view(np.int32) == want.view(np.int32)),
            ("signed_zero",),
        ),
        _cmp(
            "signed-zero-ignored",
            "exact mode treats -0 and +0 as equal although the case asks for signed zeros (exact+signed-zero)",
            wrap(CMP, "values_equal", lambda _eq: lambda got, want, *, signed_zero: got == want),
            ("signed_zero_asked",),
        ),
        _cmp(
            "inf-any-sign",
            "infinities of either sign are equal",
            _also_agree(lambda got, want: np.isinf(got) & np.isinf(want)),
            ("inf_sign",),
        ),
        _cmp(
            "inf-matches-anything",
            "an infinity in got matches anything",
            _also_agree(lambda got, want: np.isinf(got)),
            ("inf_got",),
        ),
        _cmp(
            "one-ulp",
            "exact mode accepts 1 ulp",
            _also_agree(lambda got, want: ulp_distance(got, want) <= 1),
            ("one_ulp",),
        ),
        _cmp(
            "bound-double",
            "bound mode allows twice the tolerance",
            wrap(CMP, "within_tolerance", lambda within: lambda diff, tol: within(diff, 2 * tol)),
            ("bound_outside",),
        ),
        _cmp(
            "bound-strict",
            "bound mode: |got - want| == tolerance fails",
            wrap(CMP, "within_tolerance", lambda _within: lambda diff, tol: diff < tol),
            ("bound_edge",),
        ),
        _cmp(
            "bound-nan-either",
            "bound mode: NaN on either side is within the bound",
            wrap(CMP, "bound_agreement",
                 lambda agree: lambda got, want, tol: agree(got, want, tol) | np.isnan(got) | np.isnan(want)),
            ("bound_nan",),
        ),
        _cmp(
            "bound-inf",
            "bound mode: equal infinities are outside the bound",
            wrap(CMP, "equal_within_any_bound", lambda _eq: lambda got, want: np.zeros(np.shape(got), dtype=bool)),
            ("bound_inf",),
        ),
        _cmp(
            "no-mismatch-count", "mismatches never counted", wrap(CMP, "count_mismatches", lambda _n: lambda bad: 0),
            ("nan_got",)
        ),
    ]


# ------------------------------------------------------------------------------------------ tcgen05 features
TMEM = "mmacts.ptxvm.tcgen05.tmem"
LDST_SHAPES = ("32x32b", "16x64b", "16x128b", "16x256b", "16x32bx2")


def _feature(recipe: str, shape: str | None = None) -> Callable[[Case], bool]:
    return lambda c: (c.recipe == recipe and isinstance(c.form, FeatureCaseForm) and bool(c.form.feature)
                      and (shape is None or c.form.shape == shape))


def _ldst_probe(shape: str) -> Callable[[Case], bool]:
    return lambda c: (isinstance(c.form, FeatureCaseForm) and c.form.feature == "ldst" and c.form.shape == shape
                      and c.recipe != "feature:ldst-roundtrip")


def _st_reversed(shape: str):
    """tcgen05.st of ``shape`` writes each access's registers in reverse order (ld unchanged)."""
    def factory(orig):
        def st(tmem, regs, sh, num, addr, **k):
            if str(sh).lstrip(".") == shape:
                regs = np.asarray(regs)[:, ::-1]
            return orig(tmem, regs, sh, num, addr, **k)
        return st
    return factory


def _map_mirrored(shape: str):
    """The VM's register map of ``shape`` (ld and st alike) with the lanes mirrored inside the access."""
    def factory(orig):
        def m(sh, num, **k):
            r = orig(sh, num, **k)
            if str(sh).lstrip(".") != shape:
                return r
            span = 32 if shape == "32x32b" else 16
            return replace(r, lane=(span - 1) - r.lane)
        return m
    return factory


def _slow_path(shape: str) -> Callable[[], object]:
    """The VM's all-warps fast path of tcgen05.ld/st (``ops_tcgen05._ld_st_fast``, its own map cache) off for
    ``shape``, so a mutant of the per-warp helpers in ``tmem`` reaches every access of that shape."""
    def factory(orig):
        def fast(m, s, ins, act, sh, *a, **k):
            return False if sh == shape else orig(m, s, ins, act, sh, *a, **k)
        return fast
    return wrap("mmacts.ptxvm.ops_tcgen05", "_ld_st_fast", factory)


def _base_offset_add(swizzle: str) -> Callable[[], object]:
    def factory(swizzle_row: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
        def mutated(row_bits: np.ndarray, base_offset: int, sw: str) -> np.ndarray:
            return row_bits + base_offset if sw == swizzle else swizzle_row(row_bits, base_offset, sw)
        return mutated
    return wrap(SMI, "swizzle_row", factory)


def _base_offset_mutants() -> list[Mutant]:
    """The reference's swizzle phase ADDS the descriptor base offset (AMB-SDESC-BASEOFFSET reading
    subtract-phase is the reference's and the VM's): an open reading, so the base-offset probes observe it.
    Not for 32B: with B = 1 row bit, + x and - x are one value modulo 2 (an equivalent mutant)."""
    return [Mutant(f"swizzle-host.base-offset-added.{sw}", "swizzle-host",
                   f"reference smem image: {sw} swizzle phase = row bits + base offset (not minus)",
                   (), _base_offset_add(sw), TC,
                   lambda c, sw=sw: c.recipe == "probe:smem_base_offset" and _mma_rt(lambda r: r.swizzle_a == sw)(c),
                   limit=2, observed=True)
            for sw in ("128B", "64B", "128B_base32B")]


def _ownership_mutants() -> list[Mutant]:
    """Whose copy an MMA reads: open readings (register entries), so their probes observe them."""
    return [
        Mutant("sf-vm.cg2-leader-sfb", "sf-vm",
               "cta_group::2: both CTAs' D lanes scaled by the leader CTA's SFB (the peer's copy never read)",
               (), wrap(VMMMA, "sf_copy_read_by", _leader_sfb),
               TC, lambda c: c.recipe == "probe:sfb_peer_copy", limit=2, observed=True),
        Mutant("collector-vm.use-reads-memory", "collector-vm",
               "collector::a::use/lastuse read A from memory through the descriptor, not from the collector buffer",
               (), wrap("mmacts.ptxvm.tcgen05.collector", "from_buffer", lambda orig: lambda *a, **k: None),
               TC, lambda c: c.recipe == "probe:collector_reuse", limit=5, observed=True),
    ]


def _ue4m3_nan_mutants() -> list[Mutant]:
    """UE4M3 0x7F decoded as a finite 480 (reading max-finite of the E4M3 pattern) by the VM: open
    (AMB-UE4M3-SIGN), so the ue4m3_nan_scale probes observe it, in both instruction families."""
    probe = lambda c: c.recipe == "probe:ue4m3_nan_scale"  # noqa: E731
    return [
        Mutant("sf-vm.ue4m3-7f-finite", "sf-vm", "tcgen05 VM decodes UE4M3 scale 0x7F as 480, not NaN", (),
               wrap(VMMMA, "value_table", _ue4m3_7f_as_480(lambda fmt: fmt == "ue4m3")),
               TC, probe, limit=2, observed=True),
        Mutant("mmasync-vm.ue4m3-7f-finite", "mmasync-vm", "mma.sync VM decodes UE4M3 scale 0x7F as 480, not NaN", (),
               wrap("mmacts.ptxvm.warpmma.formats", "scale_table",
                    _ue4m3_7f_as_480(lambda stype, reading: (stype, reading) == ("ue4m3", "nan"))),
               MS, probe, limit=1, observed=True),
    ]


def _ws_b0(orig):
    def parse(qual, *, ws):
        buf, op = orig(qual, ws=ws)
        return ("b0" if ws else buf), op
    return parse


def _plain_mutants() -> list[Mutant]:
    """.ws collector buffers and the disable-output-lane mask (plain.py cases: exact, the spec fixes both)."""
    return [
        Mutant("collector-vm.ws-buffers-as-b0", "collector-vm",
               "tcgen05.mma.ws fills / uses / discards buffer b0 whatever ::b1-::b3 the instruction names",
               ("S9.7.16.10.9.3",), wrap("mmacts.ptxvm.tcgen05.collector", "parse_usage", _ws_b0), TC,
               lambda c: c.recipe == "plain:ws-collectors", limit=2, fast=True),
        Mutant("dplace-vm.dol-msb-first", "dplace-vm",
               "disable-output-lane bits read most-significant first inside each 32-bit word",
               ("S9.7.16.10.9.1",), wrap(VMDP, "dol_bit", _dol_msb_first),
               TC, lambda c: c.recipe == "plain:dol", limit=2),
    ]


SHIFT = "mmacts.ptxvm.tcgen05.shift"


def _shift_to_lane_127(shift_cells: Callable[[int], tuple]) -> Callable[[int], tuple]:
    """The VM's ``shift.shift_cells`` with the shifted rows running from the address lane to lane 127."""
    def mutated(taddr: int) -> tuple:
        lanes, cols = shift_cells(taddr)
        return lanes[0] + np.arange(128 - lanes[0]), cols
    return mutated


def _feature_mutants() -> list[Mutant]:
    out: list[Mutant] = []
    for shape in LDST_SHAPES:
        out.append(Mutant(
            f"ldst-vm.{shape}.st-reg-order", "ldst-vm",
            f"tcgen05.st.{shape} writes each access's registers in reverse order (tcgen05.ld unchanged)",
            ("T48.2",), combine(_slow_path(shape), wrap(TMEM, "tcgen05_st", _st_reversed(shape))), TC,
            _feature("feature:ldst-roundtrip", shape), limit=1, fast=shape == "16x64b"))
        exact = shape == "32x32b"
        out.append(Mutant(
            f"ldst-vm.{shape}.lanes-mirrored", "ldst-vm",
            f"tcgen05.ld/st.{shape} register map with the lanes mirrored in the access (a consistent wrong map: "
            "the round trip cannot see it; the .32x32b cases fail, the 16-lane shapes' observations differ)",
            ("T47.1", "T48.1") if exact else (),
            combine(_slow_path(shape), wrap(TMEM, "ld_st_map", _map_mirrored(shape))), TC,
            # .32x32b stages and reads back every kernel's TMEM, so a consistent mirror shows only through an MMA
            tc(kind="mxf8f6f4", cg=1) if exact else _ldst_probe(shape),
            limit=1 if exact else 2, observed=not exact))
    out.append(Mutant(
        "shift-vm.rows-up", "shift-vm", "tcgen05.shift.down moves the rows up instead of down",
        ("S9.7.16.9.3",), wrap(SHIFT, "shift_moves", lambda shift_moves: lambda lanes: shift_moves(lanes)[::-1]),
        TC, _feature("feature:shift"), limit=1, fast=True))
    out.append(Mutant(
        "shift-vm.all-lanes", "shift-vm", "tcgen05.shift.down moves every lane from taddr to 127 (the other reading "
        "of AMB-SHIFT-ROW-SCOPE): the probe at lane 0 must see it",
        (), wrap(SHIFT, "shift_cells", _shift_to_lane_127),
        TC, lambda c: c.recipe == "probe:shift_row_scope", limit=1, observed=True))
    return out


# ------------------------------------------------------------------------------------------ kernel faults
KERNEL_ROWS: dict[str, tuple[str, ...]] = {
    "tmem-quadrant-shift": ("S9.7.16.8.1",),
    "mma-sfa-sfb-swapped": ("S9.7.16.10.7",),
    "mma-sync-tida-byte": ("S9.7.14.3",),
    "params-record-offset": (),
    "readback-loop-off-by-one": (),
    "missing-wait-ld": ("T46.5",),
    "missing-proxy-fence": ("T46.6",),
    "wrong-ld-shape": ("S9.7.16.2.3.1.1",),
    "wrong-cluster-rank": ("T46.2",),
    "missing-wait-st": ("T46.5",),
    "missing-mbarrier-wait": ("T46.3", "T46.4"),
    "wgmma-missing-fence": (),
}


def _kernel_mutants() -> list[Mutant]:
    return [
        Mutant(
            f"kernel.{f.name}",
            "kernel",
            f.what,
            KERNEL_ROWS.get(f.name, ()),
            (lambda f=f: KF.planted(f)),
            f.suite,
            f.pick,
            f.level,
            f.limit,
            kernel=True,
            fast=f.name in ("mma-sfa-sfb-swapped", "missing-wait-ld"),
        )
        for f in KF.FAULTS
    ]


def all_mutants() -> list[Mutant]:
    out = (
        _idesc_mutants()
        + _sdesc_mutants()
        + _swizzle_mutants()
        + _base32b_rows_mutants()
        + _sf_mutants()
        + _atmem_mutants()
        + _dplace_mutants()
        + _packed_mutants()
        + _mmasync_mutants()
        + _t42_mutants()
        + _t45_mutants()
        + _comparator_mutants()
        + _feature_mutants()
        + _base_offset_mutants()
        + _ownership_mutants()
        + _ue4m3_nan_mutants()
        + _plain_mutants()
        + _kernel_mutants()
    )
    names = [m.name for m in out]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise AssertionError(f"duplicate mutant names: {sorted(dup)}")
    return out


FAST_TOO = ("swizzle-vm.T53.64B", "packed-vm.padded-order", "atmem-vm.byte-order", "dplace-vm.layoutD-lane",
            "sdesc-vm.T40.sbo.drop", "mmasync-vm.sfa-byte", "sf-vm.sf-id-ignored", "comparator.one-ulp",
            "idesc-vm.T43.sfa_id<->sfb_id", "sf-vm.cg2-leader-sfb")
"""Added to the ``fast`` flags so that the CI subset holds at least one mutant of every family."""


def fast_mutants() -> list[Mutant]:
    return [m for m in all_mutants() if m.fast or m.name in FAST_TOO]
