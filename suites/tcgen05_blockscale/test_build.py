"""Scale factors: the suite encodes them with ``tmem_image.write_sf`` and the model decodes them
with ``tmem_image.read_sf``; both are pinned here to the layout written out by hand (cutlass-facts
§1.1/§1.4), and every wrong SF ID in the idesc is caught by the model."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from mmacts.ptx.tcgen05_kernels import KernelForm
from reference.tcgen05 import tmem_image as TI
from reference.tcgen05.smem_desc import decode_smem_desc
from reference.tcgen05_model import machine
from suites.tcgen05_blockscale import build as B
from suites.tcgen05_blockscale.cases import make_case


def _byte(img: np.ndarray, lane: int, col: int, byte: int) -> int:
    return (int(img[lane, col]) >> (8 * byte)) & 0xFF


def test_sf_bytes_sit_where_the_layout_says() -> None:
    """Hand-written positions (not ``sf_cell``): SF g of row x at lane x%32 + 32q, column
    base + x//32 + C*(g//4), byte g%4; SFB C = 4*ceil(N/128)."""
    case = make_case("standard", "mxf8f6f4", None, atype="e4m3", btype="e4m3", n=200, sfa_id=3, sfb_id=1)
    inp = B.build(case)
    img = inp.programs[0].preload
    for x in (0, 31, 33, 127):
        for q in range(4):
            assert _byte(img, x % 32 + 32 * q, B.SFA_COL + x // 32, 3) == inp.sfa[x, 0]
    for x in (0, 40, 130, 199):
        for q in range(4):
            assert _byte(img, x % 32 + 32 * q, B.SFB_COL + x // 32, 1) == inp.sfb[0, x]
    # slots below the SF ID hold 0 (a wrong ID reads 2^-127, never a plausible scale)
    assert _byte(img, 5, B.SFA_COL, 2) == 0 and _byte(img, 5, B.SFB_COL, 0) == 0


def test_layout_b_sfb_halves_live_in_their_quadrant_pair() -> None:
    case = make_case("standard", "mxf4nvf4", "4X", cg=2, m=128, n=96, stype="ue4m3", seed=4)
    inp = B.build(case)
    for v in range(2):
        img = inp.programs[v].preload
        for n_idx in (0, 47, 48, 95):
            h, xl = divmod(n_idx, 48)
            for j in range(4):
                for rep in (0, 32):
                    assert _byte(img, 64 * h + xl % 32 + rep, B.SFB_COL + xl // 32, j) == inp.sfb[j, n_idx]
                # the same cell of the other quadrant pair holds the OTHER half's column
                assert _byte(img, 64 * (1 - h) + xl % 32, B.SFB_COL + xl // 32, j) == inp.sfb[j, (1 - h) * 48 + xl]


def test_model_reads_scales_through_the_reference_decoder(monkeypatch) -> None:
    """The model's SF values come from ``read_sf``: corrupt the decoder, the answer changes."""
    case = make_case("standard", "mxf4", "2X", n=64, sfa_id=2, seed=3)
    inp = B.build(case)
    form = KernelForm(**dict(case.form))
    good = machine.decode_d(machine.run(form, inp.programs), inp.layout, inp.m, inp.n)
    calls = []
    real = TI.read_sf

    def spy(*a, **k):
        calls.append(a[5])
        out = real(*a, **k)
        return out[::-1] if a[5] == "A" else out  # rows reversed: wrong SFA per row

    monkeypatch.setattr(TI, "read_sf", spy)
    bad = machine.decode_d(machine.run(form, inp.programs), inp.layout, inp.m, inp.n)
    assert {"A", "B"} <= set(calls)
    assert (bad != good).any()


WRONG_ID_CASES = [
    make_case("standard", "mxf8f6f4", None, atype="e4m3", btype="e2m1", sfa_id=1, sfb_id=3, n=64, seed=1),
    make_case("standard", "mxf4", "2X", n=72, sfa_id=2, sfb_id=0, seed=2),
    make_case("standard", "mxf4nvf4", "block32", cg=2, m=128, n=96, sfa_id=0, sfb_id=2, seed=3),
    make_case("standard", "mxf4nvf4", "block16", cg=2, m=256, n=144, k96=True, stype="ue4m3",
              sfa_id=2, sfb_id=0, seed=4),
    make_case("standard", "mxf4", "block32", cg=2, m=256, n=64, k96=True, sfa_id=3, sfb_id=1, seed=5),
]


@pytest.mark.parametrize("case", WRONG_ID_CASES, ids=[c.case_id for c in WRONG_ID_CASES])
def test_every_wrong_sf_id_is_caught(case) -> None:
    inp = B.build(case)
    form = KernelForm(**dict(case.form))
    want = B.expected_d(inp, case.form["kind"])
    assert np.array_equal(machine.decode_d(machine.run(form, inp.programs), inp.layout, inp.m, inp.n), want)
    lead = inp.programs[0]
    op = lead.mmas[0]
    for shift in (29, 4):  # SFA ID bits 29-30, SFB ID bits 4-5 (Tables 43/44)
        true_id = (op.idesc >> shift) & 3
        for wrong in set(range(4)) - {true_id}:
            idesc = (op.idesc & ~(3 << shift)) | (wrong << shift)
            bad = replace(lead, mmas=[replace(op, idesc=idesc)])
            try:
                got = machine.decode_d(machine.run(form, [bad, *inp.programs[1:]]), inp.layout, inp.m, inp.n)
            except ValueError:  # an ID the scale_vec does not allow: the decoder refuses it
                continue
            assert not np.array_equal(got, want), f"SF ID {wrong} at bit {shift} (true {true_id}) went unnoticed"


@pytest.mark.parametrize("src,shape", [("b4x16_p64", "128x128b"), ("b6x16_p32", "32x128b")])
def test_cp_decompress_probe_reads_containers_and_tells_shifts_apart(src, shape, monkeypatch) -> None:
    from reference.tcgen05_model import operands as ops

    case = make_case("standard", "mxf8f6f4", None, atype="e4m3", btype="e4m3", cp_probe=src, cp_shape=shape,
                     recipe="probe:cp_decompress")
    inp = B.build(case)
    form = KernelForm(**dict(case.form))
    assert inp.programs[0].mmas == () and len(inp.programs[0].cps) == 1
    want = B.expected_raw_cells(inp)
    got = B.decode_output(inp, machine.run(form, inp.programs))
    assert got.shape == (128, 4) and np.array_equal(got.view(np.uint32), want.view(np.uint32))
    # the padding never reaches TMEM, and every row's codes differ from the pad pattern
    assert not (got.view(np.uint8) == B.CP_PROBE_PAD).all(axis=1).any()
    # a model that puts the element at bit 0 reads something else: the probe can decide it
    monkeypatch.setattr(ops, "A_TMEM_FP4_SHIFT", 0)
    monkeypatch.setattr(ops, "A_TMEM_FP6_SHIFT", 0)
    other = B.decode_output(inp, machine.run(form, inp.programs))
    assert not np.array_equal(other.view(np.uint32), want.view(np.uint32))


def test_base_offset_is_carried_and_read() -> None:
    case = make_case("standard", "mxf8f6f4", None, n=64, atype="e4m3", btype="e5m2", swizzle_a="128B",
                     swizzle_b="128B", a_base_shift=384, recipe="probe:smem_base_offset")
    inp = B.build(case)
    form = KernelForm(**dict(case.form))
    op = inp.programs[0].mmas[0]
    assert (op.a >> 49) & 7 == 3  # (384 >> 7) & 7, 9.7.16.4.1
    want = B.expected_d(inp, "mxf8f6f4")
    assert np.array_equal(machine.decode_d(machine.run(form, inp.programs), inp.layout, 128, 64), want)
    bad = replace(inp.programs[0], mmas=[replace(op, a=op.a & ~(7 << 49))])  # base offset dropped
    got = machine.decode_d(machine.run(form, [bad]), inp.layout, 128, 64)
    assert not np.array_equal(got, want)


def test_absolute_lbo_only_where_the_k_slice_straddles_the_row() -> None:
    """probe absolute_lbo: of three K = 96 fp4 MMAs along one 128-byte row, only the third (bytes 96-143) gets
    Table 40 bit 52 with LBO = the row's next 128-byte slice; the first two stay relative."""
    case = make_case("standard", "mxf4", "block32", cg=2, m=256, n=64, k96=True, collectors=(None,) * 3,
                     lbo_absolute=True, recipe="probe:absolute_lbo")
    inp = B.build(case)
    for descs in ([int(op.a) for op in inp.programs[0].mmas], [int(op.b_desc) for op in inp.programs[0].mmas]):
        d = [decode_smem_desc(w) for w in descs]
        assert [x.lbo_absolute for x in d] == [False, False, True]
        assert d[2].start_address % 128 == 96 and d[2].lbo % 128 == 0 and d[2].lbo > d[2].start_address
    with pytest.raises(ValueError, match="absolute LBO"):
        B.build(make_case("standard", "mxf8f6f4", None, atype="e4m3", btype="e4m3", lbo_absolute=True))
