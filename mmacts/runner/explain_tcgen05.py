"""``mmacts explain`` for tcgen05 cases: every descriptor field by field with its hex word (decoded
by the PTX VM's own decoders, :mod:`mmacts.ptxvm.tcgen05.decode`), and the shared- and
tensor-memory images summarised in hex (size, non-zero and poison ranges, the first rows)."""

from __future__ import annotations

from typing import Any

import numpy as np

from mmacts.cases.model import Case
from mmacts.ptxvm.tcgen05.decode import decode_idesc, decode_smem_desc, idesc_layout

POISON = 0xFFFFFFFF


def _ranges(flags: np.ndarray, limit: int = 8) -> str:
    """``[a, b)`` runs where ``flags`` is true, at most ``limit`` of them."""
    idx = np.flatnonzero(np.diff(np.concatenate(([0], flags.astype(np.int8), [0]))))
    runs = list(zip(idx[::2], idx[1::2], strict=True))
    text = ", ".join(f"[{a}, {b})" for a, b in runs[:limit])
    return (text + (f", ... ({len(runs) - limit} more runs)" if len(runs) > limit else "")) or "none"


def idesc_lines(kind: str, word: int) -> list[str]:
    out = [f"idesc = {word:#010x} (kind::{kind})"]
    try:
        dec = decode_idesc(kind, word)
    except ValueError as exc:
        return [*out, f"  the VM's decoder refuses it: {exc}"]
    for f in sorted(idesc_layout(kind), key=lambda f: f.lo):
        raw = (word >> f.lo) & ((1 << (f.hi - f.lo + 1)) - 1)
        val = dec.get(f.key, "")
        name = dec.get(f"{f.key}_name")
        shown = f"{val} ({name})" if name else f"{val}"
        out.append(f"  bits {f.lo:2d}-{f.hi:2d}  {f.key:<14} raw {raw:#x}  -> {shown}")
    return out


def smem_desc_lines(name: str, word: int) -> list[str]:
    out = [f"{name} smem descriptor = {word:#018x}"]
    try:
        dec = decode_smem_desc(word)
    except ValueError as exc:
        return [*out, f"  the VM's decoder refuses it: {exc}"]
    out += [f"  {k:<14} {v:#x} ({v})" if isinstance(v, int) else f"  {k:<14} {v}" for k, v in dec.items()]
    return out


def _taddr(word: int) -> str:
    return f"{word:#010x} (lane {word >> 16}, column {word & 0xFFFF})"


def smem_summary(smem: np.ndarray, rows: int = 4) -> str:
    b = np.asarray(smem, dtype=np.uint8)
    out = [f"{b.size} bytes; non-zero byte ranges: {_ranges(b != 0)}"]
    for r in range(min(rows, -(-b.size // 32))):
        chunk = b[r * 32:(r + 1) * 32]
        out.append(f"  {r * 32:#06x}: " + " ".join(f"{int(x):02x}" for x in chunk))
    if b.size > rows * 32:
        out.append(f"  ... ({b.size - rows * 32} more bytes)")
    return "\n".join(out)


def tmem_summary(img: np.ndarray, rows: int = 4, cols: int = 8) -> str:
    t = np.asarray(img, dtype=np.uint32)
    if t.ndim != 2 or not t.size:
        return f"tensor-memory preload: shape {t.shape}"
    out = [f"{t.shape[0]} lanes x {t.shape[1]} columns (32-bit); columns holding non-zero: "
           f"{_ranges((t != 0).any(axis=0))}; columns holding poison {POISON:#x}: {_ranges((t == POISON).any(axis=0))}"]
    nz = np.flatnonzero((t != 0).any(axis=0))
    starts = [0] + ([int(nz[0])] if nz.size and nz[0] >= cols else [])
    for c0 in starts:
        c1 = min(c0 + cols, t.shape[1])
        out.append("  lane  " + " ".join(f"col {c:<6d}" for c in range(c0, c1)))
        for r in range(min(rows, t.shape[0])):
            out.append(f"  {r:4d}  " + " ".join(f"{int(x):#010x}" for x in t[r, c0:c1]))
    if t.shape[0] > rows or t.shape[1] > cols:
        out.append(f"  ... (first {rows} lanes x {cols} columns from each start shown)")
    return "\n".join(out)


def sections(case: Case, inputs: Any) -> list[tuple[str, str]]:
    """The sections of a tcgen05 MMA case (its form is a ``suites.tcgen05_blockscale.fields.Tcgen05Form``)."""
    kind = case.form.kind
    a_tmem = bool(case.form.a_tmem)
    out: list[tuple[str, str]] = []
    head = [f"M={getattr(inputs, 'm', '?')} N={getattr(inputs, 'n', '?')} A {getattr(inputs, 'a_fmt', '?')} "
            f"x B {getattr(inputs, 'b_fmt', '?')}, scales {getattr(inputs, 's_fmt', '?')}, "
            f"layout {getattr(inputs, 'layout', '?')}; extra {getattr(inputs, 'extra', {})}"]
    out.append(("operands", "\n".join(head)))
    for cta, prog in enumerate(inputs.programs):
        lines: list[str] = []
        for i, mma in enumerate(prog.mmas):
            lines.append(f"--- MMA {i} (addresses relative to the smem image / TMEM allocation)")
            lines += idesc_lines(kind, int(mma.idesc))
            if a_tmem:
                lines.append(f"A tensor-memory address = {_taddr(int(mma.a))}")
            else:
                lines += smem_desc_lines("A", int(mma.a))
            lines += smem_desc_lines("B", int(mma.b_desc))
            lines.append(f"D   tmem = {_taddr(int(mma.d_tmem))}, enable-input-d {bool(mma.enable_input_d)}")
            lines.append(f"SFA tmem = {_taddr(int(mma.sfa_tmem))}")
            lines.append(f"SFB tmem = {_taddr(int(mma.sfb_tmem))}")
            if case.form.sparse:
                lines.append(f"sparsity metadata tmem = {_taddr(int(mma.sp_meta_tmem))}")
            try:
                dec = decode_idesc(kind, int(mma.idesc))
                lines.append(f"SF IDs (idesc): SFA id {dec.get('sfa_id')}, SFB id {dec.get('sfb_id')}")
            except ValueError:
                pass
        for i, (shape, taddr, desc) in enumerate(prog.cps):
            lines.append(f"--- tcgen05.cp {i}: shape code {shape}, to tmem {_taddr(int(taddr))}")
            lines += smem_desc_lines("source", int(desc))
        out.append((f"CTA {cta}: descriptors (decoded by the PTX VM's decoders)", "\n".join(lines)))
        out.append((f"CTA {cta}: shared-memory image", smem_summary(prog.smem)))
        out.append((f"CTA {cta}: tensor-memory preload (tcgen05.st), read-back columns "
                    f"[{prog.ld_col0}, {prog.ld_col0 + prog.ld_ncols})", tmem_summary(prog.preload)))
    return out
