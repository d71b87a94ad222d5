"""Hopper validation suite: prove the harness on the silicon we have (H100/H200, sm_90a).

What each family proves:

* ``mma_sync`` m16n8k32 f32.e4m3/e5m2 (4 type pairs): the A/B/C/D fragment encoders that the
  sm_120a block-scale suite shares (same m16n8k32 layout), the CuPy runtime and the readback;
* ``wgmma`` fp8 (K-major) and bf16 (K-/MN-major A and B) from shared memory, every swizzle:
  the shared-memory image encoder (``reference.tcgen05.smem_image``, same canonical layouts
  as tcgen05) and the descriptor fields, on silicon;
* ``published``: the 5000 published E4M3 vectors through mma.sync (HMMA emulation path) must
  give the B200 fp32 file and the B200/H100/H200 fp16 files bit for bit, and through wgmma
  (QGMMA) the H100/H200 fp32 files (C = 0, as those were measured);
* ``random`` recipes compare each path with its named numeric model on fresh inputs
  (``reference.numeric_model``); over a K of several wgmma steps the model's chaining rule is
  a hypothesis, so those cases are ``observe`` and report their agreement count.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mmacts.backends import cuda_runtime as cr
from mmacts.cases.model import Case
from mmacts.core.driver import Driver, Expectation, LaunchResult
from mmacts.ptx import mma_sync_kernels as kern
from reference import formats as ref_formats
from reference import numeric_model as nm
from reference import published
from reference.gemm import all_exact_in_fp32
from reference.gemm import exact_gemm as ref_exact_gemm
from reference.mma_sync import fragments as fr
from reference.mma_sync.model import exact_rne_f32
from reference.mma_sync.values import decode_elements, element_table, encode_elements
from suites.hopper_validation import wgmma_layout as wl
from suites.hopper_validation.fields import (
    HopperForm,
    HopperRuntime,
    MmaSyncForm,
    MmaSyncRuntime,
    WgmmaForm,
    WgmmaRuntime,
)

SUITE = "hopper_validation"
ARCH = "sm_90a"
FP8 = ("e4m3", "e5m2")
SWIZZLES = ("none", "32B", "64B", "128B")
WG_N = 64
PUB_IMG_BYTES = 4096  # published replay: K = 32 (one step), A at 0, B at 2048
EXACT_VALUES = np.array([0.5, 1.0, 1.5, 2.0])
HMMA_MODEL = "hmma_fp8_emulation"
WGMMA_MODEL = "hopper_wgmma_fp8"


def _case(cid: str, instruction: str, level: str, form: HopperForm, runtime: HopperRuntime, recipe: str,
          seed: int = 0, rows: tuple[str, ...] = ()) -> Case:
    return Case(case_id=cid, suite=SUITE, instruction=instruction, arch=ARCH, spec_rows=rows, level=level,
                form=form, runtime=runtime, recipe=recipe, seed=seed)


def _mma_instr(a: str, b: str, d: str) -> str:
    return f"mma.sync.aligned.m16n8k32.row.col.{d}.{a}.{b}.{d}"


def _wg_instr(a: str, b: str) -> str:
    k = 16 if a == "bf16" else 32
    return f"wgmma.mma_async.sync.aligned.m64n{WG_N}k{k}.f32.{a}.{b}"


def enumerate_cases() -> list[Case]:
    """Every case with its level (smoke < standard < full)."""
    out: list[Case] = []
    for a in FP8:
        for b in FP8:
            form = MmaSyncForm(atype=a, btype=b, dtype="f32")
            for s in range(4):
                lvl = "smoke" if s == 0 else ("standard" if s < 2 else "full")
                out.append(_case(f"hopper.mma_sync.m16n8k32.f32.{a}x{b}/exact-s{s}", _mma_instr(a, b, "f32"),
                                 lvl, form, MmaSyncRuntime(), "exact", s))
                out.append(_case(f"hopper.mma_sync.m16n8k32.f32.{a}x{b}/random-s{s}", _mma_instr(a, b, "f32"),
                                 "standard" if s < 2 else "full", form, MmaSyncRuntime(), "random", s))
            wform = WgmmaForm(atype=a, btype=b)  # the defaults: K-major, WG_KBYTES of K, an IMG_BYTES image
            for sw in SWIZZLES:
                rt = WgmmaRuntime(swizzle=sw, a_major="K", b_major="K")
                lvl = "smoke" if (sw == "128B" and a == b == "e4m3") else "standard"
                out.append(_case(f"hopper.wgmma.m64n{WG_N}k32.f32.{a}x{b}/K-K.{sw}/exact",
                                 _wg_instr(a, b), lvl, wform, rt, "exact", 0))
                out.append(_case(f"hopper.wgmma.m64n{WG_N}k32.f32.{a}x{b}/K-K.{sw}/random",
                                 _wg_instr(a, b), "standard", wform, rt.replace(zero_c=1), "random", 1))
    for am in ("K", "MN"):
        for bm in ("K", "MN"):
            wform = WgmmaForm(atype="bf16", btype="bf16", trans_a=int(am == "MN"), trans_b=int(bm == "MN"))
            for sw in SWIZZLES:
                lvl = "smoke" if (sw == "128B" and am == bm == "MN") else "standard"
                out.append(_case(f"hopper.wgmma.m64n{WG_N}k16.f32.bf16/{am}-{bm}.{sw}/exact",
                                 _wg_instr("bf16", "bf16"), lvl, wform,
                                 WgmmaRuntime(swizzle=sw, a_major=am, b_major=bm), "exact", 0))
    # IEEE infinities through the f16-accumulator path (the VM's per-block NaN/Inf rule, numerics.ieee_nan)
    sform = MmaSyncForm(atype=SPECIALS_TYPE, btype=SPECIALS_TYPE, dtype="f16")
    out.append(_case(f"hopper.mma_sync.m16n8k32.f16.{SPECIALS_TYPE}x{SPECIALS_TYPE}/inf-specials",
                     _mma_instr(SPECIALS_TYPE, SPECIALS_TYPE, "f16"),
                     "standard", sform, MmaSyncRuntime(), "specials"))
    # published-data replays (one case = all 5000 vectors)
    for gpu, dt in (("B200", "f32"), ("B200", "f16"), ("H100", "f16"), ("H200", "f16")):
        form = MmaSyncForm(atype="e4m3", btype="e4m3", dtype=dt)
        out.append(_case(f"hopper.published.mma_sync.e4m3.{dt}/{gpu}", _mma_instr("e4m3", "e4m3", dt),
                         "smoke", form, MmaSyncRuntime(gpu=gpu), "published"))
    pform = WgmmaForm(atype="e4m3", btype="e4m3", steps=1, img=PUB_IMG_BYTES)
    for gpu in ("H100", "H200"):
        out.append(_case(f"hopper.published.wgmma.e4m3.f32/{gpu}", _wg_instr("e4m3", "e4m3"), "smoke", pform,
                         WgmmaRuntime(gpu=gpu, swizzle="32B", a_major="K", b_major="K"),
                         "published"))
    return out


# ------------------------------------------------------------------------------------------ data

def _exact_values(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.choice(EXACT_VALUES, size=shape) * rng.choice([-1.0, 1.0], size=shape)


def _random_codes(rng: np.random.Generator, etype: str, shape: tuple[int, ...]) -> np.ndarray:
    finite = np.nonzero(np.isfinite(element_table(etype)))[0]
    return rng.choice(finite, size=shape).astype(np.uint8)


def _bf16_codes(values: np.ndarray) -> np.ndarray:
    bits = np.asarray(values, dtype=np.float32).view(np.uint32)
    if np.any(bits & 0xFFFF):
        raise ValueError("value not exact in bf16")
    return (bits >> 16).astype(np.uint16)


def _bf16_values(codes: np.ndarray) -> np.ndarray:
    return (codes.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def _mma_inputs(case: Case, f: MmaSyncForm, rt: MmaSyncRuntime) -> dict[str, Any]:
    rng = np.random.default_rng([hash_id(case.case_id), case.seed])
    if case.recipe == "published":
        ps = published.load(rt.gpu)
        nvec = ps.a.shape[0]
        w = -(-nvec // 8)
        cv = np.zeros(w * 8)
        cv[:nvec] = ps.c
        C = np.zeros((w, 16, 8))
        C[:, np.arange(8), np.arange(8)] = cv.reshape(w, 8)
        ops = _published_operands(("mma", f.atype, f.btype), ps, lambda: _published_mma_operands(ps))
        return dict(_pack_c(f, C), **ops, C=C, nvec=nvec, want_bits=ps.d["fp32" if f.dtype == "f32" else "fp16"])
    if case.recipe == "specials":
        a_codes, b_codes, C = _special_operands()
        return _pack_mma(f, a_codes, b_codes, C)
    if case.recipe == "exact":
        A, B = _exact_values(rng, (1, 16, 32)), _exact_values(rng, (1, 32, 8))
        C = rng.integers(-64, 65, size=(1, 16, 8)) * 0.25
        a_codes, b_codes = encode_elements(A, f.atype), encode_elements(B, f.btype)
    else:
        a_codes = _random_codes(rng, f.atype, (1, 16, 32))
        b_codes = _random_codes(rng, f.btype, (1, 32, 8))
        C = rng.standard_normal((1, 16, 8)).astype(np.float32).astype(np.float64)
    return _pack_mma(f, a_codes, b_codes, C)


SPECIALS_TYPE = "e5m2"
"""A and B type of the ``specials`` case: the fp8 type with infinities (E4M3 has none)."""
E5M2_POS_INF, E5M2_NEG_INF = 0x7C, 0xFC


def _special_operands() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(A codes, B codes, C) of the ``specials`` case: e5m2 A rows with +-Inf at chosen K, B all 1.0 (each
    product is its A element), f16 C with +-Inf in chosen rows. The f16 path's lowering runs in blocks (the
    model's mod-4 pairs, C added last), so where an infinity sits decides which block meets which:
    row 0: -Inf at every K (every block meets the -Inf accumulator of the one before), C = +Inf -> NaN;
    row 1: +Inf at K 0, C = -Inf -> NaN (the accumulator's +Inf meets C last); row 2: -Inf at K 0, C = +Inf
    -> NaN; row 3: +Inf at K 5, C finite -> +Inf; row 4: -Inf at K 3 and +Inf at K 30 -> NaN; row 5: -Inf
    at K 0 and K 17, C = -Inf -> -Inf. Every other value is a small multiple of 1/2: each block's sum is
    exact in f16, so no block overflows (the overflow rule is AMB-MMASYNC-F16-OVERFLOW-INF's, not this
    case's) and the answer is the IEEE one of the exact sum (``reference.gemm.exact_gemm``)."""
    rng = np.random.default_rng(26)
    A = rng.choice([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0], size=(1, 16, 32))
    C = rng.integers(-8, 9, size=(1, 16, 8)) * 0.5
    a_codes = encode_elements(A, SPECIALS_TYPE)
    b_codes = encode_elements(np.ones((1, 32, 8)), SPECIALS_TYPE)
    a_codes[0, 0, :] = E5M2_NEG_INF
    a_codes[0, 1, 0], a_codes[0, 2, 0], a_codes[0, 3, 5] = E5M2_POS_INF, E5M2_NEG_INF, E5M2_POS_INF
    a_codes[0, 4, 3], a_codes[0, 4, 30] = E5M2_NEG_INF, E5M2_POS_INF
    a_codes[0, 5, 0], a_codes[0, 5, 17] = E5M2_NEG_INF, E5M2_NEG_INF
    C[0, 0], C[0, 1], C[0, 2], C[0, 5] = np.inf, -np.inf, np.inf, -np.inf
    return a_codes, b_codes, C


