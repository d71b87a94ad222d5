"""Device profiles: which arithmetic each MMA path uses in the VM (the one table of that choice).

The VM reads operands from the exact register / shared-memory bits (``mma_sync``, ``wgmma``);
what the tensor core then does with the values is a *numeric model*. The VM does not invent
one: each path takes the model the rest of the project already uses for it, so a VM result and
a record-level model result differ only where the operand reading differs.

=========================  ===========  ===================================================
path                       arch family  model and why
=========================  ===========  ===================================================
mma.sync fp8 (no scales)   sm_90        ``hmma_fp8_emulation``: Hopper lowers fp8 mma.sync to
                                        F2FP + 2 x HMMA.16816; reproduces the published B200
                                        fp32/fp16 and H100/H200 fp16 files 5000/5000
                                        (``reference.numeric_model``; hopper_validation's
                                        HMMA_MODEL); fp32 or fp16 output per the D type;
                                        blocks anchored on the operands' f16 exponents
                                        (:data:`HMMA_OPERAND_FORMAT`: after F2FP an e4m3
                                        subnormal is a normal f16)
mma.sync fp8 (no scales)   sm_100       ``hmma_fp8_emulation`` (same lowering, per the model's
                                        source note; the published B200 data come from it)
mma.sync fp8 (no scales)   sm_120       ``ada_qmma_fp8``: native QMMA; what the probes plant
                                        for ``mma_sync.sm_120a`` (suites/probes/models.py);
                                        a hypothesis until an sm_120 GPU runs
mma.sync block_scale       sm_120       ``exact_rne``: exact sum of every scaled product and
                                        C, one RNE rounding to f32 -- what
                                        ``reference.mma_sync.model.execute`` (default
                                        ``exact_rne_f32``) and so the mma_sync_blockscale
                                        suite's model backend compute. Real sm_120 numerics
                                        are open (AMB-ACC-PRECISION, AMB-ACC-BLOCKSIZE,
                                        AMB-ACC-ROUNDING); pass ``model=`` to plant another
wgmma fp8                  sm_90        ``hopper_wgmma_fp8``: QGMMA, 13-bit rz accumulator;
                                        reproduces the published H100/H200 fp32 files
                                        (hopper_validation's WGMMA_MODEL); applied per
                                        instruction (one K=32 block), D re-entering as C of the
                                        next wgmma of a chain, as the registers carry it
wgmma bf16                 sm_90        :data:`H100_BF16_FP32`: the H100 fp16/bf16 -> fp32 row of
                                        the notes (numeric-models.md §3: fma 16, 2 extra
                                        alignment bits, rz, C aligned). Measured on the HMMA
                                        (WMMA) path, NOT on wgmma; the hopper_validation bf16
                                        cases are exact data, where every model agrees
=========================  ===========  ===================================================

Infinities in an f16-accumulator mma.sync (:func:`ieee_nan`): the model's NaN/Inf pre-check reads
only the inputs (products and C). Silicon (H100, ``validation/fuzz-tc/h100-2026-11-25``) treats
every block of the lowering as an IEEE operation on f16 values instead: a block result that
overflows to +-Inf is an infinity like any other, so it meets an opposite infinity (a product,
C, a later block) as NaN, 0x7FFF (register AMB-MMASYNC-F16-OVERFLOW-INF). Applied where the record
decides it (:data:`F16_INF_RULE_DECIDED`); elsewhere a D element where the two readings differ is
refused (``VmUnsupported``) rather than guessed.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from reference import numeric_model as nm

H100_BF16_FP32 = nm.ModelParams(
    "h100_bf16_fp32_hmma_row",
    "H100 fp16/bf16 -> fp32 (numeric-models.md §3, H100TC.m): fma 16, neab 2, rz, -133, C aligned; "
    "measured through WMMA/HMMA, applied to wgmma bf16 as a hypothesis",
    fma=16, neab=2, blocks="contiguous", c_placement="aligned",
    out={"fp32": nm.OutParams(23, "rz", -133), "fp16": nm.OutParams(10, "rne", -21)},
)

DEVICE_PROFILES: dict[tuple[str, str], str | nm.ModelParams] = {
    ("mma_sync.fp8", "sm_90"): "hmma_fp8_emulation",
    ("mma_sync.fp8", "sm_100"): "hmma_fp8_emulation",
    ("mma_sync.fp8", "sm_120"): "ada_qmma_fp8",
    ("mma_sync.block_scale", "sm_120"): "exact_rne",
    ("wgmma.fp8", "sm_90"): "hopper_wgmma_fp8",
    ("wgmma.bf16", "sm_90"): H100_BF16_FP32,
}
"""(path, arch family) -> ``reference.numeric_model`` model name or parameters. See the module docstring."""


def arch_family(arch: str) -> str:
    """``sm_90a`` -> ``sm_90``; ``sm_120a``/``sm_121a`` -> ``sm_120``; ``sm_100a``/``sm_103a`` -> ``sm_100``."""
    a = arch.strip().lower().removeprefix(".target").strip()
    if not a.startswith("sm_"):
        raise ValueError(f"not an sm_ target: {arch!r}")
    digits = "".join(ch for ch in a[3:] if ch.isdigit())
    if not digits:
        raise ValueError(f"not an sm_ target: {arch!r}")
    n = int(digits)
    if n >= 120:
        return "sm_120"
    if n >= 100:
        return "sm_100"
    return f"sm_{n}"


def profile(path: str, arch: str) -> str | nm.ModelParams:
    fam = arch_family(arch)
    try:
        return DEVICE_PROFILES[(path, fam)]
    except KeyError:
        raise ValueError(f"{path} has no device profile for {arch} (known: "
                         f"{', '.join(a for p, a in DEVICE_PROFILES if p == path)})") from None


HMMA_OPERAND_FORMAT: dict[str, str] = {"hmma_fp8_emulation": "fp16"}
"""Model name -> the format the operands have when the block FMA aligns them (the F2FP lowering's rule).

Why: Hopper lowers fp8 mma.sync to F2FP (fp8 -> f16, exact) + HMMA.16816, so the HMMA anchors each block on
the *f16* exponents of its operands. An e4m3 subnormal (2**-9 .. 7 * 2**-9) is a normal f16 and counts at its
own exponent, not at e4m3's emin -6 (e5m2 and f16 share emin -14: nothing changes for e5m2). With the e4m3 emin
an anchor can sit up to 3 binades too high and truncate a small product of the block that silicon keeps.
Evidence (register AMB-MMASYNC-FP8-SUBNORMAL-ANCHOR): ``validation/fuzz-tc/h200-2026-11-25-heldout2``
launch ``s33.0001.mma_sync`` (e5m2 x e4m3 -> f32), case 4 D(1, 2): the block {k mod 4 in 0, 1} holds
-16384 x 2**-9 = -32 (e4m3 subnormal b) and 27 * 2**-20; anchored at 14 - 6 = 8 the small product truncates
to 3 * 2**-17 and D = 0xc293effd, anchored at 14 - 9 = 5 it stays exact and D = 0xc293effc = silicon; case 7
D(2, 1) likewise (14336 x 3 * 2**-9 = 84: 0x41937492 -> 0x41937493 = silicon). Every other fp8 mma.sync D
element of the three records (30,100 dot products with an e4m3 subnormal operand among 67,840) is unchanged,
and the published B200 fp32/fp16 and H100/H200 fp16 files stay 5000/5000 (2,466 of their vectors hold an e4m3
subnormal; they do not discriminate). Not for wgmma: QGMMA reads fp8 natively, and the same rule planted on
``hopper_wgmma_fp8`` breaks 15 wgmma launches of the records (83 D elements). The oracle's
``reference.numeric_model`` keeps the e4m3 emin (untouched).
"""


def operand_formats(model: str | nm.ModelParams, in_format: tuple[str, str]) -> tuple[str, str]:
    """The (a, b) formats whose exponent range anchors ``model``'s blocks (:data:`HMMA_OPERAND_FORMAT`).

    The values are exact in both (every e4m3/e5m2 value is an f16 value): only the anchor of a
    subnormal input moves."""
    name = model if isinstance(model, str) else model.name
    conv = HMMA_OPERAND_FORMAT.get(name)
    return (conv, conv) if conv else in_format


def dot(model: str | nm.ModelParams, a: np.ndarray, b: np.ndarray, c: np.ndarray, out: str,
        in_format: tuple[str, str], scale_a: np.ndarray | None = None,
        scale_b: np.ndarray | None = None) -> np.ndarray:
    """Row-wise d = a.b + c (V, K) -> (V,) float64 through ``reference.numeric_model.dot``, the operands
    in the format the path aligns them in (:func:`operand_formats`)."""
    return nm.dot(model, a, b, c, out, in_format=operand_formats(model, in_format), scale_a=scale_a,
                  scale_b=scale_b)


def exact_model(model: str | nm.ModelParams) -> bool:
    """True for a model whose answer is the correctly rounded exact sum (``exact_rne``): only its f32 result
    may come from :func:`mmacts.ptxvm.warpmma.exact_f32.matrix_dot`'s float64 shortcut."""
    params = nm.MODELS.get(model) if isinstance(model, str) else model
    return params is not None and params.exact and params.subnormals and params.out["fp32"].frmode == "rne"


F16_INF_RULE_DECIDED: dict[tuple[str, str, str], str] = {
    ("mma_sync.fp8", "sm_90", "hmma_fp8_emulation"):
        "validation/fuzz-tc/h100-2026-11-25: all 26112 f16 D elements of its 46 f16 mma.sync launches",
}
"""(path, arch family, model name) -> the silicon record that decides the f16 infinity rule there."""

F16_INF_PROBE = ("record the fuzz_tc mma.sync f16 launches on that GPU (python -m mmacts.validation.fuzz_tc build; "
                 "bash mmacts/validation/fuzz_tc/device.sh; python -m mmacts.validation.fuzz_tc store) and replay them")
"""The probe that decides the rule on a path :data:`F16_INF_RULE_DECIDED` does not list."""


def ieee_nan(model: str | nm.ModelParams, a: np.ndarray, b: np.ndarray, c: np.ndarray, out: str,
             in_format: tuple[str, str]) -> np.ndarray:
    """(V,) bool: where d = a.b + c is NaN when each block of ``model`` is an IEEE operation.

    The blocks run in the model's order (``nm.block_order``), each one ``acc + sum(products)`` on
    the incoming accumulator: NaN if a product or acc is NaN or +Inf meets -Inf among them; else +-Inf
    if one is infinite; else the model's finite block (rounded to ``out``; an overflow gives +-Inf,
    which the next block then meets as an infinity). ``c_placement == "last"``: acc starts at 0 and C
    is added at the end under the same rule; ``aligned``: acc starts at C. ``a``/``b`` (V, K), ``c`` (V,)
    exact in their formats (no block scales).
    """
    params = nm.MODELS[model] if isinstance(model, str) else model
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    c = np.asarray(c, dtype=np.float64)
    k = a.shape[-1]
    with np.errstate(invalid="ignore", over="ignore"):
        prods = a * b  # exact for fp8 x fp8; Inf x 0 is NaN
    one = params if params.exact else dataclasses.replace(params, fma=k, blocks="contiguous",
                                                          c_placement="aligned")
    last = params.c_placement == "last" and not params.exact
    acc = np.zeros(c.shape) if last else c.copy()
    for idx in nm.block_order(k, params):
        p = prods[:, idx]
        fin = np.isfinite(p)
        nan = np.isnan(p).any(axis=1) | np.isnan(acc)
        pos = np.isposinf(p).any(axis=1) | np.isposinf(acc)
        neg = np.isneginf(p).any(axis=1) | np.isneginf(acc)
        # the finite block on what is finite (zeroed pairs add nothing; the result is only used where
        # nothing above is special)
        r = dot(one, np.where(fin, a[:, idx], 0.0), np.where(fin, b[:, idx], 0.0),
                np.where(np.isfinite(acc), acc, 0.0), out, in_format)
        acc = np.where(nan | (pos & neg), np.nan, np.where(pos, np.inf, np.where(neg, -np.inf, r)))
    if last:
        return np.isnan(acc) | np.isnan(c) | (np.isposinf(acc) & np.isneginf(c)) | (
            np.isneginf(acc) & np.isposinf(c))
    return np.isnan(acc)
