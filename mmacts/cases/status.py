"""The status vocabulary: every status a case can end with, what each means, which count as a pass,
which fail a run, the order reports show them in, and what a change from one to another means.

Why one home: the statuses were string literals in the console, the expectations, the store, the
compare gate and the pages, each with its own idea of "bad" (a status added in one place was a
pass or nothing in another). Validation teams (Khronos CTS with deqp-runner) keep apart what this
module keeps apart:

- ``not-supported``: this GPU or backend cannot run the case's form (a Blackwell form on a Hopper, a
  form the PTX VM refuses by name, no launcher for it here): not a pass, not a failure.
- ``skip``: deselected on purpose (an expectations ``skip`` entry): the user chose not to run it.
- ``crash``: the test process died while the case ran (a signal or an exit code, named in the message).
- ``timeout``: the case (or its kernel's bounded wait) ran past its limit.

Nothing that was not obtained is a ``pass``. Reports, the exit code, the store and ``report compare``
read the tuples below, never literals of their own.
"""

from __future__ import annotations

from dataclasses import dataclass

PASS = "pass"
FAIL = "fail"
ERROR = "error"
CRASH = "crash"
TIMEOUT = "timeout"
FLAKE = "flake"
XFAIL = "xfail"
NOT_SUPPORTED = "not-supported"
SKIP = "skip"
OBSERVED = "observed"


@dataclass(frozen=True)
class Status:
    """One status: its name, what it means (README's table is checked against it), whether it counts
    as a pass, whether it fails a run (exit 1, a regression in ``report compare``), and whether it is a
    verdict at all (``judged``: a pass rate counts it)."""

    name: str
    meaning: str
    passing: bool = False
    bad: bool = False
    judged: bool = True


VOCABULARY: tuple[Status, ...] = (
    Status(PASS, "the result matched the reference", passing=True),
    Status(FAIL, "a mismatch: the message says where, got and want", bad=True),
    Status(ERROR, "the harness could not obtain a result (a launch failed, a kernel faulted, a refusal)", bad=True),
    Status(CRASH, "the test process died while the case ran (signal or exit code in the message)", bad=True),
    Status(TIMEOUT, "the case or its kernel's bounded wait ran past its limit", bad=True),
    Status(FLAKE, "failed, then passed on a retry of --retries N", passing=True),
    Status(XFAIL, "a deviation the ambiguity register explains", judged=False),
    Status(NOT_SUPPORTED, "this GPU or backend cannot run the case's form (the message says why)", judged=False),
    Status(SKIP, "deselected on purpose: an expectations skip entry (with its reason)", judged=False),
    Status(OBSERVED, "a probe of something the spec leaves open: recorded, never judged", judged=False),
)
"""Every status, in the order reports show them."""

BY_NAME: dict[str, Status] = {s.name: s for s in VOCABULARY}
ORDER: tuple[str, ...] = tuple(s.name for s in VOCABULARY)
"""Display order: passes, then failures (worst first), then what was not judged."""
PASSING: tuple[str, ...] = tuple(s.name for s in VOCABULARY if s.passing)
"""Statuses that count as a pass (a ``flake`` passed on a retry; it is still reported as a flake)."""
BAD: tuple[str, ...] = tuple(s.name for s in VOCABULARY if s.bad)
"""Failures: a run with one of these exits 1 (without a baseline that expects it)."""
NOT_RUN: tuple[str, ...] = (NOT_SUPPORTED, SKIP)
"""The case's kernel did not run: the device could not (``not-supported``) or the user chose not to (``skip``)."""
JUDGED: tuple[str, ...] = tuple(s.name for s in VOCABULARY if s.judged)
"""Statuses a pass rate counts (``pass`` over these)."""


def readme_table() -> str:
    """The statuses table README.md shows (``test_status.py`` checks README has exactly this)."""
    rows = [f"| `{s.name}` | {s.meaning} | {'yes' if s.passing else 'no'} | {'yes' if s.bad else 'no'} |"
            for s in VOCABULARY]
    head = ["| status | what it means | a pass | fails the run (exit 1) |", "| --- | --- | --- | --- |"]
    return "\n".join([*head, *rows])


def is_bad(status: str | None) -> bool:
    """Whether ``status`` is a failure (a run ending with it exits 1)."""
    return status in BAD


def is_passing(status: str | None) -> bool:
    return status in PASSING


# ------------------------------------------------------------------------------- transitions
IMPROVEMENT = "improvement (unexpected if a baseline lists it)"
REGRESSION = "regression"
FAILURE_CHANGED = "failure changed kind"
BECAME_FLAKY = "became flaky"
NO_LONGER_JUDGED = "no longer judged"
NOW_NOT_SUPPORTED = "no longer supported here"
JUDGED_AGAIN = "judged again"
OTHER = "other"
TRANSITION_KINDS: tuple[str, ...] = (REGRESSION, FAILURE_CHANGED, IMPROVEMENT, BECAME_FLAKY, NOW_NOT_SUPPORTED,
                                     NO_LONGER_JUDGED, JUDGED_AGAIN, OTHER)
"""Every meaning :func:`transition_kind` gives, worst first."""


def transition_kind(base: str, new: str) -> str:
    """What a change of status from ``base`` to ``new`` means for a reader (``report compare``,
    ``mmacts db transitions``): a bad status turning good is an *improvement* (a baseline may still
    list it as a known failure), a good or unjudged one turning bad a *regression* (``pass -> crash``,
    ``not-supported -> fail``), a case this device could run that it now cannot (``pass ->
    not-supported``: a driver or GPU change) is named apart from one the user deselected."""
    if base in BAD and new in PASSING:
        return IMPROVEMENT
    if new in BAD and base not in BAD:
        return REGRESSION
    if base in BAD and new in BAD:
        return FAILURE_CHANGED
    if new == FLAKE:
        return BECAME_FLAKY
    if new == NOT_SUPPORTED:
        return NOW_NOT_SUPPORTED
    if new in (SKIP, XFAIL):
        return NO_LONGER_JUDGED
    if base in (SKIP, XFAIL, NOT_SUPPORTED):
        return JUDGED_AGAIN
    return OTHER


if __name__ == "__main__":
    print(readme_table())
