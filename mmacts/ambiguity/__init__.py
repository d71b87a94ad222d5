"""The ambiguity register: open spec questions, their readings, sources and observed answers.

The names below are imported on first use (PEP 562): a test process asks only for
``mmacts.ambiguity.assumes`` per case, and importing the HTML and observation layers with it
pulled pandas into every worker before its first case (0.3 s on a GPU host).
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "render_html": "html",
    "observations_frame": "observe",
    "decided_by_regex": "observe",
    "pattern_matches": "observe",
    "record_observations": "observe",
    **{name: "register" for name in (
        "REGISTER_PATH", "Entry", "Observation", "Register", "RegisterError", "dump_register",
        "load_register", "parse_register", "save_register")},
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
