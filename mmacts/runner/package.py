"""``mmacts package RUN --out FILE.tar.gz`` and ``mmacts package verify FILE``: a result a partner can send.

A validation team that receives "all pass on our B200" needs to check three things without trusting
the sender's tools: the run covers every case of the level it claims (nothing left out), the files are
the ones the run wrote (nothing edited), and which code and environment made them. The package holds
the run's files (run.json, results.jsonl/.parquet/.csv, junit.xml, index.html, unexpected/waived.csv
where present) and ``MANIFEST.json``: the run's identity and environment (from run.json), the SHA-256 of
every file, of the suite code (``mmacts/``, ``suites/``, ``reference/`` ``*.py`` of the packing checkout)
and of the sorted case IDs the claimed selection holds.

``verify`` (exit 0 when sound, 1 with one line per problem, 2 for a file that is not a package):

- every file hashes to its manifest entry, and nothing is in the archive that the manifest does not name;
- results.jsonl is strict JSONL of mmacts records, one final record per case, run.json says complete;
- results.parquet and run.json's counts agree with results.jsonl (an edit of one file is seen in another);
- the results hold exactly the cases the claimed suites / level / selection have in *this* checkout (when
  its suite code differs from the packer's, it says so: the case set may have moved with the code).

The hashes detect edits and accidents, not a forger who rewrites the manifest too: that needs a signature
over MANIFEST.json (e.g. ``gpg --detach-sign``), which the package leaves to the sender's own keys.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import sys
import tarfile
from collections import Counter
from pathlib import Path
from typing import Any

from mmacts.core.records import RecordsError, latest_by_case, read_records
from mmacts.core.suites import REPO_ROOT
from mmacts.report.run_dir import ReportInputError, read_meta, run_records
from mmacts.runner.plugin import shard_of
from mmacts.runner.select import Selection, cases

SCHEMA = "mmacts-package/1"
FILES = ("run.json", "results.jsonl", "results.parquet", "results.csv", "junit.xml", "index.html",
         "unexpected.csv", "waived.csv")
REQUIRED = ("run.json", "results.jsonl")
CODE_DIRS = ("mmacts", "suites", "reference")


class PackageError(Exception):
    """Bad input (not a run, not a package): one line, exit 2."""


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def code_hash(root: Path | None = None) -> str:
    """SHA-256 over the path and bytes of every ``*.py`` of the suite code (sorted): which code made a run."""
    root = root or REPO_ROOT
    h = hashlib.sha256()
    for d in CODE_DIRS:
        for p in sorted((root / d).rglob("*.py")):
            if "__pycache__" in p.parts:
                continue
            h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def expected_ids(options: dict[str, Any]) -> list[str]:
    """The case IDs a run with these options selects in this checkout (its shard included)."""
    sel = Selection.from_args(argparse.Namespace(
        k=options.get("k"), rows=options.get("rows"), arch=options.get("arch"), caselist=options.get("caselist"),
        fraction=options.get("fraction"), mandatory=options.get("mandatory")))
    ids = [c.case_id for c in cases(list(options.get("suites") or []), options.get("level") or "standard", sel)]
    shard = options.get("shard")
    if shard:
        i, n = (int(x) for x in str(shard).split("/"))
        ids = [c for c in ids if shard_of(c, n) == i]
    return sorted(set(ids))


def _ids_hash(ids: list[str]) -> str:
    return _sha("\n".join(sorted(ids)).encode())


def pack(run_dir: Path, out: Path) -> dict[str, Any]:
    """Write the package of a completed run; returns its manifest."""
    run_dir = Path(run_dir)
    try:
        meta = read_meta(run_dir)
        if meta.get("complete") is not True:
            raise PackageError(f"{run_dir}: the run did not complete; finish it first (mmacts run --resume {run_dir})")
        records = latest_by_case(run_records(run_dir))
    except ReportInputError as exc:
        raise PackageError(str(exc)) from exc
    if out.exists():
        raise PackageError(f"{out} exists; package writes a new file and overwrites nothing")
    blobs = {name: (run_dir / name).read_bytes() for name in FILES if (run_dir / name).is_file()}
    opts = meta.get("options") or {}
    try:
        claimed = expected_ids(opts)
    except Exception as exc:  # a caselist file that is gone, a suite this checkout lacks
        raise PackageError(f"cannot list the cases {run_dir} claims: {exc}") from exc
    manifest = {
        "schema": SCHEMA, "run": {k: meta.get(k) for k in ("host", "start", "end", "command", "options", "git_sha",
                                                             "merged_from", "resumed")},
        "environment": {k: meta.get(k) for k in ("gpu", "toolchain", "packages", "platform", "python")},
        "claims": {"suites": opts.get("suites"), "level": opts.get("level"), "backend": opts.get("backend"),
                   "cases": len(claimed), "case_ids_sha256": _ids_hash(claimed),
                   "counts": dict(Counter(str(r.get("status")) for r in records))},
        "code_sha256": code_hash(),
        "files": {name: {"sha256": _sha(data), "bytes": len(data)} for name, data in sorted(blobs.items())},
    }
    data = json.dumps(manifest, indent=2, sort_keys=True, default=str).encode()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".part")
    with tarfile.open(tmp, "w:gz") as tar:
        for name, blob in [("MANIFEST.json", data), *sorted(blobs.items())]:
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(blob), 0, 0o644
            tar.addfile(info, io.BytesIO(blob))
    tmp.replace(out)
    return manifest


def _read(path: Path) -> tuple[dict[str, Any], dict[str, bytes]]:
    try:
        with tarfile.open(path, "r:gz") as tar:
            blobs = {}
            for m in tar.getmembers():
                if not m.isfile() or "/" in m.name or m.name.startswith("."):
                    raise PackageError(f"{path}: member {m.name!r} is not a plain top-level file")
                f = tar.extractfile(m)
                blobs[m.name] = f.read() if f else b""
    except (OSError, tarfile.TarError) as exc:
        raise PackageError(f"{path}: not a readable .tar.gz ({exc})") from exc
    if "MANIFEST.json" not in blobs:
        raise PackageError(f"{path}: no MANIFEST.json: not an mmacts package")
    try:
        manifest = json.loads(blobs.pop("MANIFEST.json"))
    except ValueError as exc:
        raise PackageError(f"{path}: MANIFEST.json is not JSON") from exc
    if not isinstance(manifest, dict) or manifest.get("schema") != SCHEMA:
        raise PackageError(f"{path}: MANIFEST.json is not of schema {SCHEMA}")
    return manifest, blobs


def verify(path: Path) -> tuple[list[str], list[str]]:
    """(problems, notes) of a package: see the module docstring."""
    manifest, blobs = _read(path)
    problems, notes = [], []
    listed = manifest.get("files") or {}
    for name, blob in sorted(blobs.items()):
        want = listed.get(name)
        if want is None:
            problems.append(f"{name}: in the archive but not in the manifest")
        elif _sha(blob) != want.get("sha256"):
            problems.append(f"{name}: edited (its SHA-256 is not the manifest's)")
    problems += [f"{name}: named by the manifest but missing" for name in sorted(set(listed) - set(blobs))]
    missing = [n for n in REQUIRED if n not in blobs]
    if missing:
        return problems + [f"{n}: required and missing" for n in missing], notes
    run = json.loads(blobs["run.json"])
    if run.get("complete") is not True:
        problems.append("run.json: the run did not complete")
    tmp = Path(_scratch()) / "results.jsonl"
    tmp.write_bytes(blobs["results.jsonl"])
    try:
        records = read_records(tmp)
    except RecordsError as exc:
        return problems + [f"results.jsonl: {str(exc).split(': ', 1)[-1]}"], notes
    latest = {r["case_id"]: r for r in latest_by_case(records)}
    counts = dict(Counter(str(r.get("status")) for r in latest.values()))
    if run.get("counts") is not None and run.get("counts") != counts:
        problems.append(f"run.json counts {run.get('counts')} disagree with results.jsonl {counts}")
    if (manifest.get("claims") or {}).get("counts") not in (None, counts):
        problems.append("the manifest's counts disagree with results.jsonl")
    if "results.parquet" in blobs:
        import pandas as pd

        pq = pd.read_parquet(io.BytesIO(blobs["results.parquet"]))
        got = dict(zip(pq["case_id"].astype(str), pq["status"].astype(str), strict=False))
        if got != {c: str(r.get("status")) for c, r in latest.items()}:
            problems.append("results.parquet disagrees with results.jsonl (a case or status differs)")
    opts = (manifest.get("run") or {}).get("options") or run.get("options") or {}
    if manifest.get("code_sha256") != code_hash():
        notes.append("packed with other suite code than this checkout's (git "
                     f"{(manifest.get('run') or {}).get('git_sha') or '?'}): completeness is judged with this "
                     "checkout's cases")
    try:
        want = expected_ids(opts)
    except Exception as exc:
        problems.append(f"cannot list the cases the run claims in this checkout: {exc}")
        return problems, notes
    have = set(latest)
    lost, extra = sorted(set(want) - have), sorted(have - set(want))
    level = opts.get("level")
    if lost:
        problems.append(f"incomplete for level {level}: {len(lost)} of {len(want)} cases have no result "
                        f"(first {lost[0]})")
    if extra:
        problems.append(f"{len(extra)} results for cases level {level} of this selection does not have "
                        f"(first {extra[0]})")
    if not lost and not extra and manifest.get("code_sha256") == code_hash():
        claimed = (manifest.get("claims") or {}).get("case_ids_sha256")
        if claimed != _ids_hash(want):
            problems.append("the manifest's case list is not the one this code selects")
    return problems, notes


def _scratch() -> str:
    import atexit
    import shutil
    import tempfile

    d = tempfile.mkdtemp(prefix="mmacts-package-")
    atexit.register(shutil.rmtree, d, True)
    return d


def main(argv: list[str]) -> int:
    """``mmacts package RUN --out FILE.tar.gz`` | ``mmacts package verify FILE``."""
    if argv[:1] == ["verify"]:
        p = argparse.ArgumentParser(prog="mmacts package verify", description="check a submission package")
        p.add_argument("file", type=Path)
        verifying = True
    else:
        p = argparse.ArgumentParser(prog="mmacts package", description="pack a completed run for sending")
        p.add_argument("run", type=Path)
        p.add_argument("--out", type=Path, required=True, help="the .tar.gz to write (must not exist)")
        verifying = False
    try:
        args = p.parse_args(argv[1:] if verifying else argv)
    except SystemExit as exc:
        return 0 if exc.code in (0, None) else 2
    try:
        if not verifying:
            m = pack(args.run, args.out)
            print(f"mmacts: packed {m['claims']['cases']} cases of level {m['claims']['level']} "
                  f"({len(m['files'])} files)", file=sys.stderr)
            print(args.out)
            return 0
        problems, notes = verify(args.file)
    except PackageError as exc:
        print(f"mmacts package: error: {exc}", file=sys.stderr)
        return 2
    for n in notes:
        print(f"mmacts package: note: {n}", file=sys.stderr)
    for prob in problems:
        print(f"mmacts package: {args.file}: {prob}")
    if not problems:
        print(f"mmacts package: {args.file}: sound (complete for its level, every file as packed)")
    return 1 if problems else 0
