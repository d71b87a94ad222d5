"""Run one case on one backend and turn what happened into a report record.

The three backends share this one path so that a case means the same thing
everywhere:

- ``compile``: generate the module, assemble it for the case's arch, record SASS.
  A compile-only suite (toolchain conformance) always runs here.
- ``model``: generate and assemble as above (so the pipeline is the same), then run the
  *same* module text and launch the ``cuda`` backend would on the PTX virtual machine
  (``mmacts.ptxvm``): the driver's own ``launch`` launches on a ``VmModule``, so the
  kernel's instructions, parameters, buffers and host-side decoding are exercised. A suite
  with no kernel to execute (``vm_reason`` says why) falls back to its record-level model, and
  the record's ``executor`` says which one ran.
- ``cuda``: the same, but launch on the GPU. Cases of one form are launched
  together (many cases per launch) and the results are cached per case.
- ``auto``: ``cuda`` where a GPU is present and the suite supports it, ``model``
  elsewhere; the record says which one ran.

Nothing here reports ``pass`` for something that was not obtained: a GPU (or backend) that cannot
run the case's form is ``not-supported`` with the reason, an exception is ``error`` with its message.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from mmacts.ambiguity.assumes import assumes, hardware_fail_note
from mmacts.backends import BACKENDS, cuda_runtime, gpu
from mmacts.backends import assembler as tc
from mmacts.backends.choice import choose, unsupported
from mmacts.cases.model import Case
from mmacts.cases.status import NOT_SUPPORTED
from mmacts.compare.compare import compare
from mmacts.compare.mismatch_map import compact
from mmacts.core.driver import Driver, LaunchResult, as_driver
from mmacts.core.records import empty_record
from mmacts.ptxvm import load_module


def assumes_of(case: Case) -> tuple[str, ...]:
    """Open register entries the case's expected value depends on (``mmacts.ambiguity.assumes``)."""
    try:
        return assumes(case)
    except Exception:  # a broken register must not stop a run: the column says so instead
        return ("?register-unreadable",)


VM_BATCH = 16
"""Cases of one form per VM launch: threads of all their CTAs run as one numpy vector."""


def vm_reason(driver: Driver, case: Case) -> str | None:
    """Why the model backend cannot execute ``case``'s kernel on the PTX VM (None: it can)."""
    return as_driver(driver).vm_reason(case)


def vm_profile(driver: Driver, case: Case) -> dict[str, Any]:
    """The VM's device profile for ``case`` (e.g. the tensor-core arithmetic hypothesis)."""
    return dict(as_driver(driver).vm_profile(case))


class CaseSkipped(Exception):
    """Raised inside execution to end a case as ``not-supported`` with the reason: the backend chosen
    cannot run it here (a form this GPU does not have, no usable GPU for ``--backend cuda``). Not
    ``skip``: a skip is the user's choice, this is the device's limit, and a validation team counts
    the two apart."""


VM_REFUSAL = "PTX VM unsupported"
"""How a launch outcome starts when the PTX VM refused, by name, a form it does not model exactly
(``VmUnsupported``, ``mmacts.ptxvm.runtime``): the backend cannot run the case, which is not an error."""


def not_supported_reason(result: LaunchResult) -> str | None:
    """Why a launch result says the backend cannot run the case (None: it ran, or it failed): a
    launcher's ``skip`` (this GPU lacks the form, no launcher here), or the VM's refusal by name."""
    if result.status == "skip":
        return str(result.extra.get("reason", "")) or "the backend cannot run this case"
    why = str(result.extra.get("reason") or result.extra.get("message") or "")
    if result.status == "error" and VM_REFUSAL in why:
        return why
    return None


@dataclass
class Assembled:
    """A module assembled once per (form, arch) in this process."""

    ok: bool
    cubin: bytes | None
    message: str
    compile_s: float
    sass_opcodes: str
    ptxas_version: str
    ptx: str


