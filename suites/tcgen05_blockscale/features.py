"""Cases of the tcgen05 features the MMA kernel never issues: every ``tcgen05.ld``/``st`` shape x num, and
``tcgen05.shift`` (issue 26: a suite case must fail when each feature misbehaves).

Kernels: ``mmacts.ptx.tcgen05_feature_kernels``. Data are position-coded: the preload cell at (lane, col)
holds ``PRE_BASE | lane << 9 | col`` and every stored register names (num, thread, register), so any cell
or register that lands elsewhere shows where it came from. What each case judges:

* ``feature:ldst-roundtrip`` (exact, every shape): the registers a ``tcgen05.st`` of a shape x num wrote come
  back from a ``tcgen05.ld`` of the same shape x num -- true whatever the shape's register map is, so it
  rests on no figure;
* ``feature:ldst-load`` / ``feature:ldst-store``: which cell each register of a shape's ``ld``/``st`` touches,
  read back or staged through ``.32x32b``. The maps of Figures 183-187 are missing (AMB-LDST-FRAGMENTS):
  exact for ``.32x32b`` (the MMA cases rest on it already), an observation (``probe:ldst_fragments``) for
  the 16-lane shapes, against the reference's reading (``reference.tcgen05.tmem_image.ld_st_map``);
* ``feature:shift`` (exact): ``tcgen05.shift.down`` at lane 96, column 3: lanes 97-127 of columns 3-10 receive
  the old lanes 96-126, lane 96 keeps its row (9.7.16.9.3: "downwards ... all the rows, except the last, by
  one row"; at the last quadrant every reading of AMB-SHIFT-ROW-SCOPE agrees);
* ``probe:shift_row_scope`` (observed): the same at lane 0, where AMB-SHIFT-ROW-SCOPE's readings differ
  (``want`` is the one-block reading: only lanes 1-31 move).

The expected values come from the reference (``reference.tcgen05.tmem_image``), never from the VM.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mmacts.backends import cuda_runtime as CR
from mmacts.cases.model import Case
from mmacts.compare.compare import SIGNED_ZERO_MODE
from mmacts.core.driver import Expectation, LaunchResult
from mmacts.core.recipe import PROBE
from mmacts.ptx import tcgen05_feature_kernels as FK
from reference.tcgen05 import tmem_image as TI
from suites.tcgen05_blockscale.fields import FeatureCaseForm, OperandRuntime
from suites.tcgen05_blockscale.probes import PROBES

PRE_BASE = 0x40000000
DIAGNOSIS = ("position-coded: a got word 0x4LLLLCCC came from the preloaded cell (lane bits 9-15, column bits 0-8), "
             "0x2NN.TTRR from st register RR of thread TT of the N-th num; compare it with want's")
SHAPES = tuple(FK.LDST_NUMS)
LDST_PROBE = "probe:ldst_fragments"
SHIFT_PROBE = "probe:shift_row_scope"
LANE_BASE_PROBE = "probe:ldst_lane_base"
ROUNDTRIP = "feature:ldst-roundtrip"
SHIFT = "feature:shift"


def is_feature(case: Case) -> bool:
    return isinstance(case.form, FeatureCaseForm)


def form_of(case: Case) -> FK.FeatureForm:
    """The feature kernel's form of ``case`` (a feature case: its form is a :class:`FeatureCaseForm`)."""
    f = case.form
    return FK.FeatureForm(feature=f.feature, shape=f.shape, arch=f.arch, lane_base=f.lane_base, pack=f.pack)


def _case(suite: str, case_id: str, feature: str, shape: str, recipe: str, rows: tuple[str, ...],
          instruction: str, lane_base: int = 0, pack: bool = False) -> Case:
    # the MMA form's fields too (kind "none", no MMA): code that reads any tcgen05 case's form keeps working
    form = FeatureCaseForm(feature=feature, shape=shape, lane_base=lane_base, pack=pack)
    runtime = OperandRuntime(m=0, n=0, atype="none", btype="none", stype="none", sf_stage="none")
    return Case(case_id=case_id, suite=suite, instruction=instruction, arch="sm_100a", spec_rows=rows,
                level="standard", form=form, runtime=runtime, recipe=recipe, seed=0)


def _num_rows(table: int, shape: str) -> tuple[str, ...]:
    all_nums = (1, 2, 4, 8, 16, 32, 64, 128)
    return tuple(f"T{table}.{all_nums.index(n) + 1}" for n in FK.LDST_NUMS[shape])


