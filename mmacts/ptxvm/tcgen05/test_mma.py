"""Decisive test: every standard case of the tcgen05_blockscale suite through this package vs the old
model, bit for bit; MMA error paths and footprint; the import graph of the package."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from mmacts.ptxvm.tcgen05.cp import execute_cp
from mmacts.ptxvm.tcgen05.mma import execute_mma
from mmacts.ptxvm.tcgen05.tmem_operand import first_unlisted_nibble
from reference.sparse import VALID_INDEX
from reference.tcgen05_model import machine
from reference.tcgen05_model.program import CP_CODES
from suites.tcgen05_blockscale import build as B
from suites.tcgen05_blockscale import cases as C
from suites.tcgen05_blockscale.driver import DRIVER, _form

CASES = [c for c in DRIVER.cases("standard") if c.form.get("block_scale", True) and not c.form.get("feature")]
"""The block-scaled MMA cases (the old model has no feature kernels -- ld/st shapes, shift -- or plain kinds)."""


def run_programs(form, programs, arithmetic: str, cp_codes, k96_shapes: str = "m256-cg2-only") -> list[np.ndarray]:
    """One case's CTA records through this package alone (base addresses 0, as the old model):
    preload, the leader's copies in every CTA of the pair, the MMAs; the read-back windows."""
    tmems = []
    for p in programs:
        t = np.zeros((128, 512), dtype=np.uint32)
        pre = np.asarray(p.preload, dtype=np.uint32)
        t[:, : pre.shape[1]] = pre
        tmems.append(t)
    smems = [np.asarray(p.smem, dtype=np.uint8) for p in programs]
    lead = programs[0]
    for code, taddr, desc in lead.cps:
        shape, mc, src = cp_codes[int(code)]
        for v in range(len(programs)):
            execute_cp([tmems[v]], [smems[v]], int(taddr), int(desc), shape=shape, multicast=mc, src_fmt=src)
    for op in lead.mmas:
        execute_mma(kind=form.kind, cta_group=form.cta_group, tmems=tmems, smems=smems, d_taddr=int(op.d_tmem),
                    a=int(op.a), b_desc=int(op.b_desc), idesc=int(op.idesc), enable_input_d=bool(op.enable_input_d),
                    sfa_taddr=int(op.sfa_tmem), sfb_taddr=int(op.sfb_tmem), a_is_tmem=form.a_tmem,
                    sparse=form.sparse, sp_meta_taddr=int(op.sp_meta_tmem) if form.sparse else None,
                    scale_vec=form.scale_vec, arch=form.arch, arithmetic=arithmetic, k96_shapes=k96_shapes)
    return [t[:, p.ld_col0: p.ld_col0 + p.ld_ncols].copy() for t, p in zip(tmems, programs, strict=True)]


def test_case_count():
    assert len(CASES) == 447  # 16 of them are comparator controls (recipe control:*)


@pytest.mark.parametrize("suite_case", CASES, ids=[c.case_id for c in CASES])
def test_against_old_model(suite_case):
    case = suite_case
    inp = DRIVER.make_inputs(case)
    form = _form(case)
    arith = C.numeric_model_of(case) if B.is_random(case) else "float64"
    want = machine.run(form, inp.programs, machine.Hypotheses(arithmetic=arith))
    got = run_programs(form, inp.programs, arith, CP_CODES)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


def _one(kind="mxf8f6f4"):
    case = next(c for c in CASES if c.form["kind"] == kind and c.form["cta_group"] == 1 and c.recipe == "exact"
                and not c.form["a_tmem"])
    inp = DRIVER.make_inputs(case)
    p = inp.programs[0]
    t = np.zeros((128, 512), np.uint32)
    t[:, : p.preload.shape[1]] = p.preload
    return _form(case), p, t, np.asarray(p.smem, np.uint8)


def _kw(form, p, t, smem, **over):
    op = p.mmas[0]
    kw = dict(kind=form.kind, cta_group=1, tmems=[t], smems=[smem], d_taddr=op.d_tmem, a=op.a, b_desc=op.b_desc,
              idesc=op.idesc, enable_input_d=op.enable_input_d, sfa_taddr=op.sfa_tmem, sfb_taddr=op.sfb_tmem,
              scale_vec=form.scale_vec)
    kw.update(over)
    return kw


