"""From block-scale probe answers back to the hypothesis: the fit over the block-scaled grid.

Same rule as :mod:`suites.probes.recover`: direct probes set the features they answer by rule
(special scale codes, product range, RZ overflow, signed zero, enable-input-d), then every
combination of the fit features (FMA size x anchor, extra alignment bits, block rounding,
C placement, output precision, anchor floor) is evaluated with
:mod:`suites.probes.blockscale_model` on every fit vector, and the combinations reproducing
*all* measured bits survive. A feature is recovered when every survivor agrees; otherwise the
report lists the values still possible (the probes cannot tell them apart on this form).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import lru_cache

import numpy as np

from suites.probes.blockscale_model import BSParams, evaluate, prepare
from suites.probes.blockscale_probes import BS_PROBES, FIT_FEATURES, BSProbe, vectors
from suites.probes.blockscale_vectors import BSArrays, BSForm, stack_bs
from suites.probes.recover import Recovery, to_bits

NEABS: tuple[int, ...] = (-10, 0, 1, 2, 3)
OUT_BITS: tuple[int, ...] = (23, 13)
FLOORS: tuple[int | None, ...] = (-133, -132, None)
BSEvaluator = Callable[[BSForm, BSArrays], np.ndarray]
"""(form, vectors) -> d: what a planted model or a device returns."""


def probes_for(form: BSForm, tcgen05: bool = False) -> tuple[BSProbe, ...]:
    return tuple(p for p in BS_PROBES if p.applies(form, tcgen05))


def fit_probes_for(form: BSForm) -> tuple[BSProbe, ...]:
    return tuple(p for p in probes_for(form) if p.kind == "fit")


def blockings(form: BSForm) -> list[tuple[int, str]]:
    """(FMA size, anchor) pairs: ``across`` only where an FMA block spans several scale blocks."""
    out = []
    for fma in (16, 32, 64):
        if fma > form.k:
            continue
        out.append((fma, "per_scale_block"))
        if fma > form.vs:
            out.append((fma, "across"))
    return out


def candidates(form: BSForm, base: BSParams | None = None) -> list[BSParams]:
    """The fit grid for ``form`` (fit features varied, the direct ones taken from ``base``)."""
    base = base or BSParams()
    floors = FLOORS if form.stype == "ue8m0" else (base.anchor_floor,)
    return [replace(base, fma=fma, anchor=anc, neab=neab, block_rounding=rnd, c_placement=cpl, out_frac_bits=ob,
                    anchor_floor=fl)
            for (fma, anc), neab, rnd, cpl, ob, fl in itertools.product(
                blockings(form), NEABS, ("rz", "rne"), ("aligned", "last"), OUT_BITS, floors)]


def _values(cands: Sequence[BSParams], form: BSForm, feature: str) -> list[object]:
    vals = {c.effective_anchor(form) if feature == "anchor" else getattr(c, feature) for c in cands}
    return sorted(vals, key=repr)


def _fmt(marg: Mapping[str, list[object]]) -> str:
    return ", ".join(f"{f}={v[0] if len(v) == 1 else v}" for f, v in marg.items())


def classify(p: BSProbe, form: BSForm, measured: np.ndarray) -> tuple[str, dict[str, object], str]:
    assert p.classify is not None
    return p.classify(form, vectors(p, form), np.asarray(measured, dtype=np.float64))


def _base(direct: Mapping[str, object]) -> BSParams:
    fields = {k: v for k, v in direct.items() if v is not None and k in BSParams.__dataclass_fields__}
    return replace(BSParams(), **fields)


def recover_bs(form: BSForm, observations: Mapping[str, np.ndarray], *, tcgen05: bool = False) -> Recovery:
    """Infer the hypothesis from ``{probe name: measured values}`` (vector order) on ``form``."""
    answers: dict[str, str] = {}
    direct: dict[str, object] = {}
    details: dict[str, dict[str, object]] = {}
    for p in probes_for(form, tcgen05):
        if p.classify is not None and p.name in observations:
            ans, feats, _ = classify(p, form, observations[p.name])
            answers[p.name] = ans
            direct.update(feats)
            details[p.name] = dict(feats)
    base = _base(direct)
    fits = fit_probes_for(form)
    missing = [p.name for p in fits if p.name not in observations]
    if missing:
        raise KeyError(f"fit probes missing from the observations: {', '.join(missing)}")
    cands, preds, cols = _fit_grid(form, base)
    ok_all = np.ones(len(cands), dtype=bool)
    for p in fits:
        ok = np.all(preds[:, cols[p.name]] == to_bits(observations[p.name]), axis=1)
        ok_all &= ok
        consistent = [c for c, good in zip(cands, ok, strict=True) if good]
        marg = {f: _values(consistent, form, f) for f in p.features}
        answers[p.name] = _fmt(marg) if consistent else "no hypothesis reproduces this probe"
        details[p.name] = {"consistent_with": marg, "hypotheses_left": len(consistent)}
    survivors = [c for c, good in zip(cands, ok_all, strict=True) if good]
    features: dict[str, object] = {}
    for f in FIT_FEATURES:
        if f == "anchor_floor" and form.stype != "ue8m0":
            continue
        vals = _values(survivors, form, f)
        features[f] = vals[0] if len(vals) == 1 else vals
    for f, v in base.features(form, tcgen05=tcgen05).items():
        features.setdefault(f, v)
    return Recovery(features=features, direct=direct, answers=answers, survivors=len(survivors),
                    consistent=bool(survivors), details=details)


def run_all_bs(form: BSForm, evaluator: BSEvaluator, *, tcgen05: bool = False) -> dict[str, np.ndarray]:
    """Every applicable probe's vectors through ``evaluator`` in one batch."""
    probes = probes_for(form, tcgen05)
    vs = [v for p in probes for v in vectors(p, form)]
    d = np.asarray(evaluator(form, stack_bs(form, vs)), dtype=np.float64)
    out, start = {}, 0
    for p in probes:
        n = len(vectors(p, form))
        out[p.name] = d[start:start + n]
        start += n
    return out


