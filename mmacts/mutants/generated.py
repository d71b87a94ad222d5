"""Generated mutation (issue 26, item 2): a mutation tool's operator-level mutants of one project module, judged
by the suites' own cases on the model backend -- a second, independent way to find holes besides the
hand-written registry (``registry.py``).

The tool is cosmic-ray (``pip install cosmic-ray``; found on PATH or through ``--cosmic-ray``/``$MMACTS_COSMIC_RAY``):
its operators replace comparisons, arithmetic and boolean operators, constants, unary operators, break/continue
and more. For a TARGET module this script

1. copies the working tree (tracked and untracked, not ignored files) into a temporary folder, so no mutation
   ever touches the checkout;
2. lets cosmic-ray list every mutation of the module (``cosmic-ray init`` + ``dump``) and takes all of them or a
   seeded sample (``--sample N``);
3. applies each with ``cosmic-ray mutate-and-test`` whose test command is this module's ``--check TARGET``:
   the target's suite cases (``TARGETS``) run on the model backend in a fresh process; a case that ends
   ``fail``/``error``/``timeout``, or an observation that records a difference, kills the mutant;
4. prints the score and writes ``generated/<target>.json`` (every mutant, its diff and outcome) and merges
   the survivors into ``generated/survivors.yaml``: each survivor needs a ``reason`` a person wrote
   (why it is equivalent, or which case will kill it); a survivor without one is the finding.

``python -m mmacts.mutants.generated compare --sample 40`` takes a few minutes on 2 cores; the full run of
``compare`` (about 320 mutants) about half an hour: a benchmark-style job, never a test. CI runs a sampled few
(``test_generated.py``).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mmacts.cases.model import Case
from mmacts.core.recipe import Recipe
from mmacts.report.mutant_scores import (
    OUT_DIR,
    REPORT_COLUMNS,
    SURVIVORS,
    UNIT_ONLY,
    load_survivors,
    markdown_table,
    summarize,
    summary_line,
    totals,
    unit_only_unnoted,
)
from mmacts.report.mutant_scores import report_rows as _report_rows
from mmacts.report.mutant_scores import survivor_key as _key
from suites.tcgen05_blockscale.fields import OperandRuntime, Tcgen05Form, Tcgen05Runtime

__all__ = ["OUT_DIR", "REPORT_COLUMNS", "SURVIVORS", "UNIT_ONLY", "load_survivors", "markdown_table", "summarize",
           "summary_line", "totals", "unit_only_unnoted"]

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Target:
    """A module to mutate and the suite cases that judge it."""

    module: str
    suites: tuple[str, ...]
    pick: Callable[[Case], bool]
    limit: int = 40
    spread: bool = False
    """Take one case of each instruction form (``select``) rather than the first ``limit`` picked."""
    always: Callable[[Case], bool] | None = None
    """Cases taken before the spread (a form the spread may miss that alone reaches part of the module)."""
    unit_tests: tuple[str, ...] = ()
    """Unit-test files beside the module, run when no suite case caught the mutant: a mutant they alone kill is
    reported ``killed-by: unit-test`` (a hole of the suites, not of the project's tests)."""
    unit_k: str = ""
    """A ``pytest -k`` expression leaving out unit tests too slow to run once per mutant (named in the target)."""


def _compare_cases(c: Case) -> bool:
    # every comparator control, a few exact cases, observations of both suites (the comparator sees them all)
    return (_recipe_in("control:", "probe:ue4m3_nan_scale", "plain:dol")(c) or c.case_id.startswith("tcgen05.shift")
            or c.case_id == "mxf8f6f4.omitted.cg1.dense.M128N64.e4m3xe4m3.ue8m0.sfa0sfb0.st")


def _anything(c: Case) -> bool:
    return True


def _form(c: Case) -> str:
    """The case's instruction form, without its shape and operand types: kind.scale.cta_group.dense|sp for
    tcgen05, the PTX shape and kind for mma.sync, the instruction for Hopper -- plus its recipe and the
    modifiers of the id (transpose, swizzle, cp, K96, collectors, ...), so a spread pick meets each once."""
    if c.case_id.startswith(("mma_sync.", "hopper.")):
        head, rest = c.case_id.split("/")[0], c.case_id.split("/")[1:]
        if c.case_id.startswith("mma_sync."):  # kind.scale_vec.stype and A's type
            return f"{c.recipe}|{head}|{rest[0].split('x')[0]}"
        return f"{c.recipe}|{head.rsplit('.', 1)[0]}|{rest[0] if 'wgmma' in head else ''}"  # layouts, swizzles
    parts = c.case_id.split(".")
    mods = sorted(p.split("-")[0].rstrip("0123456789") for p in parts[5:]
                  if not p.startswith(("M", "e2", "e3", "e4", "e5", "ue", "sfa", "s1", "s2", "s3", "s4", "s5",
                                       "s6", "s7", "s8", "s9")))
    return f"{c.recipe}|{'.'.join(parts[:4])}|{'.'.join(mods)}"


def _high_smem(c: Case) -> bool:
    """The case with B above 128 KiB of shared memory (the descriptor start address's top bit)."""
    return isinstance(c.runtime, Tcgen05Runtime) and c.runtime.b_base_shift >= 128 * 1024


_MMA_EDGES = ("mxf4nvf4.block16.cg2.dense.M256N64.e2m1xe2m1.ue8m0.sfa0sfb2.st.K96",  # SF groups 4-7: column stride
              "mxf8f6f4.omitted.cg1.dense.M128N128.e4m3xe5m2.ue8m0.sfa0sfb0.st.Atmem",  # 8-bit A from TMEM
              "f8f6f4.cg1.dense.M128N64.e4m3xe4m3.dol-ffff0000-00000000-00000003-c0000001.plain:dol")  # write_d's mask


_PACKING = ("mxf8f6f4.block32.cg1.dense.M128N40.e4m3xe5m2.ue8m0.sfa0sfb1.cp",  # SF staged through smem
            "mxf8f6f4.omitted.cg1.dense.M128N64.e2m3xe2m1.ue8m0.sfa2sfb3.st.s14")  # 6- and 4-bit operands


def _mma_edges(c: Case) -> bool:
    """The paths of mma.py a spread of forms may miss (found by its generated mutation: killed by unit tests
    only until these cases ran): scale factors of groups 4-7 (K = 96, SF ID 2), A from TMEM, the output-lane
    mask of the D write that mma_plain shares."""
    return c.case_id in _MMA_EDGES


def _a_or_meta_in_tmem(c: Case) -> bool:
    """A from tensor memory or sparse (its metadata in tensor memory), block-scaled or plain."""
    return isinstance(c.form, Tcgen05Form) and (c.form.a_tmem or c.form.sparse)


def _specials(c: Case) -> bool:
    """The Hopper f16-accumulator case with IEEE infinities in A and C (numerics.ieee_nan's blocks, the
    oracle's IEEE special results): taken before the spread, so it never displaces a form the spread picked."""
    return c.recipe == "specials"


def _recipe_in(*patterns: str) -> Callable[[Case], bool]:
    """Cases whose data recipe is of a kind (``exact``, ``plain:``) or of a kind with a name starting so
    (``probe:sparse`` takes ``probe:sparse_meta``), read from :attr:`Case.parsed_recipe`."""
    wanted = [Recipe(p[:-1]) if p.endswith(":") else Recipe.parse(p) for p in patterns]
    return lambda c: any(c.parsed_recipe.kind == w.kind and c.parsed_recipe.name.startswith(w.name) for w in wanted)


def _id_has(*tokens: str) -> Callable[[Case], bool]:
    return lambda c: any(t in c.case_id.split(".") or t in c.recipe for t in tokens)


VM_UNITS = "mmacts/ptxvm/tcgen05/test_units.py"
VM_MORE = "mmacts/ptxvm/test_tcgen05_more.py"
T5 = ("tcgen05_blockscale",)
MS = ("mma_sync_blockscale",)
HV = ("hopper_validation",)
MS_HV = ("mma_sync_blockscale", "hopper_validation")
ALL3 = ("tcgen05_blockscale", "mma_sync_blockscale", "hopper_validation")
_WARP = "mmacts/ptxvm/warpmma/"
_NOT_SWEEPS = "not every_case_full"
"""test_mma_sync.py's sweep of every full-level case takes minutes: too slow once per mutant."""
_REF5 = "reference/tcgen05/"
_REFMS = "reference/mma_sync/"
TARGETS: dict[str, Target] = {
    "compare": Target("mmacts/compare/compare.py", ("tcgen05_blockscale", "mma_sync_blockscale"), _compare_cases,
                      unit_tests=("mmacts/compare/test_compare.py",)),
    "shift": Target("mmacts/ptxvm/tcgen05/shift.py", T5, lambda c: c.case_id.startswith("tcgen05.shift"),
                    unit_tests=("mmacts/ptxvm/tcgen05/test_shift.py", VM_UNITS, VM_MORE)),
    "collector": Target("mmacts/ptxvm/tcgen05/collector.py", T5,
                        lambda c: c.recipe in ("plain:ws-collectors", "probe:collector_reuse")
                        or ("coll-" in c.case_id and c.recipe == "exact"),
                        unit_tests=("mmacts/ptxvm/tcgen05/test_collector.py", VM_MORE)),
    # -- the VM's tcgen05 package: a spread of block-scaled forms (every kind x scale x cta_group once)
    "decode": Target("mmacts/ptxvm/tcgen05/decode.py", T5, _anything, limit=14, spread=True, always=_high_smem,
                     unit_tests=("mmacts/ptxvm/tcgen05/test_decode.py", "mmacts/ptxvm/tcgen05/test_smem_base32b.py")),
    "mma": Target("mmacts/ptxvm/tcgen05/mma.py", T5, _recipe_in("exact", "probe:sparse", "probe:a_tmem",
                                                                  "probe:layoutB", "probe:sf_addr"),
                  limit=14, spread=True, always=_mma_edges,
                  unit_tests=("mmacts/ptxvm/tcgen05/test_mma.py", VM_UNITS, VM_MORE)),
    "mma_plain": Target("mmacts/ptxvm/tcgen05/mma_plain.py", T5, _recipe_in("plain:"),
                        unit_tests=(VM_UNITS, VM_MORE)),
    # the datapath facts and A/metadata in TMEM, shared by both MMAs since issue 25's split of mma/mma_plain
    "datapath": Target("mmacts/ptxvm/tcgen05/datapath.py", T5, _recipe_in("exact", "plain:", "probe:layoutB"),
                       limit=14, spread=True, always=_mma_edges,
                       unit_tests=("mmacts/ptxvm/tcgen05/test_mma.py", VM_UNITS, VM_MORE)),
    "tmem_operand": Target("mmacts/ptxvm/tcgen05/tmem_operand.py", T5, _a_or_meta_in_tmem, limit=14, spread=True,
                           always=_mma_edges, unit_tests=("mmacts/ptxvm/tcgen05/test_mma.py", VM_UNITS, VM_MORE)),
    "cp": Target("mmacts/ptxvm/tcgen05/cp.py", T5,
                 lambda c: (isinstance(c.runtime, OperandRuntime) and c.runtime.sf_stage == "cp")
                 or c.recipe in ("probe:cp_decompress", "probe:sfb_peer_copy", "control:sf_cp_missing"),
                 limit=10, spread=True, always=_recipe_in("probe:cp_decompress"), unit_tests=(VM_UNITS, VM_MORE)),
    "smem_operand": Target("mmacts/ptxvm/tcgen05/smem_operand.py", T5,
                           _id_has("a128B", "a64B", "a32B", "transpose_a", "transpose_b", "K96", "probe:mn_major",
                                   "probe:smem_base", "probe:t52", "cp-128x128b-b4x16_p64", "probe:sparse_meta"),
                           limit=12, spread=True,
                           always=lambda c: _high_smem(c) or c.recipe in ("probe:mn_major_sub8", "probe:cp_decompress",
                                                                       "probe:absolute_lbo"),
                           unit_tests=("mmacts/ptxvm/tcgen05/test_smem_base32b.py", VM_UNITS, VM_MORE)),
    "tmem": Target("mmacts/ptxvm/tcgen05/tmem.py", T5,
                   _recipe_in("feature:ldst", "probe:ldst", "probe:shift_row", "feature:shift"),
                   limit=12, spread=True, always=_recipe_in("probe:ldst_lane_base"),  # lane 8: base + lane
                   unit_tests=(VM_UNITS, VM_MORE)),
    # -- the VM's warp-MMA package (mma.sync block_scale on Blackwell, mma.sync / wgmma fp8 on Hopper)
    "mma_sync": Target(_WARP + "mma_sync.py", MS_HV, lambda c: "wgmma" not in c.case_id, limit=10, spread=True,
                       unit_tests=(_WARP + "test_mma_sync.py",), unit_k=_NOT_SWEEPS),
    "numerics": Target(_WARP + "numerics.py", MS_HV, _anything, limit=10, spread=True,
                       always=_specials,
                       unit_tests=(_WARP + "test_mma_sync.py", _WARP + "test_wgmma.py"), unit_k=_NOT_SWEEPS),
    "warp_formats": Target(_WARP + "formats.py", MS_HV, _anything, limit=10, spread=True,
                           always=lambda c: c.case_id == "hopper.published.mma_sync.e4m3.f16/H100" or _specials(c),
                           unit_tests=(_WARP + "test_formats.py", _WARP + "test_f16_infinities.py")),
    "wgmma": Target(_WARP + "wgmma.py", HV, lambda c: "wgmma" in c.case_id, limit=10, spread=True,
                    unit_tests=(_WARP + "test_wgmma.py", "suites/hopper_validation/test_wgmma_layout.py")),
    # -- the oracle side (reference/): host encoders and the exact GEMM the VM's results are judged against
    "ref_idesc": Target(_REF5 + "idesc.py", T5, _recipe_in("exact", "plain:"), limit=10, spread=True,
                        always=_recipe_in("plain:"), unit_tests=(_REF5 + "test_idesc.py",)),
    "ref_smem_desc": Target(_REF5 + "smem_desc.py", T5, _id_has("a128B", "a64B", "a32B", "anone", "transpose_a",
                                                               "probe:smem_base", "K96", "cp"), limit=10, spread=True,
                            always=_high_smem, unit_tests=(_REF5 + "test_smem_desc.py",)),
    "ref_smem_image": Target(_REF5 + "smem_image.py", T5, _recipe_in("exact", "probe:mn_major", "probe:smem_base"),
                             limit=10, spread=True, always=lambda c: c.case_id in _PACKING,
                             unit_tests=(_REF5 + "test_smem_image.py",)),
    "ref_tmem_image": Target(_REF5 + "tmem_image.py", T5, _recipe_in("exact", "probe:sf_addr", "feature:ldst",
                                                                     "probe:a_tmem"), limit=10, spread=True,
                             unit_tests=(_REF5 + "test_tmem_image.py",)),
    "ref_cp_decompress": Target(_REF5 + "cp_decompress.py", T5, _recipe_in("probe:cp_decompress"),
                                unit_tests=(_REF5 + "test_cp_decompress.py",)),
    "ref_zero_col_mask": Target(_REF5 + "zero_col_mask.py", T5, _recipe_in("plain:"),
                                unit_tests=(_REF5 + "test_zero_col_mask.py",)),
    "ref_ms_fragments": Target(_REFMS + "fragments.py", MS, _anything, limit=8, spread=True,
                               unit_tests=(_REFMS + "test_fragments.py",)),
    "ref_ms_model": Target(_REFMS + "model.py", MS, _anything, limit=8, spread=True,
                           unit_tests=(_REFMS + "test_model.py",)),
    "ref_ms_recipes": Target(_REFMS + "recipes.py", MS, _anything, limit=8, spread=True,
                             unit_tests=(_REFMS + "test_model.py",)),
    "ref_ms_scales": Target(_REFMS + "scales.py", MS, _anything, limit=8, spread=True,
                            unit_tests=(_REFMS + "test_scales.py",)),
    "ref_ms_values": Target(_REFMS + "values.py", MS, _anything, limit=8, spread=True,
                            unit_tests=(_REFMS + "test_values.py",)),
    "ref_formats": Target("reference/formats.py", ALL3, _anything, limit=6, spread=True, always=_specials,
                          unit_tests=("reference/test_formats.py",)),
    "ref_gemm": Target("reference/gemm.py", ALL3, _anything, limit=6, spread=True, always=_specials,
                       unit_tests=("reference/test_gemm.py",)),
}


def select(t: Target, suite: str) -> list[Case]:
    """The target's cases of one suite: its pick in suite order, or -- ``spread`` -- one case of each form
    (``_form``) in turn, the cheapest of each (one CTA, small N) first, up to ``limit``."""
    from mmacts.mutants.engine import _driver, case_cost

    every = _driver(suite).cases("standard")
    first = [c for c in every if t.always and t.always(c)]
    picked = [c for c in every if t.pick(c) and c not in first]
    if not t.spread:
        return first + picked[: t.limit]
    groups: dict[str, list[Case]] = {}
    for c in picked:
        groups.setdefault(_form(c), []).append(c)
    for g in groups.values():
        g.sort(key=case_cost)
    order = sorted(groups, key=lambda k: random.Random(f"{k}26").random())
    return first + [groups[k][0] for k in order][: t.limit]


# ----------------------------------------------------------------------------------------------- --check
def check(target: str) -> int:
    """Run the target's cases on the model backend: 1 when one fails (or an observation differs), else 0."""
    from mmacts.mutants.engine import run_cases

    t = TARGETS[target]
    for suite in t.suites:
        for case in select(t, suite):  # one at a time: the first case that fails ends the check (a killed
            rec = run_cases(suite, [case])[case.case_id]  # mutant costs one case, not all of them)
            differs = rec["status"] == "observed" and int(rec.get("mismatches") or 0) > 0
            if rec["status"] in ("fail", "error", "timeout") or differs:
                print("killed-by: suite")
                print(f"{case.case_id}: {rec['status']}: {str(rec.get('message'))[:160]}")
                return 1
    if t.unit_tests:
        k = ["-k", t.unit_k] if t.unit_k else []
        r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *k, *t.unit_tests],
                           capture_output=True, text=True)
        if r.returncode != 0:
            print("killed-by: unit-test")
            print(r.stdout[-600:])
            return 1
    return 0


