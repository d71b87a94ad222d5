"""im2col-mode TMA loads (PTX ISA 5.5.4, ``cp.async.bulk.tensor ... .im2col``) on the VM, through maps from
``encode_im2col``, against a small numpy im2col written here from the spec text: the bounding box spans
``lower`` .. ``globalDim - 1 + upper`` in each of W, H, D; the image batch is traversed in NDHW order (W fastest)
inside that box starting at the filter base the instruction gives; ``pixelsPerColumn`` pixels are taken, each
read at its position plus the im2col offsets, ``channelsPerPixel`` channels from channel ``c``; whatever lies
outside the tensor (padding, N past the batch, channels past C) is zero or NaN. Written as "list every pixel of
the box, find the base, take the next ppc" -- not the VM's carry-and-wrap walk."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from mmacts.ptxvm import api as vm
from mmacts.ptxvm import ops_bulk
from mmacts.ptxvm.host import TensorMapError, encode_im2col, libvmcuda
from mmacts.ptxvm.host.test_tensormap import _kernel
from mmacts.ptxvm.ops_bulk import TensorMap


def reference(a: np.ndarray, lower: list[int], upper: list[int], c0: int, base: list[int], n0: int,
              offsets: list[int], ppc: int, cpp: int, fill: float) -> np.ndarray:
    """numpy im2col of the C-order array ``a`` (N, [D,] [H,] W, C); corners, base and offsets W first. Returns
    (ppc, cpp) elements."""
    k = a.ndim - 2
    spatial = list(reversed(a.shape[1:-1]))  # W first
    ranges = [range(lower[i], spatial[i] - 1 + upper[i] + 1) for i in range(k)]
    # every pixel of the batch's boxes in NDHW order, W fastest: itertools.product varies the last fastest
    order = [(n, *p) for n in range(a.shape[0]) for p in itertools.product(*reversed(ranges))]  # (n, d, h, w)
    start = order.index((n0, *reversed(base)))
    margin = max(max(abs(v) for v in lower + upper), max(offsets)) + 2
    cpad = cpp + abs(c0)
    pad = [(0, 0)] + [(margin, margin)] * k + [(cpad, cpad)]
    big = np.pad(a, pad, constant_values=fill)
    out = np.full((ppc, cpp), fill, dtype=a.dtype)
    for row, (n, *pos) in enumerate(order[start:start + ppc]):  # pixels past the last image stay filled
        at = [p + margin + o for p, o in zip(pos, reversed(offsets), strict=True)]  # D, H, W order
        out[row] = big[(n, *at, slice(c0 + cpad, c0 + cpad + cpp))]
    return out


def _load(a: np.ndarray, name: str, lower: list[int], upper: list[int], c0: int, base: list[int], n0: int,
          offsets: list[int], ppc: int, cpp: int, swizzle: str = "NONE", oob_fill: str = "NONE",
          tamper: object = None) -> np.ndarray:
    g = vm.asarray(a)
    dims = list(reversed(a.shape))
    strides = list(reversed(a.strides))[1:]
    m = encode_im2col(name, a.ndim, g.base, dims, strides, lower, upper, cpp, ppc, swizzle=swizzle,
                      oob_fill=oob_fill)
    if callable(tamper):
        tamper(m)
    nbytes = ppc * cpp * a.itemsize
    span = {"NONE": 0, "32B": 32, "64B": 64, "128B": 128}[swizzle]
    pitch = max(span, cpp * a.itemsize)  # probe tma-smem-rows: a pixel row narrower than the span is padded to it
    foot = -(-ppc * pitch // 1024) * 1024
    out = vm.zeros(foot, np.uint8)
    k = vm.RawModule(code=_kernel(a.ndim, im2col=True)).get_function("tma")
    k(1, 256, (vm.asarray(m), out, nbytes, foot, c0, *base, n0, *offsets), shared_mem=foot)
    raw = out.get()
    s = {"NONE": 0, "32B": 1, "64B": 2, "128B": 3}[swizzle]
    i = np.arange(nbytes)
    pos = (i // (cpp * a.itemsize)) * pitch + i % (cpp * a.itemsize)
    pos = pos ^ (((pos >> 7) & ((1 << s) - 1)) << 4)
    return raw[pos].view(a.dtype).reshape(ppc, cpp)


NAN_FILL_BITS = {2: 0x7FF7, 4: 0x7FF77FF7}
"""The OOB NaN fill as the H200 wrote it (probe ``validation/probes/tma-smem-rows``): 0x7FF7 in every 16 bits."""


def _equal(got: np.ndarray, want: np.ndarray) -> bool:
    """Equal values; where the reference has NaN (OOB fill) the bits must be the silicon's fill pattern."""
    if want.dtype.kind != "f":
        return bool(np.array_equal(got, want))
    nan = np.isnan(want)
    bits = got.view(f"u{got.itemsize}")[nan]
    return bool(np.array_equal(got[~nan], want[~nan]) and (bits == NAN_FILL_BITS[got.itemsize]).all())


