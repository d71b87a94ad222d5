"""The host tensor-map encoder against the VM: maps encoded here are decoded by the VM's ``TensorMap.decode`` and
drive real ``cp.async.bulk.tensor`` loads on the VM, which must land exactly the box this test computes from the
array (dense, innermost first, swizzled by shared address bits, out-of-bound elements zero or NaN)."""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pytest

from mmacts.ptxvm import api as vm
from mmacts.ptxvm.host import TensorMapError, encode_im2col, encode_tiled
from mmacts.ptxvm.ops_bulk import TensorMap


def _kernel(rank: int, im2col: bool = False) -> str:
    """Thread 0 issues one TMA load of the box at the parameter coordinates (im2col: then the rank - 2 ``.u16``
    offsets); after the mbarrier completes, the block's threads copy ``ncopy`` bytes of shared memory out."""
    coords = ", ".join(f"%r{10 + i}" for i in range(rank))
    loads = "\n".join(f"  ld.param.s32 %r{10 + i}, [c{i}];" for i in range(rank))
    params = "".join(f", .param .s32 c{i}" for i in range(rank))
    mode, tail = "tile", ""
    if im2col:
        loads += "\n" + "\n".join(f"  ld.param.u16 %rs{i + 1}, [o{i}];" for i in range(rank - 2))
        params += "".join(f", .param .u16 o{i}" for i in range(rank - 2))
        mode, tail = "im2col", ", {" + ", ".join(f"%rs{i + 1}" for i in range(rank - 2)) + "}"
    return f""".version 8.7
.target sm_100a
.address_size 64
.extern .shared .align 1024 .b8 smem[];
.visible .entry tma(.param .u64 tmap, .param .u64 out, .param .u32 nbytes, .param .u32 ncopy{params})
{{
  .reg .b32 %r<20>;
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
  setp.ne.u32 %p3, %r8, 0;
  @%p3 bra S;
  mbarrier.init.shared::cta.b64 [%r3], 1;
  mbarrier.arrive.expect_tx.shared::cta.b64 %rd3, [%r3], %r1;
  cp.async.bulk.tensor.{rank}d.shared::cluster.global.{mode}.mbarrier::complete_tx::bytes
      [%r2], [%rd1, {{{coords}}}], [%r3]{tail};
S:
  bar.sync 0;
W:
  mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r3], 0;
  @!%p1 bra W;
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


SWZ_BITS = {"NONE": 0, "32B": 1, "64B": 2, "128B": 3}
SPAN = {"NONE": 0, "32B": 32, "64B": 64, "128B": 128}
NAN_FILL_BITS = {2: 0x7FF7, 4: 0x7FF77FF7, 8: 0x7FF77FF77FF77FF7}
"""The OOB NaN fill as the H200 wrote it (probe ``validation/probes/tma-smem-rows``): 0x7FF7 in every 16 bits."""


def _positions(nbytes: int, row_bytes: int, swizzle: str) -> np.ndarray:
    """Where the box's bytes (rows of ``row_bytes``) land from shared offset 0: a swizzled map starts every row
    on a multiple of the swizzle span (probe ``tma-smem-rows``: rows narrower than the span are padded to it),
    then 16-byte chunk ``c`` of 128-byte line ``l`` moves to ``c ^ (l % 2^s)``."""
    i = np.arange(nbytes)
    pos = (i // row_bytes) * max(SPAN[swizzle], row_bytes) + i % row_bytes
    s = SWZ_BITS[swizzle]
    return pos ^ (((pos >> 7) & ((1 << s) - 1)) << 4)


def _expected(a: np.ndarray, box: list[int], coords: list[int], swizzle: str, nan_fill: bool) -> np.ndarray:
    """The shared image of the box at ``coords`` (dims innermost first) of the C-order array ``a``."""
    rank = a.ndim
    sub = np.zeros(tuple(reversed(box)), dtype=a.dtype)
    if nan_fill:
        sub.view(f"u{a.itemsize}")[...] = NAN_FILL_BITS[a.itemsize]
    src, dst = [], []
    for k in range(rank):  # numpy axis k is tensor dimension rank - 1 - k
        d = rank - 1 - k
        lo, hi = coords[d], coords[d] + box[d]
        clo, chi = max(lo, 0), min(hi, a.shape[k])
        src.append(slice(clo, max(chi, clo)))
        dst.append(slice(clo - lo, clo - lo + max(chi - clo, 0)))
    sub[tuple(dst)] = a[tuple(src)]
    raw = sub.reshape(-1).view(np.uint8)
    pos = _positions(raw.size, box[0] * a.itemsize, swizzle)
    img = np.zeros(_footprint(int(pos.max()) + 1), dtype=np.uint8)
    img[pos] = raw
    return img


def _footprint(nbytes: int) -> int:
    """Shared bytes a swizzled box can touch: its size rounded up to whole 1024-byte swizzle repeats."""
    return -(-nbytes // 1024) * 1024


def _same(got: np.ndarray, want: np.ndarray, nbytes: int, swizzle: str, row_bytes: int | None = None) -> bool:
    """Equal on the bytes the box lands on (the rest of the footprint is whatever shared memory held);
    ``row_bytes``: the box's inner row (default: one row, as for boxes whose row fills the span)."""
    pos = _positions(nbytes, row_bytes or nbytes, swizzle)
    return bool(np.array_equal(got[pos], want[pos]))


