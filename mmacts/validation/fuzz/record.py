"""Record the fuzz corpus on a GPU and store it compactly (issue 22).

    # on a GPU host (CuPy, ptxas via MMACTS_TOOLCHAIN_DIR or the wheel):
    python3 -m mmacts.validation.fuzz.record device OUT --seeds 1-2400 [--unit] [--jobs 16]
    # here, with OUT brought back:
    python -m mmacts.validation.fuzz.record store OUT validation/fuzz/<device>-<date>

``device`` generates each seed's random kernel (and with ``--unit`` every unit kernel of
:mod:`mmacts.validation.fuzz.unit`; pure Python: the generators need no VM), assembles it for
sm_90a, launches it twice on fresh 0xFF-filled buffers (the record must not depend on timing) and
writes ``OUT/fuzz_out.npz`` (per kernel, the low bytes of each slot, the slot's width) and
``OUT/device.json``. ``store`` regenerates the kernels, checks their PTX against the digests the
device saw, and writes the record folder :mod:`mmacts.validation.fuzz.records` reads: ``meta.json``,
``manifest.json``, ``ptx.txt.xz`` (every kernel's PTX; replay never needs the generator) and
``outputs.bin.xz``.
"""

from __future__ import annotations

import hashlib
import json
import lzma
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from mmacts.backends import cuda_runtime as cr
from mmacts.toolchain.assemble import assemble
from mmacts.toolchain.locate import ptxas_version
from mmacts.validation.fuzz.generate import _WIDTH, kernel
from mmacts.validation.fuzz.inputs import digest
from mmacts.validation.fuzz.unit import unit_kernels

