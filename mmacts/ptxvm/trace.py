"""Per-instruction trace of chosen threads: follow a case the way one would in cuda-gdb.

``mmacts explain CASE --trace`` attaches a :class:`Tracer` to the VM launch. For each instruction
a chosen thread executes (predicated-off threads do not execute it), one line: the CTA and thread,
the source line, the instruction, then every register operand's value *after* it ran (hex and,
where the instruction type is a float, the value), effective addresses of memory operands, and
for tensor-memory addresses the lane and column they name. Output is capped (``max_lines``) and
says where it was cut.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, TextIO

import numpy as np

from mmacts.ptxvm.parse import Instr, Operand


@dataclass
class Tracer:
    threads: tuple[tuple[int, int], ...] = ((0, 0),)
    """(CTA id, thread index in the CTA) pairs to follow."""
    max_lines: int = 4000
    out: TextIO = field(default_factory=lambda: sys.stdout)
    lines: int = 0
    cut: bool = False

    def _chosen(self, m: Any, act: np.ndarray) -> list[int]:
        out = []
        for cta, tid in self.threads:
            hit = act[(np.asarray(m.ctas)[m.cta[act]] == cta) & (m.tid[act] == tid)]
            out.extend(int(t) for t in hit)
        return out

    def before(self, m: Any, ins: Instr, act: np.ndarray) -> None:
        return None

    def after(self, m: Any, ins: Instr, act: np.ndarray) -> None:
        if self.cut:
            return
        for t in self._chosen(m, act):
            if self.lines >= self.max_lines:
                self.cut = True
                print(f"... trace cut at {self.max_lines} lines (--max-lines)", file=self.out)
                return
            vals = _operand_values(m, ins, t)
            head = f"[CTA {m.ctas[m.cta[t]]} t{int(m.tid[t]):3d}] L{ins.line:<4d} {ins.text}"
            print(head + (f"\n{' ' * 22}{vals}" if vals else ""), file=self.out)
            self.lines += 1


def _operand_values(m: Any, ins: Instr, t: int) -> str:
    parts: list[str] = []
    seen: set[str] = set()
    tcgen = ins.base == "tcgen05"
    for op in ins.operands:
        for o in (op.items if op.kind == "vec" else (op,)):
            parts.extend(_describe(m, o, t, seen, tcgen))
    return "  ".join(parts)


def _describe(m: Any, o: Operand, t: int, seen: set[str], tcgen: bool) -> list[str]:
    if o.kind == "reg" and o.name in m.regs and o.name not in seen:
        seen.add(o.name)
        v = m.regs[o.name][t]
        ty = m.reg_types[o.name]
        if ty.kind == "pred":
            return [f"{o.name}={bool(v)}"]
        if ty.bits == 128:  # two little-endian 64-bit words
            return [f"{o.name}=0x{int(v[1]):016x}{int(v[0]):016x}"]
        width = ty.bits // 4
        s = f"{o.name}=0x{int(v):0{width}x}"
        if ty.kind == "f" and ty.bits == 32:
            s += f"({float(np.uint32(v).view(np.float32))!r})"  # the same text under numpy 1.x and 2.x
        return [s]
    if o.kind == "addr":
        out = []
        if o.base is not None and o.base.kind == "reg" and o.base.name in m.regs:
            a = int(m.regs[o.base.name][t]) + o.offset
            desc = f"[{o.base.name}{'+' + str(o.offset) if o.offset else ''}]=0x{a & (2**64 - 1):x}"
            if tcgen:
                desc += f"(lane {(a >> 16) & 0xFFFF}, col {a & 0xFFFF})"
            out.append(desc)
        return out
    return []
