"""Where the block-scale probes run: mma.sync block_scale (sm_120a) and tcgen05.mma block_scale (sm_100a).

mma.sync: each vector is row 0 of A, column 0 of B, SF_A of row 0, SF_B of column 0 and C[0][0]
of one warp's m16n8k{32,64} (every other element 0, every other SF 1.0); D[0][0] is read. The
register images come from the mma.sync suite's encoders (``reference.mma_sync.recipes.encode_case``)
and the kernel from ``mmacts.ptx.mma_sync_kernels.mma_sync_blockscale_module`` - the same module
the ``mma_sync_blockscale`` suite launches - so a probe run also exercises them. On the model
backend the register image is decoded back (fragment maps + selector rules) and the planted
hypothesis is evaluated on what was decoded.

tcgen05: vector i of a chunk of 128 is row i of A, column i of B and C[i][i] of one
M=128 N=128 cta_group::1 MMA; D[i][i] is read. The CTA programs are built by the tcgen05 suite's
``build.build`` (read-only use: its data recipe is swapped for the probe data, see
:func:`tcgen05_inputs`) and launched with its kernel; on the model backend the planted hypothesis
is evaluated on the logical vectors (``test_blockscale_paths`` checks the placement through the
tcgen05 machine model).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from mmacts.backends import cuda_runtime as cr
from mmacts.ptx import mma_sync_kernels as kern
from mmacts.ptx import tcgen05_kernels as K
from reference import formats as F
from reference import gemm as G
from reference import numeric_model as NM
from reference.mma_sync import fragments as fr
from reference.mma_sync import recipes
from reference.mma_sync import scales as sc
from reference.mma_sync.model import BlockScaleForm
from reference.tcgen05_model import machine
from suites.mma_sync_blockscale.driver import instruction_text
from suites.probes.blockscale_model import BSParams, evaluate
from suites.probes.blockscale_vectors import FORMS, ML_DTYPES, BSArrays, BSForm, BSVector, element_codes, stack_bs
from suites.tcgen05_blockscale import build as B
from suites.tcgen05_blockscale import cases as C
from suites.tcgen05_blockscale.driver import _allow_smem, _form


@dataclass(frozen=True)
class BSPath:
    """One instruction path a block-scale probe runs on."""

    name: str
    family: str
    """``mma_sync`` or ``tcgen05``."""
    arch: str
    form: BSForm
    planted: str
    """The ``reference.numeric_model`` hypothesis a model-backend run plants (notes §7.4)."""

    @property
    def tcgen05(self) -> bool:
        return self.family == "tcgen05"

    def instruction(self) -> str:
        f = self.form
        if self.tcgen05:
            return K.KernelForm(f.kind, f.scale_vec, arch=self.arch).instruction()

        return instruction_text(BlockScaleForm(f.kind, f.etype, f.etype, f.stype, f.scale_vec))

    def supported(self, cc: tuple[int, int]) -> str | None:
        """``None`` when a GPU of capability ``cc`` runs this path's cubin, else the reason."""
        have = f"sm_{cc[0]}{cc[1]}"
        if self.tcgen05:
            if tuple(cc) == (10, 0):
                return None
            return (f"tcgen05.mma block_scale probe needs sm_100a (compute capability 10.0, a B200/GB200); "
                    f"this GPU is {have}")
        if tuple(cc) in ((12, 0), (12, 1)):
            return None
        return (f"mma.sync block_scale probe needs sm_120a/sm_121a (compute capability 12.0/12.1); "
                f"this GPU is {have}")


