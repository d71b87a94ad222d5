"""Suite ``peers``: production code generators tested on Blackwell silicon by their authors, as the
closest thing to silicon this project can run.

- **Triton** (``triton_cases.py``): ``tl.dot_scaled`` kernels compiled for sm_100a / sm_120a run on
  the PTX VM with random exact-by-construction data; D must equal the exact block-scaled product.
  If it does, the VM's reading of what those kernels exercise (packed FP4 in shared memory, the
  tcgen05.mma block-scale operands, scale factors staged with tcgen05.st, sm_120 fragments)
  agrees with silicon-proven code.
- **Gluon** (``gluon_cases.py``): a block-scaled tcgen05 kernel the project wrote in Gluon (Triton's
  tile-level language), 1-CTA and 2-CTA (``cta_group::2`` in a cluster of 2), compiled by Triton and
  run on the VM like the Triton kernels; the 2-CTA form is the only production-compiler PTX of the
  pair MMA, its ``tcgen05.cp.cta_group::2`` and its shared::cluster barrier protocol.
- **CUTLASS** (``cutlass_peer.py``): host programs built against CUTLASS's headers compute the
  descriptors, address maps, scale-factor layouts and fragments its SM100/SM120 block-scaled
  collectives build; each value is compared with what the VM's decoders read and with the host
  encoders: ``pass`` (all agree), ``fail`` (names the field and both values), ``observed`` (CUTLASS
  does not exercise the point).

Each case also names the ambiguity-register entries it bears on (:data:`REGISTER_LINKS`):
``python -m suites.peers.register RUN/results.parquet`` writes, per entry, what each peer did.
A missing peer (Triton or the CUTLASS wheel not installed, no compiler), a backend that cannot run the
peer and a gap the VM names are ``not-supported`` with the reason (this machine cannot run the form; ``skip``
is kept for what the user deselected), never a pass. The peers suite runs its own way (``run_case``): a Triton
kernel on the VM (``model``) or, on a Blackwell GPU, not yet; a CUTLASS comparison is host-only.
"""

from __future__ import annotations

import fnmatch
import time
from collections.abc import Callable
from dataclasses import replace
from importlib import metadata
from typing import Any, TypeVar

import numpy as np

from mmacts.backends import assembler
from mmacts.cases.model import Case
from mmacts.cases.status import NOT_SUPPORTED
from mmacts.compare.compare import compare
from mmacts.core.driver import Driver, Expectation, LaunchResult
from suites.peers import cutlass_examples as CE
from suites.peers import cutlass_peer as CP
from suites.peers import gluon_cases as GC
from suites.peers import triton_cases as TC

SUITE = "peers"

_M = TypeVar("_M", bound=Callable[..., Any])

try:
    from typing import override  # type: ignore[attr-defined]  # Python 3.12+
except ImportError:  # 3.10 / 3.11: the same marker (``__override__``), for readers and for the test that checks it

    def override(method: _M) -> _M:
        """Marks ``method`` as a hook of :class:`Driver` that this driver writes (:pep:`698`)."""
        method.__override__ = True  # type: ignore[attr-defined]
        return method