def test_footprint_and_disable_lane():
    form, p, t, smem = _one()
    t0 = t.copy()
    fp = execute_mma(**_kw(form, p, t, smem))
    n = (int(p.mmas[0].idesc) >> 17 & 0x3F) * 8
    assert fp.tmem_written[0].sum() == 128 * n
    assert fp.tmem_read[0][:, 256:].any() or fp.tmem_read[0].any()
    assert all(e <= smem.size for _, e in fp.smem_ranges[0])
    t2 = t0.copy()
    execute_mma(**_kw(form, p, t2, smem, disable_output_lane=[0xFFFFFFFF, 0, 0, 1]))
    assert (t2[:32] == t0[:32]).all() and (t2[96] == t0[96]).all() and (t2[40, :n] == t[40, :n]).all()


def test_mma_errors():
    form, p, t, smem = _one()
    with pytest.raises(ValueError, match="sparsity"):
        execute_mma(**_kw(form, p, t, smem, sparse=True))
    with pytest.raises(ValueError, match="scale-input-d"):
        execute_mma(**_kw(form, p, t, smem, scale_input_d=1))
    with pytest.raises(ValueError, match="scale_vec::2X"):
        execute_mma(**_kw(form, p, t, smem, scale_vec="2X"))
    with pytest.raises(ValueError, match="cta_group"):
        execute_mma(**_kw(form, p, t, smem, cta_group=2))
    with pytest.raises(ValueError, match="D runs past"):
        execute_mma(**_kw(form, p, t, smem, d_taddr=500))
    with pytest.raises(ValueError, match="address 0x"):
        execute_mma(**_kw(form, p, t, smem[:64]))
    with pytest.raises(ValueError, match="arithmetic"):
        execute_mma(**_kw(form, p, t, smem, arithmetic="nope"))
    with pytest.raises(ValueError, match="not modelled"):
        execute_mma(**_kw(form, p, t, smem, kind="f16"))
    # SF ID 1 with 2 scale factors per row, mxf4nvf4 without a qualifier, K = 96 off sm_103a
    f4, p4, t4, s4 = _one("mxf4nvf4")
    with pytest.raises(ValueError, match="explicit"):
        execute_mma(**_kw(f4, p4, t4, s4, scale_vec=None))
    w96 = int(p4.mmas[0].idesc) | (1 << 31)
    with pytest.raises(ValueError, match="Table 39|sm_103a"):
        execute_mma(**_kw(f4, p4, t4, s4, idesc=w96, arch="sm_100a"))


def test_sf_high_bits_ignored_and_sf_lane():
    form, p, t, smem = _one()
    ta, tb = t.copy(), t.copy()
    execute_mma(**_kw(form, p, ta, smem))
    execute_mma(**_kw(form, p, tb, smem, sfa_taddr=int(p.mmas[0].sfa_tmem) | 0xC0000000))
    np.testing.assert_array_equal(ta, tb)
    with pytest.raises(ValueError, match="lane"):
        execute_mma(**_kw(form, p, t.copy(), smem, sfa_taddr=int(p.mmas[0].sfa_tmem) | (1 << 16)))


K96_M128 = [("block16", "ue4m3", 2, 0, 128), ("block32", "ue8m0", 3, 1, 64), ("block16", "ue4m3", 0, 2, 256)]
"""M = 128 cta_group::1 K = 96 MMAs (CUTLASS example 89's form): SF IDs that straddle into the next 4-group column,
N <= 128 and N > 128 (the SFB group stride differs)."""


