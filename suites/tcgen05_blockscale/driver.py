"""Suite ``tcgen05_blockscale``: ``tcgen05.mma ... .block_scale`` on sm_100a / sm_103a.

The driver glues four independent pieces: the case list (``cases.py``), the host encoders
(``build.py``: logical data -> shared/tensor-memory images + descriptors), the kernel generator
(``mmacts.ptx.tcgen05_kernels``) and the CPU model (``reference.tcgen05_model``). ``expected`` never
looks at an encoding: it is the exact block-scaled GEMM of the logical matrices
(``reference.gemm``). A model-backend pass is NOT a hardware pass; until a Blackwell GPU has run
these kernels the suite's verdicts are about the model's reading of the spec only.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from mmacts.backends import cuda_runtime as CR
from mmacts.cases.model import Case
from mmacts.compare.compare import SIGNED_ZERO_MODE
from mmacts.core.driver import Driver, Expectation, LaunchResult
from mmacts.core.recipe import CONTROL, PROBE, Recipe
from mmacts.ptx import tcgen05_kernels as K
from reference.tcgen05_model import machine
from suites.tcgen05_blockscale import build as B
from suites.tcgen05_blockscale import cases as C
from suites.tcgen05_blockscale import diagnose as D
from suites.tcgen05_blockscale import features as FT
from suites.tcgen05_blockscale import plain as PL
from suites.tcgen05_blockscale import readings as RD
from suites.tcgen05_blockscale.probes import PROBES

FAMILY_CC: dict[str, tuple[int, int]] = {"sm_100a": (10, 0), "sm_103a": (10, 3), "sm_110a": (11, 0)}
"""Arch-specific ('a') cubins run only on their exact compute capability."""
SFB_PEER_COPY = Recipe(PROBE, "sfb_peer_copy")
SMEM_BASE_OFFSET = Recipe(PROBE, "smem_base_offset")


def _form(case: Case) -> K.KernelForm:
    """The kernel form of an MMA case (its form record's fields are the kernel form's)."""
    return K.KernelForm(**case.form)


def device_reason(cc: tuple[int, int], arch: str) -> str | None:
    """``None`` when a device of capability ``cc`` runs an ``arch`` cubin, else a precise reason."""
    want = FAMILY_CC.get(arch)
    have = f"sm_{cc[0]}{cc[1]}"
    if want is None:
        return f"unknown target {arch}"
    if tuple(cc) == want:
        return None
    if cc[0] in (10, 11):
        return f"needs {arch} exactly (compute capability {want[0]}.{want[1]}); this device is {have}"
    return f"needs an sm_100-family GPU ({arch}); this device is {have}"


class Tcgen05BlockScaleDriver(Driver):
    """Implements ``mmacts.core.driver.Driver`` for tcgen05.mma block scaling."""

    suite = C.SUITE

    def cases(self, level: str) -> list[Case]:
        return C.enumerate_cases(level)

    def module_ptx(self, case: Case) -> str:
        if FT.is_feature(case):
            return FT.FK.module_ptx(FT.form_of(case))
        return K.module_ptx(_form(case))

    def make_inputs(self, case: Case) -> B.CaseInputs:
        if FT.is_feature(case):
            return FT.make_inputs(case)
        if PL.is_plain(case):
            return PL.make_inputs(case)
        return _inputs(case)

    def expected(self, case: Case, inputs: B.CaseInputs) -> Expectation:
        if FT.is_feature(case):
            return FT.expected(case, inputs)
        if PL.is_plain(case):
            return PL.expectation(case, inputs)
        rt, kind, recipe = case.runtime, case.form.kind, case.parsed_recipe
        if recipe.is_kind(CONTROL):
            return control_expectation(case, B.expected_d(inputs, kind))
        if "raw_codes" in inputs.extra:
            return Expectation(want=B.expected_raw_cells(inputs), mode="observe",
                               note=f"PROBE {recipe.name}: {PROBES['cp_decompress']}. 'want' "
                                    "is the FP4 [5:2] / FP6 [6:1] container reading; the raw cells are the observation")
        flags = dict(negate_a=bool(rt.negate_a), negate_b=bool(rt.negate_b))
        if B.is_random(case):
            model = C.numeric_model_of(case)
            return Expectation(want=B.expected_model(inputs, kind, model, **flags), mode="observe",
                               note=f"random data vs numeric model {model} ({C.MODEL_NOTE}); observe until "
                                    "the model is confirmed on hardware")
        want = B.expected_d(inputs, kind, **flags)
        if recipe == SFB_PEER_COPY:  # each CTA's own SFB copy is the hypothesis
            want = B.expected_peer_sfb(inputs, kind, **flags)
        if recipe == SMEM_BASE_OFFSET:  # the reference's descriptor walk is the hypothesis
            a, b = B.walked_operands(inputs)
            want = B.expected_d(replace(inputs, a=a, b=b), kind, **flags)
        if C.is_probe(case):
            name = recipe.name
            what = ("the product of A and B as the reference's descriptor walk reads the images"
                    if name == "smem_base_offset" else "the logical answer")
            return Expectation(want=want, mode="observe",
                               note=f"PROBE {name}: {PROBES.get(name, '')}. 'want' is {what}; "
                                    "a mismatch pattern is the observation")
        return Expectation(want=want, mode="exact", note="exact by construction (reference.gemm)")

    def vm_reason(self, case: Case) -> str | None:
        """Every case's kernel runs on the PTX VM (``--backend model``)."""
        return None

    def vm_profile(self, case: Case) -> dict[str, str]:
        """The VM's tensor-core arithmetic: the named numeric model for random data (observed
        against it), exact float64 accumulation for exact-by-construction data."""
        return {"tcgen05_arithmetic": C.numeric_model_of(case) if B.is_random(case) else "float64"}

    def form_readings(self, case: Case) -> tuple[tuple[str, str], ...]:
        """What the encoders and the VM read into the case's form and probe (``readings.py``)."""
        return RD.form_readings(case)

    def readings_not_assumed(self, case: Case) -> tuple[str, ...]:
        """Catalog links about data-path layouts the suite never uses (``readings.NOT_ASSUMED``)."""
        return RD.NOT_ASSUMED

    def run_record_model(self, case: Case, inputs: B.CaseInputs) -> LaunchResult:
        hyp = machine.Hypotheses(arithmetic=C.numeric_model_of(case) if B.is_random(case) else "float64")
        dumps = machine.run(_form(case), inputs.programs, hyp)
        got = B.decode_output(inputs, dumps)
        return LaunchResult(got=got, extra={"backend": "model", "hypotheses":
                                            f"{hyp.sf_lane_rule}, {hyp.sparse_meta}, {hyp.arithmetic}"})

    def launch(self, cases: list[Case], inputs: list[B.CaseInputs], module: Any) -> list[LaunchResult]:
        """Launch every runnable case of one form in one grid (one CTA / CTA pair per case)."""
        mod = CR.as_module(module)
        cc = tuple(getattr(mod.rt.info, "compute_capability", (0, 0)))
        if cases and FT.is_feature(cases[0]):
            reason = device_reason(cc, cases[0].arch)
            if reason:
                return [LaunchResult(got=None, status="skip", extra={"reason": reason}) for _ in cases]
            return FT.run(cases, inputs, module)
        results: list[LaunchResult | None] = [None] * len(cases)
        run_idx = []
        for i, c in enumerate(cases):
            reason = device_reason(cc, c.arch)
            if reason:
                results[i] = LaunchResult(got=None, status="skip", extra={"reason": reason})
            else:
                run_idx.append(i)
        if run_idx:
            form = _form(cases[run_idx[0]])
            progs = [p for i in run_idx for p in inputs[i].programs]
            launch = K.pack(progs)
            dp = mod.rt.to_device(launch.params)
            db = mod.rt.to_device(launch.blob)
            dout = mod.rt.empty((launch.out_bytes // 4,), np.uint32)
            dst = mod.rt.empty((len(progs),), np.uint32)
            _allow_smem(mod, form.entry_name, launch.smem_bytes)
            out = mod.launch(form.entry_name, (len(progs), 1, 1), (128, 1, 1),
                             [dp, db, dout, dst], shared_mem=launch.smem_bytes)
            if out.status != "ok":
                for i in run_idx:
                    results[i] = LaunchResult(got=None, status="timeout" if out.status == "timeout" else "error",
                                              extra={"message": out.message})
            else:
                raw = mod.rt.to_host(dout)
                status = mod.rt.to_host(dst)
                dumps = K.unpack_out(raw, launch)
                pos = 0
                for i in run_idx:
                    inp = inputs[i]
                    ncta = len(inp.programs)
                    st = status[pos:pos + ncta]
                    d = dumps[pos:pos + ncta]
                    pos += ncta
                    if (st == K.STATUS_TIMEOUT).any():
                        results[i] = LaunchResult(got=None, status="timeout",
                                                  extra={"status_words": st.tolist()})
                        continue
                    got = control_got(cases[i], B.decode_output(inp, d))
                    us = None if out.kernel_us is None else out.kernel_us / max(1, len(run_idx))
                    results[i] = LaunchResult(got=got, kernel_us=us,
                                              extra={"status_words": st.tolist(), "launch_cases": len(run_idx)})
        return [r if r is not None else LaunchResult(got=None, status="error") for r in results]

    def device_supported(self, compute_capability: tuple[int, int]) -> str | None:
        cc = tuple(compute_capability)
        if cc in FAMILY_CC.values():
            return None
        return device_reason(cc, "sm_100a")

    def diagnose(self, case: Case, got: np.ndarray | None, want: np.ndarray, mask: np.ndarray | None) -> str:
        """Mismatch pattern + which alternative (SF ID, negate) the answer equals."""
        if FT.is_feature(case):
            return FT.DIAGNOSIS
        if PL.is_plain(case):
            return D.diagnose(got, want, mask, None)
        alts = _alternatives(case) if got is not None else None
        return D.diagnose(got, want, mask, alts)


CONTROL_TOL = 1.0 / 16


def control_expectation(case: Case, want: np.ndarray) -> Expectation:
    """The expectation of a comparator control (``C.CONTROLS``): the exact D, perturbed on the want side
    where the control says so, and the verdict the comparison must give."""
    name = case.parsed_recipe.name
    verdict, what = C.CONTROLS[name]
    want = np.array(want, dtype=np.float32)
    w = {"nan_want": np.nan, "nan_both": np.nan, "signed_zero": 0.0, "inf_sign": np.inf, "inf_both": np.inf,
         "bound_inf": np.inf, "signed_zero_asked": 0.0, "signed_zero_asked_same": -0.0}.get(name)
    if name.startswith("bound_") and w is None:
        w = 1.0
    if w is not None:
        want[0, 0] = w
    bound = name.startswith("bound_")
    mode = "bound" if bound else (SIGNED_ZERO_MODE if name.startswith("signed_zero_asked") else "exact")
    return Expectation(want=want, mode=mode, tolerance=CONTROL_TOL if bound else None,
                       note=f"{name}: {what}", control=verdict)


def control_got(case: Case, got: np.ndarray) -> np.ndarray:
    """A control's perturbation of the kernel's real result (the identity for every other case)."""
    if not case.parsed_recipe.is_kind(CONTROL):
        return got
    name = case.parsed_recipe.name
    got = np.array(got, dtype=np.float32)
    g = {"nan_got": np.nan, "nan_both": np.nan, "signed_zero": -0.0, "signed_zero_asked": -0.0,
         "signed_zero_asked_same": -0.0, "inf_got": np.inf, "inf_sign": -np.inf,
         "inf_both": np.inf, "bound_inside": 1.0 + CONTROL_TOL / 2, "bound_edge": 1.0 + CONTROL_TOL,
         "bound_outside": 1.0 + 1.5 * CONTROL_TOL, "bound_inf": np.inf, "bound_nan": np.nan}.get(name)
    if name == "one_ulp":
        g = np.nextafter(got[0, 0], np.float32(np.inf))
    if name == "nan_both":  # another NaN payload than want's: NaN equals NaN by value, not by bit pattern
        g = np.array([0x7FC00001], dtype=np.uint32).view(np.float32)[0]
    if g is not None:
        got[0, 0] = g
    return got


def _allow_smem(mod: Any, entry: str, nbytes: int) -> None:
    """Opt in to > 48 KiB dynamic shared memory where the runtime exposes the attribute."""
    try:
        fn = mod.raw.get_function(entry)
        fn.max_dynamic_shared_size_bytes = int(nbytes)
    except Exception:  # older CuPy or a recording module: the launch reports any real failure
        pass


_INPUT_CACHE: dict[str, B.CaseInputs] = {}
_INPUT_CACHE_SIZE = 8


def _inputs(case: Case) -> B.CaseInputs:
    """Built inputs of ``case``, kept for the last few case IDs (the ID names every field that
    differs and the recipe). ``diagnose`` rebuilds alternatives
    of the case it just ran; the executor's own path builds each case once."""
    hit = _INPUT_CACHE.get(case.case_id)
    if hit is None:
        hit = B.build(case)
        if len(_INPUT_CACHE) >= _INPUT_CACHE_SIZE:
            _INPUT_CACHE.pop(next(iter(_INPUT_CACHE)))
        _INPUT_CACHE[case.case_id] = hit
    return hit


def _alternatives(case: Case) -> dict[str, Any]:
    """Predictions with one knob changed, for ``diagnose.match_alternatives``."""
    rt = case.runtime
    kind = case.form.kind
    alts: dict[str, Any] = {}
    ids = (0, 1, 2, 3) if kind == "mxf8f6f4" else (0, 2)
    for key, now in (("sfa_id", rt.sfa_id), ("sfb_id", rt.sfb_id)):
        for v in ids:
            if v == now:
                continue
            alt_case = replace(case, runtime=rt.replace(**{key: v}))

            def fn(ac=alt_case, true_case=case):
                # same logical data, encoded with another SF ID: what the MMA computes if it read
                # the scale bytes at the other ID = the truth's bytes interpreted at that slot.
                inp_true = _inputs(true_case)
                inp_alt = B.build(ac)
                inp_alt.programs = [
                    replace(pa, preload=pt.preload, cps=pt.cps, smem=pt.smem)
                    for pa, pt in zip(inp_alt.programs, inp_true.programs, strict=True)
                ]
                dumps = machine.run(_form(ac), inp_alt.programs)
                return machine.decode_d(dumps, inp_true.layout, inp_true.m, inp_true.n)

            alts[f"{key}={v} (instead of {now})"] = fn
    for key in ("negate_a", "negate_b"):
        def neg(k=key):
            inp = _inputs(case)
            flags = {"negate_a": bool(rt.negate_a), "negate_b": bool(rt.negate_b)}
            flags[k] = not flags[k]
            return B.expected_d(inp, kind, **flags)

        alts[f"{key} flipped"] = neg
    return alts


DRIVER = Tcgen05BlockScaleDriver()
