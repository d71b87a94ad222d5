"""TMA spellings CUTLASS's Blackwell examples use: ``.cta_group::2`` before the state spaces (72a/72c's 2-SM loads,
``cp.async.bulk.tensor.3d.cta_group::2.shared::cluster.global...``), which ptxas accepts and the VM read by
position (it took ``cta_group::2`` for the destination space and refused the copy). Packed 4-bit TMA stores (72b's
D) are tested in ``test_tma_store_packed.py``."""

from __future__ import annotations

import numpy as np

from mmacts.ptxvm import api as vm
from mmacts.ptxvm.test_cluster_spaces import PAIR, _tma_args


def test_cta_group_before_the_state_spaces() -> None:
    """The cluster test's 2-SM pair load respelled as CUTLASS emits it gives the same result. Planted fault: the
    position-based reading this replaced refused the launch (``cta_group::2`` is no state space)."""
    old = "cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.cta_group::2"
    assert old in PAIR
    ptx = PAIR.replace(old, "cp.async.bulk.tensor.1d.cta_group::2.shared::cluster.global.tile.mbarrier::"
                            "complete_tx::bytes")
    tmap, out, mask = _tma_args(0)
    vm.RawModule(code=ptx).get_function("k")(4, 32, (tmap, out, mask), cluster=(2, 1, 1))
    got = out.get().reshape(8, 32)[:4]
    for c in range(4):
        assert (got[c] == (np.arange(32) + 32 * (c % 2)) * 3).all(), c
