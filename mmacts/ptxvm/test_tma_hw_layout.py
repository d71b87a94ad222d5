"""The VM reads tensor maps in the hardware layout: every map the real driver encoded (H200, 408 calls in
``validation/probes/tmap-bytes/h200-2026-11-25``) decodes to the call's own arguments, ``tensormap.replace`` on a
zeroed map writes the driver's bits, a CuTe DSL map (hardware layout, built by the DSL's own host code) reads as the
fp4 operand it describes, and bits the VM does not know are refused by name."""

from __future__ import annotations

import json
import lzma
from pathlib import Path

import numpy as np
import pytest

from mmacts.ptxvm.errors import VmUnsupported
from mmacts.ptxvm.ops_bulk import TensorMap, _replace_bits

RECORD = Path(__file__).resolve().parents[2] / "validation/probes/tmap-bytes/h200-2026-11-25/maps.jsonl.xz"
PTX_ELEMTYPE = {0: 0, 1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7, 8: 9, 9: 10, 10: 8, 11: 11, 12: 12}
"""Driver data type -> PTX elemtype (the two orders differ at FLOAT64 / BFLOAT16 / FLOAT32_FTZ)."""
DSL_FP4_MAP = ("0000001000000000a26504000800000000080000000000000000000000000000ff000000ff0000000000000000000000"
               "00000000000000ff7f000000" + "00" * 68)
"""Operand A's map as CuTe DSL 4.2.1's host code wrote it for dense_blockscaled_gemm_persistent.py (256 x 256 x 256,
Float4E2M1FN, A at 0x10000000): word 2 bit 1 set, type code 11, no derived words."""


def encoded() -> list[dict]:
    with lzma.open(RECORD, "rt") as fh:
        return [r for r in map(json.loads, fh) if r["result"] == 0]


def _raw(hexed: str) -> np.ndarray:
    return np.frombuffer(bytes.fromhex(hexed), dtype=np.uint8)


def _fields(tm: TensorMap, rank: int, kind: str) -> dict:
    out = {"rank": tm.rank, "global_address": tm.address, "data_type": tm.elemtype, "global_dim": tm.dims[:rank],
           "global_strides": tm.strides[:rank - 1], "element_strides": tm.estride[:rank], "interleave": tm.interleave,
           "swizzle": tm.swizzle, "oob_fill": tm.fill, "im2col": tm.mode}
    if kind == "tiled":
        out["box_dim"] = tm.box[:rank]
    else:
        out.update(channels_per_pixel=tm.channels, pixels_per_column=tm.pixels, pixel_box_lower_corner=tm.lower,
                   pixel_box_upper_corner=tm.upper)
    return out


def _want(r: dict) -> dict:
    a = {"interleave": 0, "swizzle": 0, "oob_fill": 0, **r["args"]}
    keys = ("box_dim",) if r["kind"] == "tiled" else (
        "channels_per_pixel", "pixels_per_column", "pixel_box_lower_corner", "pixel_box_upper_corner")
    return {"rank": a["rank"], "global_address": a["global_address"], "data_type": PTX_ELEMTYPE[a["data_type"]],
            "global_dim": a["global_dim"], "global_strides": a["global_strides"],
            "element_strides": a["element_strides"], "interleave": a["interleave"], "swizzle": a["swizzle"],
            "oob_fill": a["oob_fill"], "im2col": int(r["kind"] == "im2col"), **{k: a[k] for k in keys}}


def test_every_driver_map_decodes_to_its_call() -> None:
    recs = encoded()
    bad = [(r["args"], _fields(TensorMap.decode(_raw(r["bytes"])), r["args"]["rank"], r["kind"]))
           for r in recs if _fields(TensorMap.decode(_raw(r["bytes"])), r["args"]["rank"], r["kind"]) != _want(r)]
    assert len(recs) == 408 and not bad, f"{len(bad)} maps misread, first: {bad[0] if bad else None}"


def _replaced(r: dict) -> int:
    """A zeroed map filled by ``tensormap.replace`` with the call's fields (the PTX values: rank - 1, elemtype)."""
    a = {"interleave": 0, "swizzle": 0, "oob_fill": 0, **r["args"]}
    bits = 0
    steps = [("global_address", 0, a["global_address"]), ("rank", 0, a["rank"] - 1),
             ("elemtype", 0, PTX_ELEMTYPE[a["data_type"]]), ("interleave_layout", 0, a["interleave"]),
             ("swizzle_mode", 0, a["swizzle"]), ("fill_mode", 0, a["oob_fill"])]
    for name in ("global_dim", "element_stride", "box_dim"):
        steps += [(name, i, v) for i, v in enumerate(a[name + "s" if name == "element_stride" else name])]
    steps += [("global_stride", i, v) for i, v in enumerate(a["global_strides"])]
    for name, ordn, value in steps:
        bits = _replace_bits(bits, name, ordn, int(value), None)  # type: ignore[arg-type]
    return bits


def test_tensormap_replace_writes_the_drivers_bits() -> None:
    """Every field ``tensormap.replace`` names lands where the driver puts it: the replaced map equals the driver's
    bytes but for what replace cannot set (L2 promotion, the derived box-bytes and swizzle-repeat words)."""
    ignore = (3 << 81) | (0xFFFFFFFF << 512) | (0xFFFFFFFF << 576)
    bad = []
    for r in encoded():
        if r["kind"] != "tiled":
            continue
        want = int.from_bytes(bytes.fromhex(r["bytes"]), "little")
        if _replaced(r) != want & ~ignore:
            bad.append(r["args"])
    assert not bad, f"{len(bad)} replaced maps differ from the driver's, first: {bad[0]}"


def test_a_cute_dsl_map_reads_as_its_fp4_operand() -> None:
    tm = TensorMap.decode(_raw(DSL_FP4_MAP))
    assert (tm.address, tm.rank, tm.elemtype, tm.swizzle) == (0x10000000, 3, 13, 3)  # .b4x16, 128B swizzle
    assert tm.dims[:3] == [256, 256, 1] and tm.strides[:2] == [128, 32768] and tm.box[:3] == [256, 128, 1]


@pytest.mark.parametrize("word, bit", [(2, 2), (2, 23), (15, 12), (17, 0), (31, 31)])
def test_unknown_bits_are_refused_by_name(word: int, bit: int) -> None:
    raw = _raw(encoded()[0]["bytes"]).copy()
    raw.view("<u4")[word] |= np.uint32(1 << bit)
    with pytest.raises(VmUnsupported, match=f"word {word} mask"):
        TensorMap.decode(raw)
