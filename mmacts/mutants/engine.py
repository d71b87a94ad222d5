"""How a planted fault is applied and judged: patches that undo themselves, and one run of a mutant.

Three ways to plant a fault, each addressing a named seam (a module's function or table), all undone when the
context closes:

* ``rebind(module, name, new)``: replace a module attribute and every reference other loaded project
  modules hold to the same object (``from x import f`` copies), so the fault reaches every caller;
* ``wrap(module, name, factory)``: the same with ``factory(original)``;
* ``setitem(module, name, key, factory)``: one entry of a named table replaced by ``factory(old)``.

There is no fourth way: mutants used to be regular-expression edits of source text, which broke whenever the
code they addressed was refactored without any change of behaviour (issue 25). A mutant names the function or
table that states the fact it alters; a refactor that keeps the name keeps the mutant valid, and one that
renames it fails loudly (``AttributeError``) where the registry is run.

``run_mutant`` runs the mutant's selected cases on the model backend (the PTX VM) with a fresh
executor and says whether it was caught (``killed``) and by which cases.
"""

from __future__ import annotations

import contextlib
import importlib
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from mmacts.backends.execute import Executor
from mmacts.cases.model import Case
from mmacts.core.suites import load_driver  # puts the checkout on sys.path for a console script
from suites.compile.fields import TcMmaForm
from suites.peers.fields import ExampleRuntime, SfRuntime
from suites.tcgen05_blockscale.fields import OperandRuntime, Tcgen05Form

_PROJECT = ("mmacts.", "reference.", "suites.")


def _project_modules() -> list[Any]:
    return [m for n, m in list(sys.modules.items()) if m is not None and n.startswith(_PROJECT)
            and not n.startswith("mmacts.mutants")]


_KEEP_CACHES = ("mmacts.", "suites.compile")
"""Not cleared: the VM's parse caches and the catalog are costly, and a mutant of a VM function replaces
the function itself (``wrap`` makes new caches), so nothing stale can reach it."""


def clear_caches() -> None:
    """Drop every ``functools.cache`` of the code a mutant can reach (encoders, decoders, the VM, the
    comparator; not the spec catalog or the toolchain) and the suites' input caches, so nothing computed
    before (or under) a mutant leaks across."""
    for mod in _project_modules():
        if mod.__name__.startswith(_KEEP_CACHES):
            continue
        for name, obj in list(vars(mod).items()):
            if name in ("catalog", "load", "_cat", "load_register"):
                continue
            fn = getattr(obj, "cache_clear", None)
            if callable(fn) and getattr(obj, "__module__", "") == mod.__name__:
                fn()
        cache = vars(mod).get("_INPUT_CACHE")
        if isinstance(cache, dict):
            cache.clear()


def _repoint(old: Any, new: Any, home: Any) -> list[tuple[Any, str, Any]]:
    """Point every project module's name bound to ``old`` (``from x import f``) at ``new``, except in
    ``home``; returns the (module, name, old value) to restore."""
    undo = []
    for other in _project_modules():
        if other is home:
            continue
        for attr, val in list(vars(other).items()):
            if val is old:
                undo.append((other, attr, val))
                setattr(other, attr, new)
    return undo


@contextlib.contextmanager
def rebind(module: str, name: str, new: Any) -> Iterator[None]:
    mod = importlib.import_module(module)
    old = getattr(mod, name)
    undo: list[tuple[Any, str, Any]] = [(mod, name, old)]
    setattr(mod, name, new)
    if callable(old) or isinstance(old, type):
        undo += _repoint(old, new, mod)
    try:
        yield
    finally:
        for m, a, v in reversed(undo):
            setattr(m, a, v)


def wrap(module: str, name: str, factory: Callable[[Any], Any]) -> Callable[[], contextlib.AbstractContextManager]:
    def ctx():
        mod = importlib.import_module(module)
        return rebind(module, name, factory(getattr(mod, name)))
    return ctx


def setitem(module: str, name: str, key: Any, factory: Callable[[Any], Any]) -> Callable[[], Any]:
    """Replace ``module.name[key]`` (a table entry) by ``factory(old)``."""
    @contextlib.contextmanager
    def ctx():
        table = getattr(importlib.import_module(module), name)
        old = table[key]
        table[key] = factory(old)
        try:
            yield
        finally:
            table[key] = old
    return ctx


def combine(*ctxs: Callable[[], Any]) -> Callable[[], Any]:
    @contextlib.contextmanager
    def ctx():
        with contextlib.ExitStack() as stack:
            for c in ctxs:
                stack.enter_context(c())
            yield
    return ctx


