"""Launch the kernel of this folder (made by `mmacts repro`) with CuPy; compare with the expected output.

    python3 launch.py [FOLDER]      # exit 0: every output matches; 1: a mismatch; 2: the launch failed
"""

import json
import sys
from pathlib import Path

import numpy as np

SHOW = 8
"""Differing 32-bit words printed per output buffer."""


def load_spec(folder):
    return json.loads((Path(folder) / "launch.json").read_text())


def host_args(folder, spec):
    """(param, numpy array or numpy scalar) for every parameter, in order; outputs start as fill bytes."""
    out = []
    for p in spec["params"]:
        dt = np.dtype(p["dtype"])
        if p["kind"] == "scalar":
            out.append((p, np.frombuffer(bytes.fromhex(p["bytes_hex"]), dtype=dt)[0]))
        elif p["kind"] == "in":
            arr = np.fromfile(Path(folder) / p["file"], dtype=dt).reshape(p["shape"])
            out.append((p, arr))
        else:
            out.append((p, np.full(p["nbytes"], p["fill"], np.uint8).view(dt).reshape(p["shape"])))
    return out


def compare(index, got, want, show=SHOW):
    """Lines describing the differences of one output buffer (bytes against bytes); empty when equal."""
    if got == want:
        return []
    if len(got) != len(want):
        return [f"output {index}: {len(got)} bytes, want {len(want)}"]
    w = 4 if len(got) % 4 == 0 else 1
    g = np.frombuffer(got, dtype=f"<u{w}")
    e = np.frombuffer(want, dtype=f"<u{w}")
    bad = np.flatnonzero(g != e)
    lines = [f"output {index}: {bad.size} of {g.size} {8 * w}-bit words differ"]
    for i in bad[:show]:
        lines.append(f"  word {int(i)} (byte {int(i) * w}): got 0x{int(g[i]):0{2 * w}x} want 0x{int(e[i]):0{2 * w}x}")
    return lines


def check(folder, spec, outputs):
    """Compare each output (index -> bytes) with its expected file; print; return the exit code."""
    bad = []
    for p in spec["params"]:
        if p["kind"] == "out":
            bad += compare(p["index"], outputs[p["index"]], (Path(folder) / p["expected"]).read_bytes())
    for line in bad:
        print(line)
    print(f"{spec['case_id']}: " + ("MISMATCH" if bad else "match: every output equals the expected bytes"))
    return 1 if bad else 0


def main(argv=None):
    import cupy as cp

    folder = Path((argv if argv is not None else sys.argv[1:] or [Path(__file__).parent])[0])
    spec = load_spec(folder)
    mod = cp.RawModule(path=str(folder / spec["cubin"]))
    fn = mod.get_function(spec["entry"])
    if spec["shared_mem"] > 48 * 1024:
        fn.max_dynamic_shared_size_bytes = spec["shared_mem"]
    pairs = [(p, a if p["kind"] == "scalar" else cp.asarray(a)) for p, a in host_args(folder, spec)]
    try:
        fn(tuple(spec["grid"]), tuple(spec["block"]), tuple(d for _, d in pairs), shared_mem=spec["shared_mem"])
        outs = {p["index"]: d.get().tobytes() for p, d in pairs if p["kind"] == "out"}
    except Exception as exc:  # a launch or kernel fault: not a comparison
        print(f"{spec['case_id']}: launch failed: {type(exc).__name__}: {exc}")
        return 2
    return check(folder, spec, outs)


if __name__ == "__main__":
    sys.exit(main())
