"""Probe: where a TMA load puts each element in shared memory when the box's inner row is narrower than the
swizzle span, and which im2col channel starts the hardware takes (issue 23's open im2col results).

    PYTHONPATH=$PWD python3 validation/probes/tma-smem-rows/probe.py OUT   # on an H100 (CuPy, libcuda), ptxas carried

The 2026-11-25 tma-im2col run faulted (illegal address) in exactly the swizzled im2col cases whose pixel rows
are narrower than the swizzle span *and* whose rows, padded to the span, overrun the box's footprint rounded to
1 KB; and with an illegal instruction in the ISA's two examples, whose channel start (7 of a 16-bit tensor, 14
bytes) is not a multiple of 16 bytes. The readings it decides:

- ``dense``: rows of ``inner`` bytes one after another, then the swizzle (the VM's reading until now);
- ``span``: every row starts at a multiple of the swizzle span (rows padded to it), then the swizzle.

Each case is a child process (a fault poisons only its own context). The kernel fills a large shared window with
0xEE, TMA-loads the box, waits (bounded), and copies the whole window out, with a status word; elements are
position-coded (element value = its linear index in the tensor + 1), so the position of every element in shared
memory is read off the image. Writes OUT/result.json (per case: the parameters, status, which readings the image
equals) and OUT/images.npz (every image, for the record).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tma-im2col"))


def _im2col_probe() -> object:
    """The tma-im2col probe's ``run.py`` (its case list, its driver loader), loaded by path."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("im2col_run", HERE.parent / "tma-im2col" / "run.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
SPAN = {"NONE": 0, "32B": 32, "64B": 64, "128B": 128}
SWZ = {"NONE": 0, "32B": 1, "64B": 2, "128B": 3}
DT = {"UINT8": (0, np.uint8), "UINT16": (1, np.uint16), "UINT32": (2, np.uint32)}
WINDOW = 32768


def kernel(rank: int, im2col: bool) -> str:
    coords = ", ".join(f"%r{20 + i}" for i in range(rank))
    loads = "\n".join(f"  ld.param.s32 %r{20 + i}, [c{i}];" for i in range(rank))
    params = "".join(f", .param .s32 c{i}" for i in range(rank))
    mode, tail = "tile", ""
    if im2col:
        loads += "\n" + "\n".join(f"  ld.param.u16 %rs{i + 1}, [o{i}];" for i in range(rank - 2))
        params += "".join(f", .param .u16 o{i}" for i in range(rank - 2))
        mode, tail = "im2col", ", {" + ", ".join(f"%rs{i + 1}" for i in range(rank - 2)) + "}"
    return f""".version 8.7
.target sm_90a
.address_size 64
.extern .shared .align 1024 .b8 smem[];
.visible .entry tma(.param .u64 tmap, .param .u64 out, .param .u32 nbytes, .param .u32 ncopy{params})
{{
  .reg .b32 %r<40>;
  .reg .b16 %rs<4>;
  .reg .b64 %rd<8>;
  .reg .pred %p<4>;
  .shared .align 8 .b64 bar;
  ld.param.u64 %rd1, [tmap];
  ld.param.u64 %rd2, [out];
  ld.param.u32 %r1, [nbytes];
  ld.param.u32 %r7, [ncopy];
{loads}
  mov.u32 %r2, smem;
  mov.u32 %r3, bar;
  mov.u32 %r8, %tid.x;
  mov.u32 %r9, %ntid.x;
  shl.b32 %r9, %r9, 2;
  shl.b32 %r4, %r8, 2;
F:
  setp.ge.u32 %p2, %r4, %r7;
  @%p2 bra FE;
  add.u32 %r5, %r2, %r4;
  st.shared.u32 [%r5], 0xEEEEEEEE;
  add.u32 %r4, %r4, %r9;
  bra F;
FE:
  fence.proxy.async.shared::cta;
  bar.sync 0;
  setp.ne.u32 %p3, %r8, 0;
  @%p3 bra S;
  mbarrier.init.shared::cta.b64 [%r3], 1;
  fence.mbarrier_init.release.cluster;
  mbarrier.arrive.expect_tx.shared::cta.b64 %rd3, [%r3], %r1;
  cp.async.bulk.tensor.{rank}d.shared::cluster.global.{mode}.mbarrier::complete_tx::bytes
      [%r2], [%rd1, {{{coords}}}], [%r3]{tail};
S:
  bar.sync 0;
  mov.u32 %r10, 0;
W:
  mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r3], 0;
  @%p1 bra D;
  add.u32 %r10, %r10, 1;
  setp.lt.u32 %p2, %r10, 200000;
  @%p2 bra W;
D:
  selp.u32 %r11, 1, 0, %p1;
  setp.ne.u32 %p3, %r8, 0;
  @%p3 bra C;
  cvt.u64.u32 %rd4, %r7;
  add.u64 %rd5, %rd2, %rd4;
  st.global.u32 [%rd5], %r11;
C:
  shl.b32 %r4, %r8, 2;
L:
  setp.ge.u32 %p2, %r4, %r7;
  @%p2 bra E;
  add.u32 %r5, %r2, %r4;
  ld.shared.u32 %r6, [%r5];
  cvt.u64.u32 %rd4, %r4;
  add.u64 %rd5, %rd2, %rd4;
  st.global.u32 [%rd5], %r6;
  add.u32 %r4, %r4, %r9;
  bra L;
E:
  ret;
}}
"""