@dataclass(frozen=True)
class Mutant:
    """One planted fault in the project's reading of the spec (or in its kernels / comparator)."""

    name: str
    family: str
    """``idesc-host``, ``idesc-vm``, ``sdesc-host``, ..., ``comparator``, ``kernel``."""
    what: str
    rows: tuple[str, ...]
    """Spec rows whose reading the mutant changes (empty: not a spec reading, e.g. the comparator)."""
    plant: Callable[[], Any]
    """Context factory that applies the fault while open."""
    suite: str
    pick: Callable[[Case], bool]
    level: str = "standard"
    limit: int = 2
    refusal: str = ""
    """A regular expression: an ``error`` whose message matches also counts as caught. Only for mutants
    whose faulty word the spec makes invalid (a reserved/fixed bit set, a value no table lists): the VM
    refusing it IS the catch. Empty: only a ``fail`` catches the mutant."""
    fast: bool = False
    """In the CI subset (``test_mutants.py`` without ``-m mutants_full``)."""
    kernel: bool = False
    """A planted kernel fault: any verdict other than pass/observed/skip catches it (a hazard error too)."""
    observed: bool = False
    """The fault is one reading of a question the spec leaves open (a register entry): no case may FAIL on it,
    since silicon may answer that way. Its catching cases are observations (probes); the mutant is caught
    (``how`` = ``observed``) when one records elements that differ from its hypothesis, which it does not
    unmutated (``run.verify_killers`` checks the clean run agrees). A ``fail`` catches it too."""


@dataclass
class MutantResult:
    name: str
    family: str
    rows: tuple[str, ...]
    killed: bool
    how: str
    """``fail``, ``refusal``, ``kernel-error`` or ``survived``."""
    verdicts: dict[str, str] = field(default_factory=dict)
    killers: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """case id -> spec rows it cites, for the cases that caught the mutant."""
    seconds: float = 0.0


def _driver(suite: str) -> Any:
    return load_driver(suite)


def case_cost(c: Case) -> tuple[int, int]:
    """How dear ``c`` is on the VM, to run the cheapest first: its CTAs (the VM's cost grows with CTAs), then its
    N. The records that hold them: ``cta_group`` a tcgen05 case's form (:class:`Tcgen05Form`) and the
    descriptors' carrier MMA (:class:`TcMmaForm`), ``n`` a tcgen05 case's run-time record and the CUTLASS
    ``sf_tmem`` and example peers'; a case whose records hold neither is one CTA, N 0."""
    fm, rt = c.form, c.runtime
    ctas = fm.cta_group if isinstance(fm, Tcgen05Form | TcMmaForm) else 1
    n = rt.n if isinstance(rt, OperandRuntime | SfRuntime | ExampleRuntime) else 0
    return int(ctas or 1), int(n or 0)


def cases_for(m: Mutant) -> list[Case]:
    drv = _driver(m.suite)
    picked = [c for c in drv.cases(m.level) if m.pick(c)]
    # cheapest first: one CTA before a pair (the VM's cost grows with CTAs), then the smaller N
    picked.sort(key=case_cost)
    return picked[: m.limit]


def run_cases(suite: str, cases: list[Case]) -> dict[str, dict[str, Any]]:
    drv = _driver(suite)
    ex = Executor("model")
    for c in cases:
        ex.all_cases.setdefault(repr(c.form_key), []).append(c)
    return {c.case_id: ex.execute(drv, c) for c in cases}


def judge(m: Mutant, cases: list[Case], recs: dict[str, dict[str, Any]]) -> tuple[str, dict[str, tuple[str, ...]]]:
    by_id = {c.case_id: c for c in cases}
    fails = {k: by_id[k].spec_rows for k, r in recs.items() if r["status"] == "fail"
             and "ptxas refused" not in str(r["message"])}
    if fails:
        return "fail", fails
    if m.kernel:
        errs = {k: by_id[k].spec_rows for k, r in recs.items()
                if r["status"] in ("error", "timeout") and "ptxas refused" not in str(r["message"])}
        if errs:
            return "kernel-error", errs
    if m.refusal:
        errs = {k: by_id[k].spec_rows for k, r in recs.items()
                if r["status"] == "error" and re.search(m.refusal, str(r["message"]))}
        if errs:
            return "refusal", errs
    if m.observed:
        seen = {k: by_id[k].spec_rows for k, r in recs.items()
                if r["status"] == "observed" and int(r.get("mismatches") or 0) > 0}
        if seen:
            return "observed", seen
    return "survived", {}


def run_mutant(m: Mutant) -> MutantResult:
    import time

    t0 = time.perf_counter()
    cases = cases_for(m)
    if not cases:
        raise AssertionError(f"mutant {m.name}: no case selected")
    clear_caches()
    try:
        with m.plant():
            clear_caches()
            recs = run_cases(m.suite, cases)
    finally:
        clear_caches()
    how, killers = judge(m, cases, recs)
    verdicts = {k: f"{r['status']}: {str(r['message'])[:160]}" for k, r in recs.items()}
    return MutantResult(m.name, m.family, m.rows, how != "survived", how, verdicts, killers,
                        round(time.perf_counter() - t0, 3))
