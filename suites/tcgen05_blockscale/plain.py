"""Cases of two ``tcgen05.mma`` features the block-scaled kinds do not have (9.7.16.10.9): the ``.ws`` collector
buffers ``::b0``-``::b3`` and the ``disable-output-lane`` mask, on ``kind::f8f6f4`` (E4M3 x E4M3, F32 D) with
the MMA kernel of ``mmacts.ptx.tcgen05_kernels`` (``KernelForm(block_scale=False, ws=..., dol=...)``).

Why here (issue 26): the suite cites those rows, and with no kernel issuing them a tensor core (or VM) that
mixed up the four B buffers or read the mask from the wrong end would pass every case.

* ``plain:ws-collectors``: four ``.ws`` MMAs accumulate into one D; each ``::fill`` of a buffer loads a new B
  (its own shared-memory image and descriptor), each ``::use``/``::lastuse`` names the descriptor of the B
  that buffer was filled with -- memory never changes, so every reading of "reuse is opportunistic" gives one
  answer: D = sum_i A_i . B_(buffer of i). A core that kept one buffer for all four names would sum another B
  (the sequences fill two buffers before using the first).
* ``plain:dol``: one MMA with enable-input-d over a preloaded, position-coded D and a 4-word mask that is not
  symmetric under bit reversal inside a word: masked lanes keep the old D (9.7.16.10.9.1: "least significant
  bit of the first element ... lane 0"; bit 1 = not updated).

Data: E4M3 values in {0, +-0.5, +-1, +-1.5, +-2}: every partial sum is exact in fp32, so the order of
accumulation does not matter (``exact+signed-zero`` is not needed: mode ``exact``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mmacts.cases.model import Case
from reference import formats as F
from reference import gemm as G
from reference.tcgen05.idesc import encode_idesc
from reference.tcgen05.smem_image import encode_operand
from reference.tcgen05_model import machine
from reference.tcgen05_model.program import CtaProgram, MmaOperands

KIND, M, N, K = "f8f6f4", 128, 64, 32
WS_SEQUENCES: tuple[tuple[str, ...], ...] = (
    ("b1::fill", "b2::fill", "b1::use", "b2::lastuse"),
    ("b3::fill", "b0::fill", "b3::lastuse", "b0::lastuse"),
)
DOL_MASKS: tuple[tuple[int, ...], ...] = (
    (0x00000001, 0x80000000, 0x0000FF00, 0x12345678),
    (0xFFFF0000, 0x00000000, 0x00000003, 0xC0000001),
)
"""Masks whose bit reversal inside a word is another mask (lane 0 vs lane 31, 32 vs 63, ...)."""
TMEM_COLS = 512


def is_plain(case: Case) -> bool:
    return case.recipe.startswith("plain:")


def _case(suite: str, cid: str, recipe: str, collectors: tuple[str | None, ...], ws: bool, dol: bool,
          rows: tuple[str, ...], extra: dict[str, Any]) -> Case:
    from mmacts.ptx.tcgen05_kernels import KernelForm

    form = dict(kind=KIND, scale_vec=None, cta_group=1, sparse=False, a_tmem=False, collectors=collectors,
                arch="sm_100a", block_scale=False, ws=ws, dol=dol)
    runtime = dict(m=M, n=N, k96=False, atype="e4m3", btype="e4m3", stype="none", sfa_id=0, sfb_id=0,
                   sf_stage="none", **extra)
    return Case(case_id=cid, suite=suite, instruction=KernelForm(**form).instruction(collectors[0]), arch="sm_100a",
                spec_rows=rows, level="standard", form=form, runtime=runtime, recipe=recipe, seed=len(cid))


def cases(suite: str) -> list[Case]:
    out = []
    common = ("T42.1", "S9.7.16.10.5", "T51.1", "T51.3", "T46.1", "T46.3", "T46.5", "T46.6")
    for seq in WS_SEQUENCES:
        tag = "-".join(s.replace("::", ".") for s in seq)
        out.append(_case(suite, f"f8f6f4.ws.cg1.M{M}N{N}.e4m3xe4m3.coll-{tag}.plain:ws-collectors",
                         "plain:ws-collectors", seq, True, False, ("T39.27", "S9.7.16.10.9.3", *common), {}))
    for i, mask in enumerate(DOL_MASKS):
        tag = "-".join(f"{w:08x}" for w in mask)
        out.append(_case(suite, f"f8f6f4.cg1.dense.M{M}N{N}.e4m3xe4m3.dol-{tag}.plain:dol", "plain:dol", (None,),
                         False, True, ("T39.23", "S9.7.16.10.9.1", *common), {"dol": list(mask), "dol_index": i}))
    return out


# --------------------------------------------------------------------------------------------- inputs
_VALUES = np.array([0.0, 0.5, -0.5, 1.0, -1.0, 1.5, -1.5, 2.0, -2.0])


def _codes(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return np.asarray(F.encode("e4m3", rng.choice(_VALUES, size=shape)), dtype=np.uint8)


def _buffers(seq: tuple[str | None, ...]) -> list[int]:
    """B index per MMA: each fill of a buffer loads the next new B; use/lastuse take the buffer's B."""
    held: dict[str, int] = {}
    idx, nxt = [], 0
    for q in seq:
        buf, op = (q or "b0::discard").split("::")
        if op in ("use", "lastuse"):
            idx.append(held[buf])
        else:
            idx.append(nxt)
            held[buf] = nxt
            nxt += 1
    return idx


