"""Planted faults (mutants) that the suites must catch: a verdict is worth something only if it
would have failed had the thing it checks been wrong.

The mutation tools sit above the suites and pick cases by the suites' typed records (``suites.<name>.fields``),
imported at module level. A console script's ``sys.path`` does not hold the checkout (``mmacts selftest
--mutants`` run without ``PYTHONPATH``), so the package puts it there first, as
:func:`mmacts.core.suites.load_driver` does before it imports a driver."""

import sys

from mmacts.core.suites import REPO_ROOT

if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))
