"""mma.sync semantics: differential against the record-level model on every suite case, plus unit checks.

The suites' register images come from the project's encoders; the VM reads them with its own maps.
Agreement on every case (poisoned unselected SF lanes/bytes included) is the evidence that the two
readings coincide; a disagreement is a bug on one side or a finding.
"""

from __future__ import annotations

import numpy as np
import pytest

from mmacts.ptxvm.warpmma import mma_sync as ms


def _bits(x) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(x, dtype=np.float32)).view(np.uint32)


def _same(got, want) -> bool:
    """Bit-exact, NaN payloads aside (the VM writes the canonical 0x7FFFFFFF)."""
    g, w = np.asarray(got, np.float32), np.asarray(want, np.float32)
    nan = np.isnan(g) & np.isnan(w)
    return bool(np.all((_bits(g) == _bits(w)) | nan))


def _run_bs(case, inputs, **kw):
    r = inputs["regs"]
    q = ms.parse_mma_sync(case.instruction)
    d = ms.execute_mma_sync(q, r.a, r.b, r.c, sfa=r.sfa, sfb=r.sfb, sel_a=(r.sel.bida, r.sel.tida),
                            sel_b=(r.sel.bidb, r.sel.tidb), arch="sm_120a", **kw)
    return q, d


# ------------------------------------------------------------------------------------ differential

def test_blockscale_suite_every_case_full():
    """All 3281 cases of mma_sync_blockscale (standard's 482 are a subset; one probe) vs run_record_model and
    expected."""
    from suites.mma_sync_blockscale.driver import DRIVER

    cases = DRIVER.cases("full")
    assert len(cases) == 3281  # 3280 + the UE4M3 0x7F probe
    bad_model, bad_want = [], []
    for case in cases:
        inputs = DRIVER.make_inputs(case)
        q, d = _run_bs(case, inputs)
        got = ms.read_c(q, d)
        if not _same(got, DRIVER.run_record_model(case, inputs).got):
            bad_model.append(case.case_id)
        if not _same(got, DRIVER.expected(case, inputs).want):
            bad_want.append(case.case_id)
    assert not bad_model, bad_model[:5]
    assert not bad_want, bad_want[:5]


def test_hopper_mma_sync_cases_and_published_replays():
    from suites.hopper_validation.driver import DRIVER

    cases = [c for c in DRIVER.cases("full") if c.form["path"] == "mma_sync"]
    assert len(cases) == 37  # 32 exact/random + 4 published (5000 vectors each) + the f16 inf-specials case
    for case in cases:
        inputs = DRIVER.make_inputs(case)
        q = ms.parse_mma_sync(case.instruction)
        d = ms.execute_mma_sync(q, inputs["a"], inputs["b"], inputs["c"], arch="sm_90a")
        got = DRIVER._finish_mma(case, inputs, ms.read_c(
            ms.MmaSyncForm(q.shape, q.dtype, q.atype, q.btype, q.dtype), d).astype(np.float32))
        assert _same(got, DRIVER.run_record_model(case, inputs).got), case.case_id
        assert _same(got, DRIVER.expected(case, inputs).want), case.case_id


def test_probe_paths():
    """E4M3 probes on mma_sync.sm_90a / sm_120a and the sm_120a block-scale probes (planted model)."""
    from suites.probes import blockscale_driver as BS
    from suites.probes import blockscale_paths as P
    from suites.probes import hardware as H
    from suites.probes.driver import DRIVER

    n = 0
    fp8 = ms.parse_mma_sync("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32")
    for case in DRIVER.cases("full"):
        inputs = DRIVER.make_inputs(case)
        if BS.is_blockscale(case):
            path = BS.path_of(case)
            if path.family != "mma_sync":
                continue
            img = inputs["images"] if "images" in inputs else P.mma_sync_images(path.form, inputs["vectors"])
            q = ms.parse_mma_sync(path.instruction())
            d = ms.execute_mma_sync(q, img["a"], img["b"], img["c"], sfa=img["sfa"], sfb=img["sfb"],
                                    arch="sm_120a", model=path.planted)
        elif case.form["path"].startswith("mma_sync"):
            q = fp8
            ops = H.mma_sync_operands(inputs["vectors"])
            d = ms.execute_mma_sync(q, ops["a"], ops["b"], ops["c"], arch=case.form["path"].split(".")[1])
        else:
            continue
        got = ms.read_c(q, d)[:, 0, 0]
        assert _same(got, DRIVER.run_record_model(case, inputs).got), case.case_id
        n += 1
    assert n >= 80


# ------------------------------------------------------------------------------------ parsing