def _specials_want(inputs: dict[str, Any]) -> np.ndarray:
    """The ``specials`` case's answer: ``reference.gemm.exact_gemm`` (IEEE NaN/Inf rules on the exact sum) of
    the codes decoded by ``reference.formats``; its finite values are exact in f16 by construction."""
    A = ref_formats.decode(SPECIALS_TYPE, inputs["a_codes"][0])
    B = ref_formats.decode(SPECIALS_TYPE, inputs["b_codes"][0])
    want = ref_exact_gemm(A, B, np.asarray(inputs["C"][0], dtype=np.float64))
    fin = np.isfinite(want)
    if np.any(want[fin].astype(np.float16).astype(np.float64) != want[fin]):
        raise AssertionError("hopper specials recipe produced finite data that is not exact in f16")
    return want.astype(np.float32)


def _pack_c(f: MmaSyncForm, C: np.ndarray) -> dict[str, Any]:
    if f.dtype == "f32":
        return {"kind": "mma", "c": fr.encode_f32(C.astype(np.float32))}
    return {"kind": "mma", "c": fr.encode_f16(C.astype(np.float16))}  # RNE, as the published kernel converts c


def _pack_ab(a_codes: np.ndarray, b_codes: np.ndarray) -> dict[str, Any]:
    return dict(a=fr.encode(a_codes, fr.a_layout(32)), b=fr.encode(b_codes, fr.b_layout(32)),
                a_codes=a_codes, b_codes=b_codes)


