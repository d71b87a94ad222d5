"""From probe answers back to model parameters.

Direct probes set the features they answer by rule (subnormal inputs, zero sign, NaN/Inf).
The remaining features are found by a hypothesis fit: every combination of block size and
grouping, alignment window, block rounding, C placement, output precision and subnormal
output is evaluated with :mod:`suites.probes.blockfma` on every probe vector, and the
combinations that reproduce *all* measured bits survive. A feature is recovered when all
survivors agree on it; otherwise the report lists the values still possible (the probes
cannot tell them apart, which is itself an observation) - never a guess.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache

import numpy as np

from suites.probes.blockfma import BlockFMAParams, evaluate_many
from suites.probes.catalog import FIT_FEATURES, PROBES, Probe, fit_probes, probe
from suites.probes.vectors import stack

BLOCKINGS: tuple[tuple[int, str], ...] = ((4, "contiguous"), (8, "contiguous"), (16, "contiguous"),
                                          (32, "contiguous"), (16, "kmod4"))
NEABS: tuple[int, ...] = (-10, 0, 1, 2, 3)
OUT_BITS: tuple[int, ...] = (23, 13)


def to_bits(values: np.ndarray) -> np.ndarray:
    """fp32 bit patterns with every NaN made one pattern (payloads are not compared)."""
    v = np.asarray(values, dtype=np.float64).astype(np.float32)
    bits = v.view(np.uint32).copy()
    bits[np.isnan(v)] = 0x7FC00000
    return bits


def candidates(base: BlockFMAParams | None = None) -> list[BlockFMAParams]:
    """The hypothesis grid (fit features varied, the rest taken from ``base``)."""
    base = base or BlockFMAParams()
    out = []
    for (bs, grp), neab, rnd, cpl, ob, osub in itertools.product(
        BLOCKINGS, NEABS, ("rz", "rne"), ("aligned", "last"), OUT_BITS, (True, False)
    ):
        out.append(replace(base, block_size=bs, grouping=grp, neab=neab, block_rounding=rnd, c_placement=cpl,
                           out_frac_bits=ob, out_subnormals=osub))
    return out


@lru_cache(maxsize=1)
def _fit_vectors() -> tuple[tuple[str, int, int], ...]:
    """(probe name, start, stop) slices of the concatenated fit vectors."""
    out, start = [], 0
    for p in fit_probes():
        n = len(p.vectors())
        out.append((p.name, start, start + n))
        start += n
    return tuple(out)


def fit_inputs() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """a, b, c of every fit vector, concatenated in :func:`_fit_vectors` order."""
    vs = [v for p in fit_probes() for v in p.vectors()]
    return stack(vs)


def predictions(cands: Sequence[BlockFMAParams]) -> np.ndarray:
    """Predicted bits [candidate, fit vector] (read-only: shared, see :func:`_grid`)."""
    return _grid(tuple(cands))


@lru_cache(maxsize=8)
def _grid(cands: tuple[BlockFMAParams, ...]) -> np.ndarray:
    """The grid's predictions on every fit vector, once per process: they depend on the fixed probe
    vectors only, not on what a device measured, and every recover case and every fit probe's own
    answer (:func:`marginal_answer`, a slice of these rows) reads them (400 evaluations each before).
    The hypotheses are evaluated a group at a time (:func:`suites.probes.blockfma.evaluate_many`,
    equal bit for bit to one :func:`~suites.probes.blockfma.evaluate` per hypothesis)."""
    a, b, c = fit_inputs()
    bits = to_bits(evaluate_many(cands, a, b, c))
    bits.setflags(write=False)
    return bits


@dataclass
class Recovery:
    """What the probes say about the path: recovered features and what is still open."""

    features: dict[str, object]
    """Feature -> value when determined, or a sorted list of values still possible."""
    direct: dict[str, object]
    answers: dict[str, str]
    """Probe name -> its answer (what a register observation records)."""
    survivors: int
    consistent: bool
    details: dict[str, dict[str, object]] = field(default_factory=dict)

    def determined(self) -> dict[str, object]:
        return {k: v for k, v in self.features.items() if not isinstance(v, list)}


def _values(cands: Sequence[BlockFMAParams], feature: str) -> list[object]:
    vals = {getattr(c, feature) if feature != "out_frac_bits" else c.frac_bits for c in cands}
    return sorted(vals, key=repr)


def classify_direct(p: Probe, measured: np.ndarray) -> tuple[str, dict[str, object]]:
    assert p.classify is not None
    return p.classify(p.vectors(), np.asarray(measured, dtype=np.float64))


def recover(observations: Mapping[str, np.ndarray], *, in_format: str = "e4m3",
            out_format: str = "fp32") -> Recovery:
    """Infer the model parameters from ``{probe name: measured values}`` (vector order).

    Every fit probe must be present; direct probes are optional.
    """
    answers: dict[str, str] = {}
    direct: dict[str, object] = {}
    details: dict[str, dict[str, object]] = {}
    for p in PROBES:
        if p.classify is not None and p.name in observations:
            ans, feats = classify_direct(p, observations[p.name])
            answers[p.name] = ans
            direct.update(feats)
            details[p.name] = dict(feats)
    base = BlockFMAParams(in_format=in_format, out_format=out_format)
    if direct.get("in_subnormals") is not None:
        base = replace(base, in_subnormals=bool(direct["in_subnormals"]))
    if direct.get("zero_sign") in ("plus", "ieee"):
        base = replace(base, zero_sign=str(direct["zero_sign"]))

    missing = [name for name, _, _ in _fit_vectors() if name not in observations]
    if missing:
        raise KeyError(f"fit probes missing from the observations: {', '.join(missing)}")
    measured = np.concatenate([to_bits(observations[name]) for name, _, _ in _fit_vectors()])
    cands = candidates(base)
    preds = predictions(cands)
    ok_all = np.ones(len(cands), dtype=bool)
    for name, lo, hi in _fit_vectors():
        ok = np.all(preds[:, lo:hi] == measured[lo:hi], axis=1)
        ok_all &= ok
        p = probe(name)
        if p.classify is None:
            consistent = [c for c, good in zip(cands, ok, strict=True) if good]
            marg = {f: _values(consistent, f) for f in p.features}
            answers[name] = (", ".join(f"{f}={v[0] if len(v) == 1 else v}" for f, v in marg.items())
                             if consistent else "no hypothesis reproduces this probe")
            details[name] = {"consistent_with": marg, "hypotheses_left": len(consistent)}
    survivors = [c for c, good in zip(cands, ok_all, strict=True) if good]
    features: dict[str, object] = {}
    for f in FIT_FEATURES:
        vals = _values(survivors, f)
        features[f] = vals[0] if len(vals) == 1 else vals
    features["in_subnormals"] = base.in_subnormals
    features["zero_sign"] = base.zero_sign
    return Recovery(features=features, direct=direct, answers=answers, survivors=len(survivors),
                    consistent=bool(survivors), details=details)


def run_all(evaluator, probes: Sequence[Probe] = PROBES) -> dict[str, np.ndarray]:
    """Run every probe's vectors through ``evaluator(a, b, c) -> d`` in one batch."""
    vs = [v for p in probes for v in p.vectors()]
    a, b, c = stack(vs)
    d = np.asarray(evaluator(a, b, c), dtype=np.float64)
    out, start = {}, 0
    for p in probes:
        n = len(p.vectors())
        out[p.name] = d[start:start + n]
        start += n
    return out


