"""One silicon case of the tma-im2col probe, run in its own process (``run.py --one I``) so that a fault poisons
only this context. Case -1 is a control: a tiled load through the same kernel harness (``_kernel(3)``).

Every upload goes through the runtime's own stream and the device is synchronized before the launch: the first
run uploaded the map and the tensor with ``cupy.asarray`` on the legacy default stream and launched on the
runtime's non-blocking stream, which does not wait for it -- a kernel can read a map still being copied (a zero
map is an illegal TMA instruction), one suspect for its cudaErrorIllegalInstruction."""

from __future__ import annotations

import ctypes

import numpy as np

SWZ = {"NONE": 0, "32B": 1, "64B": 2, "128B": 3}


def _real_map(drv: ctypes.CDLL, a: np.ndarray, base: int, c: dict) -> tuple[int, np.ndarray]:
    from mmacts.ptxvm.host import test_libvmcuda as T

    dt = {"UINT8": 0, "UINT16": 1, "FLOAT16": 6, "FLOAT32": 7, "BFLOAT16": 9}[c["name"]]
    fill = 1 if c.get("fill", "NONE") != "NONE" else 0
    r, raw = T.c_im2col(drv, dt, a.ndim, base, list(reversed(a.shape)), list(reversed(a.strides))[1:],
                        c["lower"], c["upper"], c["cpp"], c["ppc"], [1] * a.ndim, 0, SWZ[c.get("swizzle", "NONE")],
                        0, fill)
    return r, np.frombuffer(raw, dtype=np.uint8).copy()


def _run(rt: object, ptx: str, tmap: np.ndarray, g: object, nbytes: int, coords: list) -> tuple[object, np.ndarray]:
    """Upload the map, launch the kernel (map, out, nbytes, footprint, coords...), return (outcome, shared bytes)."""
    import cupy

    from mmacts.toolchain.assemble import assemble

    mod = rt.load(assemble(ptx.replace(".target sm_100a", ".target sm_90a"), "sm_90a", use_cache=False).cubin)
    foot = -(-nbytes // 1024) * 1024
    dmap = rt.to_device(tmap)
    out = rt.empty((foot,), np.uint8)
    cupy.cuda.Device().synchronize()
    assert dmap.data.ptr % 64 == 0 and g is not None
    params = [np.uint64(dmap.data.ptr), np.uint64(out.data.ptr), np.uint32(nbytes), np.uint32(foot), *coords]
    res = rt.launch(mod, "tma", (1, 1, 1), (128, 1, 1), params, shared_mem=foot)
    return res, (rt.to_host(out) if res.status == "ok" else np.zeros(0, np.uint8))


def control(rt: object, drv: ctypes.CDLL) -> dict:
    """A tiled FLOAT32 box [16, 4, 2] at (8, 1, 1) of a (3, 6, 32) tensor, map from the real driver."""
    from mmacts.ptxvm.host import test_libvmcuda as T
    from mmacts.ptxvm.host.test_tensormap import _expected, _kernel, _same

    a = np.random.default_rng(0).random((3, 6, 32), dtype=np.float32)
    g = rt.to_device(a)
    box, coords = [16, 4, 2], [8, 1, 1]
    r, raw = T.c_tiled(drv, 7, 3, g.data.ptr, list(reversed(a.shape)), list(reversed(a.strides))[1:], box,
                       [1, 1, 1])
    if r:
        return {"case": -1, "status": "driver refused", "result": r}
    nbytes = int(np.prod(box)) * 4
    res, got = _run(rt, _kernel(3), np.frombuffer(raw, np.uint8).copy(), g, nbytes, list(map(np.int32, coords)))
    ok = res.status == "ok" and _same(got, _expected(a, box, coords, "NONE", False), nbytes, "NONE")
    return {"case": -1, "status": res.status, "message": res.message, "silicon_equals_reference": ok}


def one(i: int, cases: list[dict], drv: ctypes.CDLL) -> dict:
    """Case ``i``: silicon (real map) and VM (our map) against the numpy reference; JSON-ready."""
    from mmacts.backends import cuda_runtime as cr
    from mmacts.ptxvm.host import test_im2col as T
    from mmacts.ptxvm.host.test_tensormap import _kernel

    rt = cr.Runtime(0)
    if i < 0:
        return control(rt, drv)
    c = cases[i]
    npdt = c.get("npdt", np.uint16)
    row = {k: (v if not isinstance(v, type) else np.dtype(v).name) for k, v in c.items()} | {"case": i}
    a = np.random.default_rng(i).integers(0, 100, size=c["shape"]).astype(npdt)
    args = (c["lower"], c["upper"], c["c0"], c["base"], c["n0"], c["offsets"], c["ppc"], c["cpp"])
    want = T.reference(a, *args, np.nan if c.get("fill", "NONE") != "NONE" else 0)
    row["vm_equals_reference"] = T._equal(T._load(a, c["name"], *args, swizzle=c.get("swizzle", "NONE"),
                                                  oob_fill=c.get("fill", "NONE")), want)
    g = rt.to_device(a)
    r, tmap = _real_map(drv, a, g.data.ptr, c)
    if r:
        return row | {"status": "driver refused", "result": r}
    nbytes = c["ppc"] * c["cpp"] * a.itemsize
    coords = [np.int32(c["c0"]), *map(np.int32, c["base"]), np.int32(c["n0"]), *map(np.uint16, c["offsets"])]
    res, raw = _run(rt, _kernel(a.ndim, im2col=True), tmap, g, nbytes, coords)
    row.update(status=res.status, message=res.message, poisoned=rt.poisoned)
    if res.status == "ok":
        s = SWZ[c.get("swizzle", "NONE")]
        pos = np.arange(nbytes)
        pos = pos ^ (((pos >> 7) & ((1 << s) - 1)) << 4)
        row["silicon_equals_reference"] = T._equal(raw[pos].view(npdt).reshape(c["ppc"], c["cpp"]), want)
    return row
