"""The ``probes`` suite: numeric probes as cases that observe, never pass or fail.

One case per (probe, instruction path), id ``probes.<probe>.<path>``, recipe
``probe:<probe>``, plus ``probes.recover.<path>`` which runs every probe vector and
reports the recovered parameters. Each case's ``observation`` (a JSON object with
``answer``) is what :func:`mmacts.ambiguity.record_observations` writes into the register.

On the model backend a path is executed by the numeric-model hypothesis planted for it
(:data:`suites.probes.models.PATH_MODELS`), so ``mmacts run --suite probes --backend
model`` checks that the probes recover each planted parameter set. The expectation of
every case is that hypothesis' prediction in ``observe`` mode: a hardware run that
disagrees is reported as observed, not failed.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import numpy as np

from mmacts.cases.model import Case
from mmacts.core.driver import Driver, Expectation, LaunchResult
from suites.probes import blockscale_driver as BS
from suites.probes.catalog import PROBES, Probe, probe
from suites.probes.fields import E4M3ProbeForm, ProbeRuntime
from suites.probes.hardware import evaluate_on_gpu, module_ptx_for
from suites.probes.models import PATH_MODELS, reference_evaluator
from suites.probes.recover import Recovery, marginal_answer, recover, to_bits
from suites.probes.vectors import Vector, stack

SUITE = "probes"
INSTRUCTIONS: dict[str, str] = {
    "mma_sync.sm_90a": "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32",
    "wgmma.sm_90a": "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3",
    "mma_sync.sm_120a": "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32",
    "tcgen05.sm_100a": "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X",
}
SPEC_ROWS: dict[str, tuple[str, ...]] = {"tcgen05.sm_100a": ("S9.7.16.10.7",)}
bits = to_bits


def case_id(probe_name: str, path: str) -> str:
    return f"{SUITE}.{probe_name}.{path}"


def answer_for(p: Probe, measured: np.ndarray) -> tuple[str, dict[str, object]]:
    """What one probe says on its own: the direct rule, or the consistent feature values."""
    if p.classify is not None:
        return p.classify(p.vectors(), np.asarray(measured, dtype=np.float64))
    return marginal_answer(p, measured)


def summarise(features: dict[str, object]) -> str:
    return ", ".join(f"{k}={v}" for k, v in features.items())


@lru_cache(maxsize=8)
def hypothesis_values(path: str) -> dict[str, np.ndarray]:
    """Every probe's values under the hypothesis planted for ``path``."""
    ev = reference_evaluator(PATH_MODELS[path])
    return {p.name: np.asarray(ev(*stack(p.vectors())), dtype=np.float64) for p in PROBES}


def _vectors(case: Case) -> list[Vector]:
    name = case.runtime.probe
    if name == "recover":
        return [v for p in PROBES for v in p.vectors()]
    return probe(name).vectors()


def _split(values: np.ndarray) -> dict[str, np.ndarray]:
    out, pos = {}, 0
    for p in PROBES:
        n = len(p.vectors())
        out[p.name] = values[pos:pos + n]
        pos += n
    return out


GPU_PATHS = ("mma_sync.sm_90a", "wgmma.sm_90a", "mma_sync.sm_120a")
"""E4M3 probe paths that have a kernel (the others are record-model only)."""