TCGEN05_FORMS = ("mxf8f6f4.1X", "mxf4.2X", "mxf4nvf4.2X", "mxf4nvf4.4X", "mxf4nvf4.4X.ue4m3")
BS_PATHS: dict[str, BSPath] = {
    p.name: p for p in (
        [BSPath(f"mma_sync.sm_120a.{t}", "mma_sync", "sm_120a", f, "ada_qmma_fp8") for t, f in FORMS.items()]
        + [BSPath(f"tcgen05.sm_100a.{t}", "tcgen05", "sm_100a", FORMS[t], "b200_tcgen05_hypothesis")
           for t in TCGEN05_FORMS]
    )
}
"""Path name -> path. Planted: Ada's native QMMA numbers for sm_120a mma.sync, the published B200
claim for tcgen05 (numeric-models.md §7.4 'Hypotheses ...'); both are guesses until hardware runs."""


def reference_bs_evaluator(model: Any):
    """(form, arrays) -> d through ``reference.numeric_model.dot`` with ``reference.formats``'s
    readings of the scale codes (an implementation independent of this package's model);
    enable-input-d = false reads C as 0."""
    def run(form: BSForm, x: BSArrays) -> np.ndarray:
        sa = F.decode(form.stype, x.sa.astype(np.uint8))
        sb = F.decode(form.stype, x.sb.astype(np.uint8))
        c = np.where(x.enable_d, x.c, 0.0)
        return NM.dot(model, x.a, x.b, c, "fp32", in_format=form.etype, scale_a=sa, scale_b=sb)

    return run


def model_evaluator(p: BSParams):
    """(form, arrays) -> d under a hypothesis of :mod:`suites.probes.blockscale_model`."""
    return lambda form, x: evaluate(p, form, x)


# ------------------------------------------------------------------------------------ mma.sync


def _bsform(form: BSForm):
    return BlockScaleForm(form.kind, form.etype, form.etype, form.stype, form.scale_vec)


def _encode_chunk(form: BSForm, x: BSArrays, sel) -> Any:
    n = len(x)
    a = np.zeros((n, 16, form.k), dtype=np.uint8)
    b = np.zeros((n, form.k, 8), dtype=np.uint8)
    a[:, 0, :] = element_codes(x.a, form.etype)
    b[:, :, 0] = element_codes(x.b, form.etype)
    sfa = np.full((n, 16, form.nsf), form.one_code(), dtype=np.uint8)
    sfb = np.full((n, form.nsf, 8), form.one_code(), dtype=np.uint8)
    sfa[:, 0, :] = x.sa
    sfb[:, :, 0] = x.sb
    c = np.zeros((n, 16, 8), dtype=np.float32)
    c[:, 0, 0] = x.c.astype(np.float32)
    case = recipes.LogicalCase(a, b, sfa, sfb, c)
    return recipes.encode_case(_bsform(form), case, sel)


def mma_sync_images(form: BSForm, vectors: Sequence[BSVector]) -> dict[str, np.ndarray]:
    """Register images [n, 32, ...] and selector words for ``mma_bs`` (one warp per vector).

    The scale encoder fills unselected lanes/bytes with poison codes that must differ from every
    real code of its batch; a batch whose probe codes leave too few poison values is split.
    """
    sel = sc.all_selectors(form.scale_vec)[0]
    x = stack_bs(form, vectors)

    def enc(lo: int, hi: int) -> list[Any]:
        sub = BSArrays(x.a[lo:hi], x.b[lo:hi], x.sa[lo:hi], x.sb[lo:hi], x.c[lo:hi])
        try:
            return [_encode_chunk(form, sub, sel)]
        except ValueError:
            if hi - lo == 1:
                raise
            mid = (lo + hi) // 2
            return enc(lo, mid) + enc(mid, hi)

    parts = enc(0, len(vectors))
    cat = {k: np.concatenate([getattr(r, k) for r in parts]) for k in ("a", "b", "c", "sfa", "sfb")}

    cat["sel"] = np.array(kern.pack_selectors([sel.as_tuple()] * len(vectors)), dtype=np.uint32)
    return cat


