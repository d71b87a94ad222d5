"""Backends: compile (ptxas only), model (the PTX VM), cuda (a GPU), auto."""

BACKENDS: tuple[str, ...] = ("auto", "cuda", "model", "compile")
"""Here, not in ``execute``: the CLI names them without importing numpy and the drivers."""