# ----------------------------------------------------------------------------------------------- the run
def cosmic_ray(explicit: str | None = None) -> str | None:
    """The cosmic-ray executable: ``explicit``, ``$MMACTS_COSMIC_RAY``, PATH, or beside this Python (the
    ``test`` extra installs it into the venv, which ``venv/bin/python -m pytest`` does not put on PATH)."""
    beside = Path(sys.executable).with_name("cosmic-ray")
    for cand in (explicit, os.environ.get("MMACTS_COSMIC_RAY"), shutil.which("cosmic-ray"), str(beside)):
        if cand and Path(cand).exists():
            return str(cand)
    return None


def _copy_tree(dst: Path) -> None:
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.split(b"\0")
    for f in files:
        if not f:
            continue
        src = ROOT / f.decode()
        if src.is_file():
            out = dst / f.decode()
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, out)


def _config(module: str, test_command: str, timeout: float) -> str:
    return (f'[cosmic-ray]\nmodule-path = "{module}"\ntimeout = {timeout}\nexcluded-modules = []\n'
            f"test-command = {json.dumps(test_command)}\n\n[cosmic-ray.distributor]\nname = \"local\"\n")


def work_items(cr: str, tree: Path, module: str) -> list[dict[str, Any]]:
    """Every mutation cosmic-ray would make of ``module`` (operator, occurrence, position)."""
    (tree / "cr.toml").write_text(_config(module, "true", 60.0))
    subprocess.run([cr, "init", "cr.toml", "cr.sqlite"], cwd=tree, check=True, capture_output=True)
    dump = subprocess.run([cr, "dump", "cr.sqlite"], cwd=tree, check=True, capture_output=True, text=True).stdout
    items = []
    for line in dump.splitlines():
        item, _ = json.loads(line)
        items.extend(item["mutations"])
    items.sort(key=lambda m: (m["start_pos"], m["operator_name"], m["occurrence"]))
    return items