_CLS_CODE = {"h": "h", "r": "r", "rd": "d", "f": "f", "fd": "g", "p": "p"}
"""One letter per register class in a manifest's ``classes`` string."""
SLOT_BYTES = {c: w // 8 for c, w in _WIDTH.items()}
"""Bytes a slot's store writes (the rest of its u64 keeps the 0xFF fill)."""


def parse_seeds(spec: str) -> list[int]:
    """``1-2400`` or ``1-10,50,60-70`` -> the seeds; a ValueError with one clear line for anything else."""
    out: list[int] = []
    for part in spec.split(","):
        a, _, b = part.partition("-")
        try:
            lo, hi = int(a), int(b or a)
        except ValueError:
            raise ValueError(f"--seeds {spec!r}: expected N, N-M or a comma list of those") from None
        if lo < 0 or hi < lo:
            raise ValueError(f"--seeds {spec!r}: ranges must be non-negative and increasing")
        out.extend(range(lo, hi + 1))
    return out


def pack(out: np.ndarray, classes: list[str]) -> tuple[bytes, bool]:
    """The written bytes of ``out`` (``uint64[threads, n_out]``), slot by slot; and whether every byte a
    slot's store does not write is still 0xFF (else the whole array is kept, see :func:`unpack`)."""
    b = out.view(np.uint8).reshape(out.shape[0], out.shape[1], 8)
    widths = [SLOT_BYTES[c] for c in classes]
    rest_ff = all(bool((b[:, i, w:] == 0xFF).all()) for i, w in enumerate(widths))
    if not rest_ff:
        return out.tobytes(), False
    return np.concatenate([b[:, i, :w] for i, w in enumerate(widths)], axis=1).tobytes(), True


def unpack(data: bytes, threads: int, classes: list[str], packed: bool) -> np.ndarray:
    """Inverse of :func:`pack`: ``uint64[threads, n_out]`` with 0xFF in the unwritten bytes."""
    n = len(classes)
    if not packed:
        return np.frombuffer(data, dtype=np.uint64).reshape(threads, n).copy()
    widths = [SLOT_BYTES[c] for c in classes]
    src = np.frombuffer(data, dtype=np.uint8).reshape(threads, sum(widths))
    full = np.full((threads, n, 8), 0xFF, dtype=np.uint8)
    o = 0
    for i, w in enumerate(widths):
        full[:, i, :w] = src[:, o:o + w]
        o += w
    return full.reshape(threads, n * 8).view(np.uint64).copy()


def ptx_digest(ptx: str) -> str:
    return hashlib.sha256(ptx.encode()).hexdigest()[:16]


def all_kernels(seeds: list[int], unit: bool) -> list:
    """The random kernels of ``seeds``, then (``unit``) every unit kernel."""
    return [kernel(s) for s in seeds] + (list(unit_kernels()) if unit else [])


def launch_args(k, d_in, d_out) -> list:  # noqa: ANN001 -- CuPy or VM arrays
    """The kernel parameters: ``(in, out)``, plus ``n`` for the unit kernels."""
    return [d_in, d_out] + ([np.uint32(k.n_param)] if k.n_param is not None else [])


def device(out_dir: str, seeds: list[int], jobs: int, unit: bool = False) -> None:
    """Generate, assemble and run the kernels on GPU 0; write ``fuzz_out.npz`` and ``device.json``."""
    import cupy

    os.makedirs(out_dir, exist_ok=True)
    info = cr.probe()
    print("device:", info, flush=True)
    rt = cr.Runtime(0, timeout_s=20.0)
    t0 = time.monotonic()
    kernels = all_kernels(seeds, unit)
    t_gen = time.monotonic() - t0
    with ThreadPoolExecutor(jobs) as ex:
        cubins = list(ex.map(lambda k: assemble(k.ptx, "sm_90a", use_cache=False), kernels))
    t_asm = time.monotonic() - t0 - t_gen
    print(f"generated {len(kernels)} in {t_gen:.1f} s, assembled in {t_asm:.1f} s", flush=True)
    dev = {"name": getattr(info, "name", str(info)), "device": repr(info),
           "compute_capability": list(getattr(info, "compute_capability", ())),
           "driver_version": getattr(info, "driver_version", None),
           "runtime_version": getattr(info, "runtime_version", None), "cupy": cupy.__version__,
           "numpy": np.__version__, "python": sys.version.split()[0], "ptxas_version": ptxas_version(),
           "kernels": {}}
    arrays: dict[str, np.ndarray] = {}

    def filled(shape: tuple[int, int]) -> object:
        d = cupy.empty(shape, dtype=np.uint64)
        d.view(cupy.uint8).fill(0xFF)
        return d

    for k, res in zip(kernels, cubins, strict=True):
        rec: dict = {"ptx": ptx_digest(k.ptx), "inputs": None, "status": None, "message": ""}
        dev["kernels"][k.name] = rec
        if not res.ok:
            rec.update(status="ptxas refused", message=res.first_error_line)
            continue
        if rt.poisoned:
            rec.update(status="not run", message=rt.poisoned)
            continue
        x = k.inputs()
        rec["inputs"] = digest(x)
        try:
            mod = rt.load(res.cubin)
            d_in = cupy.asarray(x)
            outs = []
            for _ in range(2):
                d_out = filled((k.threads, k.n_out))
                cupy.cuda.Device().synchronize()
                r = rt.launch(mod, k.entry, k.grid, k.block, launch_args(k, d_in, d_out), shared_mem=0,
                              timeout_s=20.0)
                if r.status != "ok":
                    break
                outs.append(cupy.asnumpy(d_out))
        except Exception as exc:  # noqa: BLE001 -- record and go on
            rec.update(status="error", message=f"{type(exc).__name__}: {exc}")
            continue
        if len(outs) < 2:
            rec.update(status=r.status, message=r.message)
            continue
        rec["status"] = "ok"
        rec["repeat_identical"] = bool((outs[0] == outs[1]).all())
        rec["kernel_us"] = r.kernel_us
        arrays[k.name] = outs[0]
    np.savez_compressed(os.path.join(out_dir, "fuzz_out.npz"), **arrays)
    dev["wall_s"] = round(time.monotonic() - t0, 1)
    with open(os.path.join(out_dir, "device.json"), "w") as fh:
        json.dump(dev, fh, indent=1)
    st: dict[str, int] = {}
    for rec in dev["kernels"].values():
        st[rec["status"]] = st.get(rec["status"], 0) + 1
    nrep = sum(1 for rec in dev["kernels"].values() if rec.get("repeat_identical") is False)
    print(f"fuzz: {st}, repeat differs in {nrep}, {dev['wall_s']} s", flush=True)


def store(out_dir: str, dest: str, extra_meta: dict | None = None) -> None:
    """Write the record folder ``dest`` from a device run's ``out_dir``."""
    o, d = Path(out_dir), Path(dest)
    dev = json.loads((o / "device.json").read_text())
    outs = np.load(o / "fuzz_out.npz")
    d.mkdir(parents=True, exist_ok=True)
    entries, ptx_parts, blobs = [], [], []
    offset = 0
    units = {k.name: k for k in unit_kernels()}
    for name, rec in dev["kernels"].items():
        k = units[name] if name.startswith("unit") else kernel(int(name.removeprefix("seed")))
        if ptx_digest(k.ptx) != rec["ptx"]:
            raise SystemExit(f"{name}: the generator's PTX is not what the device ran (generator changed)")
        classes = k.classes
        e = {"name": name, "kind": k.kind, "entry": k.entry, "grid": list(k.grid), "block": list(k.block),
             "n_param": k.n_param, "n_out": k.n_out, "threads": k.threads,
             "classes": "".join(_CLS_CODE[c] for c in classes),
             "status": rec["status"], "message": rec["message"], "ptx": rec["ptx"], "inputs": rec["inputs"],
             "repeat_identical": rec.get("repeat_identical"), "kernel_us": rec.get("kernel_us")}
        if k.kind == "random":
            e.update(seed=k.seed, families=list(k.families))
        else:
            e.update(index=k.index, form=k.form.opcode)
        ptx_parts.append(k.ptx)
        if rec["status"] == "ok" and name in outs.files:
            data, packed = pack(outs[name], classes)
            e.update(offset=offset, size=len(data), packed=packed)
            blobs.append(data)
            offset += len(data)
        entries.append(e)
    sep = "\n//@@ next kernel\n"
    (d / "ptx.txt.xz").write_bytes(lzma.compress(sep.join(ptx_parts).encode(), preset=9))
    (d / "outputs.bin.xz").write_bytes(lzma.compress(b"".join(blobs), preset=9))
    (d / "manifest.json").write_text(json.dumps({"separator": sep, "kernels": entries}, separators=(",", ":")))
    meta = {k: v for k, v in dev.items() if k != "kernels"}
    meta.update(kernels=len(entries), ok=sum(e["status"] == "ok" for e in entries), arch="sm_90a",
                local_ptxas_version=ptxas_version(), fill="every output buffer pre-filled with 0xFF bytes")
    meta.update(extra_meta or {})
    (d / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(f"stored {len(entries)} kernels -> {d}")


def main(argv: list[str]) -> None:
    """The GPU host's entry (``python3 -m mmacts.validation.fuzz.record device OUT ...``);
    ``python -m mmacts.validation.fuzz`` is the full command line."""
    if len(argv) >= 2 and argv[0] == "device":
        seeds = parse_seeds(argv[argv.index("--seeds") + 1]) if "--seeds" in argv else list(range(1, 2401))
        jobs = int(argv[argv.index("--jobs") + 1]) if "--jobs" in argv else 8
        device(argv[1], seeds, jobs, "--unit" in argv)
    elif len(argv) == 3 and argv[0] == "store":
        store(argv[1], argv[2], json.loads(os.environ.get("MMACTS_RECORD_META", "{}")))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
