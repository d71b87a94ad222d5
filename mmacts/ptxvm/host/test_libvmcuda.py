"""``libvmcuda`` (C) against the Python encoder: two implementations of ``cuTensorMapEncodeTiled`` /
``cuTensorMapEncodeIm2col``, written apart, must give the same 128 bytes for every valid argument set and the same
CUresult for every invalid one. Enums go to both as the driver's integers, so neither side's name table is used
to check the other. Skipped only where no C compiler exists."""

from __future__ import annotations

import ctypes
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from mmacts.ptxvm.host import TensorMapError, encode_im2col, encode_tiled, libvmcuda

try:
    libvmcuda.compiler()
    HAVE_CC = True
except libvmcuda.Unavailable:
    HAVE_CC = False
pytestmark = pytest.mark.skipif(not HAVE_CC, reason="no C compiler (cc/gcc) to build libvmcuda")

CODES = {"CUDA_ERROR_INVALID_VALUE": 1, "CUDA_ERROR_NOT_SUPPORTED": 801}


def _arr(values: list[int] | None, ctype: type) -> object:
    return None if values is None else (ctype * max(len(values), 1))(*values)


def _mapbuf() -> tuple[np.ndarray, int]:
    """A zeroed 128-byte window, 64-byte aligned, inside a numpy buffer (what the driver requires of tensorMap)."""
    buf = np.zeros(256, dtype=np.uint8)
    off = -buf.ctypes.data % 64
    return buf[off:off + 128], buf.ctypes.data + off


def c_tiled(lib: ctypes.CDLL, data_type: int, rank: int, global_address: int, global_dim: list[int],
            global_strides: list[int], box_dim: list[int], element_strides: list[int], interleave: int = 0,
            swizzle: int = 0, l2_promotion: int = 0, oob_fill: int = 0) -> tuple[int, bytes]:
    win, ptr = _mapbuf()
    u32, u64 = ctypes.c_uint32, ctypes.c_uint64
    r = lib.cuTensorMapEncodeTiled(ptr, data_type, rank, global_address, _arr(global_dim, u64),
                                   _arr(global_strides, u64), _arr(box_dim, u32), _arr(element_strides, u32),
                                   interleave, swizzle, l2_promotion, oob_fill)
    return r, win.tobytes()


def c_im2col(lib: ctypes.CDLL, data_type: int, rank: int, global_address: int, global_dim: list[int],
             global_strides: list[int], pixel_box_lower_corner: list[int], pixel_box_upper_corner: list[int],
             channels_per_pixel: int, pixels_per_column: int, element_strides: list[int], interleave: int = 0,
             swizzle: int = 0, l2_promotion: int = 0, oob_fill: int = 0) -> tuple[int, bytes]:
    win, ptr = _mapbuf()
    u32, u64, i32 = ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int
    r = lib.cuTensorMapEncodeIm2col(ptr, data_type, rank, global_address, _arr(global_dim, u64),
                                    _arr(global_strides, u64), _arr(pixel_box_lower_corner, i32),
                                    _arr(pixel_box_upper_corner, i32), channels_per_pixel, pixels_per_column,
                                    _arr(element_strides, u32), interleave, swizzle, l2_promotion, oob_fill)
    return r, win.tobytes()


def py_result(encode: Callable[..., np.ndarray], args: dict) -> tuple[int, bytes]:
    try:
        return 0, encode(**args).tobytes()
    except TensorMapError as e:
        return CODES[e.result], bytes(128)


def same(lib: ctypes.CDLL, kind: str, args: dict) -> tuple[int, bool]:
    """(Python's CUresult, whether C agrees with it: the same code, and on success the same 128 bytes)."""
    cr, cb = (c_tiled if kind == "tiled" else c_im2col)(lib, **args)
    pr, pb = py_result(encode_tiled if kind == "tiled" else encode_im2col, args)
    return pr, cr == pr and (pr != 0 or cb == pb)


