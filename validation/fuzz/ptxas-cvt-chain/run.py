"""Reproducer for AMB-FUZZ-CVT-CHAIN-FUSION: ptxas turns two chained cvt into one F2I and changes a NaN's result.

    PYTHONPATH=$PWD python3 validation/fuzz/ptxas-cvt-chain/run.py OUT   # on a GPU host (CuPy), ptxas carried

chain.ptx: ``cvt.rzi.u64.f32 d64, x; cvt.sat.u32.u64 d32, d64`` and ``cvt.rpi.s64.f16 e64, h;
cvt.sat.s32.s64 e32, e64``, every result stored. The PTX ISA (9.0, cvt) defines each step: a NaN x gives
d64 = 2^63 (float -> 64-bit integer) and then d32 = 0xFFFFFFFF (saturated), h = NaN gives e64 = 2^63 as s64
(INT64_MIN) and e32 = 0x80000000. ptxas 13.5.37 emits ``F2I.U32.TRUNC.NTZ`` / ``F2I.F16.CEIL.NTZ`` straight
from the float for the second step, which gives 0 for NaN. Prints the SASS lines, the VM's answer (the
ISA's) and, with a GPU, the silicon's; writes OUT/result.json.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
INPUTS = [(0x7FC00000, 0x7E00), (0x7FFFFFFF, 0xFFFF), (0x4F800000, 0x5BF8), (0xBF800000, 0xBC00)]
"""(f32 x, f16 h) per thread: NaN, NaN, 2^32 / 255, -1 / -1."""


def _inputs() -> np.ndarray:
    x = np.zeros((len(INPUTS), 2), dtype=np.uint32)
    for i, (f, h) in enumerate(INPUTS):
        x[i] = (f, h)
    return x


def main(out: str) -> None:
    from mmacts.toolchain.assemble import assemble
    from mmacts.toolchain.sass import disassemble

    os.makedirs(out, exist_ok=True)
    ptx = (HERE / "chain.ptx").read_text()
    res = assemble(ptx, "sm_90a", use_cache=False)
    sass = [ln.strip() for ln in disassemble(res.cubin).splitlines() if "F2I" in ln]
    result: dict = {"ptxas_version": res.ptxas_version, "sass_f2i": sass, "vm": [], "silicon": None}
    print("\n".join(sass))
    from mmacts.ptxvm.runtime import load_module

    for f, h in INPUTS:
        mod = load_module(ptx, "sm_90a")
        d_in = mod.rt.to_device(np.array([f, h], dtype=np.uint32))
        d_out = mod.rt.empty((4,), np.uint64)
        mod.launch("chain", 1, 1, [d_in, d_out])
        result["vm"].append([hex(int(v)) for v in mod.rt.to_host(d_out)])
    from mmacts.backends import cuda_runtime as cr

    if not isinstance(cr.probe(), str):  # a usable GPU
        import cupy

        rt = cr.Runtime(0)
        mod = rt.load(res.cubin)
        rows = []
        for f, h in INPUTS:
            d_in = cupy.asarray(np.array([f, h], dtype=np.uint32))
            d_out = cupy.full((4,), np.uint64(0xFFFFFFFFFFFFFFFF), dtype=np.uint64)
            rt.launch(mod, "chain", (1, 1, 1), (1, 1, 1), [d_in, d_out])
            rows.append([hex(int(v)) for v in cupy.asnumpy(d_out)])
        result["silicon"] = rows
        result["device"] = repr(cr.probe())
    for i, (f, h) in enumerate(INPUTS):
        sil = result["silicon"][i] if result["silicon"] else "-"
        print(f"x={f:#010x} h={h:#06x}  VM (ISA) {result['vm'][i]}  silicon {sil}")
    Path(out, "result.json").write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
