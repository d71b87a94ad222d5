"""Read the silicon records under ``validation/silicon/<device>-<date>/`` and compare a VM with them.

A record folder holds ``meta.json``, ``corpus/`` (one ``.ptx`` per corpus kernel, ``manifest.json``,
``data.npz`` with ``<name>.in`` / ``<name>.out``) and ``hopper/`` (one ``.ptx`` per hopper_validation
kernel form, ``manifest.json`` with every launch, ``data.npz`` with ``in/<module>.l<L>a<A>`` inputs and
``out/<module>.l<L>a<A>`` silicon outputs). Output buffers were pre-filled with 0xFF bytes on the GPU,
as the VM's ``rt.empty`` fills them, so every word compares, written or not.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from mmacts.ptxvm import load_module as vm_load_module  # the VM under test
from mmacts.validation.corpus.record import record_hopper

SILICON_ROOT = Path(__file__).resolve().parents[3] / "validation" / "silicon"


def record_dirs(root: Path = SILICON_ROOT) -> list[Path]:
    """Every record folder (those with a ``meta.json``), oldest name first."""
    return sorted(p for p in root.glob("*") if (p / "meta.json").is_file()) if root.is_dir() else []


@dataclass(frozen=True)
class CorpusRecord:
    """One corpus kernel as it ran on silicon."""

    record: str
    name: str
    entry: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    n: int
    group: str
    ptx: str
    inputs: np.ndarray
    """``uint64[threads, n_in]``"""
    silicon: np.ndarray
    """``uint64[threads, n_out]`` as read back from the GPU (0xFF bytes where nothing was written)."""

    @property
    def args_spec(self) -> str:
        return f"grid={self.grid} block={self.block} n={self.n}"


@cache
def corpus_records(record: Path) -> tuple[CorpusRecord, ...]:
    man = json.loads((record / "corpus" / "manifest.json").read_text())
    data = np.load(record / "corpus" / "data.npz")
    out = []
    for k in man["kernels"]:
        if k["status"] != "ok":
            continue
        out.append(CorpusRecord(record.name, k["name"], k["entry"], tuple(k["grid"]), tuple(k["block"]), k["n"],
                                k["group"], (record / "corpus" / f"{k['name']}.ptx").read_text(),
                                data[f"{k['name']}.in"], data[f"{k['name']}.out"]))
    return tuple(out)


@dataclass(frozen=True)
class HopperLaunch:
    """One hopper_validation launch as it ran on silicon."""

    record: str
    module: str
    index: int
    cases: tuple[str, ...]
    ptx: str
    entry: str
    grid: tuple[int, ...]
    block: tuple[int, ...]
    shared_mem: int
    args: tuple[tuple[str, str, Any], ...]
    """Per kernel parameter ``(kind, key, value)``: kind ``in`` (a numpy array to copy to the device),
    ``scalar`` (a numpy scalar) or ``out`` (a ``(shape, dtype)`` to allocate with ``rt.empty``)."""
    silicon: dict[str, np.ndarray]
    """Silicon outputs by the ``key`` of their ``out`` argument."""

    @property
    def id(self) -> str:
        return f"{self.record}/{self.module}.l{self.index}"


@cache
def hopper_launches(record: Path) -> tuple[HopperLaunch, ...]:
    man = json.loads((record / "hopper" / "manifest.json").read_text())
    data = np.load(record / "hopper" / "data.npz")
    out = []
    for m in man["modules"]:
        ptx = (record / "hopper" / f"{m['name']}.ptx").read_text()
        for li, la in enumerate(m["launches"]):
            if la.get("silicon", {}).get("status") != "ok":
                continue
            args, sil = [], {}
            for a in la["args"]:
                if a["kind"] == "out":
                    args.append(("out", a["key"], (tuple(a["shape"]), np.dtype(a["dtype"]))))
                    sil[a["key"]] = data[f"out/{m['name']}.{a['key']}"]
                else:
                    v = data[f"in/{m['name']}.{a['key']}"]
                    args.append((a["kind"], a["key"], v.dtype.type(v) if a["kind"] == "scalar" else v))
            out.append(HopperLaunch(record.name, m["name"], li, tuple(m["cases"]), ptx, la["entry"],
                                    tuple(la["grid"]), tuple(la["block"]), la["shared_mem"], tuple(args), sil))
    return tuple(out)


def hopper_level(record: Path) -> str:
    return json.loads((record / "hopper" / "manifest.json").read_text())["level"]


def has_hopper(record: Path) -> bool:
    """Whether the record holds hopper_validation launches (a ``--group cluster`` record holds none)."""
    return hopper_level(record) != "none"


def corpus_group(record: Path) -> str:
    """``cluster`` for a record of the cluster kernels alone, else ``core`` (the whole corpus)."""
    man = json.loads((record / "corpus" / "manifest.json").read_text())
    return "cluster" if man["kernels"] and all(k["group"] == "cluster" for k in man["kernels"]) else "core"


def regenerate_hopper_inputs(record: Path) -> dict[str, list[dict[str, Any]]]:
    """Today's driver code's launches for the record's level, by module name (what ``build`` records):
    ``{module: [{"entry", "grid", "block", "shared_mem", "args": [(kind, array)]}]}``."""
    return {m["name"]: [{"entry": la["entry"], "grid": tuple(la["grid"]), "block": tuple(la["block"]),
                         "shared_mem": la["shared_mem"], "cases": m["cases"],
                         "args": [(kind, np.asarray(arr)) for kind, _, arr in la["args"]]}
                        for la in m["rec"].launches]
            for m in record_hopper(hopper_level(record))}


# --------------------------------------------------------------------------------------------- diffs
def describe_diff(what: str, silicon: np.ndarray, got: np.ndarray, *, per_thread: bool = True,
                  limit: int = 8) -> str:
    """'' when ``got`` equals ``silicon`` bit for bit, else which thread/word differs (first ``limit``)."""
    s = np.ascontiguousarray(silicon)
    g = np.ascontiguousarray(got)
    if s.shape != g.shape or s.dtype.itemsize != g.dtype.itemsize:
        return f"{what}: shape/dtype {g.shape} {g.dtype} != silicon {s.shape} {s.dtype}"
    uint = np.dtype(f"u{s.dtype.itemsize}")
    sv, gv = s.view(uint), g.view(uint)
    bad = np.argwhere(sv != gv)
    if not len(bad):
        return ""
    w = 2 * s.dtype.itemsize
    lines = [f"{what}: {len(bad)} of {sv.size} words differ from silicon"]
    for idx in bad[:limit]:
        t = tuple(int(i) for i in idx)
        loc = f"thread {t[0]} word {t[1]}" if per_thread and len(t) == 2 else f"index {t}"
        lines.append(f"  {loc}: vm 0x{int(gv[t]):0{w}x} silicon 0x{int(sv[t]):0{w}x}")
    return "\n".join(lines)


def run_corpus_on_vm(rec: CorpusRecord, load_module: Callable[..., Any] | None = None) -> tuple[Any, np.ndarray]:
    """Run a corpus kernel on the VM: ``(launch result, uint64[threads, n_out] output)``."""
    mod = (load_module or vm_load_module)(rec.ptx, arch="sm_90a")
    d_in = mod.rt.to_device(rec.inputs)
    d_out = mod.rt.empty(rec.silicon.shape, np.uint64)
    res = mod.launch(rec.entry, grid=rec.grid, block=rec.block, args=[d_in, d_out, np.uint32(rec.n)], shared_mem=0)
    return res, mod.rt.to_host(d_out)


def run_hopper_on_vm(la: HopperLaunch, load_module: Callable[..., Any] | None = None) -> tuple[Any, dict]:
    """Run a hopper_validation launch on the VM: ``(launch result, {out key: array})``."""
    mod = (load_module or vm_load_module)(la.ptx, arch="sm_90a")
    args, outs = [], {}
    for kind, key, v in la.args:
        if kind == "out":
            d = mod.rt.empty(*v)
            outs[key] = d
            args.append(d)
        elif kind == "in":
            args.append(mod.rt.to_device(v))
        else:
            args.append(v)
    res = mod.launch(la.entry, grid=la.grid, block=la.block, args=args, shared_mem=la.shared_mem)
    return res, {k: mod.rt.to_host(d) for k, d in outs.items()}


def compare_corpus(rec: CorpusRecord, load_module: Callable[..., Any] | None = None) -> str:
    """'' when the VM reproduces silicon bit for bit, else the reason (status or differing words)."""
    res, got = run_corpus_on_vm(rec, load_module)
    if res.status != "ok":
        return f"{rec.record}/{rec.name}: VM status {res.status}: {res.message}"
    return describe_diff(f"{rec.record}/{rec.name} ({rec.args_spec})", rec.silicon, got)


def compare_hopper(la: HopperLaunch, load_module: Callable[..., Any] | None = None) -> str:
    res, got = run_hopper_on_vm(la, load_module)
    if res.status != "ok":
        return f"{la.id} ({la.entry}): VM status {res.status}: {res.message}"
    msgs = [describe_diff(f"{la.id} ({la.entry}) output {k}", la.silicon[k], got[k], per_thread=False)
            for k in la.silicon]
    return "\n".join(m for m in msgs if m)