Span = tuple[tuple[int, int], tuple[int, int]]


def _spans(nodes: Sequence[Any]) -> list[Span]:
    return [((n.lineno, n.col_offset), (n.end_lineno, n.end_col_offset)) for n in nodes if n is not None]


def static_positions(src: str) -> tuple[list[Span], list[Span], list[Span]]:
    """(annotations, function signatures, default values) of a module: where a mutation changes nothing
    that runs. Every project module has ``from __future__ import annotations``, so an annotation is never
    evaluated; in a signature (outside its defaults) the only operator is the bare ``*`` of keyword-only
    parameters, which cosmic-ray turns into ``/`` (callers pass those by keyword: still accepted)."""
    import ast

    ann, sig, dfl = [], [], []
    for n in ast.walk(ast.parse(src)):
        if isinstance(n, ast.AnnAssign):
            ann += _spans([n.annotation])
        elif isinstance(n, ast.arg):
            ann += _spans([n.annotation])
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            ann += _spans([n.returns])
            sig.append(((n.lineno, n.col_offset), (n.body[0].lineno, n.body[0].col_offset)))
            dfl += _spans([*n.args.defaults, *n.args.kw_defaults])
    return ann, sig, dfl


def is_static(item: dict[str, Any], spans: tuple[list[Span], list[Span], list[Span]]) -> bool:
    """Whether a cosmic-ray work item mutates only an annotation or the bare ``*`` of a signature: equivalent
    by construction (``static_positions``), left out of samples so they spend the budget on code that runs."""
    pos = tuple(item["start_pos"])
    ann, sig, dfl = spans

    def inside(s: Span) -> bool:
        return s[0] <= pos < s[1]

    if any(inside(s) for s in ann):
        return True
    return (item["operator_name"].startswith("core/ReplaceBinaryOperator_Mul_") and any(inside(s) for s in sig)
            and not any(inside(s) for s in dfl))


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (Linux /proc), children first."""
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            for child in (task / "children").read_text().split():
                out += [*_descendants(int(child)), int(child)]
    return out


def _stop(proc: subprocess.Popen[str], tree: Path, module: str) -> None:
    """End a timed-out mutate-and-test with its check (its own session), and restore the module: cosmic-ray
    puts the original back only when it finishes, so every later mutant would apply on top of this one."""
    import signal

    for pid in [*_descendants(proc.pid), proc.pid]:  # the check runs in a process group of its own
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    proc.communicate()
    shutil.copy2(ROOT / module, tree / module)


def run_one(cr: str, tree: Path, item: dict[str, Any], target: str, timeout: float) -> dict[str, Any]:
    """Apply one mutation in ``tree``, run the target's check, return its outcome (killed/survived/...)."""
    test = f"{sys.executable} -m mmacts.mutants.generated --check {target}"
    env = dict(os.environ, PYTHONPATH=str(tree))
    t0 = time.perf_counter()
    proc = subprocess.Popen([cr, "mutate-and-test", item["module_path"], item["operator_name"],
                             str(item["occurrence"]), test], cwd=tree, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
        res = json.loads(stdout.strip().splitlines()[-1]) if stdout.strip() else {}
    except subprocess.TimeoutExpired:  # the machine was too slow (a hung case is the check's own timeout)
        _stop(proc, tree, item["module_path"])
        res = {"test_outcome": "timeout", "output": "timeout"}
    except json.JSONDecodeError:
        res = {"test_outcome": "incompetent", "output": stdout[-400:] + stderr[-400:]}
    out = str(res.get("output", ""))
    by = "suite" if "killed-by: suite" in out else ("unit-test" if "killed-by: unit-test" in out else "")
    return {"operator": item["operator_name"], "occurrence": item["occurrence"], "line": item["start_pos"][0],
            "function": item.get("definition_name", ""), "outcome": res.get("test_outcome", "incompetent"),
            "killed_by": by if res.get("test_outcome") == "killed" else "",
            "worker": res.get("worker_outcome", ""), "diff": res.get("diff", ""), "seconds":
            round(time.perf_counter() - t0, 2)}


def run_target(cr: str, target: str, *, sample: int = 0, seed: int = 26, timeout: float = 300.0,
               progress: bool = True, only: set[str] | None = None) -> tuple[int, int, list[dict[str, Any]]]:
    """(mutants cosmic-ray lists for the target's module, how many of them are static (``is_static``: never
    run), the outcome of each one run: all others, a seeded sample of them, or ``only`` those whose survivor
    key (operator @ changed line) is in the set -- the survivors file's)."""
    t = TARGETS[target]
    with tempfile.TemporaryDirectory(prefix="mmacts-cr-") as d:
        tree = Path(d)
        _copy_tree(tree)
        items = work_items(cr, tree, t.module)
        spans = static_positions((tree / t.module).read_text(encoding="utf-8"))
        static = [it for it in items if is_static(it, spans)]
        runnable = [it for it in items if not is_static(it, spans)]
        if only is not None:
            src = (tree / t.module).read_text(encoding="utf-8").splitlines()
            heads = {k.split(" => ")[0] for k in only}  # a survivor key: every mutant of that operator and line
            exact = {k for k in only if k.startswith("#")}  # a committed result: "#operator#occurrence"
            chosen = [it for it in items if _item_key(it, src) in heads
                      or f"#{it['operator_name']}#{it['occurrence']}" in exact]
        else:
            chosen = runnable if not sample else random.Random(seed).sample(runnable, min(sample, len(runnable)))
        if progress:
            print(f"{t.module}: {len(items)} mutants from cosmic-ray, {len(static)} of annotations or a signature's "
                  f"bare * (equivalent, not run), running {len(chosen)}", flush=True)
        results = []
        for i, it in enumerate(chosen, 1):
            r = run_one(cr, tree, it, target, timeout)
            results.append(r)
            if progress:
                print(f"  [{i}/{len(chosen)}] {r['outcome']:<11} {r['killed_by'] or '':<9} line {r['line']:<4} "
                      f"{r['operator']} #{r['occurrence']} ({r['seconds']}s)", flush=True)
    return len(items), len(static), results


def _item_key(item: dict[str, Any], src: Sequence[str]) -> str:
    """The survivor key of a cosmic-ray work item before it runs (the unmutated source line it changes)."""
    return f"{item['operator_name']} @ {src[item['start_pos'][0] - 1].strip()}"





def merge_survivors(target: str, results: Sequence[dict[str, Any]], full: bool, path: Path = SURVIVORS) -> int:
    """Add this run's survivors (keeping reasons already written); a full run also drops ones now killed.
    Returns how many survivors have no reason."""
    import fcntl

    import yaml

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "w") as lock:  # two targets' runs may finish at once
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _merge_locked(yaml, target, results, full, path)


