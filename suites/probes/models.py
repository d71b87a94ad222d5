"""The named instruction-path models the probes run against on the model backend.

The planted parameters come from ``reference.numeric_model`` (another, independent
implementation of the published models): :func:`reference_evaluator` wraps its ``dot``
and :func:`reference_features` states its parameters in the probes' feature names, so a
recovery test compares what the probes found with what was planted, across two codes.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from reference import numeric_model as nm

Evaluator = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]

PATH_MODELS: dict[str, str] = {
    "mma_sync.sm_90a": "hmma_fp8_emulation",
    "wgmma.sm_90a": "hopper_wgmma_fp8",
    "mma_sync.sm_120a": "ada_qmma_fp8",
    "tcgen05.sm_100a": "b200_tcgen05_hypothesis",
}
"""Instruction path -> the hypothesis a model-backend run plants for it (numeric-models §7.4)."""


def reference_evaluator(name: str, out_format: str = "fp32", in_format: str = "e4m3") -> Evaluator:
    """``(a, b, c) -> d`` through ``reference.numeric_model.dot`` for the named model."""
    def run(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
        return nm.dot(name, a, b, c, out_format, in_format=in_format)

    return run


def reference_features(name: str, out_format: str = "fp32") -> dict[str, object]:
    """The planted parameters of a reference model, in the feature names ``recover`` reports."""
    p = nm.MODELS[name]
    if p.exact:
        raise ValueError(f"{name} is exact accumulation: it has no block parameters")
    out = p.out[out_format]
    return {
        "block_size": p.fma,
        "grouping": "kmod4" if p.blocks == "mod4_pairs" else "contiguous",
        "neab": p.neab,
        "block_rounding": out.frmode,
        "c_placement": p.c_placement,
        "out_frac_bits": out.frac_bits,
        "out_subnormals": p.subnormals,
        "in_subnormals": p.subnormals,
        "zero_sign": "plus",
    }
