"""Read fuzz records (``validation/fuzz/<device>-<date>/``) and compare the VM with them, word by word.

A record holds every kernel's PTX (``ptx.txt.xz``), the silicon's output words (``outputs.bin.xz``,
slot bytes packed by :func:`mmacts.validation.fuzz.record.pack`) and a manifest with each kernel's seed, slot
classes and the digests of the PTX and inputs the GPU saw. Inputs are regenerated from the seed
(:func:`mmacts.validation.fuzz.inputs.kernel_inputs`) and must match their digest; the PTX is the stored text,
so replay does not depend on today's generator.
"""

from __future__ import annotations

import json
import lzma
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from mmacts.validation.corpus.records import record_dirs as silicon_record_dirs
from mmacts.validation.fuzz.inputs import digest, kernel_inputs
from mmacts.validation.fuzz.record import _CLS_CODE, SLOT_BYTES, unpack
from mmacts.validation.fuzz.unit import unit_kernels
from mmacts.validation.fuzz.vm import VmRun, run_vm

FUZZ_ROOT = Path(__file__).resolve().parents[3] / "validation" / "fuzz"
_CLS = {code: cls for cls, code in _CLS_CODE.items()}


def record_dirs(root: Path = FUZZ_ROOT) -> list[Path]:
    """Every record folder under ``root`` (those with a ``meta.json``), oldest name first."""
    return silicon_record_dirs(root)


@dataclass(frozen=True)
class FuzzRecord:
    """One fuzz kernel (random or unit) as it ran on silicon."""

    record: str
    name: str
    kind: str
    """``random`` (:mod:`mmacts.validation.fuzz.generate`, by seed) or ``unit``
    (:mod:`mmacts.validation.fuzz.unit`, by index)."""
    number: int
    """The seed (random) or the unit index."""
    ptx: str
    entry: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    n_param: int | None
    classes: tuple[str, ...]
    threads: int
    inputs_digest: str
    silicon: np.ndarray
    """``uint64[threads, n_out]``, 0xFF in bytes no store wrote."""
    form: str = ""
    """The unit kernel's opcode ('' for random kernels)."""

    @property
    def id(self) -> str:
        return f"{self.record}/{self.name}" + (f"({self.form})" if self.form else "")

    def inputs(self) -> np.ndarray:
        if self.kind == "unit":
            x = unit_kernels()[self.number].inputs()
        else:
            x = kernel_inputs(self.number, self.threads)
        if digest(x) != self.inputs_digest:
            raise AssertionError(f"{self.id}: the input generator changed since the record was made: re-record")
        return x

    def slot_text(self, slot: int) -> str:
        """The PTX statement whose result slot ``slot`` holds (the line before its store)."""
        lines = self.ptx.splitlines()
        for i, ln in enumerate(lines):
            m = re.search(r"st\.global\.b\d+ \[%gout\+(\d+)\]", ln)
            if m and int(m.group(1)) == 8 * slot:
                j = i - 1
                while j > 0 and (lines[j].strip().startswith("selp.u32 %ts, 1, 0,")
                                 or "st.global" in lines[j]):
                    j -= 1
                return lines[j].strip()
        return "?"


@cache
def fuzz_records(record: Path) -> tuple[FuzzRecord, ...]:
    man = json.loads((record / "manifest.json").read_text())
    ptxs = lzma.decompress((record / "ptx.txt.xz").read_bytes()).decode().split(man["separator"])
    blob = lzma.decompress((record / "outputs.bin.xz").read_bytes())
    out = []
    for e, ptx in zip(man["kernels"], ptxs, strict=True):
        if e["status"] != "ok":
            continue
        classes = tuple(_CLS[c] for c in e["classes"])
        sil = unpack(blob[e["offset"]:e["offset"] + e["size"]], e["threads"], list(classes), e["packed"])
        unit = e["kind"] == "unit"
        out.append(FuzzRecord(record.name, e["name"], e["kind"], e["index"] if unit else e["seed"], ptx, e["entry"],
                              tuple(e["grid"]), tuple(e["block"]), e["n_param"], classes, e["threads"],
                              e["inputs"], sil, e.get("form", "")))
    return tuple(out)


def _hex(v: int, cls: str) -> str:
    w = 2 * SLOT_BYTES[cls]  # hex digits
    return f"{v & ((1 << (4 * w)) - 1):#0{w + 2}x}"


def _n_src(ptx: str) -> int:
    return len(re.findall(r"ld\.global\.\w+ [^,]+, \[%gin\+\d+\];", ptx))


def compare(rec: FuzzRecord, run: VmRun | None = None) -> tuple[str, str]:
    """``(verdict, message)``: ``match``, ``refused`` (the VM declined a form by name) or ``differ``
    (first differing word: thread, slot, statement, both values in hex)."""
    run = run or run_vm(rec.ptx, rec.inputs(), len(rec.classes), entry=rec.entry, grid=rec.grid, block=rec.block,
                        n_param=rec.n_param)
    if run.refused:
        return "refused", f"{rec.id}: {run.message}"
    if run.status != "ok" or run.out is None:
        return "differ", f"{rec.id}: silicon ran the kernel, the VM gave {run.status}: {run.message}"
    diff = run.out != rec.silicon
    if not diff.any():
        return "match", ""
    # the first differing slot in program order, then its first thread
    slot = int(np.flatnonzero(diff.any(axis=0))[0])
    t = int(np.flatnonzero(diff[:, slot])[0])
    cls = rec.classes[slot]
    got, want = int(run.out[t, slot]), int(rec.silicon[t, slot])
    nthr = int(diff[:, slot].sum())
    where = f"thread {t} slot {slot} `{rec.slot_text(slot)}`"
    if rec.kind == "unit":
        srcs = " ".join(f"{int(v):#x}" for v in rec.inputs()[t][: _n_src(rec.ptx)])
        where = f"thread {t} `{rec.form}` sources {srcs} result {slot}"
    return "differ", (f"{rec.id} {where}: VM {_hex(got, cls)} silicon "
                      f"{_hex(want, cls)} ({nthr} of {rec.threads} threads differ in this slot; "
                      f"{int(diff.any(axis=0).sum())} slots differ)")