def _merge_locked(yaml: Any, target: str, results: Sequence[dict[str, Any]], full: bool, path: Path) -> int:
    doc = load_survivors(path)
    old = doc.get(target, {}) or {}
    new = {} if full else dict(old)
    alive = {_key(m) for m in results if m["outcome"] == "survived"}  # two equal source lines share a key
    for m in results:
        k = _key(m)
        if m["outcome"] == "survived":
            new[k] = {"line": m["line"], "function": m["function"], "operator": m["operator"],
                      "diff": "\n".join(ln for ln in str(m["diff"]).splitlines() if ln[:1] in "+-"
                                        and not ln.startswith(("+++", "---"))),
                      "reason": (old.get(k) or {}).get("reason", "")}
        elif not full and k not in alive:
            new.pop(k, None)
    doc[target] = dict(sorted(new.items(), key=lambda kv: (kv[1]["line"], kv[0])))
    path.write_text("# Surviving generated mutants (mmacts.mutants.generated): each needs a reason -- why it is\n"
                    "# equivalent (no input can tell it apart), or which case will kill it. Empty: a finding.\n"
                    + yaml.safe_dump(doc, sort_keys=False, width=120, allow_unicode=True), encoding="utf-8")
    return sum(1 for v in new.values() if not v.get("reason"))


