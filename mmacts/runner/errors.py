"""The error every ``mmacts`` command reports as one line with exit code 2.

It lives apart from :mod:`mmacts.runner.cli` so that modules the CLI imports can raise it, and
``python -m mmacts.runner.cli`` (where the CLI module is ``__main__``) still catches it.
"""


class UsageError(Exception):
    """Bad input: reported as one line, exit code 2."""
