"""``device_run.py`` without a GPU: CuPy and the CUDA runtime replaced by the VM, so the script's own logic
(arguments by kind, 0xFF-filled outputs, the repeat check, stop-and-resume after a poisoned context) is
pinned here; only the CUDA calls themselves are left for the H100."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from mmacts.validation.fuzz_tc import build as B
from mmacts.validation.fuzz_tc import device_run
from mmacts.validation.fuzz_tc import records as R


class _VmRuntime:
    """The calls device_run makes on ``cuda_runtime.Runtime``, served by the VM."""

    def __init__(self, ptx_by_cubin: dict[bytes, str], fault: set[str]) -> None:
        self.ptx_by_cubin, self.fault, self.poisoned = ptx_by_cubin, fault, ""
        from mmacts.ptxvm import load_module

        self.rt = load_module(".version 8.7\n.target sm_90a\n.address_size 64\n", "sm_90a").rt

    def load(self, cubin: bytes):
        from mmacts.ptxvm import load_module

        return load_module(self.ptx_by_cubin[cubin], "sm_90a")

    def to_device(self, a):
        return self.rt.to_device(a)

    def empty(self, shape, dtype):
        return self.rt.empty(shape, dtype)

    def to_host(self, d):
        return self.rt.to_host(d)

    def launch(self, mod, entry, grid, block, args, *, shared_mem=0, timeout_s=None):
        from mmacts.backends.cuda_runtime import LaunchOutcome

        key = next((k for k in self.fault if k in mod.ptx), None)
        if key:  # planted: this kernel faults and poisons the context, once
            self.fault.discard(key)
            self.poisoned = "illegal instruction (planted)"
            return LaunchOutcome("error", None, self.poisoned)
        mod.rt.gmem = self.rt.gmem  # one device memory for the buffers and the module
        res = mod.launch(entry, grid, block, args, shared_mem=shared_mem)
        return LaunchOutcome(res.status, 1.0, res.message)


@pytest.fixture()
def fake_gpu(monkeypatch, tmp_path: Path):
    from mmacts.toolchain.locate import ptxas_version

    try:
        ptxas_version()
    except Exception as exc:  # pragma: no cover -- a host without the nvidia wheels
        pytest.skip(f"no ptxas: {exc}")
    build = tmp_path / "build"
    B.build(str(build), [13], 6)
    man = json.loads((build / "manifest.json").read_text())
    ptx = {(build / "cubin" / f"{la['id']}.cubin").read_bytes(): (build / "ptx" / f"{la['id']}.ptx").read_text()
           for la in man["launches"]}
    fault: set[str] = set()  # module texts whose launch is planted to fault
    fake_cupy = types.SimpleNamespace(__version__="fake", cuda=types.SimpleNamespace(
        Device=lambda: types.SimpleNamespace(synchronize=lambda: None)))
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy)
    from mmacts.backends import cuda_runtime as cr

    info = types.SimpleNamespace(name="fake", compute_capability=(9, 0), driver_version=0, runtime_version=0)
    monkeypatch.setattr(cr, "probe", lambda *a: info)
    monkeypatch.setattr(cr, "Runtime", lambda *a, **k: _VmRuntime(ptx, fault))
    return build, man, fault


def test_device_run_records_what_the_vm_computes(fake_gpu, tmp_path: Path) -> None:
    build, man, _ = fake_gpu
    device_run.main(str(build), str(tmp_path / "out"))
    dev = json.loads((tmp_path / "out" / "device.json").read_text())
    assert [dev["launches"][la["id"]]["status"] for la in man["launches"]] == ["ok"] * 6
    assert all(dev["launches"][la["id"]]["repeat_identical"] for la in man["launches"])
    rec = B.store(str(build), str(tmp_path / "out"), str(tmp_path / "rec" / "fake-gpu"))
    n, fails = B.replay_summary(rec)
    assert n == 6 and not fails, fails


def test_device_run_stops_on_a_poisoned_context_and_resumes(fake_gpu, tmp_path: Path) -> None:
    """Planted fault: launch 2 poisons the context; the script exits 3 after recording it, a second run
    records the rest without re-running the first three."""
    build, man, fault = fake_gpu
    target = (build / "ptx" / f"{man['launches'][2]['id']}.ptx").read_text()
    fault.add(target)  # the whole module text: unique to that launch
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as exc:
        device_run.main(str(build), str(out))
    assert exc.value.code == 3
    dev = json.loads((out / "device.json").read_text())
    ids = [la["id"] for la in man["launches"]]
    assert list(dev["launches"]) == ids[:3] and dev["launches"][ids[2]]["status"] == "error"
    device_run.main(str(build), str(out))
    dev = json.loads((out / "device.json").read_text())
    assert [dev["launches"][i]["status"] for i in ids] == ["ok", "ok", "error", "ok", "ok", "ok"]
    rec = B.store(str(build), str(out), str(tmp_path / "rec" / "fake-gpu"))
    assert [r.id for r in R.recorded_launches(rec)] == ids[:2] + ids[3:]
    assert np.load(rec / "data.npz")[f"out/{ids[0]}/d"].dtype == np.uint32
