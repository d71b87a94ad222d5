"""``mmacts repro``: the folder has every file; its launch.py, run against the PTX VM standing in for CuPy,
says match on the expected bytes and mismatch when one is flipped; launch.cpp compiles (nvcc -c)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from mmacts.runner.cli import main as cli_main

HOPPER = "hopper.mma_sync.m16n8k32.f32.e4m3xe4m3/exact-s0"
BLOCKSCALE = "mma_sync.m16n8k32.mxf8f6f4.1X.ue8m0/e4m3xe4m3/bida0-tida0-bidb0-tidb0/exact"
TCGEN05 = "mxf8f6f4.omitted.cg1.dense.M128N64.e4m3xe4m3.ue8m0.sfa0sfb0.st"
NVCC = Path(sys.prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages" \
    / "nvidia" / "cu13" / "bin" / "nvcc"


def _fake_cupy() -> types.ModuleType:
    """Just the CuPy calls launch.py makes, served by the PTX VM (it loads kernel.ptx beside the cubin)."""
    from mmacts.ptxvm import load_module

    cp = types.ModuleType("cupy")
    state: dict = {}

    class Arr:
        def __init__(self, host: np.ndarray) -> None:
            self.dev = state["vm"].rt.to_device(host)

        def get(self) -> np.ndarray:
            return state["vm"].rt.to_host(self.dev)

    class RawModule:
        def __init__(self, path: str) -> None:
            folder = Path(path).parent
            spec = json.loads((folder / "launch.json").read_text())
            state["vm"] = load_module((folder / spec["ptx"]).read_text(), spec["arch"])

        def get_function(self, entry: str):  # noqa: ANN202
            def fn(grid, block, args, shared_mem=0):  # noqa: ANN001, ANN202
                args = [a.dev if isinstance(a, Arr) else a for a in args]
                res = state["vm"].launch(entry, grid, block, args, shared_mem=shared_mem)
                if res.status != "ok":
                    raise RuntimeError(f"VM launch {res.status}: {res.message}")
            return fn

    cp.RawModule, cp.asarray = RawModule, Arr
    return cp


def _launcher(folder: Path) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(f"repro_launch_{abs(hash(str(folder)))}", folder / "launch.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("case_id", [HOPPER, BLOCKSCALE, TCGEN05])
def test_folder_launch_py_matches_and_catches_a_flipped_byte(case_id, tmp_path, monkeypatch, capsys):
    out = tmp_path / "r"
    assert cli_main(["repro", case_id, "--out", str(out)]) == 0
    spec = json.loads((out / "launch.json").read_text())
    assert spec["expected_verified"] is True and spec["case_id"] == case_id
    outs = [p for p in spec["params"] if p["kind"] == "out"]
    ins = [p for p in spec["params"] if p["kind"] == "in"]
    assert outs and ins
    names = {"kernel.ptx", "kernel.cubin", "launch.json", "launch.py", "launch.cpp", "README.txt", "reference.txt",
             *(p["file"] for p in ins), *(p["expected"] for p in outs)}
    assert names <= {f.name for f in out.iterdir()}
    assert (out / "kernel.cubin").read_bytes()[:4] == b"\x7fELF"
    assert all((out / p["file"]).stat().st_size == p["nbytes"] for p in ins)
    for f in ("launch.py", "launch.cpp"):
        assert len((out / f).read_text().splitlines()) < 100
    assert "-lcuda" in (out / "README.txt").read_text()
    for p in outs:  # the kernel writes its outputs: the expected buffer is not the 0xFF fill
        assert set((out / p["expected"]).read_bytes()) != {0xFF}
    if case_id != TCGEN05:  # mma.sync / wgmma: every output word is written
        assert 0xFFFFFFFF not in np.frombuffer((out / outs[0]["expected"]).read_bytes(), "<u4")
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy())
    launch = _launcher(out)
    capsys.readouterr()
    assert launch.main([str(out)]) == 0
    assert "match: every output" in capsys.readouterr().out
    # planted fault: the launch's last scalar (the case count) zeroed -> the kernel writes nothing -> exit 1
    scalar = spec["params"][-1]
    if case_id != TCGEN05:  # (its launch has no scalar)
        spec_text = (out / "launch.json").read_text()
        assert scalar["kind"] == "scalar" and scalar["value"] == 1
        bad = dict(spec, params=[*spec["params"][:-1], dict(scalar, bytes_hex="00000000")])
        (out / "launch.json").write_text(json.dumps(bad))
        assert launch.main([str(out)]) == 1
        assert "got 0xffffffff" in capsys.readouterr().out
        (out / "launch.json").write_text(spec_text)
    # planted fault: one expected byte flipped -> exit 1, got vs want in hex
    want = out / outs[0]["expected"]
    data = bytearray(want.read_bytes())
    data[5] ^= 0x01
    want.write_bytes(bytes(data))
    assert launch.main([str(out)]) == 1
    text = capsys.readouterr().out
    assert "MISMATCH" in text and "1 of" in text and "word 1 (byte 4): got 0x" in text


def test_compare_lines():
    spec = importlib.util.spec_from_file_location("repro_launch_t", Path(__file__).with_name("repro_launch.py"))
    launch = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(launch)
    a = np.arange(4, dtype="<u4").tobytes()
    b = bytearray(a)
    b[8] = 0xAB
    assert launch.compare(0, a, a) == []
    assert launch.compare(3, bytes(b), a) == ["output 3: 1 of 4 32-bit words differ",
                                              "  word 2 (byte 8): got 0x000000ab want 0x00000002"]
    assert launch.compare(1, b"\x01\x02\x03", b"\x03\x02\x01")[0] == "output 1: 2 of 3 8-bit words differ"


@pytest.mark.parametrize("case_id, says", [
    ("no.such/case", "no case with id"),
    ("compile.tcgen05.mma.cta_group1.kind_f16/sm_100a/accept", "compile-only"),
    ("descriptors.smem_desc.T40.1.start-address", "record-level model"),
])
def test_refusals_one_line_exit_2(case_id, says, tmp_path, capsys):
    assert cli_main(["repro", case_id, "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip()
    assert says in err and "\n" not in err
    assert not (tmp_path / "r").exists()


def test_launch_cpp_compiles_with_nvcc(tmp_path):
    if not NVCC.exists():
        pytest.skip(f"nvcc not installed ({NVCC}): the nvidia-cuda-nvcc wheel is absent")
    out = tmp_path / "r"
    assert cli_main(["repro", HOPPER, "--out", str(out)]) == 0
    res = subprocess.run([str(NVCC), "-c", "-o", str(tmp_path / "launch.o"), "launch.cpp"], cwd=out,
                         capture_output=True, text=True)
    if res.returncode and "host compiler" in (res.stderr + res.stdout):
        pytest.skip(f"nvcc has no host compiler here: {res.stderr.strip()[:200]}")
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "launch.o").stat().st_size > 0


def test_run_record_copied(tmp_path, capsys):
    from mmacts.core.records import append_jsonl, empty_record
    from mmacts.report.runinfo import SCHEMA

    run = tmp_path / "run"
    run.mkdir()
    rec = empty_record(case_id=HOPPER, suite="hopper_validation", status="fail", backend="cuda", mismatches=1,
                       first_mismatch="(0, 0) got=1.0 (0x3f800000) want=0.0 (0x00000000)")
    append_jsonl(run / "results.jsonl", rec)
    (run / "run.json").write_text(json.dumps({"schema": SCHEMA, "complete": True, "counts": {"fail": 1}}))
    out = tmp_path / "r"
    assert cli_main(["repro", HOPPER, "--run", str(run), "--out", str(out)]) == 0
    got = json.loads((out / "run_record.json").read_text())
    assert got["status"] == "fail" and got["first_mismatch"].startswith("(0, 0) got=1.0")
    assert "run_record.json" in (out / "README.txt").read_text()
    assert cli_main(["repro", BLOCKSCALE, "--run", str(run), "--out", str(tmp_path / "r2")]) == 2
    assert "has no record of" in capsys.readouterr().err
