"""The corpus generator and the silicon records agree, and the records make sense (no VM needed)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mmacts.validation.corpus import records as R
from mmacts.validation.corpus.cluster_kernels import cluster_corpus
from mmacts.validation.corpus.kernels import by_name, corpus

RECORDS = R.record_dirs()


def test_corpus_is_well_formed() -> None:
    ks = corpus()
    names = [k.name for k in ks]
    assert len(names) == len(set(names)) and 30 <= len(ks) <= 80
    for k in ks:
        ptx = k.ptx()
        assert ".target sm_90a" in ptx and ".address_size 64" in ptx and f".entry {k.name}(" in ptx
        assert k.inputs().shape == (k.threads, k.n_in) and k.n_out >= 1
        assert np.array_equal(k.inputs(), k.inputs()), "inputs must be deterministic"


def test_every_kernel_assembles() -> None:
    from mmacts.toolchain.assemble import assemble
    from mmacts.toolchain.locate import ToolchainMissing

    try:
        bad = {k.name: r.first_error_line for k in [*corpus(), *cluster_corpus()]
               if not (r := assemble(k.ptx(), "sm_90a")).ok}
    except ToolchainMissing as exc:
        pytest.skip(str(exc))
    assert not bad, bad


def test_a_record_exists() -> None:
    assert RECORDS, f"no silicon record under {R.SILICON_ROOT}"


@pytest.mark.parametrize("record", RECORDS, ids=lambda p: p.name)
def test_record_matches_the_generator(record) -> None:
    """The recorded PTX and inputs are today's generator's; a generator change needs a re-record."""
    gen = by_name() if R.corpus_group(record) == "core" else {k.name: k for k in cluster_corpus()}
    man = json.loads((record / "corpus" / "manifest.json").read_text())
    assert [k["name"] for k in man["kernels"]] == list(gen), "corpus kernels changed: re-record on a GPU"
    for rec in R.corpus_records(record):
        k = gen[rec.name]
        assert rec.ptx == k.ptx(), f"{rec.name}: PTX changed: re-record on a GPU"
        assert np.array_equal(rec.inputs, k.inputs()), f"{rec.name}: inputs changed: re-record on a GPU"
        assert (rec.grid, rec.block, rec.n) == (k.grid, k.block, k.n)
    assert all(k["status"] == "ok" and k["repeat_identical"] for k in man["kernels"])


def _u32(x: np.ndarray) -> np.ndarray:
    return (x & np.uint64(0xFFFFFFFF)).astype(np.uint32)


CORE = [d for d in RECORDS if R.corpus_group(d) == "core"]
CLUSTER = [d for d in RECORDS if R.corpus_group(d) == "cluster"]


@pytest.mark.parametrize("record", CORE, ids=lambda p: p.name)
def test_silicon_spot_checks(record) -> None:
    """A few outputs checked against numpy: the slot layout, the 0xFF fill and the launch shape are right."""
    recs = {r.name: r for r in R.corpus_records(record)}
    r = recs["arith_u32"]
    a, b, n = _u32(r.inputs[:, 0]), _u32(r.inputs[:, 1]), r.n
    assert np.array_equal(_u32(r.silicon[:n, 0]), (a + b)[:n])
    assert np.array_equal(_u32(r.silicon[:n, 2]), (a * b)[:n])
    assert np.all(r.silicon[:n, 0] >> np.uint64(32) == 0xFFFFFFFF), "u32 store must leave the upper half 0xFF"
    assert np.all(r.silicon[n:] == np.uint64(2**64 - 1)), "threads past n must write nothing"
    r = recs["shift_b32"]
    a, s = _u32(r.inputs[:, 0]).astype(np.uint64), _u32(r.inputs[:, 1]).astype(np.uint64)
    want = np.where(s >= 32, 0, (a << np.minimum(s, 32)) & np.uint64(0xFFFFFFFF))
    assert np.array_equal(_u32(r.silicon[:r.n, 0]), want[:r.n].astype(np.uint32))
    r = recs["sregs_3d"]
    t = np.arange(r.silicon.shape[0])
    bs = int(np.prod(r.block))
    assert np.array_equal(_u32(r.silicon[:, 0]), (t % bs) % r.block[0])  # tid.x
    lane = (t % bs) % 32
    assert np.array_equal(_u32(r.silicon[:, 6]), lane)  # %laneid
    assert np.array_equal(_u32(r.silicon[:, 6] >> np.uint64(32)), np.uint32(1) << lane.astype(np.uint32))  # eq
    r = recs["bar_reduce"]
    x = _u32(r.inputs[:, 0]).reshape(-1, 64).astype(np.uint64)
    assert np.array_equal(_u32(r.silicon[:, 1]), (np.cumsum(x, axis=1) & np.uint64(0xFFFFFFFF)).ravel())
    assert np.all(_u32(recs["mbarrier_phases"].silicon[:, 0]) == 0b101101101110)
    assert np.all(_u32(recs["mbarrier_tx"].silicon[:, 0]) == 0b100100)
    r = recs["float_f32"]
    fa, fb = _u32(r.inputs[:, 0]).view(np.float32), _u32(r.inputs[:, 1]).view(np.float32)
    with np.errstate(all="ignore"):
        s, m = fa + fb, fa * fb
    ok = ~np.isnan(s[:r.n])
    assert np.array_equal(_u32(r.silicon[:r.n, 0])[ok], s[:r.n].view(np.uint32)[ok])
    assert np.all(_u32(r.silicon[:r.n, 0])[~ok] == 0x7FFFFFFF), "sm_90 add.f32 NaN results are canonical"
    ok = ~np.isnan(m[:r.n])
    assert np.array_equal(_u32(r.silicon[:r.n, 2])[ok], m[:r.n].view(np.uint32)[ok])


@pytest.mark.parametrize("record", CLUSTER, ids=lambda p: p.name)
def test_cluster_silicon_spot_checks(record) -> None:
    """What the cluster record shows, checked against numpy: the rank sits at bit 24 of a shared address, a
    peer's address differs from one's own by the ranks' xor there, every CTA of a multicast received every
    rank's box, every remote-arrive wait completed."""
    recs = {r.name: r for r in R.corpus_records(record)}
    for name, cx in (("dsmem_c2", 2), ("dsmem_c4", 4), ("dsmem_c2x2", 4)):
        out = recs[name].silicon
        rank = _u32(out[:, 0])
        assert np.array_equal(_u32(out[:, 0] >> np.uint64(32)), np.full(len(out), cx, np.uint32))
        assert np.array_equal(_u32(out[:, 5] >> np.uint64(32)), rank), f"{name}: rank bits of a shared address"
        assert np.all((_u32(out[:, 5]) & np.uint32(0xFFFFFF)) == 0) and np.all(_u32(out[:, 5]) != 0)
        peer = _u32(out[:, 5]) >> np.uint32(24) ^ rank
        assert np.all((peer != rank) & (peer < cx)), f"{name}: a thread reads another CTA of its cluster"
        assert np.array_equal(out[:, 8], recs[name].inputs[:, 0]), f"{name}: ld.shared::cluster of one's own slot"
        assert np.all(_u32(out[:, 10] >> np.uint64(32)) == 0b10101), f"{name}: isspacep answers"
        cluster_id = out[:, 1]  # (%clusterid.x, %cluster_ctaid.x) | (%clusterid.y in slot 3's upper word)
        key = (cluster_id & np.uint64(0xFFFFFFFF)) + (out[:, 3] >> np.uint64(32)) * np.uint64(1000)
        sel = _u32(recs[name].inputs[:, 1]).astype(np.uint64) & np.uint64(0xFFFF)
        counter = _u32(out[:, 10])
        for k in np.unique(key):
            mine = key == k
            assert np.all(counter[mine & (rank == 0)] == np.uint32(int(sel[mine].sum()) & 0xFFFFFFFF)), f"{name}: atom"
            assert np.all(counter[mine & (rank == cx - 1)] == cx * 64), f"{name}: red.add count on the last rank"
    for name in ("mbarrier_remote_c2", "mbarrier_remote_c4"):
        assert np.all(_u32(recs[name].silicon[:, 0]) == 0b101010), name
    for name, cx in (("tma_multicast_c2", 2), ("tma_multicast_c4", 4)):
        r = recs[name]
        assert np.all(r.silicon[:, 8] == 1), f"{name}: every mbarrier wait completed"
        for t in range(r.silicon.shape[0]):
            cl, gt = t // 64 // cx, t % 64
            buf = r.inputs[cl * cx * 32:(cl + 1) * cx * 32].reshape(-1)
            off = (gt * 32 + cx * 512) % (cx * 1024) // 8
            assert np.array_equal(r.silicon[t, :4], buf[gt * 4:gt * 4 + 4]), f"{name} thread {t}"
            assert np.array_equal(r.silicon[t, 4:8], buf[off:off + 4]), f"{name} thread {t}"


