"""Moved to :mod:`mmacts.core.suites` (issue 25: suite discovery and the repo root are ground-floor contract).

This name stays only for ``mmacts/db/store.py`` and branches written before the move; delete it once they
import :mod:`mmacts.core.suites`.
"""

from mmacts.core.suites import REPO_ROOT, SUITES_DIR, load_driver, suite_names  # noqa: F401