def mma_sync_decode(form: BSForm, img: dict[str, np.ndarray]) -> BSArrays:
    """What the instruction reads back from the images: row 0 of A, column 0 of B, their SFs, C[0][0]."""
    sel = sc.all_selectors(form.scale_vec)[0]
    bits = 8 if form.etype != "e2m1" else 4
    shift = fr.container_shift(form.kind, form.etype)
    a = fr.decode(img["a"], fr.a_layout(form.k), bits, shift)[:, 0, :]
    b = fr.decode(img["b"], fr.b_layout(form.k), bits, shift)[:, :, 0]
    dt = ML_DTYPES[form.etype]
    return BSArrays(
        a=np.asarray(a, dtype=np.uint8).view(dt).astype(np.float64),
        b=np.asarray(b, dtype=np.uint8).view(dt).astype(np.float64),
        sa=sc.decode_sfa(img["sfa"], form.scale_vec, sel)[:, 0, :].astype(np.int64),
        sb=sc.decode_sfb(img["sfb"], form.scale_vec, sel)[:, :, 0].astype(np.int64),
        c=fr.decode_f32(img["c"])[:, 0, 0].astype(np.float64),
    )


def mma_sync_module_ptx(form: BSForm) -> str:
    return kern.mma_sync_blockscale_module(form.kind, form.etype, form.etype, form.stype, form.scale_vec,
                                           arch="sm_120a")