SPEC_EXAMPLES = [  # (shape N H W C, lower, upper, c0, base (W, H), n0, offsets): PTX ISA 5.5.4.1 examples 1, 2
    ((64, 14, 9, 64), [-1, -1], [-1, -1], 8, [7, 4], 0, [0, 0]),
    ((64, 14, 9, 64), [0, 0], [-2, -2], 8, [4, 7], 0, [2, 2]),
]
"""The examples' channel start is 7 in the ISA; 7 16-bit channels are 14 bytes, and a channel start off a
16-byte boundary traps on silicon (probe ``tma-smem-rows``: illegal instruction), so the cases start at 8."""


def test_channel_start_off_16_bytes_is_refused() -> None:
    """The ISA example's own start (channel 7 of 16-bit data, 14 bytes) is refused by name, as silicon traps."""
    shape, lower, upper, _, base, n0, offsets = SPEC_EXAMPLES[0]
    a = np.zeros(shape, dtype=np.uint16)
    with pytest.raises(vm.LaunchError, match="innermost coordinate 7 .14 bytes. is not a multiple of 16 bytes"):
        _load(a, "UINT16", lower, upper, 7, base, n0, offsets, 64, 8)


@pytest.mark.parametrize("shape, lower, upper, c0, base, n0, offsets", SPEC_EXAMPLES)
def test_spec_examples(shape: tuple[int, ...], lower: list[int], upper: list[int], c0: int, base: list[int],
                       n0: int, offsets: list[int]) -> None:
    """The ISA's examples (64 pixels of 8 channels; 16-bit elements so that a pixel is 16 bytes). The spec's
    coordinates (7, 7, 4, 0) are (c, w, h, n); example 2's W=7 lies outside its 0..6 box, so it is moved to 4."""
    a = np.random.default_rng(1).integers(0, 1000, size=shape).astype(np.uint16)
    got = _load(a, "UINT16", lower, upper, c0, base, n0, offsets, 64, 8)
    assert _equal(got, reference(a, lower, upper, c0, base, n0, offsets, 64, 8, 0))


