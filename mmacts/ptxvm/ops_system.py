"""Machine-level instructions production kernels need around the MMA (issue 23).

Why here: CUTLASS's and Triton's Blackwell kernels stopped on the VM at instructions that carry no
arithmetic but decide whether a kernel runs at all: ``.b128`` registers (``mov`` / ``ld`` / ``st``, the
cluster-launch-control response), named barriers with ``bar.arrive`` (producer / consumer warps,
9.7.13.1), ``prefetch`` / ``prefetch.tensormap`` (9.7.9.15), ``setmaxnreg`` (9.7.19.x), ``griddepcontrol``.
Each is exact where the VM can be (the barrier counts, the 128-bit moves, the operand checks) and a no-op
only where the instruction has no effect on the VM's state (a prefetch, a register-file reallocation, a
dependent-launch hint on launches that run one after another).
``clusterlaunchcontrol.try_cancel`` always answers "not canceled", which the ISA allows for any request, so
every CTA of the grid runs the work it was launched with; any other form is refused by name.

A ``.b128`` register is stored as two little-endian 64-bit words per thread (``Machine.regs[name]`` is
``(threads, 2)`` uint64); every other instruction that meets one refuses it by name (``Machine.read``).
"""

from __future__ import annotations

import numpy as np

from mmacts.ptxvm import ops_core
from mmacts.ptxvm.errors import VmError, VmMemoryFault, VmUnsupported
from mmacts.ptxvm.handlers import handler
from mmacts.ptxvm.machine import Machine
from mmacts.ptxvm.ops_core import arrive
from mmacts.ptxvm.parse import Instr, Operand
from mmacts.ptxvm.ptxtypes import ptx_type

U32 = ptx_type("u32")
U64 = ptx_type("u64")


# ------------------------------------------------------------------------------------------ .b128
def _is_q(m: Machine, op: Operand) -> bool:
    return op.kind == "reg" and op.name in m.regs and m.reg_types[op.name].bits == 128


def _read_q(m: Machine, op: Operand, act: np.ndarray, ins: Instr) -> np.ndarray:
    """``(len(act), 2)`` uint64 (low word first) of a ``.b128`` register or integer immediate."""
    if _is_q(m, op):
        return m.regs[op.name][act].copy()
    if op.kind == "imm":
        v = op.value & ((1 << 128) - 1)
        return np.tile(np.array([v & (2**64 - 1), v >> 64], dtype=np.uint64), (len(act), 1))
    raise VmError(f"{ins.opcode}: operand {op} is not a .b128 register")


def _write_q(m: Machine, op: Operand, act: np.ndarray, val: np.ndarray, ins: Instr) -> None:
    if op.kind == "sink":
        return
    if not _is_q(m, op):
        raise VmError(f"{ins.opcode}: destination {op} is not a .b128 register")
    m.regs[op.name][act] = val


