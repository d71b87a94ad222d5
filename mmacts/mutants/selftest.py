"""``mmacts selftest --mutants``: run the mutant registry on the model backend and print the mutation score.

Options after ``--mutants`` are those of :func:`mmacts.mutants.run.main` (``--fast``, ``-n``, ``-k``,
``--write-coverage``). Without ``--mutants`` it says how to run the project's own tests.
"""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    args = list(argv or [])
    if "--mutants" not in args:
        print("usage: mmacts selftest --mutants [--fast] [-n N] [-k NAME] [--write-coverage]\n"
              "  (the unit tests: bash scripts/selftest.sh, or pytest -m 'not mmacts_case')")
        return 2
    args.remove("--mutants")
    from mmacts.mutants.run import main as run_main  # the VM and every suite: loaded only when mutants run

    return run_main(args)