REGISTER_LINKS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("peers.cutlass.idesc.*", ("AMB-IDESC-M-FIELD", "AMB-IDESC-RESERVED", "AMB-IDESC-E2M1-CODE",
                               "AMB-IDESC-SCALETYPE-MXF8F6F4", "AMB-T44-MXF4NVF4-SCALETYPE")),
    ("peers.cutlass.idesc.*mxf4nvf4*", ("AMB-SFID-4X-TABLE44",)),
    ("peers.cutlass.smem.SW128_32B.*", ("AMB-T53-32B-ATOM-SIZE",)),
    ("peers.cutlass.smem.*", ("AMB-SDESC-VERSION", "AMB-SDESC-LBO-SWIZZLED-KMAJOR", "AMB-SDESC-BASEOFFSET")),
    ("peers.cutlass.smem.*.p6.*", ("AMB-FP6-HOLDER-BITS", "AMB-PADDED-SMEM-PADDING")),
    ("peers.cutlass.smem.*.p4.*", ("AMB-FP4-HOLDER-BITS", "AMB-PADDED-SMEM-PADDING")),
    ("peers.cutlass.sf_tmem.*", ("AMB-SF-QUADRANT", "AMB-SF-ADDR-BITS3031", "AMB-CP-SOURCE-WALK")),
    ("peers.cutlass.sf_tmem.*cg2*", ("AMB-SF-CP-2CTA", "AMB-SF-LAYOUT-B-N", "AMB-SF-LAYOUT-B-QUADRANT")),
    ("peers.cutlass.acc.*", ("AMB-DATAPATH-LAYOUT-E",)),
    ("peers.cutlass.example72*", ("AMB-SF-QUADRANT", "AMB-CP-SOURCE-WALK", "AMB-IDESC-M-FIELD", "AMB-FP4-HOLDER-BITS",
                                  "AMB-FP4-NIBBLE-ORDER")),
    ("peers.cutlass.example84*", ("AMB-SPARSE-META-TMEM", "AMB-SPARSE-SF-COUNT", "AMB-SF-QUADRANT",
                                  "AMB-CP-SOURCE-WALK", "AMB-SF-CP-2CTA", "AMB-IDESC-M-FIELD", "AMB-FP4-NIBBLE-ORDER")),
    ("peers.cutlass.example84b*", ("AMB-FP4-HOLDER-BITS",)),
    ("peers.cutlass.example79*", ("AMB-MMASYNC-SFA-ROW-MAP", "AMB-MMASYNC-QUALIFIER-ORDER", "AMB-FP4-NIBBLE-ORDER")),
    ("peers.cutlass.example79b*", ("AMB-CVT-UE8M0-EDGES", "AMB-MUFU-RCP-BLACKWELL")),
    ("peers.cutlass.example79c*", ("AMB-MMASYNC-FP6-CONTAINER",)),
    ("peers.cutlass.example79d*", ("AMB-MUFU-RCP-BLACKWELL",)),
    ("peers.cutlass.sm120.*", ("AMB-MMASYNC-SFA-ROW-MAP", "AMB-MMASYNC-FP6-CONTAINER", "AMB-T37-BLANK-THREADID")),
    ("peers.triton.sm_100a.*e2m1*", ("AMB-FP4-HOLDER-BITS", "AMB-PADDED-SMEM-PADDING", "AMB-FP4-NIBBLE-ORDER")),
    ("peers.triton.sm_100a.*", ("AMB-SF-QUADRANT", "AMB-IDESC-M-FIELD", "AMB-BLOCK32-ALIAS")),
    ("peers.triton.sm_100a.*tma5*", ("AMB-CP-SOURCE-WALK", "AMB-CP-MMA-ORDERING")),
    ("peers.triton.sm_100a.*.chain.*", ("AMB-A-TMEM-LAYOUT",)),
    ("peers.triton.sm_120a.*", ("AMB-MMASYNC-SFA-ROW-MAP", "AMB-MMASYNC-QUALIFIER-ORDER")),
    ("peers.gluon.*fp4*", ("AMB-FP4-HOLDER-BITS", "AMB-PADDED-SMEM-PADDING", "AMB-FP4-NIBBLE-ORDER")),
    ("peers.gluon.*", ("AMB-SF-QUADRANT", "AMB-IDESC-M-FIELD", "AMB-BLOCK32-ALIAS", "AMB-CP-SOURCE-WALK",
                       "AMB-CP-MMA-ORDERING")),
    ("peers.gluon.*.cta2.*", ("AMB-SF-2CTA-SFB-COPY", "AMB-SF-CP-2CTA")),
)
"""Case-id globs -> register entries whose reading the case exercises (the peers field's source)."""

KNOWN_DISAGREEMENTS: tuple[tuple[str, str], ...] = ()
"""Peer disagreements the register records (case-id glob -> entry): such a ``fail`` is an ``xfail`` naming the
entry until the suite's reading (VM and host encoders together) follows the peer or Blackwell silicon decides.
None today: the one there was (AMB-T53-32B-ATOM-SIZE, 4 vs 8 K rows per SBO step of the 128B/32B-atom swizzle)
was settled for the suite by moving the VM and the host encoder to CUTLASS's 4 rows (Table 53's 8x4 atom)."""


def register_ids(case_id: str) -> tuple[str, ...]:
    out: list[str] = []
    for pat, ids in REGISTER_LINKS:
        if fnmatch.fnmatchcase(case_id, pat):
            out.extend(i for i in ids if i not in out)
    return tuple(out)