def _random_case(rng: np.random.Generator) -> dict:
    rank = int(rng.integers(3, 6))
    k = rank - 2
    npdt, name = [(np.uint8, "UINT8"), (np.float16, "FLOAT16"), (np.float32, "FLOAT32"),
                  (np.uint16, "BFLOAT16")][rng.integers(4)]
    es = np.dtype(npdt).itemsize
    swizzle = ["NONE", "32B", "64B", "128B"][rng.integers(4)]
    span = {"NONE": 256, "32B": 32, "64B": 64, "128B": 128}[swizzle]
    cpp = int(rng.integers(1, min(span, 256 * es) // 16 + 1)) * 16 // es
    chans = int(rng.integers(1, 4)) * 16 // es * 2
    spatial = [int(rng.integers(1, 7)) for _ in range(k)]  # W first
    lim = {3: 6, 4: 4, 5: 3}[rank]
    lower = [int(rng.integers(-lim, 2)) for _ in range(k)]
    upper = [int(rng.integers(max(lower[i] - spatial[i] + 1, -lim), lim)) for i in range(k)]
    base = [int(rng.integers(lower[i], spatial[i] + upper[i])) for i in range(k)]
    shape = (int(rng.integers(1, 4)), *reversed(spatial), chans)
    return dict(rank=rank, npdt=npdt, name=name, swizzle=swizzle, cpp=cpp, shape=shape, lower=lower, upper=upper,
                base=base, n0=int(rng.integers(0, shape[0])), c0=int(rng.integers(-1, 4)) * 16 // es,
                offsets=[int(rng.integers(0, 3)) for _ in range(k)], ppc=int(rng.integers(1, 100)),
                fill="NAN_REQUEST_ZERO_FMA" if name.startswith("FLOAT") and rng.integers(2) else "NONE")


def test_random_im2col_loads() -> None:
    """Seeded sweep: rank 3-5, element sizes 1/2/4, swizzles, corners (padding and cropping), base, batch
    wrap-around and past the last image, offsets, channel windows past C; each load equal to the reference."""
    rng = np.random.default_rng(2027)
    for _ in range(80):
        c = _random_case(rng)
        a = rng.integers(0, 100, size=c["shape"]).astype(c["npdt"])
        args = (c["lower"], c["upper"], c["c0"], c["base"], c["n0"], c["offsets"], c["ppc"], c["cpp"])
        got = _load(a, c["name"], *args, swizzle=c["swizzle"], oob_fill=c["fill"])
        want = reference(a, *args, np.nan if c["fill"] != "NONE" else 0)
        assert _equal(got, want), c


def _wider_box(m: np.ndarray) -> None:
    m[58:59].view("<i1")[0] += 1  # upper corner W + 1 (rank 4: word 14 bits 16..23, hardware layout)


def _as_tiled(m: np.ndarray) -> None:
    """The im2col bit (word 2 bit 0) and the pixels word cleared: a well-formed tiled map (hardware layout)."""
    m[8] &= 0xFE
    m[60:64] = 0


def _no_offsets(monkeypatch: pytest.MonkeyPatch) -> None:
    real = ops_bulk._im2col_offsets
    monkeypatch.setattr(ops_bulk, "_im2col_offsets", lambda *a: [o * 0 for o in real(*a)])


def test_planted_faults_are_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison has teeth: a map whose upper W corner is one larger (the traversal wraps a pixel later), and
    a VM that ignores the im2col offsets, both land other data than the reference."""
    a = np.random.default_rng(4).integers(0, 1000, size=(2, 5, 6, 16)).astype(np.uint16)
    args = ([-1, -1], [-1, -1], 0, [3, 1], 0, [1, 2], 40, 16)
    want = reference(a, *args, 0)
    assert _equal(_load(a, "UINT16", *args), want)
    assert not _equal(_load(a, "UINT16", *args, tamper=_wider_box), want)
    _no_offsets(monkeypatch)
    assert not _equal(_load(a, "UINT16", *args), want)


def test_refusals_name_the_rule() -> None:
    """A filter base outside the box and offsets past the rank's range are errors the launch reports; a tiled map
    in an im2col copy likewise; the encoder refuses an empty box."""
    a = np.zeros((1, 4, 4, 16), dtype=np.uint16)
    with pytest.raises(vm.LaunchError, match="outside the bounding box"):
        _load(a, "UINT16", [0, 0], [0, 0], 0, [4, 0], 0, [0, 0], 4, 16)
    with pytest.raises(vm.LaunchError, match="im2col offsets"):
        _load(a, "UINT16", [0, 0], [0, 0], 0, [0, 0], 0, [256, 0], 4, 16)
    with pytest.raises(vm.LaunchError, match="not im2col"):
        _load(a, "UINT16", [0, 0], [0, 0], 0, [0, 0], 0, [0, 0], 4, 16,
              tamper=_as_tiled)
    with pytest.raises(TensorMapError, match="empty"):
        encode_im2col("UINT16", 4, 0x100, [16, 4, 4, 1], [32, 128, 512], [2, 0], [-2, 0], 16, 4)


def test_map_layout_and_c_library_agree() -> None:
    """The im2col fields sit where the VM reads them (decode), and libvmcuda writes the same bytes."""
    m = encode_im2col("FLOAT16", 5, 0x200, [32, 6, 5, 4, 2], [64, 384, 1920, 7680], [-1, -2, 0], [1, 0, -3], 32,
                      100, swizzle="64B", oob_fill="NAN_REQUEST_ZERO_FMA")
    tm = TensorMap.decode(m)
    assert (tm.mode, tm.channels, tm.pixels, tm.lower, tm.upper, tm.fill, tm.rank, tm.elemtype) == (
        1, 32, 100, [-1, -2, 0], [1, 0, -3], 1, 5, 6)
    try:
        lib = libvmcuda.load()
    except libvmcuda.Unavailable:
        pytest.skip("no C compiler")
    from mmacts.ptxvm.host.test_libvmcuda import c_im2col
    r, raw = c_im2col(lib, 6, 5, 0x200, [32, 6, 5, 4, 2], [64, 384, 1920, 7680], [-1, -2, 0], [1, 0, -3], 32, 100,
                      [1] * 5, 0, 2, 0, 1)
    assert r == 0 and raw == m.tobytes()


def test_kernel_author_api() -> None:
    """``vm.tensormap_im2col``: corners in the array's D/H/W order, the same map as the driver-style call."""
    a = np.random.default_rng(6).integers(0, 1000, size=(2, 5, 6, 16)).astype(np.uint16)
    g = vm.asarray(a)
    tm = vm.tensormap_im2col(g, (-2, -1), (-1, 0), 16, 40, swizzle="32B")
    want = encode_im2col("UINT16", 4, g.base, [16, 6, 5, 2], [32, 192, 960], [-1, -2], [0, -1], 16, 40,
                         swizzle="32B")
    assert tm.get().tobytes() == want.tobytes()
    v = vm.tensormap_im2col(g, (-2, -1), (-1, 0), 16, 40, swizzle="32B", by_value=True)
    assert isinstance(v, np.void) and v.tobytes() == want.tobytes()