@dataclass
class Executor:
    """Executes cases for one backend choice; caches modules and batched launches."""

    backend: str = "model"
    all_cases: dict[str, list[Case]] = field(default_factory=dict)
    """Every case of the session per form key (so the cuda backend can batch a form)."""
    _modules: dict[tuple, Assembled] = field(default_factory=dict)
    _cuda_results: dict[str, tuple[LaunchResult, Any]] = field(default_factory=dict)
    _cuda_done: set[str] = field(default_factory=set)
    vm_trace: Any = None
    """A ``mmacts.ptxvm.trace.Tracer`` to attach to VM launches (``mmacts explain --trace``)."""
    answers: Any = None
    """A ``mmacts.compare.answer_cache.AnswerCache`` (``mmacts run`` sets one; None: every answer is
    computed, as self-tests and the mutants engine need)."""

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ValueError(f"unknown backend {self.backend!r}; expected one of {', '.join(BACKENDS)}")

    # ------------------------------------------------------------------ helpers
    def assemble(self, driver: Driver, case: Case) -> Assembled:
        """Generate and assemble the module of ``case``'s form (once per process)."""
        key = case.form_key
        if key not in self._modules:
            ptx = driver.module_ptx(case)
            t0 = time.perf_counter()
            res = tc.assemble(ptx, case.arch)
            dt = time.perf_counter() - t0
            sass = tc.sass_summary(res.cubin) if res.ok and res.cubin else ""
            self._modules[key] = Assembled(
                res.ok, res.cubin, res.first_error_line or "", dt, sass, tc.ptxas_version(), ptx
            )
        return self._modules[key]

    def choose(self, driver: Driver, case: Case) -> tuple[str, str | None]:
        """The backend that will run ``case``, and a skip reason if none can (:func:`mmacts.backends.choice.choose`)."""
        c = choose(self.backend, as_driver(driver), case)
        return c.backend, c.skip

    # ------------------------------------------------------------------ execute
    def execute(self, driver: Driver, case: Case) -> dict[str, Any]:
        """Run ``case`` and return its report record (never raises for case failures)."""
        driver = as_driver(driver)
        backend, skip = self.choose(driver, case)
        rec = empty_record(
            case_id=case.case_id, suite=case.suite, instruction=case.instruction,
            spec_rows=" ".join(case.spec_rows), assumes=" ".join(assumes_of(case)), arch=case.arch, backend=backend,
            expect=case.expect, level=case.level,
            device=gpu.probe().name if backend == "cuda" else "cpu",
        )
        t0 = time.perf_counter()
        try:
            if skip:
                raise CaseSkipped(skip)
            if driver.compile_only:
                rec.update(self._compile_only(driver, case))
            elif driver.judges_own_cases:  # a suite that judges its cases itself (peers)
                rec.update(driver.run_case(case, backend))
                if rec.get("compare_mode") == "assemble" and not rec.get("ptxas_version"):
                    rec["ptxas_version"] = tc.ptxas_version()  # it assembled: say with which ptxas, as every row does
            elif backend == "compile":
                rec.update(self._compile(driver, case))
            elif backend == "model":
                rec.update(self._run(driver, case, on_gpu=False))
            else:
                rec.update(self._run(driver, case, on_gpu=True))
        except CaseSkipped as exc:
            rec.update(status=NOT_SUPPORTED, message=str(exc))
        except Exception as exc:  # a harness or model exception is an error, never a pass
            tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
            rec.update(status="error", message=tb)
        rec["run_s"] = round(time.perf_counter() - t0, 6)
        if rec["status"] == "fail" and case.xfail:
            rec["status"] = "xfail"
            rec["message"] = f"explained by {case.xfail}: {rec['message']}"
        if rec["status"] == "fail" and backend == "cuda" and rec["assumes"]:
            # the expected value rests on an open reading: the hardware may be answering the question

            rec["message"] = f"{hardware_fail_note(rec['assumes'].split())}; {rec['message']}"
        return rec

    def _compile_only(self, driver: Driver, case: Case) -> dict[str, Any]:
        return tc.check_compile_case(case, driver.module_ptx(case))

    def _compile(self, driver: Driver, case: Case) -> dict[str, Any]:
        mod = self.assemble(driver, case)
        out: dict[str, Any] = dict(
            compile_s=round(mod.compile_s, 6), sass_opcodes=mod.sass_opcodes,
            ptxas_version=mod.ptxas_version, compare_mode="assemble",
        )
        if mod.ok:
            out.update(status="pass", message="assembled (not executed: compile backend)")
        else:
            out.update(status="fail", message=f"ptxas refused a valid form: {mod.message}")
        return out

    def _run(self, driver: Driver, case: Case, *, on_gpu: bool) -> dict[str, Any]:
        mod = self.assemble(driver, case)  # the model backend too: the pipeline is the same
        out: dict[str, Any] = dict(compile_s=round(mod.compile_s, 6), sass_opcodes=mod.sass_opcodes,
                                   ptxas_version=mod.ptxas_version)
        if not mod.ok:
            return dict(out, status="fail", message=f"ptxas refused a valid form: {mod.message}")
        if on_gpu:
            result, inputs = self._cuda_result(driver, case, mod)
        elif vm_reason(driver, case) is None:
            result, inputs = self._vm_result(driver, case, mod)
            out["executor"] = "ptxvm"
        else:
            inputs = driver.make_inputs(case)
            result = driver.run_record_model(case, inputs)
            out["executor"] = f"record-model ({vm_reason(driver, case)})"
        if result.status == "timeout":
            return dict(out, status="timeout", message="kernel wait bounded out: " + str(result.extra))
        unable = not_supported_reason(result)
        if unable is not None:
            return dict(out, status=NOT_SUPPORTED, message=unable)
        if result.status != "ok" or result.got is None:
            # a launch that failed (or returned nothing) is judged by nothing it may have left in
            # ``got``: an error with the launch's own reason, never a comparison that could pass
            why = result.extra.get("reason") or result.extra.get("message") or "no output"
            return dict(out, status="error", kernel_us=result.kernel_us,
                        message=f"launch status {result.status!r}: {why}")
        exp = driver.expected(case, inputs) if self.answers is None else self.answers.expected(driver, case, inputs)
        cmp = compare(result.got, exp)
        out.update(
            status=cmp.status, mismatches=cmp.mismatches, max_abs_err=cmp.max_abs_err,
            max_ulp_err=cmp.max_ulp_err, first_mismatch=cmp.first_mismatch, compare_mode=exp.mode,
            kernel_us=result.kernel_us,
        )
        if result.extra.get("observation") is not None:
            out["observation"] = result.extra["observation"]
        if cmp.mismatches and getattr(cmp, "mask", None) is not None:  # for ``mmacts explain --run`` (jsonl only)

            try:
                out["mismatch_map"] = compact(cmp.mask, result.got, exp.want)
            except Exception:  # a picture must never change a verdict
                pass
        if exp.control:
            ok = cmp.status == exp.control
            seen = f"{cmp.mismatches} mismatches" + (f", first {cmp.first_mismatch}" if cmp.mismatches else "")
            out.update(status="pass" if ok else "fail", message=(
                f"control ({exp.note}): the comparator said {cmp.status} ({seen}), as it must" if ok else
                f"control ({exp.note}): the comparator said {cmp.status} ({seen}) where it must say {exp.control}"))
            return out
        msg = exp.note
        if cmp.status == "observed":
            agree = ("agrees with the hypothesis" if cmp.mismatches == 0
                     else f"{cmp.mismatches} elements differ from the hypothesis, first {cmp.first_mismatch}")
            msg = "; ".join(x for x in (msg, agree) if x)
        if cmp.status == "fail":
            hint = driver.diagnose(case, result.got, exp.want, cmp.mask)
            msg = "; ".join(x for x in (f"{cmp.mismatches} mismatches, first {cmp.first_mismatch}", hint) if x)
        out["message"] = msg
        return out

    def _cuda_result(self, driver: Driver, case: Case, mod: Assembled) -> tuple[LaunchResult, Any]:
        """Launch every pending case of this form at once; return this case's result."""
        if case.case_id not in self._cuda_results:
            cc = gpu.probe().compute_capability
            batch = self._pending(case, lambda c: unsupported(driver, c, cc) is None)
            inputs = [driver.make_inputs(c) for c in batch]
            module = cuda_runtime.load_module(mod.cubin if mod.cubin else mod.ptx)
            self._keep(batch, inputs, driver.launch(batch, inputs, module))
        return self._take(case)

    def _pending(self, case: Case, fits: Any, limit: int | None = None) -> list[Case]:
        """The cases of ``case``'s form not yet launched that ``fits`` accepts (at most ``limit``), ``case``
        always among them: one batched launch (GPU or VM) serves them all."""
        batch = [c for c in self.all_cases.get(repr(case.form_key), [case])
                 if c.case_id not in self._cuda_results and c.case_id not in self._cuda_done and fits(c)]
        batch = batch[:limit] or [case]
        if case not in batch:
            batch = [*batch, case] if limit is None else [case, *batch[:limit - 1]]
        return batch

    def _keep(self, batch: list[Case], inputs: list[Any], results: list[LaunchResult]) -> None:
        """Cache a batch's results until each case of it is executed."""
        for c, i, r in zip(batch, inputs, results, strict=True):
            self._cuda_results[c.case_id] = (r, i)

    def _take(self, case: Case) -> tuple[LaunchResult, Any]:
        self._cuda_done.add(case.case_id)
        return self._cuda_results.pop(case.case_id)

    def _vm_result(self, driver: Driver, case: Case, mod: Assembled) -> tuple[LaunchResult, Any]:
        """Run every pending case of this form (and VM profile) in one VM launch, as the cuda backend
        batches a GPU launch; return this case's result. A batch whose launch failed is re-run
        case by case, so a kernel fault is reported against the case that provokes it."""
        if case.case_id not in self._cuda_results:
            prof = vm_profile(driver, case)
            batch = self._pending(case, lambda c: vm_reason(driver, c) is None and vm_profile(driver, c) == prof,
                                  VM_BATCH)
            inputs = [driver.make_inputs(c) for c in batch]
            results = driver.launch(batch, inputs, self._vm_module(mod, case, prof))
            if len(batch) > 1 and any(r.status not in ("ok", "skip") for r in results):
                results = [driver.launch([c], [i], self._vm_module(mod, c, prof))[0]
                           for c, i in zip(batch, inputs, strict=True)]
            for r in results:
                r.extra.setdefault("executor", "ptxvm")
            self._keep(batch, inputs, results)
        return self._take(case)

    def _vm_module(self, mod: Assembled, case: Case, profile: dict[str, Any]) -> Any:
        return load_module(mod.ptx, case.arch, profile=profile, trace=self.vm_trace)

    def holds_results(self) -> bool:
        """True while a batched launch has results that later cases of this process will take.

        A hung or faulted batch poisons the context; the worker must outlive it just long
        enough to record those cases (from the cache, without touching the GPU), so that one
        hung launch costs one worker, not one worker per case of the batch.
        """
        return bool(self._cuda_results)
