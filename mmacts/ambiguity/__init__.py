"""The ambiguity register: open spec questions, their readings, sources and observed answers."""

from mmacts.ambiguity.html import render_html
from mmacts.ambiguity.observe import observations_frame, pattern_matches, record_observations
from mmacts.ambiguity.register import (
    REGISTER_PATH,
    Entry,
    Observation,
    Register,
    RegisterError,
    dump_register,
    load_register,
    parse_register,
    save_register,
)

__all__ = [
    "REGISTER_PATH",
    "Entry",
    "Observation",
    "Register",
    "RegisterError",
    "dump_register",
    "load_register",
    "observations_frame",
    "parse_register",
    "pattern_matches",
    "record_observations",
    "render_html",
    "save_register",
]