@pytest.mark.parametrize("sv, stype, sfa_id, sfb_id, n", K96_M128, ids=[f"{c[0]}-sfa{c[2]}-N{c[4]}" for c in K96_M128])
def test_k96_m128_needs_the_also_m128_reading(sv, stype, sfa_id, sfb_id, n):
    """AMB-K96-SHAPES: Table 39 prints K = 96 only as 256xNxK1 with cta_group::2; CUTLASS's SM103 kernels issue
    it with M = 128 on one SM. By default the VM refuses by name; told the reading ``also-m128`` (the VM profile's
    ``readings``) it gives the exact D of the suite's builder, which the oracle side computes from the logical
    matrices (``expected_d``): the same SF straddle and operand reading as the printed K = 96 shape."""
    from dataclasses import replace

    case = C.make_case("standard", "mxf4nvf4", sv, cg=1, m=128, n=n, stype=stype, sfa_id=sfa_id, sfb_id=sfb_id,
                       seed=7)  # make_case enumerates Table 39 as printed: K = 96 is set afterwards
    case = replace(case, runtime=case.runtime.replace(k96=True), form=case.form.replace(arch="sm_103a"))
    inp = B.build(case)
    form = _form(case)
    with pytest.raises(ValueError, match=r"K = 96 .* not in Table 39 .*AMB-K96-SHAPES, reading m256-cg2-only"):
        run_programs(form, inp.programs, "float64", CP_CODES)
    got = run_programs(form, inp.programs, "float64", CP_CODES, k96_shapes="also-m128")
    np.testing.assert_array_equal(machine.decode_d(got, inp.layout, inp.m, inp.n), B.expected_d(inp, "mxf4nvf4"))


def test_k96_shapes_reading_bounds():
    """``also-m128`` widens K = 96 to dense M = 128 of the kinds Table 39 gives K1 = 96, nothing else."""
    from mmacts.ptxvm.tcgen05.datapath import mma_k

    assert mma_k("mxf4", 2, False, 256, True) == 96  # printed: every reading
    assert mma_k("mxf4nvf4", 1, False, 128, True, "also-m128") == 96
    assert mma_k("mxf4", 2, False, 128, True, "also-m128") == 96
    assert mma_k("mxf4nvf4", 1, False, 128, False, "also-m128") == 64
    for args in (("mxf8f6f4", 1, False, 128, True), ("mxf4nvf4", 1, True, 128, True)):
        with pytest.raises(ValueError, match="K = 96"):
            mma_k(*args, "also-m128")
    with pytest.raises(ValueError, match="reading must be one of"):
        mma_k("mxf4", 2, False, 256, True, "any")


def test_metadata_past_lane_127_refused_by_name():
    """The only TMEM read whose lanes start at the address's lane (the A and SF addresses must have lane 0):
    sparsity metadata 32 lanes down runs to lane 159, which the MMA refuses by name -- not only lane 128,
    and never as numpy's IndexError (the generated mutation's ``lane.max() == LANES`` survivor)."""
    case = next(c for c in CASES if ".cg1.sp." in c.case_id)
    p = DRIVER.make_inputs(case).programs[0]
    t = np.zeros((128, 512), np.uint32)
    t[:, : p.preload.shape[1]] = p.preload
    meta = int(p.mmas[0].sp_meta_tmem)
    kw = _kw(_form(case), p, t, np.asarray(p.smem, np.uint8), sparse=True)
    execute_mma(**dict(kw, sp_meta_taddr=meta))
    for lane in (1, 32):
        with pytest.raises(ValueError, match="sparsity metadata runs outside 128 x 512"):
            execute_mma(**dict(kw, tmems=[t.copy()], sp_meta_taddr=meta | (lane << 16)))


FORBIDDEN = ("reference.tcgen05", "reference.mma_sync", "reference.formats", "suites", "mmacts.ptx")


def test_import_graph():
    here = Path(__file__).parent
    for f in sorted(here.glob("*.py")):
        if f.name.startswith("test_"):
            continue
        for node in ast.walk(ast.parse(f.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            for n in names:
                bad = [p for p in FORBIDDEN if n == p or n.startswith(p + ".") or n.startswith(p + "_")]
                assert not bad, f"{f.name} imports {n}"
                if n.startswith("reference"):
                    assert n in ("reference.gemm", "reference.numeric_model", "reference"), f"{f.name}: {n}"


def test_the_vm_takes_exactly_the_sparsity_metadata_nibbles_the_spec_lists() -> None:
    """9.7.16.10.8: seven 4-bit metadata values are meaningful, the rest undefined behaviour the VM refuses. The
    VM's list is checked against the oracle's own (``reference.sparse``), every nibble in turn: the suite's sparse
    cases draw only some of them (generated mutation found a VM list with 0b0100 or 0b1101 missing alive)."""
    for nib in range(16):
        refused = first_unlisted_nibble(np.array([[0b0100, nib]])) is not None
        assert refused == (nib not in VALID_INDEX), f"nibble {nib:04b}"
