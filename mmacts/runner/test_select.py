"""Exact selection (``--rows``, ``--arch``) and ``mmacts list`` previewing exactly what ``mmacts run`` runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mmacts.core.records import read_jsonl
from mmacts.runner import cli
from mmacts.runner.fake_suite import EndedProcess

SMOKE = ("--level", "smoke")



def _list(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, list[str], str]:
    rc = cli.main(["list", *argv])
    cap = capsys.readouterr()
    ids = [line.split("\t")[0] for line in cap.out.splitlines()
           if line and not line.startswith("#") and "\t" in line and line.split("\t")[0][:1] not in "TS"]
    return rc, ids, cap.err


def test_rows_are_exact_where_k_matches_substrings(capsys: pytest.CaptureFixture) -> None:
    rc, by_k, err = _list(capsys, *SMOKE, "-k", "T39.1")
    assert rc == 0 and len(by_k) > 1
    assert "-k T39.1 also selects T39.13" in err and "--rows T39.1 selects exactly" in err
    rc, by_rows, err = _list(capsys, *SMOKE, "--rows", "T39.1")
    assert rc == 0 and by_rows == ["compile.tcgen05.mma.cta_group1.kind_f16/sm_100a/accept"] and err == ""
    rc, by_table, _ = _list(capsys, *SMOKE, "--rows", "T39")  # a whole table
    assert set(by_k) <= set(by_table)
    rc, _, err = _list(capsys, "--level", "standard", "-k", "e4m3")
    assert "-k e4m3 also selects ue4m3" in err and "-k 'e4m3 and not ue4m3'" in err


def test_arch_rows_and_k_combine(capsys: pytest.CaptureFixture) -> None:
    rc, ids, _ = _list(capsys, "--suite", "compile", "--level", "standard", "--arch", "sm_103a,sm_110a",
                       "--rows", "T39.1", "-k", "accept")
    assert rc == 0 and ids and all(("/sm_103a/" in i or "/sm_110a/" in i) and i.endswith("/accept") for i in ids)
    out_head = cli.main(["list", "--suite", "compile", "--level", "standard", "--arch", "sm_103a", "--rows-only"])
    assert out_head == 0 and "selected by --arch sm_103a" in capsys.readouterr().out


@pytest.mark.parametrize("argv,words", [
    (["--rows", "T39.1x"], "--rows: 'T39.1x' is not a spec row"),
    (["--arch", "sm100a"], "--arch: 'sm100a' is not a target"),
    (["--arch", "sm_100"], "--arch sm_100: no case targets it"),
    (["--rows", "T99.1"], "--rows T99.1: no case cites it"),
    (["-k", "T37.2 and ("], "-k 'T37.2 and (' is not a valid expression"),
    (["--suite", "descriptors", "-k", "nothing_has_this"], "-k 'nothing_has_this' selects no case"),
])
def test_bad_selection_is_one_line(capsys: pytest.CaptureFixture, tmp_path: Path, argv: list[str],
                                   words: str) -> None:
    for cmd in (["list", *SMOKE], ["run", *SMOKE, "--backend", "model", "--out", str(tmp_path)]):
        rc = cli.main([*cmd, *argv])
        err = capsys.readouterr().err
        assert rc == 2 and words in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
        assert not any(tmp_path.iterdir()), "nothing may be started or written"


def test_list_previews_exactly_what_run_runs(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    sel = ["--suite", "descriptors", *SMOKE, "-k", "not canonical", "--rows", "T40.8,T42", "--arch", "sm_100a"]
    rc, listed, _ = _list(capsys, *sel)
    assert rc == 0 and len(listed) == 3
    assert cli.main(["run", *sel, "--backend", "model", "-n", "2", "--out", str(tmp_path)]) == 0
    (run_dir,) = tmp_path.iterdir()
    ran = [r["case_id"] for r in read_jsonl(run_dir / "results.jsonl")]
    assert sorted(ran) == sorted(listed)
    opts = json.loads((run_dir / "run.json").read_text())["options"]
    assert opts["rows"] == ["T40.8", "T42"] and opts["arch"] == ["sm_100a"] and opts["k"] == "not canonical"


def test_resume_keeps_the_selection(capsys: pytest.CaptureFixture, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[list[str]] = []
    monkeypatch.setattr(cli, "_start", lambda argv, env: calls.append(list(argv)) or EndedProcess())
    assert cli.main(["run", "--suite", "descriptors", *SMOKE, "--backend", "model", "--rows", "T40.8",
                     "--arch", "sm_100a", "--out", str(tmp_path)]) == 0
    (run_dir,) = tmp_path.iterdir()
    assert cli.main(["run", "--resume", str(run_dir)]) == 0
    for argv in calls:
        assert "--mmacts-rows=T40.8" in argv and "--mmacts-arch=sm_100a" in argv
        assert "mmacts.runner.select_plugin" in argv


# ------------------------------------------------------------------------ caselists and fractions
STANDARD_DESC = ("--suite", "descriptors", "--level", "standard")


def test_caselist_selects_exactly_its_ids_in_list_and_run(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    rc, every, _ = _list(capsys, *STANDARD_DESC)
    assert rc == 0 and len(every) > 20
    chosen = [every[3], every[0], every[17]]
    cl = tmp_path / "nightly.txt"
    cl.write_text("# the nightly list\n" + "\n".join(chosen) + "\n\n")
    rc, listed, _ = _list(capsys, *STANDARD_DESC, "--caselist", str(cl))
    assert rc == 0 and sorted(listed) == sorted(chosen)
    assert cli.main(["run", *STANDARD_DESC, "--backend", "model", "--caselist", str(cl),
                     "--out", str(tmp_path / "r")]) == 0
    (run_dir,) = (tmp_path / "r").iterdir()
    assert sorted(r["case_id"] for r in read_jsonl(run_dir / "results.jsonl")) == sorted(chosen)
    assert json.loads((run_dir / "run.json").read_text())["options"]["caselist"] == str(cl.resolve())


def test_fractions_partition_the_cases_and_keep_the_mandatory_ones(capsys: pytest.CaptureFixture,
                                                                    tmp_path: Path) -> None:
    rc, every, _ = _list(capsys, *STANDARD_DESC)
    must = tmp_path / "must.txt"
    must.write_text(f"{every[0]}\n{every[1]}\n")
    parts = []
    for i in range(3):
        rc, ids, _ = _list(capsys, *STANDARD_DESC, "--fraction", f"{i}/3")
        assert rc == 0 and 0 < len(ids) < len(every)
        parts.append(set(ids))
    assert set().union(*parts) == set(every) and sum(map(len, parts)) == len(every)  # disjoint, complete
    for i in range(3):
        rc, ids, _ = _list(capsys, *STANDARD_DESC, "--fraction", f"{i}/3", "--mandatory", str(must))
        assert set(ids) == parts[i] | {every[0], every[1]}


def test_fraction_and_caselist_reach_the_test_process(capsys: pytest.CaptureFixture, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[list[str]] = []
    monkeypatch.setattr(cli, "_start", lambda argv, env: calls.append(list(argv)) or EndedProcess())
    rc, every, _ = _list(capsys, *STANDARD_DESC)
    must = tmp_path / "must.txt"
    must.write_text(every[0] + "\n")
    assert cli.main(["run", *STANDARD_DESC, "--backend", "model", "--fraction", "1/4", "--mandatory", str(must),
                     "--out", str(tmp_path / "r")]) == 0
    (run_dir,) = (tmp_path / "r").iterdir()
    assert cli.main(["run", "--resume", str(run_dir)]) == 0  # a resume keeps them
    for argv in calls:
        assert "--mmacts-fraction=1/4" in argv and f"--mmacts-mandatory={must.resolve()}" in argv


@pytest.mark.parametrize("content,extra,words", [
    ("no.such/case\n", [], "'no.such/case' is no case of suites descriptors"),
    ("# nothing\n", [], "lists no case"),
    (None, ["--fraction", "3/3"], "--fraction 3/3: part 3 is outside 0..2"),
    (None, ["--fraction", "half"], "--fraction must be I/N"),
    (None, ["--fraction", "0/0"], "--fraction 0/0: N must be at least 1"),
])
def test_bad_caselist_or_fraction_is_one_line(capsys: pytest.CaptureFixture, tmp_path: Path, content: str | None,
                                              extra: list[str], words: str) -> None:
    argv = list(extra)
    if content is not None:
        (tmp_path / "cl.txt").write_text(content)
        argv += ["--caselist", str(tmp_path / "cl.txt")]
    for cmd in (["list", *STANDARD_DESC], ["run", *STANDARD_DESC, "--backend", "model", "--out", str(tmp_path / "o")]):
        rc = cli.main([*cmd, *argv])
        err = capsys.readouterr().err
        assert rc == 2 and words in err and len(err.strip().splitlines()) == 1, err
        assert not (tmp_path / "o").exists()


def test_list_prints_coverage_per_feature_as_comments(capsys: pytest.CaptureFixture,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 26 item 3: per feature, whether a failing mutant proves it, an observation alone saw it, or nothing;
    a feature whose mutant only changed an observation is not listed as proved."""
    from mmacts.report import mutant_features

    doc = {"mutants": [{"name": "shift-vm.rows-up", "killed": True, "how": "observed", "killers": ["c.shift"]},
                       {"name": "collector-vm.ws-buffers-as-b0", "killed": True, "how": "fail",
                        "killers": ["c.ws"]}], "rows": {}}
    monkeypatch.setattr(mutant_features, "load_coverage", lambda: doc)
    rc, ids, _ = _list(capsys, *SMOKE, "--rows", "T39.1")
    assert rc == 0 and ids == ["compile.tcgen05.mma.cta_group1.kind_f16/sm_100a/accept"]  # features are no cases
    cli.main(["list", *SMOKE, "--rows", "T39.1"])
    out = capsys.readouterr().out.splitlines()
    feats = {ln.split("\t")[0].removeprefix("# feature "): ln.split("\t")[1:] for ln in out
             if ln.startswith("# feature ")}
    assert feats["shift.down"] == ["observed-only", "0/1/1", "c.shift"]
    assert feats["collector.ws-buffers"] == ["can-fail", "1/0/1", "c.ws"]
    assert feats["collector.a"] == ["none", "0/0/0", "-"] and len(feats) == 14
    assert out[-1] == "# 1 of 14 features a failing mutant proves can fail, 1 observed-only (shift.down), 12 none " \
        "(" + " ".join(k for k, v in feats.items() if v[0] == "none") + ")"
    monkeypatch.setattr(mutant_features, "load_coverage", lambda: None)
    cli.main(["list", *SMOKE, "--rows", "T39.1", "--rows-only"])
    assert capsys.readouterr().out.splitlines()[-1] == \
        "# coverage per feature: no mutation results (mmacts/mutants/coverage.json) yet"
