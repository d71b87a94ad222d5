"""The block-scale probes as cases of the ``probes`` suite (``suites.probes.driver`` delegates here).

One case per (probe, path) that applies, id ``probes.<probe>.<path>`` (e.g.
``probes.bs_scale_anchor.mma_sync.sm_120a.mxf4.2X``), recipe ``probe:<probe>``, plus
``probes.bs_recover.<path>``, which runs every vector of the path and reports the recovered
hypothesis. Expectation: the planted hypothesis' prediction in ``observe`` mode. The
``observation`` JSON carries ``answer``, ``supports`` (the register reading it supports, where
one does), the feature values and every measured bit pattern.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import numpy as np

from mmacts.backends import cuda_runtime as cr
from mmacts.cases.model import Case
from mmacts.core.driver import Expectation, LaunchResult
from suites.probes import blockscale_paths as P
from suites.probes.blockscale_probes import bs_probe, vectors
from suites.probes.blockscale_recover import classify, marginal_answer, probes_for, recover_bs
from suites.probes.blockscale_vectors import stack_bs
from suites.probes.fields import BlockScaleProbeForm, ProbeRuntime
from suites.probes.recover import to_bits

SUITE = "probes"
RECOVER = "bs_recover"


def case_id(probe_name: str, path: str) -> str:
    return f"{SUITE}.{probe_name}.{path}"


def cases() -> list[Case]:
    out = []
    for path in P.BS_PATHS.values():
        names = [p.name for p in probes_for(path.form, path.tcgen05)] + [RECOVER]
        form = BlockScaleProbeForm(path=path.name, family=path.family, kind=path.form.kind,
                                   scale_vec=path.form.scale_vec, stype=path.form.stype, etype=path.form.etype)
        for name in names:
            out.append(Case(case_id=case_id(name, path.name), suite=SUITE, instruction=path.instruction(),
                            arch=path.arch, spec_rows=("S9.7.16.10.7",) if path.tcgen05 else (), level="standard",
                            form=form, runtime=ProbeRuntime(probe=name), recipe=f"probe:{name}"))
    return out


def is_blockscale(case: Case) -> bool:
    return case.form.path in P.BS_PATHS


def path_of(case: Case) -> P.BSPath:
    return P.BS_PATHS[case.form.path]


def case_vectors(case: Case) -> list:
    path, name = path_of(case), case.runtime.probe
    if name == RECOVER:
        return [v for p in probes_for(path.form, path.tcgen05) for v in vectors(p, path.form)]
    return vectors(bs_probe(name), path.form)


@lru_cache(maxsize=16)
def planted_values(path_name: str) -> np.ndarray:
    """Every vector of the path (recover order) under its planted hypothesis."""
    path = P.BS_PATHS[path_name]
    vs = [v for p in probes_for(path.form, path.tcgen05) for v in vectors(p, path.form)]

    return np.asarray(P.reference_bs_evaluator(path.planted)(path.form, stack_bs(path.form, vs)), dtype=np.float64)


def _slice(case: Case) -> slice:
    path, name = path_of(case), case.runtime.probe
    if name == RECOVER:
        return slice(0, None)
    start = 0
    for p in probes_for(path.form, path.tcgen05):
        n = len(vectors(p, path.form))
        if p.name == name:
            return slice(start, start + n)
        start += n
    raise KeyError(name)


def make_inputs(case: Case) -> dict[str, Any]:
    path = path_of(case)
    vs = case_vectors(case)
    out: dict[str, Any] = {"vectors": vs}
    if path.family == "mma_sync":
        out["images"] = P.mma_sync_images(path.form, vs)
    return out


def expected(case: Case, inputs: dict[str, Any]) -> Expectation:
    path = path_of(case)
    want = planted_values(path.name)[_slice(case)]
    return Expectation(want.astype(np.float32), "observe",
                       note=f"observation; hypothesis planted for {path.name}: {path.planted} "
                            f"(reference.numeric_model, unconfirmed for block scales)")


def split(path: P.BSPath, values: np.ndarray) -> dict[str, np.ndarray]:
    out, pos = {}, 0
    for p in probes_for(path.form, path.tcgen05):
        n = len(vectors(p, path.form))
        out[p.name] = values[pos:pos + n]
        pos += n
    return out


def observation(case: Case, values: np.ndarray) -> dict[str, Any]:
    """The observation JSON object of one case from its measured values."""
    path, name = path_of(case), case.runtime.probe
    if name == RECOVER:
        rec = recover_bs(path.form, split(path, values), tcgen05=path.tcgen05)
        return {"answer": ", ".join(f"{k}={v}" for k, v in rec.features.items()), "features": rec.features,
                "survivors": rec.survivors, "answers": rec.answers, "path": path.name}
    p = bs_probe(name)
    if p.classify is not None:
        answer, details, supports = classify(p, path.form, values)
    else:
        answer, details = marginal_answer(p, path.form, values)
        supports = ""
    obs: dict[str, Any] = {"answer": answer, "details": details, "path": path.name,
                           "measured_bits": [f"{x:08x}" for x in to_bits(values)]}
    if supports:
        obs["supports"] = supports
    return obs


def result(case: Case, values: np.ndarray, kernel_us: float | None = None) -> LaunchResult:
    return LaunchResult(values.astype(np.float32), "ok", kernel_us,
                        {"observation": json.dumps(observation(case, values), default=str)})


def run_record_model(case: Case, inputs: dict[str, Any]) -> LaunchResult:
    """Planted hypothesis on what the instruction would read (mma.sync: decoded register images)."""
    path = path_of(case)
    x = P.mma_sync_decode(path.form, inputs["images"]) if "images" in inputs else stack_bs(path.form,
                                                                                          inputs["vectors"])
    if path.family == "mma_sync":  # enable-input-d does not exist there
        x = type(x)(x.a, x.b, x.sa, x.sb, x.c, True)
    values = np.asarray(P.reference_bs_evaluator(path.planted)(path.form, x), dtype=np.float64)
    return result(case, values)


def module_ptx(case: Case) -> str:
    path = path_of(case)
    return P.tcgen05_module_ptx(path.form) if path.tcgen05 else P.mma_sync_module_ptx(path.form)


def launch(cases: list[Case], inputs: list[Any], module: Any) -> list[LaunchResult]:
    """All cases of one path in one launch."""
    path = path_of(cases[0])
    cc = tuple(getattr(cr.as_module(module).rt.info, "compute_capability", (0, 0)))
    reason = path.supported(cc)  # type: ignore[arg-type]
    if reason:
        return [LaunchResult(None, "skip", None, {"reason": reason}) for _ in cases]
    allv = [v for x in inputs for v in x["vectors"]]
    run = P.run_tcgen05_gpu if path.tcgen05 else P.run_mma_sync_gpu
    values, us, status = run(path.form, allv, module)
    if status != "ok" or values is None:
        kind = "timeout" if status.startswith("timeout") else "error"
        return [LaunchResult(None, kind, None, {"reason": status}) for _ in cases]
    out, pos = [], 0
    for case, x in zip(cases, inputs, strict=True):
        n = len(x["vectors"])
        out.append(result(case, values[pos:pos + n], us))
        pos += n
    return out