def test_parse_suite_spellings_and_orders():
    from suites.mma_sync_blockscale.driver import DRIVER

    for case in DRIVER.cases("smoke"):
        f = ms.parse_mma_sync(case.instruction)
        assert (f.kind, f.atype, f.btype, f.stype, f.scale_vec) == tuple(case.form[k] for k in
                                                                       ("kind", "atype", "btype", "stype", "scale_vec"))
    cut = ms.parse_mma_sync("mma.sync.aligned.kind::mxf8f6f4.block_scale.scale_vec::1X.m16n8k32.row.col"
                            ".f32.e2m1.e3m2.f32.ue8m0 {d}, ...;")
    assert (cut.k, cut.atype, cut.btype, cut.nsf) == (32, "e2m1", "e3m2", 1)
    f16 = ms.parse_mma_sync("mma.sync.aligned.m16n8k32.row.col.f16.e5m2.e4m3.f16")
    assert f16.regs == (4, 2, 2, 2) and not f16.block_scale
    assert ms.parse_mma_sync("mma.sync.aligned.m16n8k64.row.col.kind::mxf4.block_scale.f32.e2m1.e2m1.f32.ue8m0"
                             ).scale_vec == "2X"


@pytest.mark.parametrize("op", [
    "mma.sync.m16n8k32.row.col.f32.e4m3.e4m3.f32",  # no .aligned
    "mma.sync.aligned.m16n8k16.row.col.f32.e4m3.e4m3.f32",
    "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f16",
    "mma.sync.aligned.m16n8k32.col.row.f32.e4m3.e4m3.f32",
    "mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::2X.f32.e4m3.e4m3.f32.ue8m0",
    "mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e4m3.e4m3.f32.ue4m3",
    "mma.sync.aligned.m16n8k64.row.col.kind::mxf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue8m0",
    "mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.f32.e2m1.e2m1.f32.ue4m3",
    "mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f16.e2m1.e2m1.f32.ue4m3",
    "mma.sync.aligned.m16n8k32.row.col.kind::mxf4.block_scale.scale_vec::2X.f32.e2m1.e2m1.f32.ue8m0",
    "mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32.e4m3.e4m3.f32",
])
def test_parse_refuses(op):
    with pytest.raises(ValueError):
        ms.parse_mma_sync(op)


# ------------------------------------------------------------------------------------ semantics

def _bs_case(scale_vec="1X", kind="mxf8f6f4", atype="e2m1"):
    from suites.mma_sync_blockscale.driver import DRIVER

    for c in DRIVER.cases("full"):
        if (c.form["kind"], c.form["scale_vec"], c.form["atype"]) == (kind, scale_vec, atype):
            return c, DRIVER.make_inputs(c)
    raise AssertionError("no such case")


def test_selector_outside_table37_raises():
    case, inputs = _bs_case("2X", "mxf4nvf4")
    r = inputs["regs"]
    q = ms.parse_mma_sync(case.instruction)
    with pytest.raises(ValueError, match="Table 37"):
        ms.execute_mma_sync(q, r.a, r.b, r.c, sfa=r.sfa, sfb=r.sfb, sel_a=(1, 0), arch="sm_120a")
    with pytest.raises(ValueError):
        ms.execute_mma_sync(q, r.a, r.b, r.c, arch="sm_120a")  # scale data missing


def test_unread_container_bits_and_wrong_selector():
    """E2M1 under mxf8f6f4 sits in bits [5:2]: bits 0-1 and 6-7 of a slot are not read; bit 2 is.
    A selector the encoder did not use picks poison and changes D."""
    case, inputs = _bs_case("1X", "mxf8f6f4", "e2m1")
    q, d0 = _run_bs(case, inputs)
    r = inputs["regs"]
    noisy = r.a | np.uint32(0xC3C3C3C3)
    d1 = ms.execute_mma_sync(q, noisy, r.b, r.c, sfa=r.sfa, sfb=r.sfb, sel_a=(r.sel.bida, r.sel.tida),
                             sel_b=(r.sel.bidb, r.sel.tidb), arch="sm_120a")
    assert np.array_equal(d0, d1)
    d2 = ms.execute_mma_sync(q, r.a ^ np.uint32(0x04), r.b, r.c, sfa=r.sfa, sfb=r.sfb,
                             sel_a=(r.sel.bida, r.sel.tida), sel_b=(r.sel.bidb, r.sel.tidb), arch="sm_120a")
    assert not np.array_equal(d0, d2)
    other = (r.sel.bida + 1) % 4
    d3 = ms.execute_mma_sync(q, r.a, r.b, r.c, sfa=r.sfa, sfb=r.sfb, sel_a=(other, r.sel.tida),
                             sel_b=(r.sel.bidb, r.sel.tidb), arch="sm_120a")
    assert not np.array_equal(d0, d3)


def test_batched_warps_equal_one_by_one():
    from suites.mma_sync_blockscale.driver import DRIVER

    cases = [c for c in DRIVER.cases("full") if c.form["kind"] == "mxf4nvf4" and c.form["stype"] == "ue4m3"
             and (c.runtime["tida"], c.runtime["tidb"]) == (1, 2)][:1]
    case = cases[0]
    inputs = [DRIVER.make_inputs(case) for _ in range(1)][0]
    r = inputs["regs"]
    rng = np.random.default_rng(5)
    a = np.stack([r.a, rng.permutation(r.a.reshape(-1)).reshape(r.a.shape), r.a ^ np.uint32(0x11111111)])
    q = ms.parse_mma_sync(case.instruction)
    kw = dict(sfa=r.sfa, sfb=r.sfb, sel_a=(0, 1), sel_b=(0, 2), arch="sm_120a")
    batched = ms.execute_mma_sync(q, a, r.b, r.c, **kw)
    assert batched.shape == (3, 32, 4)
    for i in range(3):
        assert np.array_equal(batched[i], ms.execute_mma_sync(q, a[i], r.b, r.c, **kw))