def cases(suite: str) -> list[Case]:
    """The standard-level feature cases (7 kernels' worth: one module per ld/st shape, one for shift)."""
    out = []
    for shape in SHAPES:
        nums = f"x{FK.LDST_NUMS[shape][0]}-x{FK.LDST_NUMS[shape][-1]}"
        sync = ("S9.7.16.8.3", "T46.5")  # tcgen05.wait::ld / ::st before the registers / cells are used
        out.append(_case(suite, f"tcgen05.ldst.{shape}.{nums}.{ROUNDTRIP}", "ldst", shape, ROUNDTRIP,
                         _num_rows(47, shape) + _num_rows(48, shape) + sync,
                         f"tcgen05.ld/st.sync.aligned.{shape}.x*.b32"))
        exact = shape == "32x32b"
        for what, table, op in (("load", 47, "ld"), ("store", 48, "st")):
            recipe = f"feature:ldst-{what}" if exact else LDST_PROBE
            rows = _num_rows(table, shape) + ("S9.7.16.2.3.1", "S9.7.16.8.1") + sync
            out.append(_case(suite, f"tcgen05.{op}.{shape}.{nums}.{what}.{recipe}", "ldst", shape, recipe,
                             rows if exact else (), f"tcgen05.{op}.sync.aligned.{shape}.x*.b32"))
    # .16x64b at lane 8 of each quadrant (lanes 8-23): a base inside the quadrant that is no multiple of 16,
    # plain and with .pack::16b / .unpack::16b (the VM moves the two through different paths)
    for pack in (False, True):
        nums = FK.ldst_nums("16x64b", pack)
        qual = (".pack::16b", ".unpack::16b") if pack else ("", "")
        for (what, op), q in zip((("load", "ld"), ("store", "st")), qual, strict=True):
            out.append(_case(suite, f"tcgen05.{op}.16x64b.x{nums[0]}-x{nums[-1]}{q}.{what}.lane8.{LANE_BASE_PROBE}",
                             "ldst", "16x64b", LANE_BASE_PROBE, (), f"tcgen05.{op}.sync.aligned.16x64b.x*{q}.b32",
                             lane_base=8, pack=pack))
    shift = "tcgen05.shift.cta_group::1.down"
    out.append(_case(suite, f"tcgen05.shift.cg1.down.lane96.{SHIFT}", "shift", "", SHIFT,
                     ("S9.7.16.9.3", "T46.1", "T46.3"), shift))
    out.append(_case(suite, f"tcgen05.shift.cg1.down.lane0.{SHIFT_PROBE}", "shift", "", SHIFT_PROBE, (), shift))
    return out


# --------------------------------------------------------------------------------------------- inputs
@dataclass
class FeatureInputs:
    """The preload image of the one CTA (128 lanes x ``pre_cols``) and what to read back."""

    form: FK.FeatureForm
    pre: np.ndarray
    extra: dict[str, Any] = field(default_factory=dict)


def make_inputs(case: Case) -> FeatureInputs:
    form = form_of(case)
    lanes = np.arange(128, dtype=np.uint32)[:, None]
    cols = np.arange(form.pre_cols, dtype=np.uint32)[None, :]
    return FeatureInputs(form, (np.uint32(PRE_BASE) | (lanes << np.uint32(9)) | cols).astype(np.uint32))


def _maps(shape: str, num: int, pack: bool = False) -> tuple[np.ndarray, np.ndarray]:
    lane, col = TI.ld_st_map(shape, num, pack=pack, split=num if shape == "16x32bx2" else None)
    return np.asarray(lane), np.asarray(col)


def _windows(form: FK.FeatureForm) -> list[tuple[int, int, int, int]]:
    return FK.windows(form.shape, form.lane_base, form.pack)


def want_load(inp: FeatureInputs) -> np.ndarray:
    """(128 threads, registers): what every register of every ld should hold (reference map; with
    ``.pack::16b`` the low halves of the register unit's two adjacent columns, the lower column low)."""
    form = inp.form
    out = np.zeros((128, FK.total_regs(form.shape, form.pack)), dtype=np.uint32)
    for num, loff, col0, reg0 in _windows(form):
        lane, col = _maps(form.shape, num, form.pack)
        for w in range(4):
            cells = inp.pre[32 * w + loff + lane, col0 + col]
            if form.pack:
                cells = (cells & 0xFFFF) | ((inp.pre[32 * w + loff + lane, col0 + col + 1] & 0xFFFF) << 16)
            out[32 * w:32 * w + 32, reg0:reg0 + lane.shape[1]] = cells
    return out


def want_roundtrip(inp: FeatureInputs) -> np.ndarray:
    form = inp.form
    out = np.zeros((128, FK.total_regs(form.shape, form.pack)), dtype=np.uint32)
    tid = np.arange(128)[:, None]
    for idx, (num, _, _, reg0) in enumerate(_windows(form)):
        n = FK.REGS_PER_X1[form.shape] * num
        out[:, reg0:reg0 + n] = FK.st_code(idx, 0, 0) | (tid << 8) | np.arange(n)[None, :]
    return out


