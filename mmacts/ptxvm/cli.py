"""``mmacts vm run FILE.ptx``: launch one kernel of any PTX file on the VM and print what it wrote.

Why a command: a kernel author with a PTX file (their own, or what nvcc / Triton / CUTLASS emitted) should
see it run, fault or deadlock on the VM without writing Python. Arguments are given in launch order:

    --arg u32:256            a scalar of a type (u8..u64, s8..s64, b8..b64, f16, f32, f64)
    --arg 256                a scalar, converted to the parameter's declared type
    --arg zeros:f32:64x64    a device buffer of zeros (dtype, shape)
    --arg empty:u32:1024     a device buffer of 0xFF bytes (what the kernel never writes stays visible)
    --arg arange:f32:256     0, 1, 2, ... as that dtype
    --arg file:in.npy        a buffer with the contents of a .npy file
    --arg bytes:tmap.bin     a parameter passed by value (a struct, a tensor map): the file's bytes

After the launch every buffer is printed (``--save DIR`` also writes them as PARAM.npy); ``--trace``
prints every instruction the chosen threads (``--threads CTA:T,...``) executed with their register values.
Bad input: one line, exit 2; a kernel that ends in error or timeout: its message, exit 1.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

from mmacts.ptxvm import api
from mmacts.ptxvm.errors import VmError
from mmacts.ptxvm.memory import DeviceArray
from mmacts.ptxvm.trace import Tracer

_DTYPES = {"u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64, "s8": np.int8, "s16": np.int16,
           "s32": np.int32, "s64": np.int64, "b8": np.uint8, "b16": np.uint16, "b32": np.uint32, "b64": np.uint64,
           "f16": np.float16, "f32": np.float32, "f64": np.float64}


class UsageError(Exception):
    """Bad command-line input: printed as one line, exit 2."""


def _dims(text: str, what: str) -> tuple[int, ...]:
    try:
        t = tuple(int(x) for x in text.replace("x", ",").split(","))
    except ValueError:
        raise UsageError(f"--{what} {text!r}: give 1 to 3 positive integers, e.g. 4,2 or 128") from None
    if not 1 <= len(t) <= 3 or any(x < 1 for x in t):
        raise UsageError(f"--{what} {text!r}: give 1 to 3 positive integers, e.g. 4,2 or 128")
    return t


def _dtype(name: str, spec: str) -> Any:
    dt = _DTYPES.get(name)
    if dt is None:
        raise UsageError(f"--arg {spec!r}: unknown type {name!r} (one of {', '.join(_DTYPES)})")
    return dt


def _number(text: str, spec: str) -> int | float:
    try:
        return int(text, 0)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            raise UsageError(f"--arg {spec!r}: {text!r} is not a number") from None


def parse_arg(spec: str) -> Any:
    """One ``--arg``: a device buffer, a typed numpy scalar, or a bare Python number."""
    kind, _, rest = spec.partition(":")
    if kind in ("zeros", "empty", "arange"):
        dt_name, _, shape_s = rest.partition(":")
        dt = _dtype(dt_name, spec)
        shape = _dims(shape_s, "arg") if shape_s else None
        if shape is None:
            raise UsageError(f"--arg {spec!r}: give a shape, e.g. {kind}:f32:256 or {kind}:f32:64x64")
        if kind == "zeros":
            return api.zeros(shape, dt)
        if kind == "empty":
            return api.empty(shape, dt)
        return api.asarray(np.arange(int(np.prod(shape))).astype(dt).reshape(shape))
    if kind == "bytes":  # a parameter passed by value (a struct, a __grid_constant__ tensor map): the file's bytes
        try:
            raw = Path(rest).read_bytes()
        except OSError as exc:
            raise UsageError(f"--arg {spec!r}: cannot read {rest!r} ({exc.strerror})") from None
        if not raw:
            raise UsageError(f"--arg {spec!r}: {rest!r} is empty")
        return np.frombuffer(raw, dtype=f"V{len(raw)}")[0]
    if kind == "file":
        try:
            return api.asarray(np.load(rest, allow_pickle=False))
        except (OSError, ValueError) as exc:
            raise UsageError(f"--arg {spec!r}: cannot read {rest!r} as .npy ({exc})") from None
    if rest:
        dt = _dtype(kind, spec)
        v = _number(rest, spec)
        try:
            return np.asarray(v).astype(dt) if isinstance(v, float) else np.asarray(v % (1 << 64)).astype(dt)
        except (OverflowError, ValueError) as exc:
            raise UsageError(f"--arg {spec!r}: {exc}") from None
    return _number(kind, spec)


def _threads(text: str) -> tuple[tuple[int, int], ...]:
    """``CTA:T`` pairs, comma separated; ``CTA:A-B`` names threads A to B of that CTA (a warp: ``0:0-31``)."""
    out = []
    for item in text.split(","):
        c, _, t = item.partition(":")
        lo, _, hi = t.partition("-")
        try:
            cta, first, last = int(c), int(lo), int(hi or lo)
        except ValueError:
            raise UsageError(f"--threads {text!r}: give CTA:thread pairs or ranges, e.g. 0:0,0:32-63") from None
        if first > last or min(cta, first) < 0:
            raise UsageError(f"--threads {text!r}: {item!r} is an empty or negative range")
        out.extend((cta, k) for k in range(first, last + 1))
    return tuple(out)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mmacts vm", description="Run PTX on the PTX virtual machine.")
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="launch one kernel of a PTX file and print its buffers")
    r.add_argument("ptx", help="the PTX file")
    r.add_argument("--entry", default=None, help="the .entry to launch (default: the module's only one)")
    r.add_argument("--grid", default="1", help="grid dimensions, e.g. 4 or 4,2 (default 1)")
    r.add_argument("--block", default="128", help="block dimensions (default 128)")
    r.add_argument("--cluster", default=None, help="cluster dimensions given at launch time, e.g. 2,1")
    r.add_argument("--shared-mem", type=int, default=0, help="dynamic shared memory bytes per CTA")
    r.add_argument("--arch", default=None, help="target to model (default: the module's .target)")
    r.add_argument("--arg", action="append", default=[], metavar="SPEC", help="a kernel argument, in order "
                   "(u32:5, 5, zeros:f32:256, empty:u32:64x4, arange:f32:256, file:x.npy, bytes:struct.bin)")
    r.add_argument("--trace", action="store_true", help="print every instruction the chosen threads executed")
    r.add_argument("--threads", default="0:0", help="threads to trace as CTA:thread or CTA:first-last, comma "
                   "separated (default 0:0)")
    r.add_argument("--max-lines", type=int, default=4000, help="cap on trace lines (default 4000)")
    r.add_argument("--max-steps", type=int, default=3_000_000, help="scheduler-step budget of the launch")
    r.add_argument("--save", default=None, metavar="DIR", help="also write every buffer as DIR/PARAM.npy")
    r.add_argument("--print-max", type=int, default=64, help="elements printed per buffer (default 64)")
    return p


def cmd_run(a: argparse.Namespace) -> int:
    path = Path(a.ptx)
    if not path.is_file():
        raise UsageError(f"{a.ptx}: no such file")
    if a.max_steps < 1 or a.max_lines < 0 or a.shared_mem < 0:
        raise UsageError("--max-steps must be positive, --max-lines and --shared-mem not negative")
    grid, block = _dims(a.grid, "grid"), _dims(a.block, "block")
    cluster = _dims(a.cluster, "cluster") if a.cluster else None
    try:
        mod = api.RawModule(code=path.read_text(encoding="utf-8"), arch=a.arch, max_steps=a.max_steps)
    except VmError as exc:
        raise UsageError(f"{a.ptx}: {exc}") from None
    entry = a.entry
    if entry is None:
        if len(mod.entries) != 1:
            raise UsageError(f"{a.ptx} has {len(mod.entries)} entries ({', '.join(mod.entries)}): name one with "
                             f"--entry")
        entry = mod.entries[0]
    try:
        kern = mod.get_function(entry)
    except KeyError as exc:
        raise UsageError(str(exc.args[0])) from None
    params = kern.params
    if len(a.arg) != len(params):
        raise UsageError(f"{entry} takes {len(params)} arguments ({', '.join(f'{n} .{t}' for n, t, _ in params)}); "
                         f"{len(a.arg)} --arg given")
    args = [parse_arg(s) for s in a.arg]
    declared = (*mod.vm.module.variables, *kern.entry.shared)
    if not a.shared_mem and any(v.extern and v.space == "shared" for v in declared):
        print(f"note: {entry} declares dynamic (extern) shared memory and --shared-mem is 0", file=sys.stderr)
    tracer = Tracer(_threads(a.threads), a.max_lines) if a.trace else None
    try:
        out = kern(grid, block, args, shared_mem=a.shared_mem, cluster=cluster, trace=tracer)
    except api.LaunchError as exc:
        print(f"{exc.outcome.status}: {exc}")
        return 1
    except (TypeError, ValueError, OverflowError) as exc:
        raise UsageError(str(exc)) from None
    print(f"ok: {entry} grid {grid} block {block}: {out.steps} steps, {out.thread_instructions} "
          f"thread-instructions, {out.wall_s:.3f} s")
    save = Path(a.save) if a.save else None
    if save is not None:
        save.mkdir(parents=True, exist_ok=True)
    for (name, _, _), arg in zip(params, args, strict=True):
        if isinstance(arg, DeviceArray):
            host = arg.get()
            body = np.array2string(host.reshape(-1)[:a.print_max], separator=", ", max_line_width=100)
            more = f" ... ({host.size - a.print_max} more)" if host.size > a.print_max else ""
            print(f"{name} ({host.dtype}, shape {host.shape}): {body}{more}")
            if save is not None:
                np.save(save / f"{name}.npy", host)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        a = parser.parse_args(argv)
    except SystemExit as exc:
        return 0 if exc.code in (0, None) else 2
    try:
        return cmd_run(a)
    except UsageError as exc:
        print(f"mmacts vm: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