def _load(a: np.ndarray, dtype_name: str, box: list[int], coords: list[int], swizzle: str = "NONE",
          oob_fill: str = "NONE", plant: Callable[[np.ndarray], None] | None = None, **kw: object) -> np.ndarray:
    """Encode a map of ``a`` on the host, TMA-load the box at ``coords`` on the VM, return shared memory's bytes."""
    g = vm.asarray(a)
    dims = list(reversed(a.shape))
    strides = list(reversed(a.strides))[1:]
    m = encode_tiled(dtype_name, a.ndim, g.base, dims, strides, box, swizzle=swizzle, oob_fill=oob_fill, **kw)
    if plant is not None:
        plant(m)
    tm = vm.asarray(m)
    nbytes = int(np.prod(box)) * a.itemsize
    out = vm.zeros(_footprint(int(_positions(nbytes, box[0] * a.itemsize, swizzle).max()) + 1), np.uint8)
    k = vm.RawModule(code=_kernel(a.ndim), arch="sm_100a").get_function("tma")
    k(1, 128, (tm, out, nbytes, out.nbytes, *coords), shared_mem=out.nbytes)
    return out.get()


CASES = [  # (numpy dtype, driver type, shape (C order), box (innermost first), coords, swizzle)
    (np.float32, "FLOAT32", (64,), [32], [16], "NONE"),
    (np.float16, "FLOAT16", (40, 96), [64, 8], [32, 8], "128B"),
    (np.uint8, "UINT8", (6, 20, 64), [32, 4, 3], [32, 9, 2], "32B"),
    (np.float32, "FLOAT32", (5, 4, 12, 16), [16, 8, 2, 3], [0, 4, 1, 2], "64B"),
    (np.uint16, "UINT16", (3, 2, 4, 6, 40), [8, 4, 2, 2, 2], [24, 2, 1, 0, 1], "NONE"),
    (np.float64, "FLOAT64", (16, 32), [16, 4], [16, 12], "128B"),
    (np.uint16, "BFLOAT16", (24, 128), [64, 16], [64, 8], "128B"),
]


@pytest.mark.parametrize("npdt, name, shape, box, coords, swizzle", CASES)
def test_host_map_lands_the_box(npdt: type, name: str, shape: tuple[int, ...], box: list[int], coords: list[int],
                                swizzle: str) -> None:
    rng = np.random.default_rng(len(shape) * 7 + box[0])
    a = rng.integers(0, 250, size=shape).astype(npdt)
    got = _load(a, name, box, coords, swizzle)
    assert _same(got, _expected(a, box, coords, swizzle, False), int(np.prod(box)) * a.itemsize, swizzle)


@pytest.mark.parametrize("fill", ["NONE", "NAN_REQUEST_ZERO_FMA"])
def test_out_of_bound_box_is_filled(fill: str) -> None:
    a = np.random.default_rng(3).standard_normal((20, 24)).astype(np.float32)
    box, coords = [16, 8], [16, 16]  # 8 of 16 columns and 4 of 8 rows are outside
    got = _load(a, "FLOAT32", box, coords, "64B", oob_fill=fill)
    want = _expected(a, box, coords, "64B", fill != "NONE")
    assert _same(got, want, 16 * 8 * 4, "64B")
    if fill != "NONE":
        assert np.isnan(got[:512].view(np.float32)).sum() == 16 * 8 - 8 * 4


