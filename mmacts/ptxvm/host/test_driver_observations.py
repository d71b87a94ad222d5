"""The real driver's answers, pinned: calls of the probe ``validation/probes/tma-im2col`` whose CUresult the real
``cuTensorMapEncodeTiled`` / ``cuTensorMapEncodeIm2col`` (driver 580.159.04, CUDA 13.0, on an H100) gave, copied
from its log (2026-11-25), where the encoders' first reading of ``cuda.h`` disagreed or a rule's boundary lies.

Why: the rules these calls decided are not in ``cuda.h`` (a box-bytes limit, im2col channel rows of 16 bytes, the
globalDim bounds) or contradict it (interleave 32B with any swizzle), so nothing else would notice if an encoder
drifted back to the header's text. Each rule has a planted fault that makes some observation disagree. The H100 is
sm_90: it refuses the sm_100-only swizzles and packed types, which the encoders accept as the sm_100a device the VM
emulates would; :func:`refused_before_sm100` must predict those refusals."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from mmacts.ptxvm.host import libvmcuda, tensormap
from mmacts.ptxvm.host.tensormap import TensorMapError, encode_im2col, encode_tiled, refused_before_sm100
from mmacts.ptxvm.host.test_libvmcuda import HAVE_CC, _planted, same

_T3 = dict(data_type=7, rank=3, global_address=0x100, global_dim=[64, 8, 4], global_strides=[256, 2048],
           box_dim=[32, 2, 1], element_strides=[1, 1, 1])
OBSERVED: list[tuple[str, str, int, dict]] = [  # (rule, kind, driver CUresult on the H100, arguments)
    ("globalDim", "tiled", 0, {**_T3, "global_dim": [64, 2**31 + 1, 4]}),
    ("globalDim", "im2col", 1, dict(data_type=4, rank=3, global_address=65552, global_dim=[256, 2**31 + 1, 220],
                                    global_strides=[1472, 1216], element_strides=[1, 1, 1], interleave=0, swizzle=0,
                                    pixel_box_lower_corner=[0], pixel_box_upper_corner=[-1], channels_per_pixel=16,
                                    pixels_per_column=1024)),
    ("interleave32", "tiled", 0, {**_T3, "interleave": 2, "swizzle": 3}),
    ("interleave32", "im2col", 0, dict(data_type=6, rank=3, global_address=65568, global_dim=[256, 299, 68],
                                       global_strides=[896, 1536], element_strides=[1, 1, 6], interleave=2, swizzle=2,
                                       pixel_box_lower_corner=[-2], pixel_box_upper_corner=[-2], channels_per_pixel=128,
                                       pixels_per_column=128)),
    ("box-bytes", "tiled", 0, dict(data_type=7, rank=3, global_address=65552, global_dim=[128, 238, 242],
                                   global_strides=[544, 1536], element_strides=[1, 8, 2], interleave=1, swizzle=2,
                                   oob_fill=1, box_dim=[64, 80, 183])),  # 235,520 bytes
    ("box-bytes", "tiled", 0, dict(data_type=6, rank=3, global_address=65552, global_dim=[256, 15, 57],
                                   global_strides=[1152, 1600], element_strides=[4, 1, 1], oob_fill=1,
                                   box_dim=[32, 128, 78])),  # 159,744 with elementStrides[0] = 4, 638,976 without
    ("box-bytes", "tiled", 1, dict(data_type=6, rank=3, global_address=65552, global_dim=[256, 91, 225],
                                   global_strides=[1888, 1248], element_strides=[1, 1, 4], swizzle=3,
                                   box_dim=[16, 229, 137])),  # 256,480 bytes
    ("box-bytes", "im2col", 0, dict(data_type=2, rank=4, global_address=65568, global_dim=[256, 99, 230, 252],
                                    global_strides=[1536, 192, 832], element_strides=[1, 1, 1, 1], interleave=2,
                                    swizzle=1, pixel_box_lower_corner=[-2, -1], pixel_box_upper_corner=[-1, 0],
                                    channels_per_pixel=32, pixels_per_column=1024)),  # 131,072 bytes
    ("box-bytes", "im2col", 1, dict(data_type=7, rank=4, global_address=65568, global_dim=[256, 274, 254, 264],
                                    global_strides=[800, 1216, 1504], element_strides=[1, 1, 1, 1], swizzle=1,
                                    pixel_box_lower_corner=[-1, -1], pixel_box_upper_corner=[-1, 0],
                                    channels_per_pixel=64, pixels_per_column=1024)),  # 262,144 bytes
    ("channel-row", "im2col", 1, dict(data_type=0, rank=4, global_address=65536, global_dim=[128, 182, 189, 294],
                                      global_strides=[1344, 928, 1408], element_strides=[1, 6, 4, 4], interleave=2,
                                      swizzle=1, pixel_box_lower_corner=[-2, 0], pixel_box_upper_corner=[0, -1],
                                      channels_per_pixel=8, pixels_per_column=1)),  # 8-byte rows
    ("sm90", "tiled", 1, {**_T3, "data_type": 0, "global_dim": [128], "rank": 1, "global_strides": [],
                          "box_dim": [64], "element_strides": [1], "swizzle": 5}),
    ("sm90", "tiled", 1, dict(data_type=13, rank=2, global_address=65552, global_dim=[128, 194], global_strides=[1024],
                              element_strides=[1, 1], swizzle=6, l2_promotion=1, box_dim=[32, 92])),
    ("sm90", "im2col", 1, dict(data_type=7, rank=5, global_address=65568, global_dim=[256, 135, 229, 74, 39],
                               global_strides=[544, 640, 1920, 704], element_strides=[4, 1, 1, 1, 1], interleave=2,
                               swizzle=6, pixel_box_lower_corner=[0, -2, -2], pixel_box_upper_corner=[-2, -2, 0],
                               channels_per_pixel=16, pixels_per_column=1)),
]


def predicted(kind: str, args: dict, sm90: bool = True) -> int:
    """The CUresult the encoders predict for the driver on an sm_90 device (or, ``sm90=False``, on sm_100a)."""
    if sm90 and refused_before_sm100(args["data_type"], args.get("swizzle", 0)):
        return 1
    try:
        (encode_tiled if kind == "tiled" else encode_im2col)(**args)
    except TensorMapError:
        return 1
    return 0


def _mismatches() -> list[tuple[str, str, int]]:
    return [(rule, kind, real) for rule, kind, real, args in OBSERVED if predicted(kind, args) != real]


@pytest.mark.parametrize("rule, kind, real, args", OBSERVED, ids=[f"{o[0]}-{o[1]}-{o[2]}-{i}" for i, o in
                                                                   enumerate(OBSERVED)])
def test_the_encoders_predict_the_h100_driver(rule: str, kind: str, real: int, args: dict) -> None:
    assert predicted(kind, args) == real, rule
    if rule == "sm90":
        assert predicted(kind, args, sm90=False) == 0  # the sm_100a model accepts what sm_90 lacks


@pytest.mark.skipif(not HAVE_CC, reason="no C compiler (cc/gcc) to build libvmcuda")
def test_the_c_library_agrees_on_every_observation() -> None:
    lib = libvmcuda.load()
    for rule, kind, _, args in OBSERVED:
        full = {"element_strides": [1] * args["rank"], **args}
        assert same(lib, kind, full)[1], (rule, args)


def _no_interleave_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    init = tensormap._Common.__init__

    def strict(self: tensormap._Common, *a: object, **k: object) -> None:
        init(self, *a, **k)
        if self.il == "32B" and self.sw != "32B":
            raise TensorMapError("interleave 32B requires swizzle 32B")

    monkeypatch.setattr(tensormap._Common, "__init__", strict)


def _rows_rounded_to_16(monkeypatch: pytest.MonkeyPatch) -> None:
    row = tensormap._Common.row_bytes
    monkeypatch.setattr(tensormap._Common, "row_bytes", lambda self, n: -(-row(self, n) // 16) * 16)


PLANTS: dict[str, Callable[[pytest.MonkeyPatch], None]] = {
    "globalDim 2^31 everywhere (cuda.h's text)":
        lambda m: m.setattr(tensormap, "GLOBAL_DIM_MAX", {"tiled": 2**31, "im2col": 2**31}),
    "globalDim 2^32 everywhere": lambda m: m.setattr(tensormap, "GLOBAL_DIM_MAX", {"tiled": 2**32, "im2col": 2**32}),
    "interleave 32B requires swizzle 32B (cuda.h's text)": _no_interleave_rule,
    "box-bytes limit 256 KiB": lambda m: m.setattr(tensormap, "BOX_BYTES_MAX", 256 * 1024),
    "box-bytes limit 227 KiB (max shared memory per block)": lambda m: m.setattr(tensormap, "BOX_BYTES_MAX", 232448),
    "no box-bytes limit": lambda m: m.setattr(tensormap, "BOX_BYTES_MAX", 2**62),
    "channel rows rounded up to 16 bytes": _rows_rounded_to_16,
    "sm_90 refuses nothing": lambda m: m.setattr(tensormap, "SM100_ONLY_SWIZZLES", ()),
}


@pytest.mark.parametrize("plant", PLANTS.values(), ids=PLANTS.keys())
def test_a_planted_rule_fault_disagrees_with_the_driver(monkeypatch: pytest.MonkeyPatch,
                                                        plant: Callable[[pytest.MonkeyPatch], None]) -> None:
    assert not _mismatches()
    plant(monkeypatch)
    assert _mismatches()


def test_box_bytes_boundary_and_element_strides() -> None:
    """The limit is inclusive and counts ceil(boxDim / elementStrides) elements in every dimension of a tiled box,
    dimension 0 included; an im2col box is channelsPerPixel x pixelsPerColumn whatever elementStrides[0] says."""
    limit = tensormap.BOX_BYTES_MAX
    args = dict(data_type="FLOAT32", rank=3, global_address=0x100, global_dim=[64, 8, 4], global_strides=[256, 2048])
    encode_tiled(**args, box_dim=[32, limit // 128 // 8, 8])
    with pytest.raises(TensorMapError, match="the box moves"):
        encode_tiled(**args, box_dim=[32, limit // 128 // 8 + 1, 8])
    encode_tiled(**args, box_dim=[32, 256, 12], element_strides=[2, 1, 1])  # 64 * 256 * 12 bytes (128 * ... without)
    im2col = dict(data_type="FLOAT16", rank=3, global_address=0x100, global_dim=[128, 8, 4],
                  global_strides=[256, 2048], pixel_box_lower_corner=[0], pixel_box_upper_corner=[0],
                  channels_per_pixel=128, pixels_per_column=1024)
    with pytest.raises(TensorMapError, match="the box moves 262144 bytes"):
        encode_im2col(**im2col, element_strides=[2, 1, 1])
    encode_im2col(**{**im2col, "pixels_per_column": 960})


def test_refused_before_sm100_names_the_features() -> None:
    assert refused_before_sm100("16U6_ALIGN16B", "NONE") and refused_before_sm100(7, 4)
    assert refused_before_sm100("FLOAT32", "128B") is None and refused_before_sm100(99, 0) is None
    assert all(refused_before_sm100(7, s) for s in (4, 5, 6))


C_PLANTS = [  # (pattern in vmcuda.c, replacement): one driver-observed rule broken each
    (r"#define BOX_BYTES_MAX \(240u", "#define BOX_BYTES_MAX (256u"),
    (r"tensorRank, 1ull << 32\}", "tensorRank, 1ull << 31}"),
    (r"if \(row % 16\)", "if (row % 8)"),
]


@pytest.mark.skipif(not HAVE_CC, reason="no C compiler (cc/gcc) to build libvmcuda")
@pytest.mark.parametrize("pattern, repl", C_PLANTS)
def test_a_planted_c_rule_fault_disagrees_on_an_observation(tmp_path: Path, pattern: str, repl: str) -> None:
    lib = _planted(tmp_path, "vmcuda.c", pattern, repl)
    full = [(kind, {"element_strides": [1] * args["rank"], **args}) for _, kind, _, args in OBSERVED]
    assert not all(same(lib, kind, args)[1] for kind, args in full)
