"""``mmacts package`` / ``package verify``: a sound package verifies; every way of editing or cutting
one is named (planted here: an edited status, a dropped case with its manifest entry forged, a file
added, a run that did not complete, a file that is no package)."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path

import pytest

from mmacts.runner import cli, package


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs")
    assert cli.main(["run", "--suite", "descriptors", "--level", "smoke", "--backend", "model", "--out", str(out)]) == 0
    (d,) = out.iterdir()
    return d


def _rewrite(src: Path, dst: Path, change: dict[str, bytes | None], forge: bool = False) -> None:
    """Copy a package, replacing (or with None removing) members; ``forge``: fix the manifest's hashes too."""
    with tarfile.open(src, "r:gz") as tar:
        blobs = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}  # type: ignore[union-attr]
    for name, data in change.items():
        if data is None:
            blobs.pop(name, None)
        else:
            blobs[name] = data
    if forge:
        man = json.loads(blobs["MANIFEST.json"])
        for name in change:
            if name in blobs and name in man["files"]:
                man["files"][name]["sha256"] = hashlib.sha256(blobs[name]).hexdigest()
        blobs["MANIFEST.json"] = json.dumps(man).encode()
    with tarfile.open(dst, "w:gz") as tar:
        for name, data in blobs.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def _verify(capsys: pytest.CaptureFixture, path: Path) -> tuple[int, str]:
    rc = cli.main(["package", "verify", str(path)])
    cap = capsys.readouterr()
    return rc, cap.out + cap.err


def test_a_sound_package_verifies_and_every_edit_is_named(run_dir: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture) -> None:
    pkg = tmp_path / "b200.tar.gz"
    assert cli.main(["package", str(run_dir), "--out", str(pkg)]) == 0
    rc, said = _verify(capsys, pkg)
    assert rc == 0 and "sound" in said, said
    assert cli.main(["package", str(run_dir), "--out", str(pkg)]) == 2  # never overwrites

    lines = (run_dir / "results.jsonl").read_bytes().splitlines(keepends=True)
    first = json.loads(lines[0])
    edited = json.dumps(dict(first, status="fail"), sort_keys=True).encode() + b"\n" + b"".join(lines[1:])
    _rewrite(pkg, tmp_path / "edited.tar.gz", {"results.jsonl": edited})
    rc, said = _verify(capsys, tmp_path / "edited.tar.gz")
    assert rc == 1 and "results.jsonl: edited" in said, said

    _rewrite(pkg, tmp_path / "cut.tar.gz", {"results.jsonl": b"".join(lines[1:])}, forge=True)
    rc, said = _verify(capsys, tmp_path / "cut.tar.gz")
    assert rc == 1 and "incomplete for level smoke: 1 of 5 cases have no result" in said, said
    assert "results.parquet disagrees" in said and "run.json counts" in said

    _rewrite(pkg, tmp_path / "extra.tar.gz", {"notes.txt": b"trust me"})
    rc, said = _verify(capsys, tmp_path / "extra.tar.gz")
    assert rc == 1 and "notes.txt: in the archive but not in the manifest" in said

    _rewrite(pkg, tmp_path / "gone.tar.gz", {"junit.xml": None})
    rc, said = _verify(capsys, tmp_path / "gone.tar.gz")
    assert rc == 1 and "junit.xml: named by the manifest but missing" in said


def test_bad_input_is_one_line_and_exit_2(run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    unfinished = tmp_path / "unfinished"
    unfinished.mkdir()
    meta = json.loads((run_dir / "run.json").read_text())
    (unfinished / "run.json").write_text(json.dumps(dict(meta, complete=False)))
    (unfinished / "results.jsonl").write_text("")
    (tmp_path / "not.tar.gz").write_bytes(b"hello")
    for argv, words in ((["package", str(unfinished), "--out", str(tmp_path / "x.tar.gz")], "did not complete"),
                        (["package", "verify", str(tmp_path / "not.tar.gz")], "not a readable .tar.gz"),
                        (["package", str(run_dir)], "--out")):
        rc = cli.main(argv)
        err = capsys.readouterr().err
        assert rc == 2 and words in err and "Traceback" not in err, (argv, err)
    assert not (tmp_path / "x.tar.gz").exists()


def test_the_code_hash_follows_the_code(tmp_path: Path) -> None:
    for d in package.CODE_DIRS:
        (tmp_path / d).mkdir()
        (tmp_path / d / "a.py").write_text("x = 1\n")
    before = package.code_hash(tmp_path)
    (tmp_path / "suites" / "a.py").write_text("x = 2\n")
    assert package.code_hash(tmp_path) != before
