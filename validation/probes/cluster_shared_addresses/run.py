"""Launch the probe (see probe.cu) and print the shared::cluster address layout.

On a GPU: ``python3 run.py build/probe.cubin`` (CuPy). On the PTX VM, for the VM's own answer to compare with:
``python3 run.py --vm build/probe.ptx`` (from a checkout, ``PYTHONPATH`` at its root). Prints, per CTA: its
cluster rank, cvta.to.shared of a shared variable (and the same through ``cvta.to.shared.u64``), mapa.shared::cluster
of that address to each rank, cvta.to.shared::cluster of mapa.u64's generic result, isspacep (cta/cluster) of it
and the generic addresses; then a verdict on the layout ``(rank << 24) | offset`` that the PTX VM assumes
(``mmacts.ptxvm.memory.CLUSTER_RANK_SHIFT``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import numpy as np

NWORDS = 32
SHIFT = 24
Launch = Callable[[str, int], np.ndarray]


def cupy_launcher(cubin: str) -> Launch:
    import cupy as cp

    mod = cp.RawModule(path=cubin)

    def launch(name: str, nblocks: int) -> np.ndarray:
        out = cp.zeros(nblocks * NWORDS, dtype=cp.uint32)
        mod.get_function(name)((nblocks,), (32,), (out,))
        cp.cuda.runtime.deviceSynchronize()
        return out.get()

    return launch


def vm_launcher(ptx: str) -> Launch:
    from mmacts.ptxvm import api

    with open(ptx, encoding="utf-8") as f:
        mod = api.RawModule(code=f.read(), arch="sm_100a")

    def launch(name: str, nblocks: int) -> np.ndarray:
        out = api.zeros(nblocks * NWORDS, np.uint32)
        mod.get_function(name)(nblocks, 32, (out,))
        return out.get()

    return launch


def report(launch: Launch) -> bool:
    """Print the table; True when every CTA's addresses follow ``(rank << SHIFT) | offset``."""
    ok = True
    for n in (2, 4):
        nblocks = 2 * n
        o = launch(f"probe{n}", nblocks).reshape(nblocks, NWORDS)
        print(f"== cluster {n}x1x1 ({nblocks} CTAs)")
        for c in range(nblocks):
            w = [int(x) for x in o[c]]
            gens = [w[16 + 2 * r] | w[17 + 2 * r] << 32 for r in range(n)]
            print(f"CTA {c} rank {w[0]}: cvta.to.shared(&var)={w[1]:#010x} (cvta.to.shared.u64 {w[2]:#010x}), "
                  f"pad={w[3]:#010x}, generic &var={w[24] | w[25] << 32:#018x}")
            print("   mapa.shared::cluster -> " + " ".join(f"r{r}:{w[4 + r]:#010x}" for r in range(n)))
            print("   cvta.to.shared::cluster(mapa.u64) -> " + " ".join(f"r{r}:{w[8 + r]:#010x}" for r in range(n)))
            print("   isspacep cta/cluster -> " + " ".join(f"r{r}:{w[12 + r] & 1}/{w[12 + r] >> 1}" for r in range(n)))
            print("   mapa.u64 -> " + " ".join(f"r{r}:{g:#018x}" for r, g in enumerate(gens)))
            off = w[1] & ((1 << SHIFT) - 1)
            want = [(r << SHIFT) | off for r in range(n)]
            ok &= w[1] == (w[0] << SHIFT) | off and w[4:4 + n] == want and w[8:8 + n] == want
        print()
    print("VERDICT:", f"rank << {SHIFT} | offset {'holds' if ok else 'does NOT hold'}")
    return ok


if __name__ == "__main__":
    args = sys.argv[1:]
    vm = bool(args) and args[0] == "--vm"
    path = (args[1:] if vm else args) or ["probe.ptx" if vm else "probe.cubin"]
    sys.exit(0 if report(vm_launcher(path[0]) if vm else cupy_launcher(path[0])) else 1)
