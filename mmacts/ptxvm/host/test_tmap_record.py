"""Both host encoders against the real driver: for every call the H200 driver encoded
(``validation/probes/tmap-bytes/h200-2026-11-25``: 408 tiled and im2col maps, single-field variations and a seeded
sweep) the Python encoder and ``libvmcuda`` write the driver's 128 bytes exactly. This pins the hardware layout on
the host side; ``mmacts/ptxvm/test_tma_hw_layout.py`` pins the VM's reading of the same record."""

from __future__ import annotations

import json
import lzma
from pathlib import Path

import pytest

from mmacts.ptxvm.host import encode_im2col, encode_tiled, libvmcuda

RECORD = Path(__file__).resolve().parents[3] / "validation/probes/tmap-bytes/h200-2026-11-25/maps.jsonl.xz"


def encoded() -> list[dict]:
    """The record's calls the driver encoded (the refused ones are the tma-im2col probe's business)."""
    with lzma.open(RECORD, "rt") as fh:
        return [r for r in map(json.loads, fh) if r["result"] == 0]


def _full(args: dict) -> dict:
    """The call's arguments with the enums the probe left at their defaults spelled out (C takes every one)."""
    return {"interleave": 0, "swizzle": 0, "l2_promotion": 0, "oob_fill": 0, **args}


def test_the_record_holds_every_encoded_call() -> None:
    recs = encoded()
    assert len(recs) == 408 and {r["kind"] for r in recs} == {"tiled", "im2col"}


def test_python_encoder_writes_the_drivers_bytes() -> None:
    diff = [(r["kind"], r["args"]) for r in encoded()
            if (encode_tiled if r["kind"] == "tiled" else encode_im2col)(**r["args"]).tobytes().hex() != r["bytes"]]
    assert not diff, f"{len(diff)} of 408 maps differ from the driver's, first: {diff[0]}"


def test_libvmcuda_writes_the_drivers_bytes() -> None:
    try:
        lib = libvmcuda.load()
    except libvmcuda.Unavailable as e:
        pytest.skip(str(e))
    from mmacts.ptxvm.host.test_libvmcuda import c_im2col, c_tiled

    diff = []
    for r in encoded():
        rc, raw = (c_tiled if r["kind"] == "tiled" else c_im2col)(lib, **_full(r["args"]))
        if rc != 0 or raw.hex() != r["bytes"]:
            diff.append((r["kind"], r["args"], rc))
    assert not diff, f"{len(diff)} of 408 maps differ from the driver's, first: {diff[0]}"