def test_driver_enum_order_is_translated() -> None:
    """Driver FLOAT64 = 8, BFLOAT16 = 9, FLOAT32_FTZ = 10 are PTX elemtype .f64 = 9, .bf16 = 10, .f32.ftz = 8; the
    128B atom swizzles are swizzle_mode 128B with an atomicity; integers and prefixed names are accepted."""
    base = dict(rank=2, global_address=0x100, global_dim=[32, 8], global_strides=[128], box_dim=[16, 4])
    assert [TensorMap.decode(encode_tiled(t, **base)).elemtype for t in (8, 9, 10)] == [9, 10, 8]
    assert TensorMap.decode(encode_tiled("CU_TENSOR_MAP_DATA_TYPE_FLOAT16", **base)).elemtype == 6
    tm = TensorMap.decode(encode_tiled("UINT8", 2, 0x100, [64, 8], [64], [64, 4], [1, 2], interleave=0,
                                       swizzle="128B_ATOM_32B_FLIP_8B", l2_promotion="L2_256B"))
    assert (tm.swizzle, tm.atomicity, tm.estride[:2], tm.rank) == (3, 2, [1, 2], 2)


BAD = [  # (kwargs changed from a valid rank-3 map, fragment of the rule)
    (dict(rank=0), "tensorRank 0"),
    (dict(rank=6), "tensorRank 6"),
    (dict(global_address=0x108), "16-byte aligned"),
    (dict(global_address=0x110, interleave="32B", swizzle="32B"), "32-byte aligned"),
    (dict(global_dim=[64, 0, 4]), "globalDim[1]"),
    (dict(global_dim=[64, 2**32 + 1, 4]), "globalDim[1]"),
    (dict(global_strides=[264, 2048]), "globalStrides[0]"),
    (dict(global_strides=[256, 2**40]), "globalStrides[1]"),
    (dict(global_strides=[256, 2064], interleave="32B", swizzle="32B"), "multiple of 32"),
    (dict(box_dim=[32, 0, 1]), "boxDim[1]"),
    (dict(box_dim=[32, 257, 1]), "boxDim[1]"),
    (dict(box_dim=[6, 2, 1]), "multiple of 16"),
    (dict(box_dim=[64, 2, 1], swizzle="64B"), "exceeds the 64-byte"),
    (dict(element_strides=[1, 9, 1]), "elementStrides[1]"),
    (dict(element_strides=[1, 0, 1]), "elementStrides[1]"),
    (dict(box_dim=[32, 241, 8]), "moves 246784 bytes"),
    (dict(rank=2, global_dim=[64, 8], global_strides=[256], box_dim=[32, 2], element_strides=None,
          interleave="16B"), "at least 3"),
    (dict(data_type="INT32", oob_fill="NAN_REQUEST_ZERO_FMA"), "floating-point"),
    (dict(swizzle=7), "swizzle 7"),
    (dict(data_type=16), "tensorDataType 16"),
    (dict(global_dim=[64, 8]), "globalDim has 2 entries"),
]


@pytest.mark.parametrize("change, rule", BAD)
def test_invalid_parameters_are_refused_like_the_driver(change: dict, rule: str) -> None:
    args = dict(data_type="FLOAT32", rank=3, global_address=0x100, global_dim=[64, 8, 4], global_strides=[256, 2048],
                box_dim=[32, 2, 1], element_strides=[1, 1, 1])
    encode_tiled(**args)
    args.update(change)
    with pytest.raises(TensorMapError, match=re.escape(rule)) as e:
        encode_tiled(**args)
    assert e.value.result == "CUDA_ERROR_INVALID_VALUE" and "\n" not in str(e.value)
    assert str(e.value).startswith("CUDA_ERROR_INVALID_VALUE: ")


