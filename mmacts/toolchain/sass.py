"""SASS fingerprint of an assembled cubin: which machine instructions ptxas really emitted.

Why: accepting a PTX form is not the same as implementing it. ptxas may lower an MMA to a
different unit (``mma.sync ... e4m3`` becomes F2FP conversions + HMMA on sm_90, native QMMA on
sm_89/sm_120a) and the numerics differ. Recording the MMA opcode and every tcgen05-related
instruction per case lets a test pin the expected family per kind and catch silent emulation or
a dropped instruction.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from mmacts.toolchain.cache import DiskCache, cache_key
from mmacts.toolchain.locate import find_tool, nvdisasm_version

_INSN_RE = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(?:\{\s*)?(?:@!?U?P[T\d]+\s+)?([A-Z][\w.]*\w)")
MMA_RE = re.compile(r"^(UTC\w*MMA|[HIQOBD]MMA|[HIQB]GMMA|GMMA)")
"""MMA mnemonics: tcgen05 (UTCHMMA, UTCQMMA, UTCOMMA, UTCIMMA, ...), warp-level (HMMA, QMMA,
OMMA, IMMA, ...) and Hopper warpgroup (HGMMA, QGMMA, IGMMA)."""


def base_opcode(mnemonic: str) -> str:
    """``UTCOMMA.4X`` -> ``UTCOMMA``."""
    return mnemonic.split(".", 1)[0]


def is_tcgen05_related(mnemonic: str) -> bool:
    """True for the SASS of tcgen05 instructions: UTC* (MMA, CP, SHIFT, BAR, ATOMSWS alloc),
    LDTM/STTM (ld/st) and the tensor-memory view fence."""
    b = base_opcode(mnemonic)
    return b.startswith("UTC") or b in ("LDTM", "STTM") or mnemonic.startswith("FENCE.VIEW.ASYNC.T")


def is_recorded(mnemonic: str) -> bool:
    """Instructions worth a column in the report: MMAs, tcgen05-related ones, and F2FP (the
    conversion that betrays an emulated narrow-format MMA)."""
    return bool(MMA_RE.match(mnemonic)) or is_tcgen05_related(mnemonic) or base_opcode(mnemonic) == "F2FP"


@dataclass(frozen=True)
class SassInfo:
    """Opcode counts of one cubin."""

    opcodes: Counter = field(default_factory=Counter)
    """Every instruction mnemonic (with its modifiers, e.g. ``HMMA.16816.F32.BF16``) -> count."""
    mma_opcode: str = ""
    """Mnemonic of the first MMA instruction, '' when there is none."""
    nvdisasm_version: str = ""

    @property
    def recorded(self) -> Counter:
        """Only the MMA / tcgen05 / F2FP mnemonics."""
        return Counter({k: v for k, v in self.opcodes.items() if is_recorded(k)})

    @property
    def mma_family(self) -> str:
        """Base opcode of the MMA (``UTCOMMA.4X`` -> ``UTCOMMA``)."""
        return base_opcode(self.mma_opcode) if self.mma_opcode else ""

    def summary(self) -> str:
        """Short report string, e.g. ``UTCQMMA:1 UTCBAR:1`` (MMAs first, then by name)."""
        rec = self.recorded
        keys = sorted(rec, key=lambda k: (not MMA_RE.match(k), k))
        return " ".join(f"{k}:{rec[k]}" for k in keys)


def parse_disassembly(text: str) -> tuple[Counter, str]:
    """Opcode counter and first MMA mnemonic of ``nvdisasm -c`` output."""
    counts: Counter = Counter()
    first_mma = ""
    for line in text.splitlines():
        m = _INSN_RE.match(line)
        if not m:
            continue
        op = m.group(1)
        counts[op] += 1
        if not first_mma and MMA_RE.match(op):
            first_mma = op
    return counts, first_mma


def disassemble(cubin: bytes) -> str:
    """``nvdisasm -c`` of ``cubin`` (code sections only)."""
    exe = find_tool("nvdisasm")
    with tempfile.TemporaryDirectory(prefix="mmacts-nvdisasm-") as tmp:
        p = Path(tmp) / "module.cubin"
        p.write_bytes(cubin)
        res = subprocess.run([str(exe), "-c", str(p)], capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise RuntimeError(f"nvdisasm failed: {res.stderr.strip()}")
    return res.stdout


def sass(cubin: bytes, *, cache: DiskCache | None = None, use_cache: bool = True) -> SassInfo:
    """SASS fingerprint of ``cubin`` (cached by cubin hash and nvdisasm version)."""
    version = nvdisasm_version()
    key = cache_key(hashlib.sha256(cubin).hexdigest(), version)
    store = cache if cache is not None else DiskCache("sass")
    if use_cache:
        hit = store.get(key)
        if hit is not None and isinstance(hit.get("opcodes"), dict):
            return SassInfo(Counter(hit["opcodes"]), hit.get("mma_opcode", ""), version)
    counts, first = parse_disassembly(disassemble(cubin))
    if use_cache:
        store.put(key, {"opcodes": dict(counts), "mma_opcode": first})
    return SassInfo(counts, first, version)