@lru_cache(maxsize=32)
def _fit_grid(form: BSForm, base: BSParams) -> tuple[tuple[BSParams, ...], np.ndarray, dict[str, slice]]:
    """The fit grid's predicted bits [hypothesis, fit vector] on every fit vector of ``form`` and
    each fit probe's columns, once per process and (form, direct features): they depend on the
    fixed probe vectors only, not on what was measured, and every ``bs_recover`` case of the form
    (mma.sync and tcgen05 share the forms) and every fit probe's own answer (a slice: the model
    is evaluated row by row) reads them. Read-only."""
    fits = fit_probes_for(form)
    cols, lo = {}, 0
    for p in fits:
        n = len(vectors(p, form))
        cols[p.name] = slice(lo, lo + n)
        lo += n
    x = stack_bs(form, [v for p in fits for v in vectors(p, form)])
    cands = tuple(candidates(form, base))
    prep = prepare(base, form, x)
    preds = np.stack([to_bits(evaluate(c, form, x, prep)) for c in cands])
    preds.setflags(write=False)
    return cands, preds, cols


@lru_cache(maxsize=64)
def _probe_predictions(name: str, form: BSForm) -> tuple[tuple[BSParams, ...], np.ndarray]:
    p = next(q for q in BS_PROBES if q.name == name)
    if p.kind == "fit" and p.applies(form, False):  # its columns of the shared grid
        cands, preds, cols = _fit_grid(form, BSParams())
        return cands, preds[:, cols[name]]
    cands = tuple(candidates(form))
    x = stack_bs(form, vectors(p, form))
    prep = prepare(BSParams(), form, x)
    return cands, np.stack([to_bits(evaluate(c, form, x, prep)) for c in cands])


def marginal_answer(p: BSProbe, form: BSForm, measured: np.ndarray) -> tuple[str, dict[str, object]]:
    """A fit probe on its own: the values of its features that reproduce its bits, the other fit
    features ranging over the whole grid and the direct ones at their OCP/model defaults."""
    cands, preds = _probe_predictions(p.name, form)
    ok = np.all(preds == to_bits(measured), axis=1)
    consistent = [c for c, good in zip(cands, ok, strict=True) if good]
    if not consistent:
        return "no hypothesis reproduces this probe", {"consistent_with": {}, "hypotheses_left": 0}
    marg = {f: _values(consistent, form, f) for f in p.features}
    return _fmt(marg), {"consistent_with": marg, "hypotheses_left": len(consistent)}
