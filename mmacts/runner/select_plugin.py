"""pytest plugin ``mmacts run`` loads beside :mod:`mmacts.runner.plugin` (``-p mmacts.runner.select_plugin``).

- ``--mmacts-rows`` / ``--mmacts-arch``: exact selection (:mod:`mmacts.runner.select`);
- ``--mmacts-only FILE``: only the case IDs listed in FILE (one per line): the retries of
  unexpected failures;
- ``--mmacts-expectations FILE``: cases the baseline says to skip are not run; each is recorded
  as ``skip`` with the baseline's reason (:mod:`mmacts.runner.expectations`).

Deselection runs before the main plugin's (``trylast``) batching, so batches hold only selected cases.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mmacts.core.records import RECORD_KEY
from mmacts.runner.expectations import load, local_env
from mmacts.runner.faults import case_record
from mmacts.runner.plugin import _case_of as case_of
from mmacts.runner.select import Selection, parse_fraction, read_caselist, split_list


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("mmacts")
    g.addoption("--mmacts-rows", default=None, help="only cases citing one of these spec rows (comma separated)")
    g.addoption("--mmacts-arch", default=None, help="only cases for one of these targets (comma separated)")
    g.addoption("--mmacts-caselist", default=None, help="file of case IDs: exactly these (mmacts run --caselist)")
    g.addoption("--mmacts-fraction", default=None, help="I/N: part I of N by case ID (mmacts run --fraction)")
    g.addoption("--mmacts-mandatory", default=None, help="file of case IDs run whatever the fraction")
    g.addoption("--mmacts-only", default=None, help="file of case IDs (one per line): run only these")
    g.addoption("--mmacts-expectations", default=None, help="expectations file: its skip entries are not run")


def _case_of(item: Any) -> Any:
    return case_of(item)


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list) -> None:
    cl, mand = config.getoption("--mmacts-caselist"), config.getoption("--mmacts-mandatory")
    sel = Selection(rows=split_list([config.getoption("--mmacts-rows") or ""]),
                    arch=split_list([config.getoption("--mmacts-arch") or ""]),
                    caselist=read_caselist(cl), fraction=parse_fraction(config.getoption("--mmacts-fraction")),
                    mandatory=read_caselist(mand) or (), files=(cl, mand))
    only_file = config.getoption("--mmacts-only")
    only = set(Path(only_file).read_text().split()) if only_file else None
    if not (sel.rows or sel.arch or sel.caselist is not None or sel.fraction or only is not None):
        return
    keep, drop = [], []
    for item in items:
        case = _case_of(item)
        ok = case is None or (sel.exact(case) and (only is None or case.case_id in only))
        (keep if ok else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


_SKIPS: dict[str, Any] = {}


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption("--mmacts-expectations")
    if path:
        baseline = load(Path(path))
        if any(e.scope for e in baseline.all_entries() if e.expect == "skip"):
            baseline, _ = baseline.for_env(local_env())  # a skip for another device does not skip here
        _SKIPS["baseline"] = baseline


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Any:
    baseline = _SKIPS.get("baseline")
    case = _case_of(pyfuncitem) if baseline is not None else None
    if case is None:
        return None
    entry = baseline.lookup(case.case_id)
    if entry is None or entry.expect != "skip":
        return None

    msg = f"expectations: {entry.reason}"
    pyfuncitem.user_properties.append((RECORD_KEY, case_record(case, "skip", msg)))
    pytest.skip(msg)