def test_global_dim_limits() -> None:
    """CUDA 13's ``cuda.h`` bounds globalDim by 2^31 (12.x said 2^32); the real driver took 2^31 + 1 in a tiled map
    and refused it in an im2col map: tiled maps go to 2^32 (written as 0, read back as 2^32 by the VM), im2col maps
    to 2^31."""
    assert TensorMap.decode(encode_tiled("UINT8", 1, 0x100, [2**32], [], [16])).dims[0] == 2**32
    assert TensorMap.decode(encode_tiled("UINT8", 2, 0x100, [16, 2**31 + 1], [16], [16, 1])).dims[:2] == [16, 2**31 + 1]
    with pytest.raises(TensorMapError, match=re.escape("globalDim[0] = 4294967297")):
        encode_tiled("UINT8", 1, 0x100, [2**32 + 1], [], [16])
    im2col = dict(data_type="UINT8", rank=3, global_address=0x100, global_strides=[16, 2**36],
                  pixel_box_lower_corner=[0], pixel_box_upper_corner=[0], channels_per_pixel=16, pixels_per_column=8)
    encode_im2col(global_dim=[16, 2**31, 1], **im2col)
    with pytest.raises(TensorMapError, match=re.escape("globalDim[1] = 2147483649")):
        encode_im2col(global_dim=[16, 2**31 + 1, 1], **im2col)


def _swap_strides(m: np.ndarray) -> None:
    w = m[12:20].view("<u4")  # the first two global-stride words (hardware layout)
    w[:2] = w[1::-1].copy()


def _rank_plus_one(m: np.ndarray) -> None:
    m[8:12].view("<u4")[0] += 1 << 4  # rank - 1 sits in bits 4..6 of word 2


@pytest.mark.parametrize("plant", [_swap_strides, _rank_plus_one])
def test_a_planted_encoder_fault_is_seen(plant: Callable[[np.ndarray], None]) -> None:
    """The comparison has teeth: the stride words swapped, or the rank field off by one, in an encoded map
    make the VM land another box (or refuse the copy)."""
    a = np.random.default_rng(5).integers(0, 250, size=(5, 4, 12, 16)).astype(np.float32)
    box, coords = [16, 8, 2, 3], [0, 4, 1, 2]
    want = _expected(a, box, coords, "64B", False)
    n = int(np.prod(box)) * 4
    assert _same(_load(a, "FLOAT32", box, coords, "64B"), want, n, "64B")
    try:
        got = _load(a, "FLOAT32", box, coords, "64B", plant=plant)
    except vm.LaunchError:
        return
    assert not _same(got, want, n, "64B")


def test_kernel_author_api() -> None:
    """``vm.tensormap_tiled(array, box=..., swizzle=...)``: box in the array's axis order, the map in device memory
    (pointer form) or as a 128-byte ``numpy.void``; the load lands the same box as the driver-style call."""
    a = np.random.default_rng(9).integers(0, 250, size=(24, 4, 32)).astype(np.uint16)
    g = vm.asarray(a)
    tm = vm.tensormap_tiled(g, (2, 4, 32), swizzle="64B")
    dec = TensorMap.decode(tm.get())
    assert (dec.rank, dec.box[:3], dec.dims[:3], dec.strides[:2]) == (3, [32, 4, 2], [32, 4, 24], [64, 256])
    v = vm.tensormap_tiled(g, (2, 4, 32), swizzle="64B", by_value=True)
    assert isinstance(v, np.void) and v.tobytes() == tm.get().tobytes()
    out = vm.zeros(1024, np.uint8)
    vm.RawModule(code=_kernel(3)).get_function("tma")(1, 128, (tm, out, 512, 1024, 0, 0, 5), shared_mem=1024)
    assert _same(out.get(), _expected(a, [32, 4, 2], [0, 0, 5], "64B", False), 512, "64B")
    with pytest.raises(TensorMapError, match="exceeds the 32-byte span"):
        vm.tensormap_tiled(g, (2, 4, 32), swizzle="32B")
    with pytest.raises(TypeError, match="pass data_type"):
        vm.tensormap_tiled(vm.zeros(16, np.complex64), (16,))


