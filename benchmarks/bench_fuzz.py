"""The VM side of the fuzz corpus (issue 22's speed target: the 2,000-kernel corpus within 3 minutes on the
2-core machine): every recorded random kernel (and with ``--unit`` the unit kernels) parsed and run on the
VM from its recorded PTX, inputs regenerated; prints kernels/s and thread-instructions/s.

    python benchmarks/bench_fuzz.py [--unit] [--limit N]
"""

from __future__ import annotations

import argparse
import time

from mmacts.validation.fuzz import records as R
from mmacts.validation.fuzz.vm import run_vm


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--unit", action="store_true", help="also the unit kernels")
    p.add_argument("--limit", type=int, default=0)
    a = p.parse_args()
    kernels = [k for d in R.record_dirs() for k in R.fuzz_records(d) if a.unit or k.kind == "random"]
    if a.limit:
        kernels = kernels[: a.limit]
    inputs = [k.inputs() for k in kernels]
    t0 = time.perf_counter()
    ti = steps = 0
    for k, x in zip(kernels, inputs, strict=True):
        run = run_vm(k.ptx, x, len(k.classes), entry=k.entry, grid=k.grid, block=k.block, n_param=k.n_param)
        ti += run.thread_instructions
        steps += run.steps
    wall = time.perf_counter() - t0
    print(f"fuzz corpus on the VM: {len(kernels)} kernels in {wall:.1f} s: {len(kernels) / wall:.1f} kernels/s, "
          f"{ti / wall / 1e6:.2f} M thread-instructions/s, {steps / wall / 1e3:.1f} k steps/s "
          f"({ti} thread-instructions, {steps} steps)")


if __name__ == "__main__":
    main()