@lru_cache(maxsize=64)
def _probe_predictions(name: str) -> tuple[tuple[BlockFMAParams, ...], np.ndarray]:
    cands = tuple(candidates())
    for fit_name, lo, hi in _fit_vectors():  # a fit probe: its columns of the shared grid (evaluate is per row)
        if fit_name == name:
            return cands, _grid(cands)[:, lo:hi]
    a, b, c = stack(probe(name).vectors())
    return cands, to_bits(evaluate_many(cands, a, b, c))


def marginal_answer(p: Probe, measured: np.ndarray) -> tuple[str, dict[str, object]]:
    """A fit probe on its own: the values of its target features that reproduce its bits.

    Other features range over the whole grid (direct features at their defaults), so the
    answer says what *this* probe supports whatever the rest turns out to be.
    """
    cands, preds = _probe_predictions(p.name)
    ok = np.all(preds == to_bits(measured), axis=1)
    consistent = [c for c, good in zip(cands, ok, strict=True) if good]
    if not consistent:
        return "no hypothesis reproduces this probe", {"consistent_with": {}, "hypotheses_left": 0}
    marg = {f: _values(consistent, f) for f in p.features}
    answer = ", ".join(f"{f}={v[0] if len(v) == 1 else v}" for f, v in marg.items())
    return answer, {"consistent_with": marg, "hypotheses_left": len(consistent)}
