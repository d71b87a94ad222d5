"""mma.sync block-scale suite (sm_120a / sm_121a): every row of Tables 35-37.

Cases come from the spec catalog (``mmacts.spec.queries``): every valid (kind, atype, btype,
stype, scale_vec) of Tables 35/36 and every valid {byte-id, thread-id} of Table 37. The data
are exact by construction (``reference.mma_sync.recipes``) and the scale metadata carries the
right SF only in the lanes/bytes the selectors name, poison everywhere else, so a wrong
selector, lane pair or byte fails the case.

Levels: ``smoke`` -- a handful of forms with the all-zero and one all-nonzero selector;
``standard`` -- every form with a pairwise-covering set of selector combinations (every pair
of values of any two selector fields occurs); ``full`` -- every form x every selector.
Selectors are run-time operands (``.b16`` registers, one module per form), so one launch
covers all cases of a form, one warp per case.
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Any, cast

import numpy as np

from mmacts.backends import cuda_runtime as cr
from mmacts.cases.model import Case
from mmacts.core.driver import Driver, Expectation, LaunchResult
from mmacts.core.recipe import PROBE, Recipe
from mmacts.ptx import instructions as ins
from mmacts.ptx import mma_sync_kernels as kern
from mmacts.spec import catalog
from mmacts.spec import queries as q
from reference import formats as F
from reference.gemm import exact_gemm
from reference.mma_sync import fragments as fr
from reference.mma_sync import recipes
from reference.mma_sync import scales as sc
from reference.mma_sync.model import BlockScaleForm, RegisterImage, execute
from suites.mma_sync_blockscale import readings
from suites.mma_sync_blockscale.fields import MmaSyncForm, SelectorFields

SUITE = "mma_sync_blockscale"
ARCH = "sm_120a"
SMOKE_FORMS = {
    ("mxf8f6f4", "e4m3", "e4m3", "ue8m0", "1X"), ("mxf8f6f4", "e2m1", "e2m1", "ue8m0", "1X"),
    ("mxf8f6f4", "e3m2", "e2m3", "ue8m0", "1X"), ("mxf4", "e2m1", "e2m1", "ue8m0", "2X"),
    ("mxf4nvf4", "e2m1", "e2m1", "ue8m0", "2X"), ("mxf4nvf4", "e2m1", "e2m1", "ue8m0", "4X"),
    ("mxf4nvf4", "e2m1", "e2m1", "ue4m3", "4X"),
}


def _sv(scale_vec: str) -> str:
    return scale_vec.split("::")[-1].lstrip(".")


def pairwise_selectors(valid: dict[str, tuple[int, ...]], rotate: int = 0) -> list[sc.Selectors]:
    """A small set of selector combinations in which every pair of values of every two fields
    occurs (greedy covering array; deterministic; ``rotate`` varies the choice between forms)."""
    names = ("bida", "tida", "bidb", "tidb")
    allc = list(itertools.product(*(valid[n] for n in names)))
    allc = allc[rotate % len(allc):] + allc[:rotate % len(allc)]
    need = {(i, a, j, b) for i, j in itertools.combinations(range(4), 2)
            for a in valid[names[i]] for b in valid[names[j]]}
    chosen: list[tuple[int, ...]] = []
    while need:
        best = max(allc, key=lambda c: sum((i, c[i], j, c[j]) in need
                                           for i, j in itertools.combinations(range(4), 2)))
        chosen.append(best)
        need -= {(i, best[i], j, best[j]) for i, j in itertools.combinations(range(4), 2)}
    return [sc.Selectors(*c) for c in chosen]


def instruction_text(form: BlockScaleForm) -> str:
    """The opcode with every qualifier, as the kernel spells it."""
    line = ins.mma_sync_block_scale(form.kind, form.atype, form.btype, form.stype, form.scale_vec, form.shape,
                                    ["d"] * 4, ["a"] * 4, ["b"] * 2, ["c"] * 4, "sa", ("x", "y"), "sb", ("z", "w"))
    return line.split(" ", 1)[0]


def enumerate_cases() -> list[Case]:
    cat = catalog.load()
    out: list[Case] = []
    for fi, combo in enumerate(q.mma_sync_blockscale_combos(cat)):
        sv = _sv(combo.scale_vec)
        form = BlockScaleForm(combo.kind, combo.atype, combo.btype, combo.stype, sv)
        sels = q.mma_sync_selectors(cat, sv)
        valid = {"bida": sels.byte_id_a, "tida": sels.thread_id_a, "bidb": sels.byte_id_b, "tidb": sels.thread_id_b}
        # S9.7.14.3: the selector prose (which lane pair / byte supplies each SF) every case depends on
        rows = tuple(sorted(set(combo.refs) | set(sels.refs) | {"S9.7.14.3"}))
        key = (combo.kind, combo.atype, combo.btype, combo.stype, sv)
        allsel = [sc.Selectors(*c) for c in itertools.product(*valid.values())]
        smoke = {allsel[0], allsel[-1]} if key in SMOKE_FORMS else set()
        standard = set(pairwise_selectors(valid, rotate=7 * fi))
        for sel in allsel:
            level = "smoke" if sel in smoke else ("standard" if sel in standard else "full")
            cid = (f"mma_sync.{form.shape}.{form.kind}.{sv}.{form.stype}/{form.atype}x{form.btype}/"
                   f"{sel.tag()}/exact")
            out.append(Case(case_id=cid, suite=SUITE, instruction=instruction_text(form), arch=ARCH,
                            spec_rows=rows, level=level,
                            form=MmaSyncForm(form.kind, form.atype, form.btype, form.stype, sv),
                            runtime=SelectorFields(sel.bida, sel.tida, sel.bidb, sel.tidb),
                            recipe="exact", seed=fi))
            if combo.stype == "ue4m3" and sel == allsel[-1]:
                out.append(_nan_scale_case(out[-1]))
    return out


UE4M3_NAN = 0x7F
NAN_SCALE_PROBE = Recipe(PROBE, "ue4m3_nan_scale")
"""The recipe of the UE4M3 NaN-scale observation cases (:func:`_nan_scale_case`)."""
NAN_AT = {"sfa": (3, 1), "sfb": (1, 5)}
"""Where the probe ``ue4m3_nan_scale`` puts code 0x7F: SF_A of row 3 block 1, SF_B of block 1 column 5."""


def _nan_scale_case(base: Case) -> Case:
    """The last selector combination of a UE4M3 form again, with the UE4M3 NaN pattern 0x7F as one SF_A and one
    SF_B code by design (issue 26): an observation of AMB-UE4M3-SIGN reading ``nan-7f`` (want: rows/columns of
    those blocks NaN), never a verdict."""
    return replace(base, case_id=base.case_id.rsplit("/", 1)[0] + f"/{NAN_SCALE_PROBE}", spec_rows=(),
                   level="standard", recipe=str(NAN_SCALE_PROBE))


def _with_nan_scales(lg: recipes.LogicalCase) -> recipes.LogicalCase:
    sfa, sfb = np.array(lg.sfa, copy=True), np.array(lg.sfb, copy=True)
    sfa[NAN_AT["sfa"]] = UE4M3_NAN
    sfb[NAN_AT["sfb"]] = UE4M3_NAN
    return replace(lg, sfa=sfa, sfb=sfb)


def _form(case: Case) -> BlockScaleForm:
    f = cast(MmaSyncForm, case.form)
    return BlockScaleForm(f.kind, f.atype, f.btype, f.stype, f.scale_vec)


def _sel(case: Case) -> sc.Selectors:
    r = cast(SelectorFields, case.runtime)
    return sc.Selectors(r.bida, r.tida, r.bidb, r.tidb)


class BlockScaleDriver(Driver):
    """Implements :class:`mmacts.core.driver.Driver` for mma.sync block_scale."""

    suite = SUITE

    def __init__(self) -> None:
        self._cases: list[Case] | None = None

    def cases(self, level: str) -> list[Case]:
        if self._cases is None:
            self._cases = enumerate_cases()
        return [c for c in self._cases if c.in_level(level)]

    def module_ptx(self, case: Case) -> str:
        f = _form(case)
        return kern.mma_sync_blockscale_module(f.kind, f.atype, f.btype, f.stype, f.scale_vec, arch=ARCH)

    def make_inputs(self, case: Case) -> dict[str, Any]:
        form = _form(case)
        logical = recipes.exact_case(form, case.seed)
        if case.parsed_recipe == NAN_SCALE_PROBE:
            logical = _with_nan_scales(logical)
        return {"logical": logical, "regs": recipes.encode_case(form, logical, _sel(case))}

    def expected(self, case: Case, inputs: dict[str, Any]) -> Expectation:
        """Exact answer from the logical matrices via ``reference.gemm`` + ``reference.formats``
        (an implementation independent of this package's fragment and value tables)."""
        form, lg = _form(case), inputs["logical"]
        want = exact_gemm(F.decode(form.atype, lg.a), F.decode(form.btype, lg.b), lg.c.astype(np.float64),
                          scale_a=F.decode(form.stype, lg.sfa), scale_b=F.decode(form.stype, lg.sfb))
        if case.parsed_recipe == NAN_SCALE_PROBE:
            return Expectation(want.astype(np.float32), "observe",
                               note="PROBE ue4m3_nan_scale: UE4M3 code 0x7F as one SF_A and one SF_B (AMB-UE4M3-SIGN, "
                                    "reading nan-7f: those rows and columns of D are NaN)")
        return Expectation(want.astype(np.float32), "exact", note="exact by construction")

    def vm_reason(self, case: Case) -> str | None:
        """Every case's kernel runs on the PTX VM (``--backend model``)."""
        return None

    def form_readings(self, case: Case) -> tuple[tuple[str, str], ...]:
        """What the fragment encoders and the VM read into the case's form (``readings.py``)."""
        return readings.form_readings(case)

    def run_record_model(self, case: Case, inputs: dict[str, Any]) -> LaunchResult:
        return LaunchResult(fr.decode_f32(execute(_form(case), inputs["regs"])))

    def launch(self, cases: list[Case], inputs: list[Any], module: Any) -> list[LaunchResult]:
        mod = cr.as_module(module)
        rt = mod.rt
        regs: list[RegisterImage] = [x["regs"] for x in inputs]
        n = len(regs)
        a = rt.to_device(np.stack([r.a for r in regs]))
        b = rt.to_device(np.stack([r.b for r in regs]))
        c = rt.to_device(np.stack([r.c for r in regs]))
        sfa = rt.to_device(np.stack([r.sfa for r in regs]))
        sfb = rt.to_device(np.stack([r.sfb for r in regs]))
        sel = rt.to_device(np.array(kern.pack_selectors([r.sel.as_tuple() for r in regs]), dtype=np.uint32))
        d = rt.empty((n, 32, 4), np.uint32)
        res = mod.launch("mma_bs", (-(-n // kern.WARPS_PER_CTA),), (32 * kern.WARPS_PER_CTA,),
                         (a, b, c, sfa, sfb, sel, d, np.uint32(n)))
        if res.status != "ok":
            return [LaunchResult(None, res.status, None, {"reason": res.message}) for _ in cases]
        host = rt.to_host(d)
        return [LaunchResult(fr.decode_f32(host[i]), "ok", res.kernel_us, {"launch_cases": n}) for i in range(n)]

    def describe(self, case: Case, inputs: dict[str, Any]) -> str:
        """What ``mmacts explain`` shows: the logical operands, the scales and where the selectors put them."""
        form, lg, regs, sel = _form(case), inputs["logical"], inputs["regs"], _sel(case)
        lanes_a = sorted(int(x) for x in sc.sfa_lane(np.arange(16), sel.tida))
        lanes_b = sorted(int(x) for x in sc.sfb_lane(np.arange(8), sel.tidb))
        lines = [
            f"form: kind::{form.kind} .scale_vec::{form.scale_vec} {form.atype} x {form.btype}, scales {form.stype}",
            f"selectors: byte-id-a={sel.bida} thread-id-a={sel.tida} byte-id-b={sel.bidb} thread-id-b={sel.tidb}",
            f"SF_A supplied by lanes {lanes_a}; SF_B by lanes {lanes_b}; every other lane/byte holds poison",
            f"A ({form.atype}, 16 x {form.k}) values:\n{F.decode(form.atype, lg.a)}",
            f"B ({form.btype}, {form.k} x 8) values:\n{F.decode(form.btype, lg.b)}",
            f"SF_A ({form.stype}, 16 x {form.nsf}) values:\n{F.decode(form.stype, lg.sfa)}",
            f"SF_B ({form.stype}, {form.nsf} x 8) values:\n{F.decode(form.stype, lg.sfb)}",
            f"C (fp32):\n{lg.c}",
            "scale-a-data register per lane (hex): " + " ".join(f"{int(w):08x}" for w in np.ravel(regs.sfa)),
            "scale-b-data register per lane (hex): " + " ".join(f"{int(w):08x}" for w in np.ravel(regs.sfb)),
        ]
        return "\n".join(lines)

    def device_supported(self, compute_capability: tuple[int, int]) -> str | None:
        if tuple(compute_capability) in ((12, 0), (12, 1)):
            return None
        return (f"mma.sync block_scale needs sm_120a/sm_121a (compute capability 12.0/12.1); "
                f"this GPU is sm_{compute_capability[0]}{compute_capability[1]}")

    def diagnose(self, case: Case, got: np.ndarray, want: np.ndarray, mask: np.ndarray | None) -> str:
        """Name the metadata mistake that explains a failure, if one does (model replay)."""
        if got is None:
            return ""
        form, regs = _form(case), self.make_inputs(case)["regs"]
        valid = sc.VALID_SELECTORS[form.scale_vec]
        for name, values in valid.items():
            for v in values:
                alt = sc.Selectors(**{**_sel(case).__dict__, name: v})
                if alt == regs.sel:
                    continue
                d = fr.decode_f32(execute(form, RegisterImage(regs.a, regs.b, regs.c, regs.sfa, regs.sfb, alt)))
                if np.array_equal(d, got):
                    return f"result equals the model with {name}={v} (selector misread)"
        return ""


DRIVER = BlockScaleDriver()
