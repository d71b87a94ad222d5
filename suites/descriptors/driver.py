"""Suite ``descriptors``: known-answer checks of the tcgen05 descriptor tables through the reference decoders.

What it checks: the spec's own worked examples and the placement/meaning of every field of the
shared-memory descriptor (Table 40, and the canonical layouts of 9.7.16.3.3 with Figures 188-192),
the swizzle atoms of Table 53, the instruction descriptor of the non-scaled kinds (Table 42: every
raw value of every field, per kind) and the zero-column mask descriptor (Table 45 and its four
examples). Each case composes descriptor words / shared-memory images from the catalog's bit
positions, runs the INDEPENDENT decoders of ``reference/tcgen05`` on them (model backend), and
compares with an answer written from the spec text (``spec_readings``; see ``checks``).

What it does not check: the hardware. On a Blackwell GPU these cases would need a kernel that
makes the tensor core read the descriptor and exposes what it read (an MMA whose operands
identify every address the walk touched, a zero-column-mask MMA with column-tagged B, an idesc
sweep); no such kernel exists yet, so ``launch`` reports every case ``skip`` with that reason.
``module_ptx`` still gives a complete module carrying the descriptor in the instruction that would
consume it (tcgen05.mma a-desc/b-desc/idesc, tcgen05.mma.ws zero-column-mask-desc), so the
compile backend assembles the carrier for sm_100a. A model-backend pass says the decoders read
the tables as the spec prints them -- nothing about silicon.

Findings these checks encode (see the report of the task that added them): Figure 189's printed
exact layout (K-major, 32B swizzle, k = 2) is not injective, so its check covers the first
swizzle row only; Table 45's Skip/Use Span descriptions contradict its examples (the
``-table-descriptions`` case is ``xfail`` AMB-ZCM-SPAN).
"""

from __future__ import annotations

import functools
from typing import Any, cast

import numpy as np

from mmacts.cases.model import Case
from mmacts.core.driver import Driver, Expectation, LaunchResult
from mmacts.ptx.compile_forms import build_module, instruction_text
from mmacts.ptx.module import max_version, min_ptx_for_target
from suites.compile.fields import TcMmaForm
from suites.descriptors import checks as C
from suites.descriptors.fields import CheckRuntime

SUITE = "descriptors"
NO_KERNEL = ("descriptor known-answer check: needs a kernel that makes the tensor core read this descriptor and "
             "exposes what it read; none exists yet, so nothing was run on the GPU")
TCGEN05_PTX = "8.6"
"""PTX ISA version of tcgen05 (its Target ISA notes)."""
ARCH_CC: dict[str, tuple[int, int]] = {"sm_100a": (10, 0), "sm_103a": (10, 3)}


def carrier_form(carrier: str) -> TcMmaForm:
    """The tcgen05.mma form whose operand is the descriptor a check decodes: kind::f16, cta_group::1, A from
    shared memory, no block scale, except what the carrier changes (the idesc's kind; .ws, A in tensor
    memory and the zero-column mask for the zero-column-mask descriptor)."""
    smem = TcMmaForm(op="tcgen05.mma", kind="f16", cta_group=1)
    if carrier.startswith("idesc:"):
        return smem.replace(kind=carrier.split(":", 1)[1])
    if carrier == "zcm":
        return smem.replace(ws=True, a_tmem=True, zcm=True)
    if carrier != "smem":
        raise ValueError(f"unknown carrier {carrier!r}")
    return smem


@functools.cache
def _checks() -> dict[str, C.Check]:
    return {c.name: c for c in C.all_checks()}


@functools.cache
def _instruction(carrier: str, arch: str) -> str:
    return instruction_text(carrier_form(carrier), arch)


def _check(case: Case) -> C.Check:
    return _checks()[cast(CheckRuntime, case.runtime).check]


def _case(chk: C.Check) -> Case:
    return Case(case_id=f"{SUITE}.{chk.name}", suite=SUITE, instruction=_instruction(chk.carrier, chk.arch),
                arch=chk.arch, spec_rows=chk.rows, level=chk.level, form=carrier_form(chk.carrier),
                runtime=CheckRuntime(check=chk.name), recipe="known-answer", xfail=chk.xfail)


class DescriptorsDriver(Driver):
    """The descriptor known-answer checks as a suite (no kernel of its own: ``launch`` skips, the model
    backend runs the reference decoders through ``run_record_model``)."""

    suite = SUITE

    def cases(self, level: str) -> list[Case]:
        return [c for c in (_case(chk) for chk in _checks().values()) if c.in_level(level)]

    def module_ptx(self, case: Case) -> str:
        return build_module(dict(case.form), case.arch, max_version(min_ptx_for_target(case.arch), TCGEN05_PTX))

    def make_inputs(self, case: Case) -> dict[str, Any]:
        return _check(case).make()

    def expected(self, case: Case, inputs: Any) -> Expectation:
        chk = _check(case)
        return Expectation(want=np.asarray(chk.want(), dtype=np.float64), mode="exact",
                           note=f"known answer from the spec text: {chk.note}")

    def run_record_model(self, case: Case, inputs: Any) -> LaunchResult:
        got = _check(case).run(inputs)
        return LaunchResult(got=np.asarray(got, dtype=np.float64), extra={"backend": "model (reference decoders)"})

    def launch(self, cases: list[Case], inputs: list[Any], module: Any) -> list[LaunchResult]:
        return [LaunchResult(got=None, status="skip", extra={"reason": NO_KERNEL}) for _ in cases]

    def device_supported(self, compute_capability: tuple[int, int]) -> str | None:
        cc = tuple(compute_capability)
        if cc[0] == 10:
            return None
        return f"needs an sm_100-family GPU (sm_100a / sm_103a); this device is sm_{cc[0]}{cc[1]}"

    def case_supported(self, case: Case, compute_capability: tuple[int, int]) -> str | None:
        """The carrier modules are arch-specific ('a'): they load only on their exact capability."""
        want = ARCH_CC[case.arch]
        cc = tuple(compute_capability)
        if cc == want:
            return None
        return f"needs {case.arch} exactly (compute capability {want[0]}.{want[1]}); this device is sm_{cc[0]}{cc[1]}"


DRIVER = DescriptorsDriver()