# ----------------------------------------------------------------------------------------------- report
def report_rows(out_dir: Path = OUT_DIR) -> list[dict[str, Any]]:
    """The score table in ``TARGETS`` order (the reader on the report floor knows no targets)."""
    return _report_rows(out_dir, order=tuple(TARGETS))


def report(out_dir: Path = OUT_DIR) -> int:
    """Print the per-module score table (tab-separated) from the committed results; 1 if a survivor is
    unexplained or a target's unit-test-only kills have no note in ``unit_only.yaml``."""
    rows = report_rows(out_dir)
    print("\t".join(REPORT_COLUMNS))
    for r in [*rows, totals(rows)] if rows else []:
        print("\t".join(str(r[c]) for c in REPORT_COLUMNS))
    print(f"# {summary_line(rows)}")
    unnoted = unit_only_unnoted(rows, out_dir)
    if unnoted:
        print(f"# killed by a unit test only, no note in {UNIT_ONLY.name} why no suite case sees them: "
              + " ".join(unnoted))
    return 1 if any(r["unexplained"] for r in rows) or unnoted else 0


def _replace_results(old: dict[str, Any], new: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """``old`` (a committed summary) with the re-run mutants' outcomes in place of their earlier ones
    (``--survivors``, ``--unit-only``), its counts recomputed. A mutant is matched by its survivor key and
    occurrence (the module is unchanged since the sample, so occurrences are too): two equal source lines give
    their mutants one key, and a re-run takes both (``run_target``'s ``only``). Where no occurrence matches, a
    key that only one re-run mutant has stands for it."""
    exact = {(_key(r), r.get("occurrence")): r for r in new}
    counts: dict[str, int] = {}
    for r in new:
        counts[_key(r)] = counts.get(_key(r), 0) + 1
    single = {_key(r): r for r in new if counts[_key(r)] == 1}
    results = [exact.get((_key(r), r.get("occurrence"))) or single.get(_key(r), r) for r in old["results"]]
    judged = [r for r in results if r["outcome"] in ("killed", "survived")]
    killed = sum(r["outcome"] == "killed" for r in judged)
    return dict(old, results=results, killed=killed, judged=len(judged),
                killed_by_suite=sum(r.get("killed_by") == "suite" for r in judged),
                score=killed / len(judged) if judged else 0.0, rerun=time.strftime("%Y-%m-%d"))


def _rerun_keys(target: str, survivors: bool, unit_only: bool) -> set[str] | None:
    """The mutants a re-run takes (None: a fresh run): the listed survivors and/or the committed mutants that
    only a unit test killed."""
    if not (survivors or unit_only):
        return None
    keys = set(load_survivors().get(target) or {}) if survivors else set()
    path = OUT_DIR / f"{target}.json"
    if unit_only and path.exists():  # these exactly (the module is unchanged since their run)
        keys |= {f"#{r['operator']}#{r['occurrence']}" for r in json.loads(path.read_text(encoding="utf-8"))["results"]
                 if r.get("killed_by") == "unit-test"}
    return keys


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m mmacts.mutants.generated",
                                 description="cosmic-ray mutants of one module, judged by the suites (model backend)")
    ap.add_argument("target", choices=[*sorted(TARGETS), "report"],
                    help="the module to mutate, or report: print the score table of the committed results")
    ap.add_argument("--check", action="store_true", help="(the test command) run the target's cases once")
    ap.add_argument("--sample", type=int, default=0, help="a seeded sample of N mutants (0: all)")
    ap.add_argument("--seed", type=int, default=26)
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per mutant")
    ap.add_argument("--cosmic-ray", dest="cr", default=None, help="the cosmic-ray executable")
    ap.add_argument("--no-write", action="store_true", help="print only; leave generated/ alone")
    ap.add_argument("--survivors", action="store_true",
                    help="re-run only the target's listed survivors (after adding a case or test); killed ones leave")
    ap.add_argument("--unit-only", action="store_true",
                    help="re-run only the committed mutants a unit test alone killed (after a new or sharper case)")
    args = ap.parse_args(argv)
    if args.target == "report":
        return report()
    if args.check:
        return check(args.target)
    if args.sample < 0 or args.timeout <= 0:
        print("--sample must be >= 0 and --timeout > 0", file=sys.stderr)
        return 2
    cr = cosmic_ray(args.cr)
    if cr is None:
        print("cosmic-ray not found: pip install cosmic-ray (or pass --cosmic-ray / set MMACTS_COSMIC_RAY)",
              file=sys.stderr)
        return 2
    t = TARGETS[args.target]
    t0 = time.perf_counter()
    only = _rerun_keys(args.target, args.survivors, args.unit_only)
    n_items, n_static, results = run_target(cr, args.target, sample=args.sample, seed=args.seed, timeout=args.timeout,
                                  only=only)
    if only is not None:  # a survivor key re-runs every mutant of its operator and line: keep the asked ones
        results = [r for r in results if _key(r) in only or f"#{r['operator']}#{r['occurrence']}" in only]
    items = range(n_items)
    judged = [r for r in results if r["outcome"] in ("killed", "survived")]
    killed = sum(r["outcome"] == "killed" for r in judged)
    by_suite = sum(r.get("killed_by") == "suite" for r in judged)
    score = killed / len(judged) if judged else 0.0
    print(f"{t.module}: mutation score {killed}/{len(judged)} = {score:.1%}; by the suites alone "
          f"{by_suite}/{len(judged)} = {by_suite / max(1, len(judged)):.1%} "
          f"({len(results) - len(judged)} incompetent; {time.perf_counter() - t0:.0f}s)")
    if args.no_write:
        return 0
    OUT_DIR.mkdir(exist_ok=True)
    summary = {"target": args.target, "module": t.module, "mutants_listed": len(items), "static": n_static,
               "run": len(results),
               "sample": args.sample, "seed": args.seed, "killed": killed, "killed_by_suite": by_suite,
               "judged": len(judged), "score": score,
               "date": time.strftime("%Y-%m-%d"), "results": results}
    path = OUT_DIR / f"{args.target}.json"
    if only is not None and path.exists():  # the last full/sampled summary, the re-run mutants' outcomes updated
        summary = _replace_results(json.loads(path.read_text(encoding="utf-8")), results)
    path.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    open_ = merge_survivors(args.target, results, full=not args.sample and only is None)
    print(f"survivors without a reason in {SURVIVORS.name}: {open_}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