def _common_args(rng: np.random.Generator, rank: int) -> dict:
    """Random shared arguments, biased to be valid (most strides 16/32-aligned, few out-of-range values)."""
    dt = int(rng.integers(0, 16)) if rng.random() > 0.02 else int(rng.choice([16, -1]))
    il = int(rng.choice([0, 0, 0, 0, 1, 2]))
    sw = 1 if il == 2 and rng.random() < 0.8 else int(rng.integers(0, 7))
    dims = [int(rng.choice([128, 256])) if i == 0 else int(rng.integers(1, 300)) for i in range(rank)]
    if rng.random() < 0.03:
        dims[int(rng.integers(rank))] = int(rng.choice([0, 2**31, 2**31 + 1, 127]))
    strides = [int(rng.integers(1, 64)) * 32 for _ in range(rank - 1)]
    if rng.random() < 0.05 and strides:
        strides[0] += 16
    estr = [int(rng.integers(1, 9)) if rng.random() < 0.3 else 1 for _ in range(rank)]
    if rng.random() < 0.02:
        estr[-1] = int(rng.choice([0, 9]))
    return dict(data_type=dt, rank=rank, global_address=int(rng.choice([0x10000, 0x10010, 0x10020, 0x10008])),
                global_dim=dims, global_strides=strides, element_strides=estr, interleave=il, swizzle=sw,
                l2_promotion=int(rng.integers(0, 4)) if rng.random() > 0.02 else 4,
                oob_fill=int(rng.integers(0, 2)) if rng.random() > 0.02 else 2)


def test_tiled_sweep_c_equals_python() -> None:
    """Seeded sweep over rank, every data type (packed 4/6-bit included), swizzle, interleave, L2 promotion,
    OOB fill, dims, strides, box: the C library and the Python encoder agree on every call."""
    lib = libvmcuda.load()
    rng = np.random.default_rng(23)
    counts = {0: 0, 1: 0}
    seen: set[tuple[int, ...]] = set()
    for n in range(3000):
        rank = int(rng.integers(1, 6)) if rng.random() > 0.02 else int(rng.choice([0, 6]))
        args = _common_args(rng, max(rank, 1))
        args["rank"] = rank
        box = [int(rng.choice([16, 32, 64, 128])) if i == 0 else int(rng.integers(1, 257)) for i in range(max(rank,
                                                                                                          1))]
        if rng.random() < 0.03:
            box[-1] = int(rng.choice([0, 257]))
        args["box_dim"] = box
        r, ok = same(lib, "tiled", args)
        assert ok, (n, args)
        counts[r] += 1
        if r == 0:
            seen.add((args["data_type"], args["swizzle"], args["interleave"], args["oob_fill"]))
    assert counts[0] > 300 and counts[1] > 300, counts
    assert {s[0] for s in seen} == set(range(16)) and {s[1] for s in seen} == set(range(7))
    assert {s[2] for s in seen} == {0, 1, 2} and {s[3] for s in seen} == {0, 1}


def test_im2col_sweep_c_equals_python() -> None:
    lib = libvmcuda.load()
    rng = np.random.default_rng(24)
    counts = {0: 0, 1: 0}
    for n in range(2000):
        rank = int(rng.integers(3, 6)) if rng.random() > 0.03 else int(rng.choice([1, 2, 6]))
        args = _common_args(rng, max(rank, 1))
        args["rank"] = rank
        lim = {3: 32768, 4: 128, 5: 16}.get(rank, 8)
        nsp = max(rank - 2, 0)
        args["pixel_box_lower_corner"] = [int(rng.integers(-lim - 1, lim + 1)) if rng.random() < 0.1 else
                                          -int(rng.integers(0, 3)) for _ in range(nsp)]
        args["pixel_box_upper_corner"] = [int(rng.integers(-lim - 1, lim + 1)) if rng.random() < 0.1 else
                                          -int(rng.integers(0, 3)) for _ in range(nsp)]
        args["channels_per_pixel"] = int(rng.choice([16, 32, 64, 128, 8, 0, 257])) if rng.random() < 0.3 else 128
        args["pixels_per_column"] = int(rng.choice([1, 64, 128, 1024, 1025, 0]))
        r, ok = same(lib, "im2col", args)
        assert ok, (n, args)
        counts[r] += 1
    assert counts[0] > 200 and counts[1] > 200, counts