def run_mma_sync_gpu(form: BSForm, vectors: Sequence[BSVector], module: Any) -> tuple[np.ndarray | None, float | None,
                                                                                         str]:
    """Launch every vector (one warp each); returns (D[0][0] values, kernel us, status)."""
    img = mma_sync_images(form, vectors)
    mod = cr.as_module(module)
    rt = mod.rt
    n = len(vectors)
    args = [rt.to_device(img[k]) for k in ("a", "b", "c", "sfa", "sfb", "sel")]
    d = rt.empty((n, 32, 4), np.uint32)
    res = mod.launch("mma_bs", (-(-n // kern.WARPS_PER_CTA),), (32 * kern.WARPS_PER_CTA,), (*args, d, np.uint32(n)))
    if res.status != "ok":
        return None, None, f"{res.status}: {res.message}"
    return fr.decode_f32(rt.to_host(d))[:, 0, 0].astype(np.float64), res.kernel_us, "ok"


# ------------------------------------------------------------------------------------- tcgen05

TC_N = 128


def tcgen05_case(form: BSForm):
    """A tcgen05 suite case of the probe's shape (M = N = 128, cta_group::1, dense, SF via st,
    C preloaded into D: enable-input-d is switched off afterwards where a vector asks)."""
    return C.make_case("standard", form.kind, form.scale_vec, m=128, n=TC_N, atype=form.etype, btype=form.etype,
                       stype=form.stype, recipe="random", enable_d=True)


def _gemm_data(form: BSForm, x: BSArrays):
    """GemmData of one chunk (<= 128 vectors): vector i on the diagonal, everything else 0 x 0."""
    n = len(x)
    a = np.zeros((128, form.k), dtype=np.uint8)
    b = np.zeros((form.k, TC_N), dtype=np.uint8)
    a[:n] = element_codes(x.a, form.etype)
    b[:, :n] = element_codes(x.b, form.etype).T
    sa = np.full((128, form.nsf), form.one_code(), dtype=np.uint8)
    sb = np.full((form.nsf, TC_N), form.one_code(), dtype=np.uint8)
    sa[:n] = x.sa
    sb[:, :n] = x.sb.T
    c = np.zeros((128, TC_N))
    c[np.arange(n), np.arange(n)] = x.c
    return G.GemmData(a, b, sa, sb, c, np.full((128, TC_N), np.nan), form.etype, form.etype, form.stype, form.vs)


@contextmanager
def _recipe(data):
    """Swap the tcgen05 suite's random-data recipe for ``data`` while its builder runs.

    Why a swap: ``suites.tcgen05_blockscale.build.build`` draws its own data; the probes need the
    same encoders with chosen data, and that builder is another suite's file (read-only here).
    """
    saved = B.random_data
    B.random_data = lambda *args, **kw: data
    try:
        yield B
    finally:
        B.random_data = saved


def tcgen05_inputs(form: BSForm, vectors: Sequence[BSVector]) -> list[tuple[Any, Any, int]]:
    """(case, CaseInputs, n vectors) per chunk of 128 vectors of equal enable-input-d."""
    out = []
    for flag in (True, False):
        vs = [v for v in vectors if v.enable_d == flag]
        for lo in range(0, len(vs), 128):
            chunk = vs[lo:lo + 128]
            case = tcgen05_case(form)
            with _recipe(_gemm_data(form, stack_bs(form, chunk))) as B:
                inp = B.build(case)
            if not flag:  # D preloaded with C, MMA issued with enable-input-d = false
                progs = []
                for pr in inp.programs:
                    mmas = [replace(m, enable_input_d=False) for m in pr.mmas]
                    progs.append(replace(pr, mmas=mmas))
                inp.programs = progs
            out.append((case, inp, len(chunk)))
    return out


def _order(vectors: Sequence[BSVector]) -> list[int]:
    """Vector indices in the order :func:`tcgen05_inputs` places them."""
    return [i for flag in (True, False) for i, v in enumerate(vectors) if v.enable_d == flag]


def tcgen05_module_ptx(form: BSForm) -> str:
    return K.module_ptx(K.KernelForm(form.kind, form.scale_vec, arch="sm_100a"))


def tcgen05_model_diagonal(form: BSForm, vectors: Sequence[BSVector], arithmetic: str) -> np.ndarray:
    """D[i][i] of every chunk through the tcgen05 machine model (placement check, not a hypothesis)."""
    vals = []
    for case, inp, n in tcgen05_inputs(form, vectors):
        dumps = machine.run(_form(case), inp.programs, machine.Hypotheses(arithmetic=arithmetic))
        d = B.decode_output(inp, dumps)
        vals.append(np.diagonal(d)[:n].astype(np.float64))
    out = np.empty(len(vectors))
    out[_order(vectors)] = np.concatenate(vals) if vals else []
    return out


def run_tcgen05_gpu(form: BSForm, vectors: Sequence[BSVector], module: Any) -> tuple[np.ndarray | None, float | None,
                                                                                       str]:
    """Launch every chunk (one CTA each) with the tcgen05 suite's kernel; D[i][i] per vector."""
    mod = cr.as_module(module)
    chunks = tcgen05_inputs(form, vectors)
    kform = _form(chunks[0][0])
    progs = [p for _, inp, _ in chunks for p in inp.programs]
    launch = K.pack(progs)
    dp, db = mod.rt.to_device(launch.params), mod.rt.to_device(launch.blob)
    dout = mod.rt.empty((launch.out_bytes // 4,), np.uint32)
    dst = mod.rt.empty((len(progs),), np.uint32)
    _allow_smem(mod, kform.entry_name, launch.smem_bytes)
    res = mod.launch(kform.entry_name, (len(progs), 1, 1), (128, 1, 1), [dp, db, dout, dst],
                     shared_mem=launch.smem_bytes)
    if res.status != "ok":
        return None, None, f"{res.status}: {res.message}"
    status = mod.rt.to_host(dst)
    if (status == K.STATUS_TIMEOUT).any():
        return None, None, "timeout: a CTA's bounded wait expired"
    dumps = K.unpack_out(mod.rt.to_host(dout), launch)
    vals, pos = [], 0
    for _, inp, n in chunks:
        d = B.decode_output(inp, dumps[pos:pos + len(inp.programs)])
        pos += len(inp.programs)
        vals.append(np.diagonal(d)[:n].astype(np.float64))
    out = np.empty(len(vectors))
    out[_order(vectors)] = np.concatenate(vals)
    return out, res.kernel_us, "ok"


def element_values(codes: np.ndarray, etype: str) -> np.ndarray:
    return np.asarray(codes, dtype=np.uint8).view(ML_DTYPES[etype]).astype(np.float64)