def _pack_mma(f: MmaSyncForm, a_codes: np.ndarray, b_codes: np.ndarray, C: np.ndarray, **extra: Any) -> dict[str, Any]:
    return dict(_pack_c(f, C), **_pack_ab(a_codes, b_codes), C=C, **extra)


_INPUT_CACHE: dict[tuple, tuple[Any, dict[str, Any]]] = {}


def _published_operands(key: tuple, ps: Any, build: Any) -> dict[str, Any]:
    """A published replay's encoded a/b operands, built once per input file content and layout: every
    GPU's files hold the same a and b (``reference.published`` shares the arrays), and the replays
    encoded the same 5000 x 32 operands for each GPU and output type (30-50 ms each on a GPU host).
    The arrays are read-only; the key holds the source arrays' identities (kept alive by the value).
    Named ``_INPUT_CACHE`` so the mutants engine empties it (``engine.clear_caches``): a planted encoder
    fault must not meet operands encoded before it."""
    full = (*key, id(ps.a), id(ps.b))
    if full not in _INPUT_CACHE:
        ops = build()
        for v in ops.values():
            if isinstance(v, np.ndarray):
                v.setflags(write=False)
        _INPUT_CACHE[full] = ((ps.a, ps.b), ops)
    return dict(_INPUT_CACHE[full][1])