TILED = dict(data_type=7, rank=3, global_address=0x100, global_dim=[64, 8, 4], global_strides=[256, 2048],
             box_dim=[32, 2, 1], element_strides=[1, 1, 1])
BAD_TILED = [  # one invalid-argument class each (the driver's rules), applied to TILED
    dict(rank=0), dict(rank=6), dict(global_address=0x108), dict(global_address=0x110, interleave=2, swizzle=1),
    dict(global_dim=[64, 0, 4]), dict(global_dim=[64, 2**31 + 1, 4]), dict(global_strides=[264, 2048]),
    dict(global_strides=[256, 2**40]), dict(global_strides=[256, 2064], interleave=2, swizzle=1),
    dict(box_dim=[32, 0, 1]), dict(box_dim=[32, 257, 1]), dict(box_dim=[6, 2, 1]), dict(box_dim=[64, 2, 1], swizzle=2),
    dict(element_strides=[1, 9, 1]), dict(element_strides=[1, 0, 1]), dict(interleave=2, swizzle=3),
    dict(rank=2, global_dim=[64, 8], global_strides=[256], box_dim=[32, 2], element_strides=[1, 1], interleave=1),
    dict(data_type=3, oob_fill=1), dict(swizzle=7), dict(data_type=16), dict(interleave=3), dict(l2_promotion=4),
    dict(oob_fill=2), dict(data_type=14, global_dim=[64, 8, 4], box_dim=[128, 2, 1]),  # ALIGN16B: dim0 % 128
    dict(data_type=14, global_dim=[128, 8, 4], box_dim=[64, 2, 1]),  # ALIGN16B: box0 == 128
    dict(data_type=15, global_dim=[128, 8, 4], global_strides=[272, 2048], box_dim=[128, 2, 1]),  # stride % 32
    dict(data_type=14, global_dim=[128, 8, 4], box_dim=[128, 2, 1], global_address=0x110),  # address % 32
    dict(data_type=14, global_dim=[128, 8, 4], box_dim=[128, 2, 1], swizzle=2),  # swizzle not for ALIGN16B
    dict(data_type=14, global_dim=[128, 8, 4], box_dim=[128, 2, 1], swizzle=6),
    dict(data_type=15, global_dim=[128, 8, 4], box_dim=[128, 2, 1], interleave=1),
    dict(data_type=13, global_dim=[63, 8, 4], box_dim=[32, 2, 1]), dict(data_type=13, box_dim=[16, 2, 1]),
    dict(data_type=13, oob_fill=1),
]


@pytest.mark.parametrize("change", BAD_TILED, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()))
def test_every_invalid_tiled_class_gives_the_same_result(change: dict) -> None:
    lib = libvmcuda.load()
    assert same(lib, "tiled", TILED) == (0, True)
    r, ok = same(lib, "tiled", {**TILED, **change})
    assert (r, ok) == (1, True)
    assert lib.vmcudaLastRule()


IM2COL = dict(data_type=6, rank=4, global_address=0x100, global_dim=[64, 10, 9, 2], global_strides=[128, 1280,
              11520], pixel_box_lower_corner=[-1, -1], pixel_box_upper_corner=[-1, -1], channels_per_pixel=64,
              pixels_per_column=32, element_strides=[1, 1, 1, 1], swizzle=3)