def want_store(inp: FeatureInputs) -> np.ndarray:
    """(128 lanes, dump columns): the preload with every st's registers placed by the reference map (with
    ``.unpack::16b`` each register's halves in the low 16 bits of its two adjacent columns, upper bits 0)."""
    form = inp.form
    img = inp.pre.copy()
    for idx, (num, loff, col0, _) in enumerate(_windows(form)):
        lane, col = _maps(form.shape, num, form.pack)
        for w in range(4):
            t = np.arange(32)[:, None] + 32 * w
            regs = (FK.st_code(idx, 0, 0) | (t << 8) | np.arange(lane.shape[1])[None, :]).astype(np.uint32)
            if form.pack:
                img[32 * w + loff + lane, col0 + col] = regs & 0xFFFF
                img[32 * w + loff + lane, col0 + col + 1] = regs >> 16
            else:
                img[32 * w + loff + lane, col0 + col] = regs
    return img


def want_shift(inp: FeatureInputs) -> np.ndarray:
    """The dump after both shifts, each one-block: lanes lane0+1..lane0+31 of its 8 columns get the row above."""
    img = inp.pre.copy()
    for lane0, col0 in FK.SHIFTS:
        blk = inp.pre[lane0:lane0 + 32, col0:col0 + 8]
        img[lane0 + 1:lane0 + 32, col0:col0 + 8] = blk[:-1]
    return img


def _shift_cols(case: Case) -> slice:
    """The exact case judges columns 0-15 (its block, 3-10, and unshifted neighbours), the probe 16-23."""
    return slice(0, 16) if case.recipe == SHIFT else slice(16, 24)


def _f32(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=np.uint32).view(np.float32)


def view(case: Case, inp: FeatureInputs, raw: np.ndarray) -> np.ndarray:
    """The part of the raw (128, out_words) output a case judges, as fp32 bit patterns."""
    form = inp.form
    if form.feature == "shift":
        return _f32(raw[:, -form.dump_cols:][:, _shift_cols(case)])
    n = FK.total_regs(form.shape, form.pack)
    if case.recipe == ROUNDTRIP:
        return _f32(raw[:, n:2 * n])
    if ".load." in case.case_id:
        return _f32(raw[:, :n])
    return _f32(raw[:, 2 * n:])


def expected(case: Case, inp: FeatureInputs) -> Expectation:
    """Bit-exact where the spec fixes the answer (mode exact+signed-zero: raw cells, every bit counts);
    observed where a register entry leaves it open."""
    form = inp.form
    if form.feature == "shift":
        want = _f32(want_shift(inp)[:, _shift_cols(case)])
    elif case.recipe == ROUNDTRIP:
        want = _f32(want_roundtrip(inp))
    elif ".load." in case.case_id:
        want = _f32(want_load(inp))
    else:
        want = _f32(want_store(inp))
    if case.parsed_recipe.is_kind(PROBE):
        name = case.parsed_recipe.name
        return Expectation(want=want, mode="observe", note=f"PROBE {name}: {PROBES[name]}")
    return Expectation(want=want, mode=SIGNED_ZERO_MODE, note="position-coded raw cells / registers, bit for bit")


def run(cases: list[Case], inputs: list[FeatureInputs], module: Any) -> list[LaunchResult]:
    """One launch per form: one CTA per case."""
    mod = CR.as_module(module)
    form = inputs[0].form
    pre = np.concatenate([i.pre for i in inputs], axis=0)
    d_pre = mod.rt.to_device(np.ascontiguousarray(pre))
    d_out = mod.rt.empty((len(cases) * 128 * form.out_words,), np.uint32)
    d_st = mod.rt.empty((len(cases),), np.uint32)
    out = mod.launch(form.entry_name, (len(cases), 1, 1), (128, 1, 1), [d_pre, d_out, d_st])
    if out.status != "ok":
        st = "timeout" if out.status == "timeout" else "error"
        return [LaunchResult(got=None, status=st, extra={"message": out.message}) for _ in cases]
    raw = mod.rt.to_host(d_out).reshape(len(cases), 128, form.out_words)
    status = mod.rt.to_host(d_st)
    res = []
    for i, c in enumerate(cases):
        if int(status[i]) != FK.STATUS_OK:
            res.append(LaunchResult(got=None, status="timeout" if int(status[i]) == FK.STATUS_TIMEOUT else "error",
                                    extra={"status_words": [int(status[i])]}))
            continue
        us = None if out.kernel_us is None else out.kernel_us / len(cases)
        res.append(LaunchResult(got=view(c, inputs[i], raw[i]), kernel_us=us))
    return res