def _published_mma_operands(ps: Any) -> dict[str, Any]:
    nvec = ps.a.shape[0]
    w = -(-nvec // 8)
    av = np.zeros((w * 8, 32))
    bv = np.zeros((w * 8, 32))
    av[:nvec], bv[:nvec] = ps.a, ps.b
    A = np.zeros((w, 16, 32))
    A[:, :8, :] = av.reshape(w, 8, 32)
    B = bv.reshape(w, 8, 32).transpose(0, 2, 1)
    return _pack_ab(encode_elements(A, "e4m3"), encode_elements(B, "e4m3"))


def hash_id(text: str) -> int:
    """Stable 32-bit hash of a case id (Python's hash() is salted per process)."""
    h = 2166136261
    for ch in text.encode():
        h = ((h ^ ch) * 16777619) & 0xFFFFFFFF
    return h


def _wg_inputs(case: Case, f: WgmmaForm, rt: WgmmaRuntime) -> dict[str, Any]:
    rng = np.random.default_rng([hash_id(case.case_id), case.seed])
    bf16 = f.atype == "bf16"
    eb = 2 if bf16 else 1
    steps = f.steps
    k = steps * 32 // eb
    k_step = 32 // eb
    img = f.img
    want_bits = None
    if case.recipe == "published":
        ps = published.load(rt.gpu)
        nvec = ps.a.shape[0]
        w = -(-nvec // 64)
        av = np.zeros((w * 64, 32))
        bv = np.zeros((w * 64, 32))
        av[:nvec], bv[:nvec] = ps.a, ps.b
        A = av.reshape(w, 64, 32)
        Bt = bv.reshape(w, 64, 32)  # (N, K)
        C = np.zeros((w, 64, WG_N))
        want_bits = ps.d["fp32"]
    elif case.recipe == "exact":
        w, nvec = 1, None
        A, Bt = _exact_values(rng, (1, 64, k)), _exact_values(rng, (1, WG_N, k))
        C = rng.integers(-64, 65, size=(1, 64, WG_N)) * 0.25
    else:
        w, nvec = 1, None
        A = decode_elements(_random_codes(rng, f.atype, (1, 64, k)), f.atype)
        Bt = decode_elements(_random_codes(rng, f.btype, (1, WG_N, k)), f.btype)
        # C = 0 (accumulated with scale-d = 1): the regime the published H100/H200 data and the
        # hopper_wgmma_fp8 model were validated in
        C = np.zeros((1, 64, WG_N)) if rt.zero_c else \
            rng.standard_normal((1, 64, WG_N)).astype(np.float32).astype(np.float64)
    def operands() -> dict[str, Any]:
        if bf16:
            a_codes, b_codes = _bf16_codes(A), _bf16_codes(Bt)
        else:
            a_codes, b_codes = encode_elements(A, f.atype), encode_elements(Bt, f.btype)
        imgs = np.zeros((w, img), dtype=np.uint8)
        descs = np.zeros((w, steps, 2), dtype=np.uint64)
        b_base = img // 2
        for i in range(w):  # per warpgroup image (w > 1 only for the 5000-vector replay)
            opa = wl.place_operand(a_codes[i], major=rt.a_major, swizzle=rt.swizzle, elem_bytes=eb,
                                   base=0, k_step=k_step, smem_size=img)
            opb = wl.place_operand(b_codes[i], major=rt.b_major, swizzle=rt.swizzle, elem_bytes=eb,
                                   base=b_base, k_step=k_step, smem_size=img)
            imgs[i] = opa.smem
            imgs[i, b_base:] = opb.smem[b_base:]
            descs[i, :, 0] = opa.descs
            descs[i, :, 1] = opb.descs
        return dict(img=imgs, desc=descs, a_codes=a_codes, b_codes=b_codes)

    if case.recipe == "published":
        ops = _published_operands(("wgmma", f.atype, f.btype, rt.a_major, rt.b_major, rt.swizzle,
                                   img, steps), ps, operands)
    else:
        ops = operands()
    return dict(kind="wgmma", **ops, c=wl.encode_d(C.astype(np.float32), WG_N), use_c=1,
                A=A, B=np.swapaxes(Bt, -1, -2), C=C, nvec=nvec, want_bits=want_bits)


# ------------------------------------------------------------------------------------------ driver

class HopperDriver(Driver):
    """The Hopper validation suite's :class:`~mmacts.core.driver.Driver`.

    Overrides (every other hook keeps the base class's default): the three every suite writes
    (:meth:`cases`, :meth:`module_ptx`, :meth:`device_supported`), the four of a suite that runs kernels
    (:meth:`make_inputs`, :meth:`expected`, :meth:`run_record_model`, :meth:`launch`), and two optional ones:
    :meth:`vm_reason` (every case runs on the VM) and :meth:`worth_caching`. Its own helpers are private
    (``_finish_*``): ``test_driver.test_the_driver_is_a_driver_and_every_public_method_is_a_hook`` keeps a
    misspelt hook from becoming a method nobody calls while the default runs in its place."""

    suite = SUITE

    def __init__(self) -> None:
        self._cases = enumerate_cases()

    def cases(self, level: str) -> list[Case]:
        return [c for c in self._cases if c.in_level(level)]

    def module_ptx(self, case: Case) -> str:
        f = case.form
        if isinstance(f, MmaSyncForm):
            return kern.mma_sync_fp8_module(f.atype, f.btype, dtype=f.dtype, arch=ARCH)
        return kern.wgmma_module(f.atype, WG_N, f.btype, steps=f.steps, img_bytes=f.img,
                                 trans_a=f.trans_a, trans_b=f.trans_b, arch=ARCH)

    def make_inputs(self, case: Case) -> dict[str, Any]:
        f = case.form
        if isinstance(f, MmaSyncForm):
            return _mma_inputs(case, f, case.runtime)
        return _wg_inputs(case, f, case.runtime)

    # -- answers -------------------------------------------------------------------------------
    def expected(self, case: Case, inputs: dict[str, Any]) -> Expectation:
        f = case.form
        if case.recipe == "published":
            bits = inputs["want_bits"].astype(np.uint32)
            return Expectation(bits.view(np.float32), "exact",
                               note=f"published {case.runtime.gpu} file, {len(bits)} vectors, bit for bit")
        if case.recipe == "exact":
            return Expectation(_exact_want(f, inputs), "exact", note="exact by construction (reference.gemm)")
        if case.recipe == "specials":
            return Expectation(_specials_want(inputs), "exact",
                               note="IEEE infinities in A and C, finite data exact in f16 (reference.gemm)")
        if inputs["kind"] == "mma":
            A = decode_elements(inputs["a_codes"], f.atype)
            B = decode_elements(inputs["b_codes"], f.btype)
            C = inputs["C"]
        else:
            A, B, C = inputs["A"], inputs["B"], inputs["C"]
        model = HMMA_MODEL if inputs["kind"] == "mma" else WGMMA_MODEL
        want = _model_d(model, A, B, C, f.atype, f.btype, "fp32")[0]
        if inputs["kind"] == "mma":
            return Expectation(want, f"model:{model}", note=f"numeric model {model}")
        return Expectation(want, "observe",
                           note=f"numeric model {model} over {f.steps} chained wgmma K-steps (hypothesis)")

    def worth_caching(self, case: Case) -> bool:
        """The answer cache keeps the model's and the exact GEMM's answers; a published replay's answer
        is its file's bits, already in the inputs: hashing its 5000-vector inputs (2-5 ms) would cost
        more than it saves."""
        return case.recipe != "published"

    def vm_reason(self, case: Case) -> str | None:
        """Every case's kernel runs on the PTX VM (``--backend model``)."""
        return None

    def run_record_model(self, case: Case, inputs: dict[str, Any]) -> LaunchResult:
        """CPU execution from the encoded operands (register images / smem image + descriptors)."""
        f = case.form
        if inputs["kind"] == "mma":
            a_codes = fr.decode(inputs["a"], fr.a_layout(32), 8)
            b_codes = fr.decode(inputs["b"], fr.b_layout(32), 8)
            A, B = decode_elements(a_codes, f.atype), decode_elements(b_codes, f.btype)
            if f.dtype == "f32":
                C = fr.decode_f32(inputs["c"]).astype(np.float64)
            else:
                C = fr.decode_f16(inputs["c"]).astype(np.float64)
            out = "fp32" if f.dtype == "f32" else "fp16"
            if case.recipe == "exact":
                D = exact_rne_f32(A, B, C)
            else:
                D = _model_d(HMMA_MODEL, A, B, C, f.atype, f.btype, out)
            return LaunchResult(self._finish_mma(case, inputs, D.astype(np.float32)))
        A, B = _read_wg_operands(f, case.runtime, inputs)
        C = inputs["C"]
        if case.recipe == "exact":
            D = exact_rne_f32(A, B, C)
        else:
            D = _model_d(WGMMA_MODEL, A, B, C, f.atype, f.btype, "fp32")
        return LaunchResult(self._finish_wg(case, inputs, D.astype(np.float32)))

    def _finish_mma(self, case: Case, inputs: dict[str, Any], D: np.ndarray) -> np.ndarray:
        if case.recipe == "published":
            diag = D[:, np.arange(8), np.arange(8)].reshape(-1)[: inputs["nvec"]]
            return diag.astype(np.float32)
        return D[0]

    def _finish_wg(self, case: Case, inputs: dict[str, Any], D: np.ndarray) -> np.ndarray:
        if case.recipe == "published":
            return D[:, np.arange(64), np.arange(64)].reshape(-1)[: inputs["nvec"]].astype(np.float32)
        return D[0]

    def launch(self, cases: list[Case], inputs: list[Any], module: Any) -> list[LaunchResult]:
        mod = cr.as_module(module)
        rt = mod.rt
        kind = inputs[0]["kind"]
        counts = [x["a"].shape[0] if kind == "mma" else x["img"].shape[0] for x in inputs]
        total = int(sum(counts))
        if kind == "mma":
            a = rt.to_device(np.concatenate([x["a"] for x in inputs]))
            b = rt.to_device(np.concatenate([x["b"] for x in inputs]))
            c = rt.to_device(np.concatenate([x["c"] for x in inputs]))
            cw = inputs[0]["c"].shape[-1]
            d = rt.empty((total, 32, cw), np.uint32)
            grid = (-(-total // kern.WARPS_PER_CTA),)
            res = mod.launch("mma_fp8", grid, (32 * kern.WARPS_PER_CTA,), (a, b, c, d, np.uint32(total)))
        else:
            img = rt.to_device(np.concatenate([x["img"] for x in inputs]))
            desc = rt.to_device(np.concatenate([x["desc"] for x in inputs]))
            c = rt.to_device(np.concatenate([np.broadcast_to(x["c"], (n,) + x["c"].shape[-2:])
                                             for x, n in zip(inputs, counts, strict=True)]))
            use_c = {x["use_c"] for x in inputs}
            if len(use_c) != 1:
                raise ValueError("cases of one wgmma launch must agree on use_c")
            d = rt.empty((total, 128, WG_N // 2), np.float32)
            res = mod.launch("wgmma", (total,), (128,), (img, desc, c, d, np.uint32(use_c.pop()),
                                                           np.uint32(total)))
        if res.status != "ok":
            return [LaunchResult(None, res.status, None, {"reason": res.message}) for _ in cases]
        host = rt.to_host(d)
        out, pos = [], 0
        for case, x, n in zip(cases, inputs, counts, strict=True):
            chunk = host[pos:pos + n]
            pos += n
            if kind == "mma":
                if case.form.dtype == "f32":
                    D = fr.decode_f32(chunk)
                else:
                    D = fr.decode_f16(chunk).astype(np.float32)
                got = self._finish_mma(case, x, D)
            else:
                got = self._finish_wg(case, x, wl.decode_d(chunk, WG_N))
            out.append(LaunchResult(got, "ok", res.kernel_us, {"launch_cases": len(cases)}))
        return out

    def device_supported(self, compute_capability: tuple[int, int]) -> str | None:
        if tuple(compute_capability) == (9, 0):
            return None
        return (f"hopper_validation needs sm_90a (wgmma); this GPU is sm_{compute_capability[0]}"
                f"{compute_capability[1]}")


def _exact_want(f: HopperForm, inputs: dict[str, Any]) -> np.ndarray:
    """The exact answer of an ``exact`` case, independent of the model path.

    Why not ``exact_rne_f32`` + ``values.decode_elements``: ``run_record_model`` uses those, so a
    shared mistake there would pass. Here the logical codes are decoded by ``reference.formats``
    and summed by ``reference.gemm.exact_gemm``; the data must also pass
    ``is_exact_in_fp32(window_bits=14)`` (exact even for Hopper's 13-fraction-bit fp8
    accumulators), or the case is not exact by construction and this raises."""
    if inputs["kind"] == "mma":
        A = ref_formats.decode(f.atype, inputs["a_codes"][0])
        B = ref_formats.decode(f.btype, inputs["b_codes"][0])
    else:
        A, B = inputs["A"][0], inputs["B"][0]
    C = np.asarray(inputs["C"][0], dtype=np.float64)
    if not all_exact_in_fp32(A, B, C, window_bits=14):
        raise AssertionError("hopper exact recipe produced data that is not exact by construction")
    return ref_exact_gemm(A, B, C).astype(np.float32)


def _read_wg_operands(f: WgmmaForm, rt: WgmmaRuntime, inputs: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """Read A (M x K) and B (K x N) back from each image through its descriptors (model side)."""
    bf16 = f.atype == "bf16"
    eb = 2 if bf16 else 1
    k_step = 32 // eb
    As, Bs = [], []
    for img, descs in zip(inputs["img"], inputs["desc"], strict=True):
        a = np.concatenate([wl.read_operand(img, int(dw[0]), 64, k_step, rt.a_major, eb) for dw in descs], axis=1)
        b = np.concatenate([wl.read_operand(img, int(dw[1]), WG_N, k_step, rt.b_major, eb) for dw in descs],
                           axis=1)
        As.append(a)
        Bs.append(b.T)
    A, B = np.stack(As), np.stack(Bs)
    if bf16:
        return _bf16_values(A), _bf16_values(B)
    return decode_elements(A, f.atype), decode_elements(B, f.btype)


def _model_d(model: str, A: np.ndarray, B: np.ndarray, C: np.ndarray, at: str, bt: str, out: str) -> np.ndarray:
    """D [..., M, N] from the numeric model, one dot product per output element."""
    m, k = A.shape[-2:]
    n = B.shape[-1]
    lead = A.shape[:-2]
    # rows of A against columns of B, broadcast: the model works on each operand once, not m x n times
    a = np.asarray(A, dtype=np.float64)[..., :, None, :]
    b = np.swapaxes(np.asarray(B, dtype=np.float64), -1, -2)[..., None, :, :]
    c = np.broadcast_to(np.asarray(C, dtype=np.float64), lead + (m, n)).reshape(-1)
    d = nm.dot(model, a, b, c, out, in_format=(at, bt))
    return d.reshape(lead + (m, n)).astype(np.float32)


DRIVER = HopperDriver()
