"""``mmacts ambiguities`` output formats and the HTML report section."""

from __future__ import annotations

import json

import pandas as pd
import yaml

from mmacts.ambiguity import load_register, render_html
from mmacts.ambiguity.cli import main
from mmacts.ambiguity.register import REGISTER_PATH


def test_table_csv_json(capsys):
    n = len(load_register())
    assert main([]) == 0
    out = capsys.readouterr().out
    assert "AMB-ZCM-SPAN" in out and f"{n} entries" in out
    assert main(["--format", "csv"]) == 0
    df = pd.read_csv(__import__("io").StringIO(capsys.readouterr().out))
    assert len(df) == n and {"id", "status", "spec", "decided_by"} <= set(df.columns)
    assert main(["--format", "json", "--status", "open"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data) == sum(e.status == "open" for e in load_register().entries)
    assert main(["--status", "decided", "--format", "json"]) == 0
    assert all(d["status"] == "decided" for d in json.loads(capsys.readouterr().out))


def test_errors_are_one_line_exit_2(tmp_path, capsys):
    assert main(["--format", "xml"]) == 2
    assert main(["--register", str(tmp_path / "none.yaml")]) == 2
    data = yaml.load(Loader=yaml.CSafeLoader, stream=REGISTER_PATH.read_text())
    data["entries"][1]["id"] = data["entries"][0]["id"]
    p = tmp_path / "dup.yaml"
    p.write_text(yaml.dump(Dumper=yaml.CSafeDumper, data=data))
    assert main(["--register", str(p)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and "duplicate register id" in err[-1]


def test_html_section_lists_every_entry_escaped_with_run_answers():
    reg = load_register()
    results = pd.DataFrame([{"case_id": "probes.c_placement.mma_sync.sm_90a", "status": "pass", "device": "H100",
                             "backend": "cuda", "observation": json.dumps({"answer": "c_placement=<last>"})}])
    html = render_html(reg, results)
    assert html.startswith("<section id='ambiguities'>") and html.rstrip().endswith("</section>")
    for e in reg.entries:
        assert f"id='{e.id}'" in html
    assert "c_placement=&lt;last&gt;" in html and "<last>" not in html
    assert render_html(reg, None).count("this run") == 0