@pytest.mark.parametrize("name, chunk", [("16U4_ALIGN8B", 8), ("16U4_ALIGN16B", 16)])
def test_packed_4_bit_box(name: str, chunk: int) -> None:
    """Packed 4-bit data (16 elements in 8 bytes): the inner dimension counts elements, strides are bytes; in
    shared memory every 8 data bytes take ``chunk`` bytes (``_ALIGN16B``: 8 bytes of padding the test skips)."""
    rows, cols = 8, 256  # elements; 128 bytes per row
    raw = np.random.default_rng(11).integers(0, 256, size=(rows, cols // 2)).astype(np.uint8)
    g = vm.asarray(raw)
    box, coords = [128, 4], [128, 2]
    m = encode_tiled(name, 2, g.base, [cols, rows], [cols // 2], box)
    nbytes = box[1] * box[0] // 16 * chunk
    out = vm.zeros(nbytes, np.uint8)
    k = vm.RawModule(code=_kernel(2)).get_function("tma")
    k(1, 128, (vm.asarray(m), out, nbytes // chunk * 8, nbytes, *coords), shared_mem=1024)
    data = out.get().reshape(-1, chunk)[:, :8].reshape(box[1], -1)
    assert np.array_equal(data, raw[2:6, 64:128])


def test_random_maps_and_boxes() -> None:
    """Seeded sweep: random rank, element size, shape, swizzle, box and coordinates (negative and past the end
    included), each load equal to the box computed from the array."""
    rng = np.random.default_rng(2026)
    types = [(np.uint8, "UINT8"), (np.float16, "FLOAT16"), (np.float32, "FLOAT32"), (np.float64, "FLOAT64")]
    for _ in range(12):
        npdt, name = types[rng.integers(len(types))]
        es = np.dtype(npdt).itemsize
        rank = int(rng.integers(1, 6))
        swizzle = ["NONE", "32B", "64B", "128B"][rng.integers(4)]
        span = {"NONE": 256, "32B": 32, "64B": 64, "128B": 128}[swizzle]
        inner = int(rng.integers(1, min(span, 256 * es) // 16 + 1)) * 16 // es  # elements, 16-byte multiple
        box = [inner] + [int(rng.integers(1, 4)) for _ in range(rank - 1)]
        row = int(rng.integers(1, 5)) * 16 // es * 2  # inner extent keeps every stride a multiple of 16 bytes
        shape = tuple(int(rng.integers(1, 5)) for _ in range(rank - 1))[::-1] + (max(row, inner),)
        coords = [int(rng.integers(-b, d + 1)) for b, d in zip(box, reversed(shape), strict=True)]
        coords[0] -= coords[0] % max(1, 16 // es)  # silicon traps on an inner start off 16 bytes
        a = rng.integers(0, 100, size=shape).astype(npdt)
        fill = "NAN_REQUEST_ZERO_FMA" if npdt != np.uint8 and rng.integers(2) else "NONE"
        got = _load(a, name, box, coords, swizzle, oob_fill=fill)
        want = _expected(a, box, coords, swizzle, fill != "NONE")
        assert _same(got, want, int(np.prod(box)) * a.itemsize, swizzle, inner * es), (name, shape, box, coords,
                                                                                         swizzle, fill)


@pytest.mark.parametrize("swizzle", ["32B", "64B", "128B"])
def test_rows_narrower_than_the_span_start_on_it(swizzle: str) -> None:
    """A box row of 16 bytes under a wider swizzle: each of the 10 rows starts on a multiple of the span (the
    H200 put all 78 swizzled boxes of probe ``tma-smem-rows`` so), not right after the previous row."""
    a = (np.arange(24 * 80, dtype=np.uint16) + 1).reshape(24, 80)
    box, coords = [8, 10], [8, 3]
    got = _load(a, "UINT16", box, coords, swizzle)
    assert _same(got, _expected(a, box, coords, swizzle, False), 160, swizzle, 16)


def test_inner_start_off_16_bytes_is_refused() -> None:
    """Silicon traps (illegal instruction) when the innermost coordinate is not a 16-byte multiple: 3 of 16-bit
    data (6 bytes) is refused by name; 8 (16 bytes) and -8 load."""
    a = np.ones((24, 80), dtype=np.uint16)
    for ok in (8, -8):
        _load(a, "UINT16", [16, 10], [ok, 3])
    with pytest.raises(vm.LaunchError, match=r"innermost coordinate 3 \(6 bytes\) is not a multiple of 16 bytes"):
        _load(a, "UINT16", [16, 10], [3, 3])
