"""``mmacts predict``: reproduces all six published files through the command, and bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from reference import predict
from reference import published as P

FILES = [("B200", "fp32", "hmma_fp8_emulation", True), ("B200", "fp16", "hmma_fp8_emulation", True),
         ("H100", "fp16", "hmma_fp8_emulation", True), ("H200", "fp16", "hmma_fp8_emulation", True),
         ("H100", "fp32", "hopper_wgmma_fp8", False), ("H200", "fp32", "hopper_wgmma_fp8", False)]


def _path(gpu: str, name: str) -> Path:
    return P.DATA_DIR / gpu / "E4M3" / f"{name}.txt.gz"


@pytest.mark.parametrize("gpu,out,model,with_c", FILES)
def test_predict_reproduces_published(gpu: str, out: str, model: str, with_c: bool, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    c = _path(gpu, f"c_{gpu}_fp32")
    if not with_c:  # wgmma files were measured with C = 0
        c = tmp_path / "zero.txt"
        c.write_text("0" * 32 + "\n" + ("0" * 32 + "\n") * 4999)
    rc = predict.main(["predict", "--model", model, "--format", "e4m3", "--a", str(_path(gpu, f"a_{gpu}_E4M3")),
                       "--b", str(_path(gpu, f"b_{gpu}_E4M3")), "--c", str(c), "--out-format", out])
    got = capsys.readouterr().out.splitlines()
    want = P.open_text(_path(gpu, f"d_{gpu}_{out}")).split()
    assert rc == 0
    assert len(got) == len(want) == 5000
    assert sum(g == w for g, w in zip(got, want, strict=True)) == 5000


def test_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert predict.main(["--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    names = [ln.split("\t")[0] for ln in lines]
    assert "hmma_fp8_emulation" in names and "hopper_wgmma_fp8" in names
    assert all(len(ln.split("\t")) == 2 and ln.split("\t")[1] for ln in lines)


def _files(tmp_path: Path, a: str, b: str, c: str) -> list[str]:
    for n, t in (("a", a), ("b", b), ("c", c)):
        (tmp_path / n).write_text(t)
    return ["--a", str(tmp_path / "a"), "--b", str(tmp_path / "b"), "--c", str(tmp_path / "c")]


ONE = "3f800000 " * 32 + "\n"
C0 = "0" * 32 + "\n"


@pytest.mark.parametrize("args,files", [
    (["--model", "nope", "--format", "e4m3"], (ONE, ONE, C0)),
    (["--format", "e4m3"], (ONE, ONE, C0)),
    (["--model", "exact_rne", "--format", "e4m3"], (ONE, ONE, C0 + C0)),
    (["--model", "exact_rne", "--format", "e4m3"], ("3f800001 " * 32 + "\n", ONE, C0)),
    (["--model", "exact_rne", "--format", "e4m3"], ("zz " * 32 + "\n", ONE, C0)),
    (["--model", "exact_rne", "--format", "e4m3"], (ONE, ONE, "0102\n")),
    (["--model", "exact_rne", "--format", "e9m9"], (ONE, ONE, C0)),
    (["--model", "exact_rne", "--format", "e4m3", "--out-format", "fp8"], (ONE, ONE, C0)),
])
def test_bad_input_one_line_exit_2(args: list[str], files: tuple[str, str, str], tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert predict.main(args + _files(tmp_path, *files)) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and len(cap.err.strip().splitlines()) == 1 and "error" in cap.err


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--model", "exact_rne", "--format", "e4m3", "--a", str(tmp_path / "nope"), "--b", "x", "--c", "y"]
    assert predict.main(args) == 2
    assert "cannot read" in capsys.readouterr().err


def test_small_prediction(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 32 * 1*1 + 0 = 32 = 0x42000000
    assert predict.main(["--model", "hmma_fp8_emulation", "--format", "e4m3"] + _files(tmp_path, ONE, ONE, C0)) == 0
    assert capsys.readouterr().out == format(0x42000000, "032b") + "\n"