BAD_IM2COL = [
    dict(rank=2, global_dim=[64, 10], global_strides=[128], element_strides=[1, 1], pixel_box_lower_corner=[],
         pixel_box_upper_corner=[]),
    dict(rank=6, global_dim=[64, 2, 2, 2, 2, 2], global_strides=[128] * 5, element_strides=[1] * 6,
         pixel_box_lower_corner=[0] * 4, pixel_box_upper_corner=[0] * 4),
    dict(pixel_box_lower_corner=[-129, 0]), dict(pixel_box_upper_corner=[0, 128]),
    dict(rank=5, global_dim=[64, 4, 4, 4, 2], global_strides=[128, 512, 2048, 8192], element_strides=[1] * 5,
         pixel_box_lower_corner=[-17, 0, 0], pixel_box_upper_corner=[0, 0, 0]),
    dict(rank=3, global_dim=[64, 4, 2], global_strides=[128, 512], element_strides=[1] * 3,
         pixel_box_lower_corner=[40000], pixel_box_upper_corner=[0]),
    dict(pixel_box_lower_corner=[5, 0], pixel_box_upper_corner=[-5, 0]),  # empty box in W
    dict(channels_per_pixel=0), dict(channels_per_pixel=257), dict(pixels_per_column=0), dict(pixels_per_column=1025),
    dict(channels_per_pixel=128),  # 256 bytes > 128B swizzle span
    dict(data_type=14, global_dim=[128, 10, 9, 2], channels_per_pixel=64, swizzle=0),  # ALIGN16B needs 128
    dict(global_address=0x108), dict(oob_fill=1, data_type=0), dict(element_strides=[1, 9, 1, 1]),
]


@pytest.mark.parametrize("change", BAD_IM2COL, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items())[:60])
def test_every_invalid_im2col_class_gives_the_same_result(change: dict) -> None:
    lib = libvmcuda.load()
    assert same(lib, "im2col", IM2COL) == (0, True)
    r, ok = same(lib, "im2col", {**IM2COL, **change})
    assert (r, ok) == (1, True)


def test_c_only_rules_and_stubs() -> None:
    """What only a pointer-taking API can get wrong: a tensorMap not 64-byte aligned or NULL, NULL arrays; and the
    stubs a host program calls (version 13000, error names and strings)."""
    lib = libvmcuda.load()
    buf = np.zeros(256, dtype=np.uint8)
    ptr = buf.ctypes.data + (-buf.ctypes.data % 64)
    u32, u64 = ctypes.c_uint32 * 3, ctypes.c_uint64 * 3
    args = (7, 3, 0x100, u64(64, 8, 4), u64(256, 2048), u32(32, 2, 1), u32(1, 1, 1), 0, 0, 0, 0)
    assert lib.cuTensorMapEncodeTiled(ptr, *args) == 0
    assert lib.cuTensorMapEncodeTiled(ptr + 32, *args) == 1 and "aligned" in lib.vmcudaLastRule().decode()
    assert lib.cuTensorMapEncodeTiled(None, *args) == 1
    assert lib.cuTensorMapEncodeTiled(ptr, *args[:5], None, *args[6:]) == 1
    v = ctypes.c_int()
    assert lib.cuDriverGetVersion(ctypes.byref(v)) == 0 and v.value == 13000
    s = ctypes.c_char_p()
    assert lib.cuGetErrorName(1, ctypes.byref(s)) == 0 and s.value == b"CUDA_ERROR_INVALID_VALUE"
    assert lib.cuGetErrorString(0, ctypes.byref(s)) == 0 and s.value == b"no error"
    assert lib.cuGetErrorName(12345, ctypes.byref(s)) == 1
    assert lib.cuInit(0) == 0


def _planted(tmp_path: Path, file: str, pattern: str, repl: str) -> ctypes.CDLL:
    for name in ("vmcuda.c", "vmcuda.h"):
        (tmp_path / name).write_text((libvmcuda.HERE / name).read_text())
    f = tmp_path / file
    text, n = re.subn(pattern, repl, f.read_text(), count=1)
    assert n == 1, pattern
    f.write_text(text)
    return libvmcuda.load(tmp_path / "vmcuda.c")


