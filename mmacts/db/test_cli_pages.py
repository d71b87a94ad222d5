"""``mmacts db`` on the command line, and its pages opened in headless Chromium."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from mmacts.db.cli import main
from mmacts.db.test_store import _load_fleet


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        found = shutil.which(name)
        if found:
            return found
    if os.environ.get("MMACTS_REQUIRE_DB") == "1":
        pytest.fail("no chromium on PATH and MMACTS_REQUIRE_DB=1 (Debian: apt-get install chromium)", pytrace=False)
    pytest.skip("no headless Chromium (Debian: apt-get install chromium)")


def dump_dom(page: Path, tmp: Path) -> str:
    """The DOM after load, as headless Chromium builds and lays it out (inline scripts run)."""
    res = subprocess.run([_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                          "--no-first-run", f"--user-data-dir={tmp / 'chromium-profile'}", "--virtual-time-budget=5000",
                          "--dump-dom", page.resolve().as_uri()], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-1500:]
    return res.stdout


def test_cli_ingest_status_and_pages(compile_run, tmp_path, capsys):
    db = str(tmp_path / "s.duckdb")
    assert main(["ingest", str(compile_run), "--db", db]) == 0
    assert main(["ingest", str(compile_run), "--db", db]) == 0
    out = capsys.readouterr().out
    assert out.count("added") == 1 and out.count("skipped") == 1
    assert main(["status", "--db", db]) == 0
    assert "runs: 1" in capsys.readouterr().out
    for argv in (["history"], ["flaky"], ["regressions", "--since", "2026-01-01"], ["device", "cpu"]):
        assert main([*argv, "--db", db, "--out", str(tmp_path / "pages")]) == 0, argv
    names = sorted(p.name for p in (tmp_path / "pages").iterdir())
    assert {"history.html", "flaky.html", "flaky.csv", "regressions.html", "regressions.csv"} <= set(names)
    assert any(re.match(r"device-.*cpu\.html", n) for n in names)



def test_cli_pages_without_out_write_nothing(compile_run, tmp_path, capsys, monkeypatch):
    """Without --out the summary goes to stdout and no file appears where the user did not ask."""
    db = str(tmp_path / "s.duckdb")
    assert main(["ingest", str(compile_run), "--db", db]) == 0
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    for argv in (["history"], ["flaky"], ["regressions", "--since", "2026-01-01"], ["device", "cpu"]):
        capsys.readouterr()
        assert main([*argv, "--db", db]) == 0, argv
        assert "no page written: add --out DIR" in capsys.readouterr().out, argv
    assert list(cwd.iterdir()) == []


@pytest.mark.parametrize("argv, says", [
    (["regressions"], "required"),
    (["regressions", "--since", "last tuesday"], "not a date"),
    (["device", "nonesuch"], "no device matches"),
    (["history", "--bucket", "fortnight"], "invalid choice"),
])
def test_cli_bad_input_is_one_line_and_exit_2(argv, says, compile_run, tmp_path, capsys):
    db = str(tmp_path / "s.duckdb")
    assert main(["ingest", str(compile_run), "--db", db]) == 0
    capsys.readouterr()
    assert main([*argv, "--db", db]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err


def test_cli_unusable_stores(tmp_path, capsys):
    assert main(["history", "--db", str(tmp_path / "none.duckdb")]) == 2
    assert "no such store" in capsys.readouterr().err
    assert main(["ingest", str(tmp_path / "nothing-here"), "--db", str(tmp_path / "s.duckdb")]) == 2
    assert not (tmp_path / "s.duckdb").exists(), "ingesting nothing left an empty store"
    (tmp_path / "run-dir").mkdir()
    (tmp_path / "run-dir" / "run.json").write_text("{}")  # a run that did not complete: refused by ingest
    assert main(["ingest", str(tmp_path / "run-dir"), "--db", str(tmp_path / "s.duckdb")]) == 2
    assert not (tmp_path / "s.duckdb").exists(), "ingesting nothing left an empty store"
    assert "no run.json" in capsys.readouterr().err
    assert main(["status", "--db", f"postgresql://nobody@/x?host={tmp_path}/nosock&connect_timeout=3"]) == 2
    err = capsys.readouterr().err
    assert "cannot connect" in err and len(err.strip().splitlines()) == 1


def test_pages_render_in_headless_chromium(tmp_path):
    _chromium()  # skip (or fail under MMACTS_REQUIRE_DB=1) before the work
    db = str(tmp_path / "fleet.duckdb")
    _load_fleet(db)
    out = tmp_path / "pages"
    assert main(["history", "--db", db, "--out", str(out)]) == 0
    assert main(["flaky", "--db", db, "--out", str(out)]) == 0
    assert main(["regressions", "--since", "2026-01-02", "--db", db, "--out", str(out)]) == 0
    assert main(["device", "B200 #2", "--db", db, "--out", str(out)]) == 0
    pages = sorted(out.glob("*.html"))
    assert len(pages) == 4
    for page in pages:
        text = page.read_text()
        assert not re.search(r"""(src|href)=['"]?https?:""", text), f"{page.name} loads something from the network"
        dom = dump_dom(page, tmp_path)
        m = re.search(r'data-rendered="(\d+) of (\d+) charts, (\d+) tables"', dom)
        assert m, f"{page.name}: the page's load script did not run in Chromium"
        drawn, charts, tables = map(int, m.groups())
        assert drawn == charts, f"{page.name}: {charts - drawn} charts laid out empty"
        if page.name in ("history.html",) or page.name.startswith("device-"):
            assert charts >= 1
        assert tables >= 1, page.name
    history = (out / "history.html").read_text()
    for title in ("Pass rate per suite", "Pass rate per spec table", "Pass rate per device", "Kernel time"):
        assert title in history
    assert "590.44.01" in history  # the per-configuration rows name the driver
    assert "driver 580.95.05 -&gt; 590.44.01" in (out / "regressions.html").read_text()
