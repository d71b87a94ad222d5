"""How the model *reads* operands: shared-memory matrices through a descriptor, A and scale factors
out of tensor memory, and what ``tcgen05.cp`` writes. The spec reading, vectorised.

Why a separate reading from the encoders: the model must find each element by following the
descriptor and the layout rules (9.7.16.3.3 canonical layouts, Table 40/41 descriptor, 9.7.16.10.4
packing, 9.7.16.10.7 scale-factor layouts), never by knowing where the host put it. A wrong
descriptor bit or a wrong SF ID then reads the wrong bytes and the case fails -- which is what the
model's self-test checks.

Readings that the spec leaves to missing figures are named constants here (and hypotheses the
probes vary): ``SF_LANE_RULES``, ``A_TMEM_FP4_SHIFT``/``A_TMEM_FP6_SHIFT``. Scale factors are
read with the reference decoder ``reference.tcgen05.tmem_image.read_sf`` (see ``machine``).
"""

from __future__ import annotations

import numpy as np

from reference.tcgen05.cp_decompress import cp_to_tmem
from reference.tcgen05.smem_image import decode_operand
from reference.tcgen05.tmem_image import read_a
from reference.tcgen05_model.program import CP_CODES


def container_for(kind: str, fmt: str) -> str:
    """The shared-memory container (``reference.tcgen05.smem_image`` elem) of ``fmt`` under ``kind``.

    mxf8f6f4 keeps 4/6-bit codes in padded 16-byte chunks (``p4``/``p6``, 9.7.16.10.4.4);
    mxf4/mxf4nvf4 pack E2M1 two per byte (``fp4x2``, 9.7.16.10.4.6).
    """
    if kind in ("mxf4", "mxf4nvf4"):
        return "fp4x2"
    return {"e4m3": "b8", "e5m2": "b8", "e2m3": "p6", "e3m2": "p6", "e2m1": "p4"}[fmt]


def gather_smem(smem: np.ndarray, desc_word: int, rows: int, k: int, *, major: str,
                container: str) -> np.ndarray:
    """Codes of a (rows x k) operand (rows = M or N) read by walking ``desc_word`` over ``smem``.

    Delegates to the descriptor-walk decoder of ``reference.tcgen05.smem_image`` (the spec
    reading of 9.7.16.3.3 and Table 40); the model adds nothing to it.
    """
    return decode_operand(smem, int(desc_word), mn=rows, k=k, major=major, elem=container)


# ---------------------------------------------------------------------------------------------
# Tensor memory

A_TMEM_FP4_SHIFT = 2
"""E2M1 in an 8-bit TMEM holder under mxf8f6f4: bits [5:2] (Figure 199 missing; CUTLASS DSL
``cp_narrow_a_to_tmem_mma.py`` and mma.sync ``fp4_shift``). Hypothesis, probed."""
A_TMEM_FP6_SHIFT = 1
"""E3M2/E2M3 in an 8-bit holder: bits [6:1] (Figures 200/201 missing; CUTLASS DSL). Hypothesis."""


def a_tmem_elem(kind: str, fmt: str) -> str:
    """``reference.tcgen05.tmem_image`` A container of ``fmt`` under ``kind`` (9.7.16.10.4.3/.5):
    two E2M1 per byte for mxf4/mxf4nvf4, one 8-bit holder per element for mxf8f6f4."""
    if kind in ("mxf4", "mxf4nvf4"):
        return "fp4x2"
    return {"e2m1": "fp4", "e2m3": "fp6", "e3m2": "fp6"}.get(fmt, "b8")


def gather_a_tmem(tmem: np.ndarray, addr: int, rows: int, k: int, *, kind: str, fmt: str,
                  datapath: str = "4x1") -> np.ndarray:
    """A codes (rows x k) from tensor memory at ``addr``, decoded by ``tmem_image.read_a``.

    mxf8f6f4: one 8-bit holder per element, 4 per 32-bit cell (lowest k in byte 0); 4/6-bit codes
    at ``A_TMEM_FP4_SHIFT``/``A_TMEM_FP6_SHIFT``. mxf4/mxf4nvf4: two E2M1 per byte, 8 per cell,
    even k in the low nibble. Row r sits in lane r (4x1; 2x2 reads the lanes 0-63 copy).
    """
    return read_a(tmem, int(addr), rows, k, a_tmem_elem(kind, fmt), datapath=datapath,
                  fp4_shift=A_TMEM_FP4_SHIFT, fp6_shift=A_TMEM_FP6_SHIFT)


SF_LANE_RULES: tuple[str, ...] = ("row_quadrant", "quadrant0")
"""Which lane the MMA reads a scale factor from, for the D element held in lane L:
``row_quadrant`` -- the SF copy in L's own 32-lane quadrant (why the spec asks for duplication to
all lane partitions); ``quadrant0`` -- always quadrant 0. CUTLASS replicates, so both agree on its
data; the quadrant probes tell them apart (cutlass-facts §1.2, §9)."""


# ---------------------------------------------------------------------------------------------
# tcgen05.cp (shared -> tensor memory), optionally decompressing


def apply_cp(tmem: np.ndarray, smem: np.ndarray, code: int, taddr: int, desc_word: int) -> None:
    """Execute one ``tcgen05.cp`` of run-time ``code`` (``program.CP_CODES``) into ``tmem`` (in place).

    The reference decoder ``reference.tcgen05.cp_decompress.cp_to_tmem`` does the work: source
    rows found by walking the descriptor (K-major, ambiguity CP-1), row-to-lane map per shape and
    multicast (9.7.16.9.2, cutlass-facts §2.2), 4/6-bit -> 8-bit containers at
    ``A_TMEM_FP4_SHIFT``/``A_TMEM_FP6_SHIFT`` (the same hypothesis as A in TMEM).
    """
    shape, multicast, src_fmt = CP_CODES[int(code)]
    cp_to_tmem(tmem, smem, int(desc_word), shape=shape, addr=int(taddr), multicast=multicast,
               src_fmt=src_fmt, fp4_shift=A_TMEM_FP4_SHIFT, fp6_shift=A_TMEM_FP6_SHIFT)
