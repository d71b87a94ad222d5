"""Read the tensor-core fuzz records under ``validation/fuzz-tc/<device>-<date>/`` and replay them on the VM.

A record folder holds ``meta.json`` (device, driver, ptxas, generator version, seeds), ``manifest.json``
(every launch: id, instruction forms, geometry, argument keys, the draw of each case, what the GPU
said), ``ptx.json.gz`` (the module text of every launch, by id) and ``data.npz`` (``in/<id>/<key>``
inputs and ``out/<id>/<key>`` silicon outputs). Output buffers were filled with 0xFF bytes before each
launch on the GPU, as the VM's ``rt.empty`` fills them, so every word compares, written or not.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from mmacts.ptxvm import load_module as vm_load_module  # the VM under test
from mmacts.validation.corpus.records import record_dirs as silicon_record_dirs

FUZZ_ROOT = Path(__file__).resolve().parents[3] / "validation" / "fuzz-tc"


def record_dirs(root: Path = FUZZ_ROOT) -> list[Path]:
    """Every record folder under ``root`` (those with a ``meta.json``), oldest name first."""
    return silicon_record_dirs(root)


@dataclass(frozen=True)
class Recorded:
    """One fuzz launch as it ran on silicon."""

    record: str
    id: str
    family: str
    instrs: tuple[str, ...]
    ptx: str
    entry: str
    grid: tuple[int, ...]
    block: tuple[int, ...]
    shared_mem: int
    layout: dict[str, Any]
    args: tuple[tuple[str, str, Any], ...]
    """``(kind, key, value)`` as in :class:`mmacts.validation.fuzz_tc.gen.Launch`."""
    silicon: dict[str, np.ndarray]

    @property
    def name(self) -> str:
        return f"{self.record}/{self.id}"


@cache
def recorded_launches(record: Path) -> tuple[Recorded, ...]:
    """The launches of one record folder that ran ``ok`` on the GPU."""
    man = json.loads((record / "manifest.json").read_text())
    with gzip.open(record / "ptx.json.gz", "rt") as fh:
        ptx = json.load(fh)
    data = np.load(record / "data.npz")
    out = []
    for la in man["launches"]:
        if la.get("silicon", {}).get("status") != "ok":
            continue
        args, sil = [], {}
        for a in la["args"]:
            if a["kind"] == "out":
                args.append(("out", a["key"], (tuple(a["shape"]), np.dtype(a["dtype"]))))
                sil[a["key"]] = data[f"out/{la['id']}/{a['key']}"]
            else:
                v = data[f"in/{la['id']}/{a['key']}"]
                args.append((a["kind"], a["key"], v.dtype.type(v) if a["kind"] == "scalar" else v))
        out.append(Recorded(record.name, la["id"], la["family"], tuple(la["instrs"]), ptx[la["id"]], la["entry"],
                            tuple(la["grid"]), tuple(la["block"]), la["shared_mem"], la["layout"], tuple(args), sil))
    return tuple(out)


# ------------------------------------------------------------------------------------------ elements


def element_of(layout: dict[str, Any], index: tuple[int, ...]) -> tuple[int, int, int]:
    """``(case, row, col)`` of the D element held by output word ``index`` (PTX ISA fragment figures).

    mma.sync m16n8k32, f32 D: lane l, register r hold D[l//4 + 8*(r//2)][2*(l%4) + r%2]; f16 D: the
    16-bit half h = 2*r + (high half) holds D[l//4 + 8*(h//2)][2*(l%4) + h%2] (index over uint16
    words). wgmma m64nN f32 D: thread t, register r hold D[16*(t//32) + 8*((r%4)//2) + (t%32)//4]
    [8*(r//4) + 2*(t%4) + r%2]."""
    case, t, r = index
    if layout["family"] == "mma_sync":
        return case, t // 4 + 8 * (r // 2), 2 * (t % 4) + r % 2
    return case, 16 * (t // 32) + 8 * ((r % 4) // 2) + (t % 32) // 4, 8 * (r // 4) + 2 * (t % 4) + r % 2


def words(layout: dict[str, Any], arr: np.ndarray) -> np.ndarray:
    """The output as the words that hold one element each: uint16 halves for an f16 mma.sync D."""
    a = np.ascontiguousarray(arr)
    if layout["family"] == "mma_sync" and layout["dtype"] == "f16":
        return a.view(np.uint16)
    return a.view(np.uint32)


def describe_diff(rec: Recorded, key: str, got: np.ndarray, limit: int = 6) -> str:
    """'' when ``got`` equals silicon bit for bit, else which elements differ: launch, case, (row, col),
    both values in hex, and the instruction form of every K-step."""
    s = words(rec.layout, rec.silicon[key])
    g = words(rec.layout, got)
    if s.shape != g.shape:
        return f"{rec.name}: output {key} shape {g.shape} != silicon {s.shape}"
    bad = np.argwhere(s != g)
    if not len(bad):
        return ""
    w = 2 * s.dtype.itemsize
    lines = [f"{rec.name}: {len(bad)} of {s.size} D elements differ from silicon; form: " + " ; ".join(rec.instrs)]
    for idx in bad[:limit]:
        t = tuple(int(i) for i in idx)
        case, row, col = element_of(rec.layout, t)
        lines.append(f"  case {case} D({row}, {col}): vm 0x{int(g[t]):0{w}x} silicon 0x{int(s[t]):0{w}x}")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------ VM


def run_on_vm(ptx: str, entry: str, grid: tuple[int, ...], block: tuple[int, ...], shared_mem: int,
              args: Any, load_module: Callable[..., Any] | None = None) -> tuple[Any, dict[str, np.ndarray]]:
    """Run one launch on the VM: ``(outcome, {out key: array})``. A Python exception out of ``launch`` is
    not caught here: a caller that must survive one (the CPU fuzz mode) catches it and names it."""
    mod = (load_module or vm_load_module)(ptx, arch="sm_90a")
    vargs, outs = [], {}
    for kind, key, v in args:
        if kind == "out":
            d = mod.rt.empty(*v)
            outs[key] = d
            vargs.append(d)
        elif kind == "in":
            vargs.append(mod.rt.to_device(v))
        else:
            vargs.append(v)
    res = mod.launch(entry, grid=grid, block=block, args=vargs, shared_mem=shared_mem)
    return res, {k: mod.rt.to_host(d) for k, d in outs.items()}


def compare(rec: Recorded, load_module: Callable[..., Any] | None = None) -> str:
    """'' when the VM reproduces the GPU's outputs bit for bit, else the reason."""
    res, got = run_on_vm(rec.ptx, rec.entry, rec.grid, rec.block, rec.shared_mem, rec.args, load_module)
    if res.status != "ok":
        return f"{rec.name} ({' ; '.join(rec.instrs)}): VM status {res.status}: {res.message}"
    return "\n".join(m for m in (describe_diff(rec, k, got[k]) for k in rec.silicon) if m)