def peer_versions() -> dict[str, str]:
    """Installed peer versions (for run.json): absent peers are omitted."""
    out = {}
    for name in ("triton", "nvidia-cutlass"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def _known(case: Case) -> Case:
    for pat, entry in KNOWN_DISAGREEMENTS:
        if fnmatch.fnmatchcase(case.case_id, pat):
            return replace(case, xfail=entry)
    return case


def _is_triton(case: Case) -> bool:
    return case.form.peer in ("triton", "gluon")


def _kernel_module(case: Case) -> tuple[Any, Any, Any]:
    """(compile_config, config_of, run) of a Triton or Gluon peer case."""
    if case.form.peer == "gluon":
        return GC.compile_config, GC.config_of, GC.run_gluon_case
    return TC.compile_config, TC.config_of, TC.run_triton_case


class PeersDriver(Driver):
    """The peers suite: its cases, and ``run_case`` that judges each one (the generic backends launch none)."""

    suite = SUITE

    @override
    def cases(self, level: str) -> list[Case]:
        out: list[Case] = TC.triton_cases(level) + GC.gluon_cases(level)
        try:
            out += CP.cutlass_cases(level)
        except Exception:  # noqa: BLE001 - no CUTLASS build: the cases still list, run_case skips them
            pass
        out += CE.example_cases(level)
        return [_known(c) for c in out]

    # The generic backends never launch these cases: run_case does (see the module docstring).
    @override
    def module_ptx(self, case: Case) -> str:
        if _is_triton(case):
            compile_config, config_of, _ = _kernel_module(case)
            return compile_config(config_of(case))["ptx"]
        raise NotImplementedError("a CUTLASS comparison has no kernel")

    @override
    def make_inputs(self, case: Case) -> Any:
        return None

    @override
    def expected(self, case: Case, inputs: Any) -> Expectation:
        raise NotImplementedError("peers cases are judged in run_case")

    @override
    def run_record_model(self, case: Case, inputs: Any) -> LaunchResult:
        raise NotImplementedError("peers cases are judged in run_case")

    @override
    def launch(self, cases: list[Case], inputs: list[Any], module: Any) -> list[LaunchResult]:
        raise NotImplementedError("peers cases are judged in run_case")

    @override
    def device_supported(self, compute_capability: tuple[int, int]) -> str | None:
        return ("the Triton peer kernels are not yet launched on a GPU (they run on the PTX VM); "
                "the CUTLASS comparisons are host-only")

    @override
    def run_case(self, case: Case, backend: str) -> dict[str, Any]:
        """Record fields of one case on ``backend`` (``compile`` / ``model`` / ``cuda`` / ``auto``)."""
        links = register_ids(case.case_id)
        note = f"register: {', '.join(links)}" if links else ""
        if _is_triton(case):
            out = self._triton(case, backend)
        elif case.form.peer == "cutlass-example":
            out = self._example(case, backend)
        else:
            out = self._cutlass(case, backend)
        if note:
            out["message"] = "; ".join(x for x in (out.get("message", ""), note) if x)
        return out

    def _triton(self, case: Case, backend: str) -> dict[str, Any]:
        compile_config, config_of, run = _kernel_module(case)
        if backend == "cuda":
            return {"status": NOT_SUPPORTED, "message": self.device_supported((0, 0))}
        t0 = time.perf_counter()
        try:
            meta = compile_config(config_of(case))
        except Exception as exc:  # noqa: BLE001 - a compiler that cannot build is a skip with its reason
            return {"status": NOT_SUPPORTED, "message": f"triton could not compile: {type(exc).__name__}: {exc}"}
        compile_s = time.perf_counter() - t0
        if backend == "compile":
            res = assembler.assemble(meta["ptx"], case.arch)
            return {"status": "pass" if res.ok else "fail", "compile_s": round(compile_s, 6),
                    "sass_opcodes": assembler.sass_summary(res.cubin) if res.ok and res.cubin else "",
                    "compare_mode": "assemble",
                    "message": f"triton {TC._triton_version()} PTX " + ("assembled" if res.ok else
                                                                       f"refused: {res.first_error_line}")}
        got, want, msg = run(case)
        base = {"executor": "ptxvm", "compile_s": round(compile_s, 6), "compare_mode": "exact"}
        if got is None and case.form.peer == "gluon":
            if GC.vm_gap(msg):  # the VM refused a form it does not model yet: say which, do not count it as a fault
                return dict(base, status=NOT_SUPPORTED, message=f"VM gap: {GC.vm_gap(msg)}: {msg}")
        if got is None:
            status = "timeout" if "timeout" in msg else "error"
            return dict(base, status=status, message=msg)
        cmp = compare(np.asarray(got), Expectation(np.asarray(want), "exact"))
        return dict(base, status=cmp.status, mismatches=cmp.mismatches, max_abs_err=cmp.max_abs_err,
                    max_ulp_err=cmp.max_ulp_err, first_mismatch=cmp.first_mismatch,
                    message=msg if cmp.status != "fail" else f"{cmp.mismatches} mismatches, first "
                    f"{cmp.first_mismatch}; {msg}")

    def _example(self, case: Case, backend: str) -> dict[str, Any]:
        if backend in ("compile", "cuda"):
            return {"status": NOT_SUPPORTED, "message": "a CUTLASS example peer runs on the PTX VM: --backend model"}
        return CE.run_example_case(case)

    def _cutlass(self, case: Case, backend: str) -> dict[str, Any]:
        if backend == "compile":
            return {"status": NOT_SUPPORTED,
                    "message": "a CUTLASS comparison is host-side: run it with --backend model"}
        try:
            status, msg = CP.run_cutlass_case(case)
        except CP.Unavailable as exc:
            return {"status": NOT_SUPPORTED, "message": f"CUTLASS peer unavailable: {exc}"}
        return {"status": status, "message": msg, "compare_mode": "peer", "executor": "host"}


DRIVER = PeersDriver()
