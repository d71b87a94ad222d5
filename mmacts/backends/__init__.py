"""Backends: compile (ptxas only), model (the PTX VM), cuda (a GPU), auto."""

AUTO, CUDA, MODEL, COMPILE = "auto", "cuda", "model", "compile"
BACKENDS: tuple[str, ...] = (AUTO, CUDA, MODEL, COMPILE)
"""Here, not in ``execute``: the CLI names them without importing numpy and the drivers."""
DEFAULT_BACKEND = AUTO
"""What runs when no backend is named: the one default the CLI, the pytest option and the executor share."""