def cases() -> list[dict]:
    """Tile mode: 2-D boxes with inner rows of 16..span bytes under each swizzle (rows 10 > 8, so the swizzle's
    row cycle shows), inner coordinates on and off 16-byte boundaries. im2col: the tma-im2col run's cases that
    faulted or differed, re-run with a window large enough for padded rows, and the ISA examples with c0 7 and 8."""
    out: list[dict] = []
    for dt in ("UINT8", "UINT16", "UINT32"):
        es = np.dtype(DT[dt][1]).itemsize
        for swz in ("NONE", "32B", "64B", "128B"):
            for inner in (16, 32, 48, 64, 96, 128):
                if SPAN[swz] and inner > SPAN[swz]:
                    continue
                out.append(dict(mode="tile", dt=dt, swizzle=swz, shape=[24, 160 // es], box=[inner // es, 10],
                                coords=[16 // es, 3]))
    for swz in ("NONE", "64B"):  # inner start not a multiple of 16 bytes
        out.append(dict(mode="tile", dt="UINT16", swizzle=swz, shape=[24, 80], box=[16, 10], coords=[3, 3]))
    for dt, c0 in (("UINT16", 8), ("UINT16", 4), ("UINT16", -8), ("UINT16", -3), ("UINT8", 8), ("UINT8", 1),
                   ("UINT8", 32), ("UINT32", 1), ("UINT32", 2), ("UINT32", 4), ("UINT32", -4)):
        es = np.dtype(DT[dt][1]).itemsize
        out.append(dict(mode="tile", dt=dt, swizzle="NONE", shape=[24, 160 // es], box=[32 // es, 10],
                        coords=[c0, 3]))
    return out + im2col_cases()


IM2COL_RERUN = [0, 1, 3, 4, 5, 6, 7, 15, 18, 24, 25, 27, 29, 30, 34, 39, 40, 41, 11, 14, 19, 38, 9, 2]


def im2col_cases() -> list[dict]:
    """The tma-im2col run's cases (same seeds) that faulted or differed, a few that passed, and the ISA examples
    at the ISA's channel start 7 (14 bytes) and moved to 8 (16 bytes)."""
    out = [dict(mode="im2col", src=i) | ({"c0": 7} if i in (0, 1) else {}) for i in IM2COL_RERUN]
    out += [dict(mode="im2col", src=i, c0=8) for i in (0, 1)]
    return out


def _coded(shape: list[int], npdt: type) -> np.ndarray:
    n = int(np.prod(shape))
    return (np.arange(n, dtype=np.uint64) + 1).astype(npdt).reshape(shape)


def readings(a: np.ndarray, pos_of: np.ndarray, inner_bytes: int, span: int, s: int) -> dict[str, np.ndarray]:
    """Byte position in shared memory of each box element (rows of the box in order) under each reading."""
    rows, per = pos_of.shape
    es = a.itemsize
    out = {}
    for name, pitch in (("dense", inner_bytes), ("span", max(span, inner_bytes) if span else inner_bytes)):
        p = (np.arange(rows)[:, None] * pitch + np.arange(per)[None, :] * es).astype(np.int64)
        out[name] = p ^ (((p >> 7) & ((1 << s) - 1)) << 4)
    return out


@dataclass
class Plan:
    """One case, ready for either device: the position-coded tensor, the encoder call (driver order, base
    address filled in by the device), the kernel and its coordinates, and the box the reference expects."""

    a: np.ndarray
    im2col: bool
    map_args: dict
    nbytes: int
    coords: list
    want: np.ndarray
    row_bytes: int
    swizzle: str
    meta: dict


def plan(c: dict) -> Plan:
    if c["mode"] == "im2col":
        from mmacts.ptxvm.host import test_im2col as T2

        k = _im2col_probe()._cases()[c["src"]] | {kk: v for kk, v in c.items() if kk == "c0"}
        npdt = k.get("npdt", np.uint16)
        es = np.dtype(npdt).itemsize
        a = _coded(list(k["shape"]), {1: np.uint8, 2: np.uint16, 4: np.uint32}[es]).view(npdt)
        args = (k["lower"], k["upper"], k["c0"], k["base"], k["n0"], k["offsets"], k["ppc"], k["cpp"])
        nan = k.get("fill", "NONE") != "NONE"
        dt = {"UINT8": 0, "UINT16": 1, "FLOAT16": 6, "FLOAT32": 7, "BFLOAT16": 9}[k["name"]]
        margs = dict(data_type=dt, rank=a.ndim, global_dim=list(reversed(a.shape)),
                     global_strides=list(reversed(a.strides))[1:], pixel_box_lower_corner=k["lower"],
                     pixel_box_upper_corner=k["upper"], channels_per_pixel=k["cpp"], pixels_per_column=k["ppc"],
                     element_strides=[1] * a.ndim, swizzle=SWZ[k.get("swizzle", "NONE")], oob_fill=int(nan))
        coords = [np.int32(k["c0"]), *map(np.int32, k["base"]), np.int32(k["n0"]), *map(np.uint16, k["offsets"])]
        meta = {kk: (v if not isinstance(v, type) else np.dtype(v).name) for kk, v in k.items()}
        return Plan(a, True, margs, k["ppc"] * k["cpp"] * es, coords, T2.reference(a, *args, np.nan if nan else 0),
                    k["cpp"] * es, k.get("swizzle", "NONE"), meta)
    code, npdt = DT[c["dt"]]
    a = _coded(c["shape"], npdt)
    box, (c0, c1) = c["box"], c["coords"]
    want = np.zeros((box[1], box[0]), dtype=npdt)
    for i in range(box[1]):
        for j in range(box[0]):
            if 0 <= c1 + i < a.shape[0] and 0 <= c0 + j < a.shape[1]:
                want[i, j] = a[c1 + i, c0 + j]
    margs = dict(data_type=code, rank=a.ndim, global_dim=list(reversed(a.shape)),
                 global_strides=list(reversed(a.strides))[1:], box_dim=box, element_strides=[1] * a.ndim,
                 swizzle=SWZ[c["swizzle"]])
    return Plan(a, False, margs, int(np.prod(box)) * a.itemsize, [np.int32(x) for x in c["coords"]], want,
                box[0] * a.itemsize, c["swizzle"], {})


def judge(p: Plan, img: np.ndarray) -> dict:
    """Which reading the shared image (``WINDOW`` bytes, then the mbarrier word) equals."""
    es = p.a.itemsize
    row: dict = {"mbarrier_completed": int(img[WINDOW:WINDOW + 4].view(np.uint32)[0])}
    img = img[:WINDOW]
    wb = np.ascontiguousarray(p.want).reshape(-1).view(np.uint8).reshape(-1, es)
    for name, q in readings(p.a, p.want, p.row_bytes, SPAN[p.swizzle], SWZ[p.swizzle]).items():
        q = q.reshape(-1)
        if q.max() + es > WINDOW:
            row[f"equals_{name}"] = False
            continue
        got = img[q[:, None] + np.arange(es)[None, :]]
        row[f"equals_{name}"] = bool(np.array_equal(got, wb))
        row[f"differ_{name}"] = int((got != wb).any(axis=1).sum())
    row["bytes_written"] = int(WINDOW - (img == 0xEE).sum())
    row["box_bytes"] = p.nbytes
    return row


def one(c: dict) -> dict:
    """Case ``c`` on the GPU (map from the real driver); the JSON row, the image saved for :func:`main`."""
    import cupy

    from mmacts.backends import cuda_runtime as cr
    from mmacts.ptxvm.host import test_libvmcuda as T
    from mmacts.toolchain.assemble import assemble

    drv = _im2col_probe()._driver()
    rt = cr.Runtime(0)
    p = plan(c)
    g = rt.to_device(p.a)
    r, raw = (T.c_im2col if p.im2col else T.c_tiled)(drv, global_address=g.data.ptr, **p.map_args)
    row = p.meta | dict(c) | {"driver": r}
    if r:
        return row | {"status": "driver refused"}
    mod = rt.load(assemble(kernel(p.a.ndim, p.im2col), "sm_90a", use_cache=False).cubin)
    dmap = rt.to_device(np.frombuffer(raw, np.uint8).copy())
    out = rt.empty((WINDOW + 4,), np.uint8)
    cupy.cuda.Device().synchronize()
    params = [np.uint64(dmap.data.ptr), np.uint64(out.data.ptr), np.uint32(p.nbytes), np.uint32(WINDOW), *p.coords]
    res = rt.launch(mod, "tma", (1, 1, 1), (128, 1, 1), params, shared_mem=WINDOW)
    row.update(status=res.status, message=res.message)
    if res.status != "ok":
        return row
    img = rt.to_host(out)
    np.save(f"/tmp/img-{c['idx']}.npy", img[:WINDOW])
    return row | judge(p, img)


def on_vm(c: dict) -> tuple[str, np.ndarray | None]:
    """Case ``c`` on the PTX VM (map from the project's encoder): (status or error message, image)."""
    from mmacts.ptxvm import api as vm
    from mmacts.ptxvm.host.tensormap import encode_im2col, encode_tiled

    p = plan(c)
    g = vm.asarray(p.a)
    tmap = (encode_im2col if p.im2col else encode_tiled)(global_address=g.base, **p.map_args)
    out = vm.zeros(WINDOW + 4, np.uint8)
    k = vm.RawModule(code=kernel(p.a.ndim, p.im2col).replace(".target sm_90a", ".target sm_100a"),
                     arch="sm_100a").get_function("tma")
    try:
        k(1, 128, (vm.asarray(tmap), out, np.uint32(p.nbytes), np.uint32(WINDOW), *p.coords), shared_mem=WINDOW)
    except vm.LaunchError as e:
        return str(e), None
    return "ok", out.get()


def main(outdir: str) -> None:
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    only = os.environ.get("PROBE_ONLY")  # a comma list of case indices
    for i, c in enumerate(cases()):
        c["idx"] = i
        if only and str(i) not in only.split(","):
            continue
        try:
            p = subprocess.run([sys.executable, __file__, "--one", json.dumps(c)], capture_output=True, text=True,
                               timeout=90)
            line = next((ln for ln in reversed(p.stdout.splitlines()) if ln.startswith("{")), None)
            row = json.loads(line) if line else c | {"status": "crashed", "rc": p.returncode,
                                                     "stderr": p.stderr[-800:]}
        except subprocess.TimeoutExpired:
            row = c | {"status": "timeout"}
        print(json.dumps(row), flush=True)
        rows.append(row)
    imgs = {f"img{r['idx']}": np.load(f"/tmp/img-{r['idx']}.npy") for r in rows
            if Path(f"/tmp/img-{r['idx']}.npy").exists()}
    np.savez_compressed(out / "images.npz", **imgs)
    (out / "result.json").write_text(json.dumps(rows, indent=1))
    ok = [r for r in rows if r.get("status") == "ok"]
    print(f"summary: {len(rows)} cases, {len(ok)} ran, dense {sum(r.get('equals_dense', 0) for r in ok)}, "
          f"span {sum(r.get('equals_span', 0) for r in ok)}")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--one":
        print(json.dumps(one(json.loads(sys.argv[2]))))
    else:
        main(sys.argv[1] if len(sys.argv) > 1 else ".")
