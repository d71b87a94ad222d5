"""Operands of one launch: special registers, register reads and writes, symbols and addresses.

Why a unit of its own: every handler reads and writes its operands through these methods, and each of
them carries a PTX rule a reader should find in one place (the operand size mismatch rules of
:func:`_resize`, ``.b128`` registers refused outside mov / ld / st, predicate operands, immediates).
The register reads also police registers an asynchronous operation has not completed (the pending-register
table of :mod:`mmacts.ptxvm.hazards`): the check sits inline here because the read is the VM's hottest path.
"""

from __future__ import annotations

import numpy as np

from mmacts.ptxvm.errors import VmError, VmHazard, VmUnsupported
from mmacts.ptxvm.memory import CLUSTER_RANK_SHIFT
from mmacts.ptxvm.parse import Operand
from mmacts.ptxvm.ptxtypes import PtxType, from_bits, ptx_type, to_bits
from mmacts.ptxvm.scheduler import STEP_NS


class Operands:
    """Operand reads and writes of the active threads.

    Mixed into :class:`~mmacts.ptxvm.machine.Machine`: the methods read and change the launch state
    that ``Machine.__post_init__`` builds (thread index arrays, registers, memories, barrier tables)."""

    def special(self, name: str, act: np.ndarray) -> np.ndarray:
        """Special registers (10.x): values for the active threads, as uint32 / uint64."""
        base, _, comp = name.partition(".")
        ci = {"x": 0, "y": 1, "z": 2}.get(comp, 0)
        bx, by, bz = self.cfg.block
        n = len(act)
        if base == "%tid":
            return (self.tid_x, self.tid_y, self.tid_z)[ci][act].astype(np.uint32)
        if base == "%ntid":
            return np.full(n, (bx, by, bz)[ci], dtype=np.uint32)
        if base == "%ctaid":
            return (self.cta_x, self.cta_y, self.cta_z)[ci][self.cta[act]].astype(np.uint32)
        if base == "%nctaid":
            return np.full(n, self.cfg.grid[ci], dtype=np.uint32)
        if base == "%laneid":
            return self.lane[act].astype(np.uint32)
        if base == "%warpid":
            return self.warp[act].astype(np.uint32)
        if base == "%nwarpid":
            return np.full(n, (self.nthreads_cta + 31) // 32, dtype=np.uint32)
        if base in ("%clusterid",):
            cx = self.cta_x[self.cta[act]] // self.cfg.cluster[0]
            cy = self.cta_y[self.cta[act]] // self.cfg.cluster[1]
            cz = self.cta_z[self.cta[act]] // self.cfg.cluster[2]
            return (cx, cy, cz)[ci].astype(np.uint32)
        if base == "%nclusterid":
            return np.full(n, self.ncluster[ci], dtype=np.uint32)
        if base == "%cluster_ctaid":
            c = self.cta[act]
            return ((self.cta_x[c] % self.cfg.cluster[0]), (self.cta_y[c] % self.cfg.cluster[1]),
                    (self.cta_z[c] % self.cfg.cluster[2]))[ci].astype(np.uint32)
        if base == "%cluster_nctaid":
            return np.full(n, self.cfg.cluster[ci], dtype=np.uint32)
        if base == "%cluster_ctarank":
            return self.rank_of_cta[self.cta[act]].astype(np.uint32)
        if base == "%cluster_nctarank":
            return np.full(n, self.cluster_size, dtype=np.uint32)
        if base == "%is_explicit_cluster":
            return np.full(n, "explicitcluster" in self.entry.directives, dtype=bool)
        if base in ("%globaltimer", "%globaltimer_lo", "%globaltimer_hi", "%clock", "%clock64"):
            self.time_read = True
        if base in ("%globaltimer", "%globaltimer_lo", "%globaltimer_hi"):
            v = np.full(n, self.vtime + self.steps * STEP_NS, dtype=np.uint64)
            if base.endswith("_lo"):
                return v.astype(np.uint32)
            if base.endswith("_hi"):
                return (v >> np.uint64(32)).astype(np.uint32)
            return v
        if base in ("%clock", "%clock64"):
            v = np.full(n, self.steps * 2, dtype=np.uint64)
            return v if base == "%clock64" else v.astype(np.uint32)
        if base == "%smid":
            return np.zeros(n, dtype=np.uint32)
        if base == "%nsmid":
            return np.full(n, 132, dtype=np.uint32)
        if base.startswith("%lanemask_"):
            ln = self.lane[act].astype(np.uint64)
            one = np.uint64(1)
            eq = (one << ln).astype(np.uint32)
            rel = base[len("%lanemask_"):]
            full = np.uint64(0xFFFFFFFF)
            lt = ((one << ln) - one).astype(np.uint32)
            return {"eq": eq, "lt": lt, "le": (lt | eq), "gt": (~(lt | eq)).astype(np.uint32) & np.uint32(full),
                    "ge": (~lt).astype(np.uint32)}[rel]
        if base == "%dynamic_smem_size":
            return np.full(n, self.cfg.shared_dynamic, dtype=np.uint32)
        if base == "%total_smem_size":
            return np.full(n, self.smem_size, dtype=np.uint32)
        raise VmUnsupported(f"special register {name} is not implemented")

    def is_special(self, name: str) -> bool:
        return name not in self.regs and name.split(".")[0] in (
            "%tid", "%ntid", "%ctaid", "%nctaid", "%laneid", "%warpid", "%nwarpid", "%clusterid", "%nclusterid",
            "%cluster_ctaid", "%cluster_nctaid", "%cluster_ctarank", "%cluster_nctarank", "%is_explicit_cluster",
            "%globaltimer", "%globaltimer_lo", "%globaltimer_hi", "%clock", "%clock64", "%smid", "%nsmid",
            "%lanemask_eq", "%lanemask_lt", "%lanemask_le", "%lanemask_gt", "%lanemask_ge", "%dynamic_smem_size",
            "%total_smem_size")

    def reg_bits(self, name: str, act: np.ndarray) -> np.ndarray:
        """Raw stored bits of a register for the active threads (checks async-pending reads)."""
        if name in self.pending_regs:
            mask, src = self.pending_regs[name]
            # tcgen05.ld: a true register dependency is honoured without tcgen05.wait::ld (9.7.16.6.4.5);
            # wgmma accumulators may not be read before their wgmma.wait_group (9.7.15.x)
            if src.base != "tcgen05" and mask[act].any():
                raise VmHazard(f"register {name} read before {src.base}'s wait completed the operation at "
                               f"{src.where()}")
            if src.base == "tcgen05":
                # the read waits for the load's value, so this register of these threads has been read from
                # Tensor Memory: a later dealloc need not wait for it (reading register-read-completes of
                # AMB-TCGEN05-LD-NO-WAIT-DEALLOC, the one CUTLASS's SM100 epilogue relies on); an overwrite
                # before tcgen05.wait::ld stays a hazard (write)
                read = self.ld_read.setdefault(name, np.zeros(self.T, dtype=bool))
                read[act] = True
        try:
            reg = self.regs[name]
        except KeyError:
            raise VmError(f"undeclared register {name}") from None
        n = len(act)
        if n and int(act[-1]) - int(act[0]) + 1 == n:  # a contiguous run of threads: a slice is cheaper
            return reg[int(act[0]):int(act[0]) + n].copy()
        return reg[act]

    def read(self, op: Operand, ty: PtxType, act: np.ndarray) -> np.ndarray:
        """Operand value as ``ty`` values (numpy dtype ``ty.dtype``) for the active threads."""
        n = len(act)
        if ty.bits == 128:
            raise VmUnsupported(f".b128 operand {op}: the VM implements .b128 for mov, ld and st only")
        if op.kind == "reg":
            if self.is_special(op.name):
                v = self.special(op.name, act)
                return _convert_int(v, ty)
            bits = self.reg_bits(op.name, act)
            rty = self.reg_types[op.name]
            if rty.bits == 128:
                raise VmUnsupported(f".b128 register {op.name} read as .{ty.name}: the VM implements .b128 "
                                    f"registers for mov, ld and st only")
            if ty.kind == "pred" or rty.kind == "pred":
                if not (ty.kind == rty.kind == "pred"):
                    raise VmError(f"register {op.name} (.{rty.name}) used as .{ty.name}")
                return ~bits if op.neg else bits
            if rty.bits == ty.bits:
                return bits.view(ty.dtype)
            return _resize(bits, rty, ty)
        if op.kind == "imm":
            if ty.kind == "f":
                return np.full(n, op.value, dtype=ty.dtype)
            if ty.kind == "pred":
                return np.full(n, bool(op.value))
            mask = (1 << ty.bits) - 1
            return np.full(n, op.value & mask, dtype=ty.udtype).view(ty.dtype)
        if op.kind == "fimm":
            if op.bits == 32:
                val = np.array([op.value], dtype=np.uint32).view(np.float32)[0]
            else:
                val = np.array([op.value], dtype=np.uint64).view(np.float64)[0]
            if ty.kind == "f":
                return np.full(n, val, dtype=ty.dtype)
            if ty.bits == op.bits:
                return np.full(n, op.value, dtype=ty.udtype).view(ty.dtype)
            raise VmError(f"float immediate {op} used as .{ty.name}")
        if op.kind == "sym":
            return self.symbol_values(op.name, act).astype(ty.udtype).view(ty.dtype)
        raise VmError(f"operand {op} cannot be read as a value")

    def write(self, op: Operand, ty: PtxType, act: np.ndarray, values: np.ndarray) -> None:
        if op.kind == "sink":
            return
        if op.kind != "reg":
            raise VmError(f"cannot write to operand {op}")
        if op.name not in self.regs:
            raise VmError(f"write to undeclared or read-only register {op.name}")
        rty = self.reg_types[op.name]
        if rty.bits == 128 or ty.bits == 128:
            raise VmUnsupported(f".b128 register {op.name} written as .{ty.name}: the VM implements .b128 "
                                f"registers for mov, ld and st only")
        n = len(act)
        sel = slice(int(act[0]), int(act[0]) + n) if n and int(act[-1]) - int(act[0]) + 1 == n else act
        if rty.kind == "pred":
            self.regs[op.name][sel] = np.asarray(values, dtype=bool)
            return
        bits = to_bits(values, ty) if ty.kind != "pred" else np.asarray(values).astype(np.uint8)
        if rty.bits != ty.bits:
            bits = _resize(bits, ty, rty)
        self.regs[op.name][sel] = bits.view(rty.udtype) if bits.dtype != rty.udtype else bits
        if self.pending_regs and op.name in self.pending_regs:
            mask, src = self.pending_regs[op.name]
            if src.base == "tcgen05" and mask[act].any():
                self._ld_overwrite(op.name, src, mask, act)
            mask[act] = False

    def symbol_values(self, name: str, act: np.ndarray) -> np.ndarray:
        """The address (uint64, per active thread) of a variable or parameter named in an operand: its offset in
        its space; a shared variable's carries the CTA's cluster rank (:data:`CLUSTER_RANK_SHIFT`)."""
        if name in self.shared_layout.offsets:
            off = np.uint64(self.shared_layout.offsets[name])
            if self.cluster_size == 1:
                return np.full(len(act), off, dtype=np.uint64)
            return off + (self.rank_of_cta[self.cta[act]].astype(np.uint64) << np.uint64(CLUSTER_RANK_SHIFT))
        for table in (self.local_layout.offsets, self.param_offsets):
            if name in table:
                return np.full(len(act), table[name], dtype=np.uint64)
        raise VmError(f"unknown symbol {name}")

    def address(self, op: Operand, act: np.ndarray) -> np.ndarray:
        """Effective address (uint64) of an address operand ``[base+offset]``."""
        if op.kind != "addr":
            raise VmError(f"expected an address operand, got {op}")
        if op.base is None:
            return np.full(len(act), op.offset & (2**64 - 1), dtype=np.uint64)
        b = op.base
        if b.kind == "sym":
            base = self.symbol_values(b.name, act)
        elif b.kind == "reg":
            rty = self.reg_types.get(b.name)
            if rty is None:
                raise VmError(f"undeclared register {b.name}")
            base = self.reg_bits(b.name, act).astype(np.uint64)
        else:
            raise VmError(f"cannot address through {b}")
        return base + np.uint64(op.offset & (2**64 - 1))


def _convert_int(v: np.ndarray, ty: PtxType) -> np.ndarray:
    if ty.kind == "f":
        raise VmError("special register read as a float")
    src = ptx_type(f"u{v.dtype.itemsize * 8}")
    if src.bits == ty.bits:
        return v.view(ty.dtype)
    return _resize(v, src, ty)


def _resize(bits: np.ndarray, src: PtxType, dst: PtxType) -> np.ndarray:
    """Bits of ``src``'s width as ``dst``: truncation, or zero / sign extension (by ``src``'s
    signedness), as PTX defines operand size mismatches for bit-size and integer types."""
    if dst.kind == "f" and src.kind != "f":
        if src.bits < dst.bits:
            raise VmError(f".{src.name} register read as .{dst.name}")
        return bits.astype(dst.udtype).view(dst.dtype)
    if src.bits > dst.bits:
        out = bits.astype(dst.udtype)
    elif src.signed:
        out = bits.view(src.dtype).astype(np.dtype(f"int{dst.bits}")).view(dst.udtype)
    else:
        out = np.asarray(bits).view(src.udtype).astype(dst.udtype)
    return out.view(dst.dtype)


def values_of(bits: np.ndarray, ty: PtxType) -> np.ndarray:
    return from_bits(bits, ty)