@handler("mov.b128")
def _mov_b128(m: Machine, ins: Instr, act: np.ndarray) -> None:
    """``mov.b128 q, r`` (copy), ``mov.b128 q, {lo, hi}`` (pack two .b64 or four .b32, lowest first) and
    ``mov.b128 {lo, hi}, q`` (unpack), 9.7.9.10."""
    d, a = ins.operands
    n = len(act)
    if d.kind == "vec":
        src = np.ascontiguousarray(_read_q(m, a, act, ins)).view(np.uint8).reshape(n, 16)
        w = _part_width(m, ins, d)
        et = ptx_type(f"b{w}")
        for i, it in enumerate(d.items):
            chunk = np.ascontiguousarray(src[:, i * w // 8:(i + 1) * w // 8]).view(et.udtype).reshape(n)
            if it.kind != "sink":
                m.write(it, et, act, chunk)
        return
    if a.kind == "vec":
        w = _part_width(m, ins, a)
        et = ptx_type(f"b{w}")
        out = np.zeros((n, 16), dtype=np.uint8)
        for i, it in enumerate(a.items):
            out[:, i * w // 8:(i + 1) * w // 8] = (np.ascontiguousarray(m.read(it, et, act)).view(et.udtype)
                                                   .view(np.uint8).reshape(n, w // 8))
        _write_q(m, d, act, out.view(np.uint64).reshape(n, 2), ins)
        return
    _write_q(m, d, act, _read_q(m, a, act, ins), ins)


def _part_width(m: Machine, ins: Instr, vec: Operand) -> int:
    """Bits per register of a ``{..}`` that packs a .b128: 64 for two, 32 for four; each register must be that
    wide (a narrower one would silently drop bits)."""
    k = len(vec.items)
    if k not in (2, 4):
        raise VmError(f"{ins.opcode}: a .b128 packs 2 or 4 registers, not {k}")
    w = 128 // k
    for it in vec.items:
        if it.kind == "reg" and it.name in m.reg_types and m.reg_types[it.name].bits != w:
            raise VmError(f"{ins.opcode}: {it.name} is .{m.reg_types[it.name].name}; {k} parts of a .b128 are "
                          f"{w}-bit registers")
    return w


@handler("ld.b128")
def _ld_b128(m: Machine, ins: Instr, act: np.ndarray) -> None:
    """``ld{.space}{.v2,.v4}.b128``: 16 bytes per register, naturally aligned (9.7.9.8)."""
    sp, nv = ops_core._space(ins), ops_core._vec_width(ins)
    d, a = ins.operands
    items = d.items if d.kind == "vec" else (d,)
    if len(items) != nv:
        raise VmError(f"{ins.opcode}: {len(items)} destinations for .v{nv}")
    nb = 16 * nv
    if sp == "const":
        raise VmUnsupported(f"{ins.opcode}: .const loads are not implemented")
    addrs = m.address(a, act)
    if sp == "param" and (addrs % np.uint64(16)).any():  # param_load checks bounds, not alignment
        raise VmMemoryFault(f"{ins.opcode} at parameter offset {int(addrs[0])}: not 16-byte aligned")
    raw = m.load(sp, addrs, nb, act)
    words = np.ascontiguousarray(raw).view(np.uint64).reshape(len(act), nv, 2)
    for i, it in enumerate(items):
        _write_q(m, it, act, words[:, i, :], ins)


@handler("st.b128")
def _st_b128(m: Machine, ins: Instr, act: np.ndarray) -> None:
    """``st{.space}{.v2,.v4}.b128``."""
    sp, nv = ops_core._space(ins), ops_core._vec_width(ins)
    a, s = ins.operands
    items = s.items if s.kind == "vec" else (s,)
    if len(items) != nv:
        raise VmError(f"{ins.opcode}: {len(items)} sources for .v{nv}")
    if sp in ("param", "const"):
        raise VmUnsupported(f"{ins.opcode}: stores to .{sp} are not implemented")
    data = np.concatenate([np.ascontiguousarray(_read_q(m, it, act, ins)).view(np.uint8).reshape(len(act), 16)
                           for it in items], axis=1)
    m.store(sp, m.address(a, act), data, act, ins)


@handler("atom.b128", "red.b128")
def _atom_b128(m: Machine, ins: Instr, act: np.ndarray) -> None:
    """128-bit atomics (``atom.cas.b128`` / ``atom.exch.b128``, sm_90): not implemented, refused by name."""
    raise VmUnsupported(f"{ins.opcode}: 128-bit atomics are not implemented by the VM")


# ------------------------------------------------------------------------------------------ named barriers
@handler("bar.arrive", "barrier.arrive", "bar.cta.arrive", "barrier.cta.arrive")
def _bar_arrive(m: Machine, ins: Instr, act: np.ndarray) -> None:
    """``barrier{.cta}.arrive{.aligned} a, b`` / ``bar{.cta}.arrive a, b`` (9.7.13.1): mark the threads'
    arrival at barrier ``a`` (0..15) of their CTA without waiting. ``b``, the number of threads the
    barrier completes at, is required for arrive, non-zero and a multiple of the warp size; the barrier
    completes when the arrivals (``arrive`` and ``sync``) reach ``b``: the waiting threads run on and the
    barrier starts over."""
    ops = ins.operands
    if len(ops) != 2:
        raise VmError(f"{ins.opcode} needs a barrier and a thread count (9.7.13.1)")
    bid = m.read(ops[0], U32, act)
    cnt = m.read(ops[1], U32, act)
    if len(np.unique(bid)) != 1 or len(np.unique(cnt)) != 1:
        raise VmError(f"threads of one {ins.opcode} name different barriers or thread counts")
    b, c = int(bid[0]), int(cnt[0])
    if b > 15:
        raise VmError(f"{ins.opcode}: barrier {b} is not in 0..15")
    if c == 0 or c % 32:
        raise VmError(f"{ins.opcode}: thread count {c} must be a non-zero multiple of the warp size")
    if ins.base == "bar" or ins.has("aligned"):  # bar.arrive is barrier.arrive.aligned: whole warps arrive
        m.check_converged(ins, act)
    m.bar_arrive(act, b, c)


# ------------------------------------------------------------------------------------------ hints
@handler("prefetch", "prefetchu")
def _prefetch(m: Machine, ins: Instr, act: np.ndarray) -> None:
    """``prefetch{.space}.level [a]``, ``prefetch.tensormap [a]`` (9.7.9.15): a cache hint, no effect on the
    VM's memory. The address is still checked: it must lie in the named space (a global or generic one in
    a buffer, a shared one in the CTA's window), as a fault there is a kernel bug a GPU may hide; a tensor
    map must be 64-byte aligned."""
    (a,) = ins.operands
    addrs = m.address(a, act)
    if ins.has("tensormap"):
        if (addrs % np.uint64(64)).any():
            i = int(np.flatnonzero(addrs % np.uint64(64))[0])
            raise VmMemoryFault(f"{ins.opcode}: tensor map address {int(addrs[i]):#x} is not 64-byte aligned"
                                f"@thread{i}")
        if ins.has("param") or ins.has("const"):
            return  # a __grid_constant__ parameter: the kernel's own parameter block
        m.load("generic" if not ins.has("global") else "global", addrs, 1, act)
        return
    sp = next((p for p in ins.parts[1:] if p in ("global", "local", "shared")), "generic")
    m.load(sp, addrs, 1, act)


@handler("setmaxnreg")
def _setmaxnreg(m: Machine, ins: Instr, act: np.ndarray) -> None:
    """``setmaxnreg.{inc,dec}.sync.aligned.u32 imm`` (9.7.19.x): the warpgroup's register budget; the VM's
    registers are unbounded, so only what the ISA requires is checked: an immediate in 24..256, a multiple
    of 8, executed by whole warpgroups together."""
    if not (ins.has("sync") and ins.has("aligned") and ins.has("u32")) or not (ins.has("inc") or ins.has("dec")):
        raise VmUnsupported(f"{ins.opcode}: only setmaxnreg.{{inc,dec}}.sync.aligned.u32 exists")
    (a,) = ins.operands
    if a.kind != "imm":
        raise VmError(f"{ins.opcode}: the register count must be an immediate")
    if not 24 <= a.value <= 256 or a.value % 8:
        raise VmError(f"{ins.opcode} {a.value}: the register count must be in 24..256 and a multiple of 8")
    m.check_converged(ins, act, 128)


@handler("griddepcontrol")
def _griddepcontrol(m: Machine, ins: Instr, act: np.ndarray) -> None:
    """``griddepcontrol.launch_dependents`` / ``griddepcontrol.wait`` (programmatic dependent launch): the VM
    runs launches one after another, so every prerequisite grid has completed, its memory visible, before a
    grid starts (``wait`` returns at once), and a dependent grid launching later than it might is allowed
    (``launch_dependents`` only permits an earlier start): both are exact no-ops here."""
    if ins.opcode not in ("griddepcontrol.launch_dependents", "griddepcontrol.wait") or ins.operands:
        raise VmUnsupported(f"{ins.opcode} is not implemented")


CLC_RESPONSE_BYTES = 16


@handler("clusterlaunchcontrol.try_cancel")
def _clc_try_cancel(m: Machine, ins: Instr, act: np.ndarray) -> None:
    """``clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes{.multicast::cluster::all}
    .b128 [addr], [mbar]``: ask to cancel a cluster that has not started. The hardware may refuse any request;
    the VM refuses every one (a legal answer, so each CTA of the grid does its own work, exactly as launched):
    it writes the 16-byte response "not canceled" (all zero bytes, the VM's encoding of the opaque response)
    at ``addr`` and completes 16 bytes of transaction on ``mbar``, in the executing CTA or, with
    ``.multicast::cluster::all``, at the same offsets in every CTA of its cluster."""
    if not (ins.has("async") and ins.has("mbarrier::complete_tx::bytes") and ins.has("b128")):
        raise VmUnsupported(f"{ins.opcode}: only the .async .mbarrier::complete_tx::bytes .b128 form exists")
    if any(p.startswith("shared") and p not in ("shared", "shared::cta") for p in ins.parts):
        raise VmUnsupported(f"{ins.opcode}: only a .shared::cta response address is implemented")
    dst, mbar = ins.operands
    addrs = m.shared_target(m.address(dst, act), act, ins.opcode)[1]  # offsets in the executing CTA
    mbs = m.shared_target(m.address(mbar, act), act, ins.opcode)[1]
    if (addrs % np.uint64(16)).any():
        i = int(np.flatnonzero(addrs % np.uint64(16))[0])
        raise VmMemoryFault(f"{ins.opcode}: response address {int(addrs[i]):#x} is not 16-byte aligned@thread{i}")
    multicast = ins.has("multicast::cluster::all")
    for i, t in enumerate(act):
        c = int(m.cta[t])
        targets = (np.flatnonzero(m.cluster_of_cta == m.cluster_of_cta[c]) if multicast else [c])
        for tc in targets:
            lo = int(addrs[i])
            if lo + CLC_RESPONSE_BYTES > m.smem_size:
                raise VmMemoryFault(f"{ins.opcode}: response at shared::cta {lo:#x} is past the CTA window "
                                    f"({m.smem_size} bytes)@thread{i}")
            m.smem[int(tc), lo:lo + CLC_RESPONSE_BYTES] = 0
            mb = m.mbarriers.get((int(tc), int(mbs[i])))
            if mb is None:
                raise VmError(f"{ins.opcode}: mbarrier at shared::cta {int(mbs[i]):#x} of CTA {m.ctas[int(tc)]} used "
                              f"before mbarrier.init@thread{i}")
            mb.tx -= CLC_RESPONSE_BYTES
            arrive(m, mb, 0)


@handler("clusterlaunchcontrol.query_cancel")
def _clc_query_cancel(m: Machine, ins: Instr, act: np.ndarray) -> None:
    """``clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 p, response`` reads whether a response says
    "canceled" (bit 0 of the VM's encoding; the VM's own responses never do). ``get_first_ctaid`` of a
    response that is not "canceled" is undefined in the ISA: an error."""
    d, r = ins.operands
    q = _read_q(m, r, act, ins)
    canceled = (q[:, 0] & np.uint64(1)) != 0
    if ins.has("is_canceled"):
        m.write(d, ptx_type("pred"), act, canceled)
        return
    if any(p.startswith("get_first_ctaid") for p in ins.parts):
        if not canceled.all():
            i = int(np.flatnonzero(~canceled)[0])
            raise VmError(f"{ins.opcode} of a response that is not 'canceled' is undefined (the request failed)"
                          f"@thread{i}")
        raise VmUnsupported(f"{ins.opcode}: responses 'canceled' are not made by the VM")
    raise VmUnsupported(f"{ins.opcode} is not implemented")


@handler("clusterlaunchcontrol")
def _clc(m: Machine, ins: Instr, act: np.ndarray) -> None:
    """Any other cluster-launch-control form: refused by name."""
    raise VmUnsupported(f"{ins.opcode} (cluster launch control) is not implemented by the VM")
