"""The test process of ``mmacts run``: pytest, ended without the interpreter's teardown.

Everything a run keeps is written and synced by the session's end (the plugin closes
``results.jsonl`` in ``pytest_sessionfinish``); what follows in a normal exit is module
teardown and CuPy's clean-up of the CUDA context and memory pool, which the CLI waited for
between the last record and the reports (0.4 s on an H100 host). The driver releases a dead
process's context itself.
"""

from __future__ import annotations

import os
import sys

from mmacts.runner import lifeline


def main() -> None:
    lifeline.from_environment()  # a test process never outlives the ``mmacts run`` that started it
    import pytest

    rc = int(pytest.main(sys.argv[1:]))
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed or broken pipe: nothing more to say there
            pass
    os._exit(rc)


if __name__ == "__main__":
    main()