@pytest.mark.parametrize("record", [d for d in RECORDS if R.has_hopper(d)], ids=lambda p: p.name)
def test_hopper_silicon_outputs_pass_the_suite(record) -> None:
    """The recorded silicon outputs, replayed through the driver's real launch, pass as on the GPU."""
    from mmacts.backends.cuda_runtime import RecordingModule
    from mmacts.compare.compare import compare
    from suites.hopper_validation.driver import DRIVER

    by_id = {c.case_id: c for c in DRIVER.cases(R.hopper_level(record))}
    launches = R.hopper_launches(record)
    statuses = []
    for la in launches:
        assert la.index == 0, "one launch per module expected"
        cases = [by_id[c] for c in la.cases]
        outs = [(int(i), la.silicon[key]) for i, (kind, key, _) in enumerate(a for a in la.args if a[0] == "out")]
        replay = {i: v for i, v in outs}
        inputs = [DRIVER.make_inputs(c) for c in cases]
        for c, x, res in zip(cases, inputs, DRIVER.launch(cases, inputs, RecordingModule(b"", replay=replay)),
                             strict=True):
            st = compare(res.got, DRIVER.expected(c, x)).status
            statuses.append((c.case_id, st))
    assert len(statuses) == 86
    bad = [s for s in statuses if s[1] not in ("pass", "observed")]
    assert not bad, bad
