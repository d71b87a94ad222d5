"""Probe: the 128 bytes the real driver writes for ``cuTensorMapEncodeTiled`` / ``cuTensorMapEncodeIm2col``.

    PYTHONPATH=$PWD python3 validation/probes/tmap-bytes/run.py OUT     # on a GPU host (CuPy for a context)

Why: the VM reads tensor maps in the project's own 128-byte layout (``mmacts/ptxvm/host/tensormap.py``), which
host code gets from ``libvmcuda``. Kernels whose host code builds descriptors itself in the hardware layout (the
CuTe DSL's JIT host code) cannot run until the VM also reads that layout; the driver's own bytes are its ground
truth. Calls: single-field variations around a base map (each field alone, so each field's bits show), and the
seeded sweep of the tma-im2col probe's contract part. Writes OUT/maps.jsonl: one line per call (kind, args,
CUresult, the 128 bytes in hex) and OUT/summary.json.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _im2col_probe() -> object:
    spec = importlib.util.spec_from_file_location("im2col_run", HERE.parent / "tma-im2col" / "run.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


BASE_T = dict(data_type=7, rank=3, global_address=0x7F0000001000, global_dim=[64, 8, 4], global_strides=[256, 2048],
              box_dim=[32, 2, 1], element_strides=[1, 1, 1], interleave=0, swizzle=0, l2_promotion=0, oob_fill=0)
BASE_I = dict(data_type=6, rank=4, global_address=0x7F0000002000, global_dim=[64, 10, 9, 2],
              global_strides=[128, 1280, 11520], pixel_box_lower_corner=[-1, -1], pixel_box_upper_corner=[-1, -1],
              channels_per_pixel=64, pixels_per_column=32, element_strides=[1, 1, 1, 1], interleave=0, swizzle=0,
              l2_promotion=0, oob_fill=0)


def variations() -> list[tuple[str, dict]]:
    out: list[tuple[str, dict]] = [("tiled", BASE_T), ("im2col", BASE_I)]

    def var(kind: str, base: dict, **ch: object) -> None:
        a = copy.deepcopy(base)
        a.update(ch)
        out.append((kind, a))

    for bit in range(4, 57):
        var("tiled", BASE_T, global_address=(1 << bit) | 0x7F0000000000 if bit < 40 else 1 << bit)
    for i in range(3):
        for v in (1, 2, 3, 5, 16, 255, 256, 4096, 65535, 65536, 2**20, 2**31, 2**32):
            d = list(BASE_T["global_dim"])
            d[i] = v
            var("tiled", BASE_T, global_dim=d)
    for i in range(2):
        for v in (16, 32, 48, 256, 4096, 2**20, 2**32, 2**36, 2**39, 2**40 - 16):
            s = list(BASE_T["global_strides"])
            s[i] = max(v, s[0] if i else 16)
            var("tiled", BASE_T, global_strides=s)
    for i in range(3):
        for v in (1, 2, 3, 4, 16, 31, 128, 255, 256):
            b = list(BASE_T["box_dim"])
            b[i] = v if i else max(4, v - v % 4)
            var("tiled", BASE_T, box_dim=b)
        for v in (1, 2, 3, 5, 8):
            e = list(BASE_T["element_strides"])
            e[i] = v
            var("tiled", BASE_T, element_strides=e)
    for dt in range(16):
        var("tiled", BASE_T, data_type=dt)
    for il in (0, 1, 2):
        var("tiled", BASE_T, interleave=il, swizzle=1 if il == 2 else 0)
    for sw in range(7):
        var("tiled", BASE_T, swizzle=sw, box_dim=[8, 2, 1])
    for l2 in range(4):
        var("tiled", BASE_T, l2_promotion=l2)
    var("tiled", BASE_T, oob_fill=1)
    for r in (1, 2, 3, 4, 5):
        var("tiled", BASE_T, rank=r, global_dim=[64, 8, 4, 3, 2][:r], global_strides=[256, 2048, 8192, 24576][:r - 1],
            box_dim=[32, 2, 1, 1, 1][:r], element_strides=[1] * r)
    for lo in (-8, -1, 0, 3):
        for up in (-3, 0, 2):
            var("im2col", BASE_I, pixel_box_lower_corner=[lo, lo + 1], pixel_box_upper_corner=[up, up - 1])
    for c in (8, 16, 32, 64, 128, 256):
        var("im2col", BASE_I, channels_per_pixel=c, swizzle=0)
    for p in (1, 2, 31, 64, 512, 1024):
        var("im2col", BASE_I, pixels_per_column=p)
    for sw in range(4):
        var("im2col", BASE_I, swizzle=sw, channels_per_pixel=16)
    return out


def main(outdir: str) -> None:
    from mmacts.ptxvm.host import test_libvmcuda as T

    probe = _im2col_probe()
    drv = probe._driver()
    sm = probe._sm()
    calls = variations() + probe.sweep()
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    ok = 0
    with (out / "maps.jsonl").open("w") as f:
        for kind, args in calls:
            r, raw = (T.c_tiled if kind == "tiled" else T.c_im2col)(drv, **args)
            ok += r == 0
            f.write(json.dumps({"kind": kind, "args": args, "result": r, "bytes": raw.hex() if r == 0 else ""}) + "\n")
    (out / "summary.json").write_text(json.dumps({"calls": len(calls), "ok": ok, "sm": sm}))
    print(f"tmap-bytes: {len(calls)} calls, {ok} encoded, sm {sm}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