PLANTS = [  # (file, pattern, replacement): two enum values swapped
    ("vmcuda.c", r"\{0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 8,", "{0, 1, 2, 3, 4, 5, 6, 7, 10, 9, 8,"),  # FLOAT64 <-> BF16
    ("vmcuda.h", r"SWIZZLE_32B = 1,\n(\s*)CU_TENSOR_MAP_SWIZZLE_64B = 2",
     r"SWIZZLE_32B = 2,\n\1CU_TENSOR_MAP_SWIZZLE_64B = 1"),
    ("vmcuda.h", r"16U4_ALIGN8B = 13,\n(\s*)CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B = 14",
     r"16U4_ALIGN8B = 14,\n\1CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B = 13"),
]


@pytest.mark.parametrize("file, pattern, repl", PLANTS)
def test_a_planted_enum_swap_is_seen(tmp_path: Path, file: str, pattern: str, repl: str) -> None:
    """The comparison has teeth: the C library with two enum values swapped disagrees with Python somewhere in
    the sweep or the invalid classes."""
    lib = _planted(tmp_path, file, pattern, repl)
    rng = np.random.default_rng(23)
    cases = [("tiled", {**TILED, **c}) for c in BAD_TILED] + [("im2col", {**IM2COL, **c}) for c in BAD_IM2COL]
    for _ in range(600):
        rank = int(rng.integers(1, 6))
        args = {**_common_args(rng, rank), "box_dim": [int(rng.choice([16, 32, 64, 128]))] + [2] * (rank - 1)}
        cases.append(("tiled", args))
    assert all(same(libvmcuda.load(), kind, args)[1] for kind, args in cases)
    assert not all(same(lib, kind, args)[1] for kind, args in cases)


CXX_PROGRAM = r"""
#include <cuda.h>
#include "vmcuda.h"
#include <cstdio>
int main() {
    CUtensorMap map{};
    cuuint64_t dims[3] = {64, 8, 4}, strides[2] = {256, 2048};
    cuuint32_t box[3] = {32, 2, 1}, estr[3] = {1, 1, 1};
    CUresult r = cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3, (void *)0x100, dims, strides, box,
                                        estr, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                        CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    const unsigned char *b = reinterpret_cast<const unsigned char *>(&map);
    std::printf("%d ", (int)r);
    for (int i = 0; i < 128; i++) std::printf("%02x", b[i]);
    return 0;
}
"""


def test_a_cxx_host_program_links_it_instead_of_libcuda(tmp_path: Path) -> None:
    """The use it exists for: C++ compiled against the real ``cuda.h`` (from the CUDA wheel), linked with
    libvmcuda and no libcuda, gets the bytes the Python encoder writes."""
    import shutil
    import subprocess
    import sys

    gxx = shutil.which("g++")
    inc = [p for p in (Path(sys.prefix) / "lib").glob("python3*/site-packages/nvidia/cu*/include") if
           (p / "cuda.h").exists()]
    if not gxx or not inc:
        pytest.skip("needs g++ and the CUDA wheel's cuda.h")
    so = libvmcuda.build()
    (tmp_path / "p.cpp").write_text(CXX_PROGRAM)
    exe = tmp_path / "p"
    subprocess.run([gxx, "-std=c++17", f"-I{inc[0]}", f"-I{libvmcuda.HERE}", str(tmp_path / "p.cpp"), str(so),
                    f"-Wl,-rpath,{so.parent}", "-o", str(exe)], check=True, capture_output=True)
    r, hexmap = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split()
    want = encode_tiled(7, 3, 0x100, [64, 8, 4], [256, 2048], [32, 2, 1], [1, 1, 1], 0, 3, 2, 0)
    assert r == "0" and bytes.fromhex(hexmap) == want.tobytes()
