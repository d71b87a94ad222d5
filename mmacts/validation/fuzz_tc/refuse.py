"""Negative fuzzing: generated launches deformed into programs the VM must refuse (issue 22 items 3-4).

Each :data:`MUTATIONS` entry turns a valid fuzz launch into a form the VM does not model (an f16 wgmma
accumulator, ``.sp``, a tf32 or fp6 type, ``.satfinite``, another shape, a register ``wait_group``) or
into a kernel the PTX ISA makes undefined (a descriptor setting bits the table gives no meaning, a
descriptor reaching outside shared memory, a partial warpgroup, no ``wgmma.fence``, no
``fence.proxy.async``, D read before its ``wait_group``). The VM must answer each with an ``error``
outcome whose message names the instruction and line; computing a result (``ok``) or raising a Python
exception out of ``launch`` is a finding. No GPU runs these: the point is the VM's refusals.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from mmacts.validation.fuzz_tc import gen
from mmacts.validation.fuzz_tc.records import run_on_vm


@dataclass(frozen=True)
class Mutation:
    name: str
    family: str
    apply: Callable[[gen.Launch], gen.Launch | None]
    """The deformed launch, or None where this launch offers nothing to deform."""


def _text(la: gen.Launch, old: str, new: str, count: int = -1) -> gen.Launch | None:
    if old not in la.ptx:
        return None
    return replace(la, ptx=la.ptx.replace(old, new, count))


def _regex(la: gen.Launch, pat: str, new: str) -> gen.Launch | None:
    ptx, n = re.subn(pat, new, la.ptx)
    return replace(la, ptx=ptx) if n else None


def _desc(la: gen.Launch, fn: Callable[[np.ndarray], np.ndarray]) -> gen.Launch:
    args = [(k, key, fn(np.array(v)) if key == "desc" else v) for k, key, v in la.args]
    return replace(la, args=args)


def _wg_types(la: gen.Launch, new: str) -> gen.Launch | None:
    return _regex(la, r"(m64n\d+k)(16|32)\.f32\.(bf16|e4m3|e5m2)\.(bf16|e4m3|e5m2)", rf"\g<1>8.f32.{new}.{new}")


MUTATIONS: tuple[Mutation, ...] = (
    Mutation("wgmma-f16-accumulator", "wgmma", lambda la: _regex(la, r"(m64n\d+k\d+)\.f32\.", r"\1.f16.")),
    Mutation("wgmma-sparse", "wgmma", lambda la: _text(la, "wgmma.mma_async.sync", "wgmma.mma_async.sp.sync")),
    Mutation("wgmma-tf32", "wgmma", lambda la: _wg_types(la, "tf32")),
    Mutation("wgmma-wrong-k", "wgmma", lambda la: _regex(la, r"(m64n\d+)k(16|32)\.", r"\1k64.")),
    Mutation("wgmma-wait-register", "wgmma",
             lambda la: _text(la, "wgmma.wait_group.sync.aligned 0;", "wgmma.wait_group.sync.aligned %n;")),
    Mutation("wgmma-no-fence", "wgmma", lambda la: _text(la, "    wgmma.fence.sync.aligned;\n", "")),
    Mutation("wgmma-no-proxy-fence", "wgmma", lambda la: _text(la, "    fence.proxy.async.shared::cta;\n", "")),
    Mutation("wgmma-no-wait", "wgmma", lambda la: None if la.layout.get("commit") != "one" else
             _text(la, "    wgmma.wait_group.sync.aligned 0;\n", "")),
    Mutation("wgmma-wait1-chained", "wgmma", lambda la: None if (la.layout.get("commit") != "each-wait1"
                                                                 or len(la.instrs) < 2) else
             _text(la, "    wgmma.wait_group.sync.aligned 0;\n", "")),
    Mutation("wgmma-partial-warpgroup", "wgmma", lambda la: replace(la, block=(96, 1, 1))),
    Mutation("wgmma-reserved-descriptor-bit", "wgmma",
             lambda la: _desc(la, lambda d: d | np.uint64(1 << 46))),
    Mutation("wgmma-descriptor-outside-smem", "wgmma",
             lambda la: _desc(la, lambda d: (d & ~np.uint64(0x3FFF)) | np.uint64((gen.SMEM_LIMIT * 4) >> 4))),
    Mutation("mma-f16-shape-k16", "mma_sync", lambda la: _text(la, "m16n8k32", "m16n8k16")),
    Mutation("mma-fp6-type", "mma_sync", lambda la: _regex(la, r"\.(f16|f32)\.(e4m3|e5m2)\.", r".\1.e3m2.")),
    Mutation("mma-satfinite", "mma_sync", lambda la: _text(la, ".row.col.", ".row.col.satfinite.")),
    Mutation("mma-partial-warp", "mma_sync", lambda la: replace(la, block=(16, 1, 1))),
)


def run_mutations(seeds: list[int], count: int) -> dict[str, Any]:
    """Every mutation on every generated launch of its family: outcome counts per mutation, and the
    findings (a deformed launch the VM ran ``ok``, or a Python exception out of ``launch``)."""
    table: dict[str, dict[str, int]] = {}
    findings: list[str] = []
    for la in gen.launches(seeds, count):
        for mu in MUTATIONS:
            if mu.family != la.family:
                continue
            bad = mu.apply(la)
            if bad is None:
                continue
            try:
                res, _ = run_on_vm(bad.ptx, bad.entry, bad.grid, bad.block, bad.shared_mem, bad.args)
                status, msg = res.status, res.message
            except Exception as exc:  # a VM bug: issue 22 item 4 says nothing escapes launch()
                status, msg = "crash", f"{type(exc).__name__}: {exc}"
            row = table.setdefault(mu.name, {})
            kind = status if status != "error" else ("refused" if " at line " in msg else "error-unnamed")
            row[kind] = row.get(kind, 0) + 1
            if kind != "refused":
                findings.append(f"{mu.name} on {la.id}: {status}: {msg[:300]}")
    return {"table": table, "findings": findings}
