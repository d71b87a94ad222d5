"""``mmacts explain`` debugs: tcgen05 descriptors field by field in hex, memory images summarised,
every section capped, ``--run`` shows got vs want with a mismatch map."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mmacts.compare.mismatch_map import compact, render
from mmacts.core.records import append_jsonl, empty_record
from mmacts.report.runinfo import SCHEMA
from mmacts.runner import cli
from mmacts.runner.explain import cap

CASE = "mxf8f6f4.block32.cg1.dense.M128N40.e4m3xe5m2.ue8m0.sfa0sfb1.cp"


def test_cap_says_what_was_cut() -> None:
    text = cap("x" * 1000 + "\n" + "\n".join(map(str, range(500))), max_lines=10, max_chars=50)
    lines = text.splitlines()
    assert len(lines) == 11 and "950 more characters cut" in lines[0] and "491 more lines cut" in lines[-1]


def test_mismatch_map_of_a_column_fault() -> None:
    want = np.ones((128, 40), np.float32)
    got = want.copy()
    got[:, 3] = 2.0
    mm = compact(got != want, got, want)
    assert mm["cols_bad"] == 1 and mm["rows_bad"] == 128 and len(json.dumps(mm)) < 4000
    text = render(mm)
    assert "(0, 3) got=2.0 (0x40000000) want=1.0 (0x3f800000)" in text
    grid = [ln.split()[-1] for ln in text.splitlines() if ln[:5].strip().isdigit()]
    assert all(row == "...X" + "." * 36 for row in grid)


def test_explain_tcgen05_decodes_and_shows_the_run(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    want = np.zeros((128, 40), np.float32)
    mask = np.zeros_like(want, bool)
    mask[5, :] = True
    rec = empty_record(case_id=CASE, suite="tcgen05_blockscale", status="fail", backend="cuda", mismatches=40,
                       first_mismatch="(5, 0) got=1.0 (0x3f800000) want=0.0 (0x00000000)")
    rec["mismatch_map"] = compact(mask, want + mask, want)
    append_jsonl(tmp_path / "results.jsonl", rec)
    (tmp_path / "run.json").write_text(json.dumps({"schema": SCHEMA, "complete": True, "counts": {"fail": 1}}))
    assert cli.main(["explain", CASE, "--run", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "idesc = 0x088a0410 (kind::mxf8f6f4)" in out
    assert "bits  4- 5  sfb_id         raw 0x1  -> 1" in out
    assert "A smem descriptor = 0x" in out and "swizzle        128B" in out
    assert "SFB tmem = 0x00000140 (lane 0, column 320)" in out and "tcgen05.cp 1" in out
    assert "shared-memory image" in out and "non-zero byte ranges" in out
    assert "columns holding poison 0xffffffff" in out
    assert "mismatch map (recorded by the run)" in out and "1 rows and 40 columns touched" in out
    assert max(len(ln) for ln in out.splitlines()) < 400 and len(out) < 60_000


def test_explain_run_without_the_case(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text(json.dumps({"schema": SCHEMA}))
    (tmp_path / "results.jsonl").write_text("")
    assert cli.main(["explain", CASE, "--run", str(tmp_path)]) == 2
    assert "has no record of" in capsys.readouterr().err