def _pad_k(codes: np.ndarray) -> np.ndarray:
    """(rows, K) E4M3 codes padded along K to the 128-byte swizzle row."""
    return np.pad(codes, ((0, (-codes.shape[0]) % 8), (0, (-codes.shape[1]) % 128)))


def make_inputs(case: Case) -> Any:
    """``build.CaseInputs``-like object: programs, layout, logical A slices, B matrices, C, what D must be."""
    from suites.tcgen05_blockscale.build import CaseInputs

    seq = tuple(case.form["collectors"])
    rng = np.random.default_rng(case.seed + 4242)
    nmma = len(seq)
    bidx = _buffers(seq) if case.form.get("ws") else list(range(nmma))
    nb = max(bidx) + 1
    a = _codes(rng, (M, K * nmma))
    bs = [_codes(rng, (K, N)) for _ in range(nb)]
    sm_a, img_a = encode_operand(_pad_k(a), major="K", swizzle="128B", elem="b8", base_address=0)
    pieces, base, b_descs = [(0, sm_a)], _round(img_a.nbytes, 1024), []
    for b in bs:
        sm_b, img_b = encode_operand(_pad_k(b.T), major="K", swizzle="128B", elem="b8", base_address=base)
        pieces.append((base, sm_b[base:]))
        b_descs.append(img_b.desc_for(k_offset=0))
        base = _round(base + img_b.nbytes, 1024)
    smem = np.zeros(base, dtype=np.uint8)
    for off, arr in pieces:
        smem[off:off + arr.size] = arr
    idesc = encode_idesc(KIND, m=M, n=N, atype="e4m3", btype="e4m3")
    layout = machine.layout_of(M, 1)
    preload = np.zeros((128, TMEM_COLS), dtype=np.uint32)
    c = None
    dol = case.runtime.get("dol")
    if dol is not None:  # position-coded old D: lane l, column n holds (l * 64 + n) / 4
        c = ((np.arange(M)[:, None] * 64 + np.arange(N)[None, :]) / 4.0).astype(np.float32)
        cta, lane, dcol = machine.d_placement(layout, M, N)
        preload[lane, dcol] = c.view(np.uint32)
    mmas = [MmaOperands(a=img_a.desc_for(k_offset=i * K), b_desc=b_descs[bidx[i]], idesc=idesc, d_tmem=0,
                        sfa_tmem=0, sfb_tmem=0, enable_input_d=(i > 0 or c is not None),
                        disable_output_lane=None if dol is None else tuple(int(w) for w in dol))
            for i in range(nmma)]
    prog = CtaProgram(smem=smem, tmem_ncols=TMEM_COLS, preload=preload, ld_col0=0, ld_ncols=N, cps=(), mmas=mmas)
    b_cat = np.concatenate([bs[j] for j in bidx], axis=0)  # (K * nmma, N): the B each MMA multiplies
    return CaseInputs([prog], layout, M, N, a, b_cat, np.zeros((M, 0), np.uint8), np.zeros((0, N), np.uint8), c,
                      "e4m3", "e4m3", "none", extra={"dol": dol})


def _round(x: int, a: int) -> int:
    return -(-x // a) * a


def expected_d(inp: Any) -> np.ndarray:
    """D from the logical matrices (``reference.gemm.exact_gemm``, unit scales) and, for the mask cases, the
    old D on every lane whose bit (word lane // 32, bit lane % 32) is 1 -- written from the spec sentence, not
    from any decoder."""
    d = G.exact_gemm(F.decode("e4m3", inp.a), F.decode("e4m3", inp.b),
                     None if inp.c is None else inp.c.astype(np.float64)).astype(np.float32)
    dol = inp.extra.get("dol")
    if dol is not None:
        lanes = np.arange(M)
        off = np.array([(int(dol[lane // 32]) >> (lane % 32)) & 1 for lane in lanes], dtype=bool)
        d[off] = inp.c[off]
    return d
