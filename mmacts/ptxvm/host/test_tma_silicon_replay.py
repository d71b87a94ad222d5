"""The VM against silicon's shared-memory images of TMA loads (probe ``validation/probes/tma-smem-rows``, H200,
2026-11-25): every load that ran leaves the same 32 KB of shared memory, byte for byte (the 0xEE prefill where
nothing landed included), and every load that trapped is refused. The probe's cases (tile boxes with rows
narrower than the swizzle span, inner starts on and off 16 bytes, and the tma-im2col run's faulted and differing
im2col cases) are rebuilt by the probe's own ``plan``; the maps come from the project's encoder."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[3]
RECORD = ROOT / "validation" / "probes" / "tma-smem-rows" / "h200-2026-11-25"


def _probe() -> ModuleType:
    spec = importlib.util.spec_from_file_location("tma_smem_rows", RECORD.parent / "probe.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclass looks its module up
    spec.loader.exec_module(mod)
    return mod


ROWS = json.loads((RECORD / "result.json").read_text())


@pytest.fixture(scope="module")
def probe() -> ModuleType:
    return _probe()


@pytest.fixture(scope="module")
def images() -> dict[str, np.ndarray]:
    with np.load(RECORD / "images.npz") as z:
        return {k: z[k] for k in z.files}


@pytest.mark.parametrize("row", ROWS, ids=[f"case{r['idx']}-{r['mode']}" for r in ROWS])
def test_vm_leaves_silicons_shared_image(row: dict, probe: ModuleType, images: dict[str, np.ndarray]) -> None:
    c = {k: row[k] for k in ("mode", "src", "dt", "swizzle", "shape", "box", "coords", "c0", "idx") if k in row}
    if row["mode"] == "im2col":
        c = {k: c[k] for k in ("mode", "src", "idx", "c0") if k in c and (k != "c0" or row["src"] in (0, 1))}
    status, img = probe.on_vm(c)
    if row["status"] != "ok":
        assert "illegal instruction" in row["message"] and "is not a multiple of 16 bytes" in status, status
        return
    assert status == "ok", status
    silicon = images[f"img{row['idx']}"]
    assert img[probe.WINDOW:].view(np.uint32)[0] == row["mbarrier_completed"] == 1
    differ = np.flatnonzero(img[:probe.WINDOW] != silicon)
    assert differ.size == 0, f"{differ.size} bytes differ, first at {differ[:8]}"
