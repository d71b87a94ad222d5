"""Barriers of one launch: ``bar.sync`` / ``bar.arrive`` (named CTA barriers), ``barrier.cluster``, the
``membermask`` of ``.sync`` warp instructions, ``.aligned`` convergence, and the deadlock report when every
live thread waits.

Barriers are real: a blocked thread (``status`` BLOCKED, its ``bar_id``) waits until every thread the barrier
counts has arrived, wherever in the program it did so.
"""

from __future__ import annotations

import numpy as np

from mmacts.ptxvm.errors import VmError, VmTimeout
from mmacts.ptxvm.parse import Instr
from mmacts.ptxvm.scheduler import BLOCKED, EXITED, RUN, _ranges

CLUSTER_BARRIER, WARP_SYNC = -2, -3
"""``bar_id`` of a thread blocked in ``barrier.cluster.wait``, or waiting for the other threads of
its ``membermask`` at a ``.sync`` warp instruction (``shfl.sync``, ``vote.sync``, ``bar.warp.sync``)."""


class Barriers:
    """Blocking and releasing threads at barriers and warp-sync points.

    Mixed into :class:`~mmacts.ptxvm.machine.Machine`: the methods read and change the launch state
    that ``Machine.__post_init__`` builds (thread index arrays, registers, memories, barrier tables)."""

    def bar_arrive(self, act: np.ndarray, bar: int, count: int) -> None:
        """``bar.arrive``: ``act`` arrive at barrier ``bar`` of their CTAs (completing at ``count``
        threads) without waiting; a barrier that completes releases its waiters and starts over."""
        for c in np.unique(self.cta[act]):
            key = (int(c), bar)
            expect = self.bar_expect.get(key)
            if expect is not None and expect != count and self.bar_arrived.get(key, 0):
                raise VmError(f"bar.arrive at barrier {bar} with thread count {count}, but {expect} was given "
                              f"for this phase (CTA {self.ctas[int(c)]})")
            self.bar_expect[key] = count
            self.bar_arrived[key] = self.bar_arrived.get(key, 0) + int((self.cta[act] == c).sum())
        self._release_barriers()
        for key, n in list(self.bar_arrived.items()):  # completed by arrivals alone: no thread waits there
            if n >= self.bar_expect[key]:
                waiting = (self.status == BLOCKED) & (self.cta == key[0]) & (self.bar_id == key[1])
                if not waiting.any():  # as many phases complete as the count fits; the rest open the next
                    self.bar_arrived[key] = n % self.bar_expect[key]

    def block(self, act: np.ndarray, bar: int, count: int = 0) -> None:
        self.status[act] = BLOCKED
        self.bar_id[act] = bar
        self.bar_count[act] = count
        self._release_barriers()

    def _release_barriers(self) -> None:
        blocked = self.status == BLOCKED
        if not blocked.any():
            return
        live = self.status != EXITED
        for c in np.unique(self.cta[blocked]):
            in_cta = self.cta == c
            for b in np.unique(self.bar_id[blocked & in_cta]):
                waiting = blocked & in_cta & (self.bar_id == b)
                if b == WARP_SYNC:
                    self._release_warp_sync(waiting)
                    continue
                if b == CLUSTER_BARRIER:  # cluster barrier: every live thread of the cluster arrived for this phase
                    cl = self.cluster_of_cta[c]
                    in_cl = self.cluster_of_cta[self.cta] == cl
                    floor = self.cl_arrive[in_cl & live].min()
                    rel = waiting & (self.cl_wait < floor)
                    if rel.any():
                        self.cl_wait[rel] += 1
                        self._release(rel)
                    continue
                need = int(self.bar_count[waiting].max())
                key = (int(c), int(b))
                arrived = self.bar_arrived.get(key, 0)
                if arrived:
                    expect = self.bar_expect[key]
                    if need and need != expect:
                        t = int(np.flatnonzero(waiting)[0])
                        raise VmError(f"barrier {int(b)} of CTA {self.ctas[int(c)]}: bar.sync by thread "
                                      f"{int(self.tid[t])} gives thread count {need}, bar.arrive gave {expect}")
                    need = expect
                if need == 0:
                    need = int((live & in_cta).sum())
                n_wait = int(waiting.sum())
                if n_wait + arrived >= need:
                    if arrived:  # arrivals beyond the count (warps that arrived together) open the next phase
                        self.bar_arrived[key] = max(0, arrived - max(0, need - n_wait))
                    self._release(waiting)

    def warp_sync(self, ins: Instr, act: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """``.sync`` warp instructions with a ``membermask`` (9.7.8.x: shfl.sync, vote.sync,
        bar.warp.sync): a thread executes once every thread its mask names has arrived at the
        instruction; until then it waits (blocked, its PC unchanged). Returns the threads of ``act``
        that execute now. Undefined per the ISA, hence errors: an executing thread missing from its
        own mask, a mask naming a thread that has exited or does not exist."""
        lane_bit = np.left_shift(np.uint32(1), self.lane[act].astype(np.uint32))
        if ((masks & lane_bit) == 0).any():
            i = int(np.flatnonzero((masks & lane_bit) == 0)[0])
            raise VmError(f"{ins.opcode}: membermask {int(masks[i]):#010x} does not include the executing "
                          f"lane {int(self.lane[act[i]])} (undefined behaviour)@thread{i}")
        gw = self.gwarp[act]
        if gw[0] == gw[-1]:
            present = np.bitwise_or.reduce(lane_bit)
            need = masks & ~present
        else:
            uniq, inv = np.unique(gw, return_inverse=True)
            pres = np.zeros(len(uniq), dtype=np.uint32)
            np.bitwise_or.at(pres, inv, lane_bit)
            need = masks & ~pres[inv]
        wait = need != 0
        if not wait.any():
            return act
        for i in np.flatnonzero(wait):
            t = int(act[i])
            gone = int(need[i]) & ~self._warp_live_bits(t)
            if gone:
                lane = (gone & -gone).bit_length() - 1
                raise VmError(f"{ins.opcode}: membermask {int(masks[i]):#010x} names lane {lane}, which has "
                              f"exited or does not exist (undefined behaviour)@thread{i}")
        self.sync_mask[act[wait]] = masks[wait]
        self.block(act[wait], WARP_SYNC)
        return act[~wait]

    def _warp_live_bits(self, t: int) -> int:
        """Lanes of thread ``t``'s warp that exist and have not exited, as a bit mask."""
        first = t - int(self.lane[t])
        last = min(first + 32, t - int(self.tid[t]) + self.nthreads_cta)
        bits = 0
        for k in range(first, last):
            if self.status[k] != EXITED:
                bits |= 1 << (k - first)
        return bits

    def _release_warp_sync(self, waiting: np.ndarray) -> None:
        """Threads waiting at a warp-sync instruction run again (PC unchanged, so they execute it
        together) once every thread of their membermask waits at the same instruction."""
        idx = np.flatnonzero(waiting)
        key = self.gwarp[idx] * (len(self.code) + 1) + self.pc[idx]
        for k in np.unique(key):
            grp = idx[key == k]
            present = np.bitwise_or.reduce(np.left_shift(np.uint32(1), self.lane[grp].astype(np.uint32)))
            ready = grp[(self.sync_mask[grp] & ~present) == 0]
            if len(ready):
                self.status[ready] = RUN
                self.bar_id[ready] = -1

    def _release(self, mask: np.ndarray) -> None:
        idx = np.flatnonzero(mask)
        self.status[idx] = RUN
        self.bar_id[idx] = -1
        self.pc[idx] += 1

    def deadlock(self) -> None:
        """Nothing can run and threads are blocked: name, for the first CTA with blocked threads, every
        barrier they wait at (threads, warps, first thread, line, arrivals by ``bar.arrive``)."""
        blocked = np.flatnonzero(self.status == BLOCKED)
        c = int(self.cta[int(blocked[0])])
        in_cta = self.cta == c
        n_exit = int((in_cta & (self.status == EXITED)).sum())
        mine = np.flatnonzero(in_cta & (self.status == BLOCKED))
        groups: dict[tuple[int, int], list[int]] = {}
        for t in mine:
            groups.setdefault((int(self.bar_id[t]), int(self.pc[t])), []).append(int(t))
        parts = []
        for (b, pc), ts in sorted(groups.items(), key=lambda kv: kv[1][0]):
            t = ts[0]
            what = {CLUSTER_BARRIER: "barrier.cluster.wait",
                    WARP_SYNC: f"a warp-sync instruction for membermask {int(self.sync_mask[t]):#010x}"}.get(
                b, f"barrier {b}")
            arrived = self.bar_arrived.get((c, b), 0)
            extra = f" ({arrived} arrived with bar.arrive)" if arrived else ""
            warps = sorted({int(self.warp[x]) for x in ts})
            parts.append(f"{len(ts)} threads (warp{'s' if len(warps) > 1 else ''} {_ranges(warps)}; first thread "
                         f"{int(self.tid[t])}) wait at {what}{extra} ({self.code[pc].where()})")
        raise VmTimeout(f"deadlock in CTA {self.ctas[c]}: " + "; ".join(parts) + f"; {n_exit} exited, none can arrive")

    def check_converged(self, ins: Instr, act: np.ndarray, width: int = 32) -> None:
        """``.sync.aligned`` warp (or warpgroup, width 128) collectives: every live thread of each
        group executes the instruction together."""
        if not len(act):
            return
        gid, ngroups = self._groups(width)
        live = self.status != EXITED
        n_act = np.bincount(gid[act], minlength=ngroups)
        n_live = np.bincount(gid[live], minlength=ngroups)
        bad = (n_act > 0) & (n_act != n_live)
        if not bad.any():
            return
        g = int(np.flatnonzero(bad)[0])
        members = np.flatnonzero((gid == g) & live)
        t = int(members[~np.isin(members, act)][0])
        raise VmError(f"{ins.opcode} is .aligned but thread {int(self.tid[t])} of its "
                      f"{'warp' if width == 32 else 'warpgroup'} (CTA {self.ctas[self.cta[t]]}) is at "
                      f"line {self.code[int(self.pc[t])].line if self.pc[t] < len(self.code) else 'exit'}")

    def _groups(self, width: int) -> tuple[np.ndarray, int]:
        """Per thread, the index of its group of ``width`` consecutive threads of a CTA (warp: 32,
        warpgroup: 128) over the chunk, and the number of groups."""
        got = self._group_cache.get(width)
        if got is None:
            per_cta = (self.nthreads_cta + width - 1) // width
            got = (self.cta * per_cta + self.tid // width, per_cta * len(self.ctas))
            self._group_cache[width] = got
        return got