def test_fragment_maps_are_bijections():
    for k in (32, 64):
        wa, wb = ms._a_where(k), ms._b_where(k)
        per = 4 if k == 32 else 8
        for w, nreg in ((wa, 4), (wb, 2)):
            keys = (w.lane * nreg + w.reg) * 32 + w.shift
            assert len(np.unique(keys)) == keys.size == 32 * nreg * per
    for f16 in (False, True):
        w = ms._cd_where(f16)
        keys = (w.lane * 4 + w.reg) * 32 + w.shift
        assert len(np.unique(keys)) == 128


def test_f16_accumulator_form_roundtrip():
    """C/D f16x2: with A = 0 the HMMA model returns C (C enters last, RNE add of 0)."""
    q = ms.parse_mma_sync("mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16")
    rng = np.random.default_rng(1)
    C = rng.integers(-2000, 2000, size=(16, 8)) / 8.0
    c = ms.write_d(q, C)
    d = ms.execute_mma_sync(q, np.zeros((32, 4), np.uint32), np.zeros((32, 2), np.uint32), c, arch="sm_90a")
    assert np.array_equal(ms.read_c(q, d), C)
    assert np.array_equal(d, c)


def _fp8_registers(q: ms.MmaSyncForm, a_row: dict[int, float],
                   b_col: dict[int, float]) -> tuple[np.ndarray, np.ndarray]:
    """A (row 0) and B (column 0) register images holding the given {k: value}, every other element +0."""
    from mmacts.ptxvm.warpmma import formats as fm

    def code(v: float, etype: str) -> int:
        table = fm.decode_element(np.arange(256), etype)
        hit = np.flatnonzero(table == v)
        assert hit.size, f"{v} is not {etype}"
        return int(hit[0])

    a, b = np.zeros((32, 4), np.uint32), np.zeros((32, 2), np.uint32)
    wa, wb = ms._a_where(32), ms._b_where(32)
    for k, v in a_row.items():
        a[wa.lane[0, k], wa.reg[0, k]] |= np.uint32(code(v, q.atype) << int(wa.shift[0, k]))
    for k, v in b_col.items():
        b[wb.lane[k, 0], wb.reg[k, 0]] |= np.uint32(code(v, q.btype) << int(wb.shift[k, 0]))
    return a, b


# validation/fuzz-tc/h200-2026-11-25-heldout2, s33.0001.mma_sync: the non-zero (k: (a, b)) pairs of case 4 D(1, 2)
# and case 7 D(2, 1) (C = -0 and +0), and what the H200 wrote. k = 9 and k = 27 hold an e4m3 subnormal b.
HELDOUT2_S33 = [
    ({5: (-2.0**-10, 8.0), 8: (-0.000732421875, -0.03515625), 9: (-16384.0, 2.0**-9), 16: (0.009765625, 4.0),
      18: (-0.1875, 224.0)}, 0xC293EFFC),
    ({0: (-1536.0, 0.04296875), 2: (0.000732421875, -9.0), 3: (3.0, -2.5), 7: (0.0234375, 72.0),
      8: (-0.000244140625, 0.1171875), 9: (2.0, -0.0390625), 12: (-0.4375, -0.46875), 13: (-0.0006103515625, 0.25),
      18: (-0.109375, -56.0), 22: (0.00048828125, 0.05859375), 27: (14336.0, 0.005859375),
      29: (-0.00390625, 0.203125)}, 0x41937493),
]


@pytest.mark.parametrize("pairs,silicon", HELDOUT2_S33)
def test_hmma_block_anchors_an_e4m3_subnormal_at_its_f16_exponent(pairs, silicon):
    """fp8 mma.sync on sm_90 runs F2FP (fp8 -> f16) + HMMA: an e4m3 subnormal operand counts at its own
    exponent in the block's alignment anchor (a normal f16), not at e4m3's emin -6 (which anchors the block
    3 binades too high and truncates a small product silicon keeps: 0xc293effd / 0x41937492, 1 ulp off).
    The two D elements of the held-out H200 record that found it, rebuilt in one warp's registers."""
    q = ms.parse_mma_sync("mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e4m3.f32")
    a, b = _fp8_registers(q, {k: ab[0] for k, ab in pairs.items()}, {k: ab[1] for k, ab in pairs.items()})
    d = ms.execute_mma_sync(q, a, b, np.zeros((32, 4), np.uint32), arch="sm_90a")
    assert int(d[0, 0]) == silicon  # D(0, 0): lane 0, register 0