class ProbesDriver(Driver):
    """Implements :class:`mmacts.core.driver.Driver` for the numeric probes."""

    suite = SUITE

    def cases(self, level: str) -> list[Case]:
        out = []
        for path, instr in INSTRUCTIONS.items():
            kind, arch = path.split(".")
            form = E4M3ProbeForm(path=path, atype="e4m3", btype="e4m3", out="fp32")
            for name in [p.name for p in PROBES] + ["recover"]:
                out.append(Case(case_id=case_id(name, path), suite=SUITE, instruction=instr, arch=arch,
                                spec_rows=SPEC_ROWS.get(path, ()), level="smoke" if name == "recover" else "standard",
                                form=form, runtime=ProbeRuntime(probe=name), recipe=f"probe:{name}"))
        out.extend(BS.cases())
        return [c for c in out if c.in_level(level)]

    def module_ptx(self, case: Case) -> str:
        if BS.is_blockscale(case):
            return BS.module_ptx(case)

        return module_ptx_for(case.form.path)

    def make_inputs(self, case: Case) -> dict[str, Any]:
        if BS.is_blockscale(case):
            return BS.make_inputs(case)
        vs = _vectors(case)
        a, b, c = stack(vs)
        return {"vectors": vs, "a": a, "b": b, "c": c}

    def expected(self, case: Case, inputs: dict[str, Any]) -> Expectation:
        if BS.is_blockscale(case):
            return BS.expected(case, inputs)
        path, name = case.form.path, case.runtime.probe
        hyp = hypothesis_values(path)
        want = np.concatenate([hyp[p.name] for p in PROBES]) if name == "recover" else hyp[name]
        return Expectation(want.astype(np.float32), "observe",
                           note=f"observation; hypothesis for {path}: {PATH_MODELS[path]}")

    def _result(self, case: Case, values: np.ndarray, kernel_us: float | None = None) -> LaunchResult:
        name = case.runtime.probe
        if name == "recover":
            rec: Recovery = recover(_split(values))
            obs = {"answer": summarise(rec.features), "features": rec.features, "direct": rec.direct,
                   "survivors": rec.survivors, "answers": rec.answers}
        else:
            answer, details = answer_for(probe(name), values)
            obs = {"answer": answer, "details": details, "measured_bits": [f"{x:08x}" for x in bits(values)]}
        return LaunchResult(values.astype(np.float32), "ok", kernel_us,
                            {"observation": json.dumps(obs, default=str)})

    def vm_reason(self, case: Case) -> str | None:
        """Every probe path's kernel runs on the PTX VM (``--backend model``); the VM's numeric
        model of each path is the device profile's (``mmacts.ptxvm.warpmma.numerics``)."""
        if not BS.is_blockscale(case) and case.form.path not in GPU_PATHS:
            return f"no kernel for the E4M3 probes on {case.form.path} (the tcgen05 block-scale probes cover it)"
        return None

    def vm_profile(self, case: Case) -> dict[str, str]:
        """Block-scale paths: the VM's tensor core computes with the hypothesis the probe plants (so
        the recovery finds the planted parameters); other paths: the VM's device profile."""
        if BS.is_blockscale(case):
            planted = BS.path_of(case).planted
            return {"tcgen05_arithmetic": planted, "mma_sync_model": planted}
        return {}

    def run_record_model(self, case: Case, inputs: dict[str, Any]) -> LaunchResult:
        if BS.is_blockscale(case):
            return BS.run_record_model(case, inputs)
        ev = reference_evaluator(PATH_MODELS[case.form.path])
        return self._result(case, np.asarray(ev(inputs["a"], inputs["b"], inputs["c"]), dtype=np.float64))

    def launch(self, cases: list[Case], inputs: list[Any], module: Any) -> list[LaunchResult]:
        if BS.is_blockscale(cases[0]):
            return BS.launch(cases, inputs, module)
        path = cases[0].form.path
        if path not in GPU_PATHS:
            return [LaunchResult(None, "skip", None, {"reason": f"no GPU launcher for {path} here"})
                    for _ in cases]
        allv = [v for x in inputs for v in x["vectors"]]
        values, us, status = evaluate_on_gpu(path, module, allv)
        if status != "ok":
            kind = "timeout" if status.startswith("timeout") else "error"
            return [LaunchResult(None, kind, None, {"reason": status}) for _ in cases]
        out, pos = [], 0
        for case, x in zip(cases, inputs, strict=True):
            n = len(x["vectors"])
            out.append(self._result(case, values[pos:pos + n], us))
            pos += n
        return out

    def device_supported(self, compute_capability: tuple[int, int]) -> str | None:
        cc = tuple(compute_capability)
        if cc in ((9, 0), (10, 0)) or cc[0] == 12:
            return None
        return (f"probes run on sm_90 (mma.sync fp8, wgmma fp8), sm_100a (tcgen05 block scale) or sm_120 "
                f"(mma.sync fp8 and block scale); this GPU is sm_{cc[0]}{cc[1]}")

    def case_supported(self, case: Case, compute_capability: tuple[int, int]) -> str | None:
        """Per case: each path's cubin runs only on its own architecture (called by the executor)."""
        cc = tuple(compute_capability)
        if BS.is_blockscale(case):
            return BS.path_of(case).supported(cc)  # type: ignore[arg-type]
        path, have = case.form.path, f"sm_{cc[0]}{cc[1]}"
        if path.endswith("sm_90a"):
            return None if cc == (9, 0) else f"{path} probe needs sm_90a (compute capability 9.0); this GPU is {have}"
        if path == "mma_sync.sm_120a":
            return None if cc[0] == 12 else f"{path} probe needs sm_120 (compute capability 12.x); this GPU is {have}"
        return f"{path}: no GPU launcher for the E4M3 probes on this path (the tcgen05 block-scale probes cover it)"


DRIVER = ProbesDriver()
