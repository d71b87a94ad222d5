"""README's case-set figures are the ones ``mmacts list`` prints (they drifted before: issue 24)."""

from __future__ import annotations

import re

import pytest

from mmacts.core.suites import REPO_ROOT, suite_names
from mmacts.runner import readme_figures as rf

README = REPO_ROOT / "README.md"


def _peers_installed() -> bool:
    """README's figures are those of a full install (scripts/install.sh: extras test, peers, db); the
    peers suite lists fewer cases without Triton / CUTLASS (the minimum-floors run installs no peers)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return bool(version("triton") and version("nvidia-cutlass"))
    except PackageNotFoundError:
        return False


pytestmark = pytest.mark.skipif(not _peers_installed(), reason="README's figures assume the peers extra")
_ROW = re.compile(r"^\| `(\w+)` \|.*?\| (\d+) / (\d+) / (\d+) \|", re.MULTILINE)


def test_the_suites_table_counts_what_list_prints() -> None:
    table = {m.group(1): tuple(int(x) for x in m.groups()[1:]) for m in _ROW.finditer(README.read_text())}
    assert set(table) == set(suite_names()), "README's suites table must have one row per suite"
    wrong = {s: (table[s], rf.case_counts(s)) for s in table if table[s] != rf.case_counts(s)}
    assert not wrong, f"README (smoke / standard / full) vs mmacts list: {wrong}; " \
                      "python -m mmacts.runner.readme_figures prints the right figures"


def test_the_coverage_figures_are_what_list_prints() -> None:
    mutant, citation = rf.coverage_counts()
    text = " ".join(README.read_text().split())
    assert f"which spec rows a failing mutant covers ({mutant}) and which only a citation covers ({citation})" \
        in text, "python -m mmacts.runner.readme_figures prints the right figures"


def test_the_example_baseline_in_readme_names_real_cases() -> None:
    """README's example entries matched none of the 15,545 full-level cases (issue 24): now each
    must match one, or the example teaches entries that do nothing."""
    from mmacts.runner import expectations as ex

    text = README.read_text().split("## Expectations and CI gating", 1)[1].split("```", 2)[1]
    base = ex.parse(text, "README.md")
    assert len(base.all_entries()) == 3 and base.all_entries()[0].bug == "4712"
    assert base.matching_none(ex.all_case_ids()) == []
