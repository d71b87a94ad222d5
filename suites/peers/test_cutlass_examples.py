"""CUTLASS examples 72b (sm_100a tcgen05: nvfp4 x nvfp4 -> nvfp4 with generated scale factors), 79a (sm_120a
mma.sync: nvfp4 x nvfp4 -> bf16), 84a/84b (2-SM block-scaled sparse; 84a builds here) and 89 (sm_103a, K = 96 per
MMA), as shipped in the ``nvidia-cutlass`` wheel, on the PTX VM: D (and 72b's SFD) must equal the exact model, and a
planted fault in the SF layout (or, for 84, the sparsity metadata) must fail. 72a/72c and the SM120 79b (nvfp4 out
with generated SFD), 79c (mxfp8 x mxfp6) and 79d (nvfp4 grouped GEMM, device-side tensor-map updates) the same, with
a cached build only (see ``CACHED_ONLY``).

The first run builds each example (minutes; cached by source hash under ``.mmacts-cache/peers/``). Skipped (one
line) only when the toolchain is missing: no ``nvidia-cutlass``, nvcc, g++ or C compiler for libvmcuda."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from suites.peers import cutlass_examples as CE
from suites.peers.cutlass_peer import Unavailable, toolchain


def _built_or_skip(name: str) -> None:
    try:
        toolchain()
        CE.build(CE.EXAMPLES[name])
    except Unavailable as e:
        pytest.skip(str(e))


def test_levels_nest_and_ids_are_unique() -> None:
    ids = {lvl: [c.case_id for c in CE.example_cases(lvl)] for lvl in ("smoke", "standard", "full")}
    assert ids["smoke"] == []
    assert set(ids["standard"]) <= set(ids["full"]) and len(set(ids["full"])) == len(ids["full"])
    assert "peers.cutlass.example72b.m128n128k256" in ids["standard"]
    assert "peers.cutlass.example79d.g2.m128n128k256-m256n128k128" in ids["standard"]
    assert {"peers.cutlass.example79b.m256n256k512", "peers.cutlass.example79c.m256n128k512"} <= set(ids["full"])


def test_new_example_cases_name_their_register_entries() -> None:
    """79b/79c/79d link the register entries their verdicts bear on (each exists in the register)."""
    from mmacts.ambiguity import load_register
    from suites.peers.driver import register_ids

    known = {e.id for e in load_register().entries}
    for cid, entry in [("peers.cutlass.example79b.m128n128k256", "AMB-CVT-UE8M0-EDGES"),
                       ("peers.cutlass.example79c.m128n128k256", "AMB-MMASYNC-FP6-CONTAINER"),
                       ("peers.cutlass.example79d.g2.m128n128k256-m256n128k128", "AMB-MUFU-RCP-BLACKWELL")]:
        links = register_ids(cid)
        assert entry in links and set(links) <= known, (cid, links)


def test_e2m1_rounding_and_sfd_model() -> None:
    """The epilogue model on hand-worked values: ties to even, saturation at 6, signed zero; SFD rounds up."""
    x = np.array([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 7.0, -0.1, -5.5])
    assert CE._rne_e2m1(x).tolist() == [0, 2, 2, 4, 4, 6, 6, 7, 8, 15]
    acc = np.zeros((1, 16))
    acc[0, :2] = [40.0, -3.0]  # amax 40: 40 * 1.25 / 6 = 8.33 -> SFD 16 (code 131); 40 * 1.25 / 16 = 3.125 -> 3
    d, sf = CE.expected_sfd(acc, 16)
    assert sf.tolist() == [[131]] and d[0, :3].tolist() == [5, 8 | 0, 0]  # -3 * 0.078125 = -0.234 -> -0


def test_fp6_packing_is_the_little_endian_bit_stream() -> None:
    """Codes 1, 2, 3, 4 -> bits 000001 000010 000011 000100 from bit 0: bytes 0x81, 0x30, 0x10."""
    assert CE.pack(np.array([[1, 2, 3, 4]], np.uint8), "e3m2").tolist() == [[0x81, 0x30, 0x10]]


def test_ue4m3_sfd_model_and_its_rcp_refusal() -> None:
    """79d's ue4m3 epilogue on hand-worked values; a tie that the 1-ulp rcp.approx decides is refused."""
    acc = np.zeros((1, 16))
    # 40 * 1.25 / 6 = 8.33 -> SFD 8 (0x50); scale 1.25 / 8: 40 -> 6.25 -> 6, -3 -> -0.47 -> -0.5
    acc[0, :2] = [40.0, -3.0]
    d, sf = CE.expected_sfd_ue4m3(acc, 16)
    assert sf.tolist() == [[0x50]] and d[0, :3].tolist() == [7, 8 | 1, 0]
    acc[0, :2] = [12.0, 0.5]  # SFD 2.5; 0.5 * 1.25 * rcp(2.5) is 0.25 give or take an ulp: a tie rcp decides
    with pytest.raises(ValueError, match="rcp"):
        CE.expected_sfd_ue4m3(acc, 16)


def _cached_or_skip(name: str) -> None:
    try:
        toolchain()
    except Unavailable as e:
        pytest.skip(str(e))
    if not CE.is_built(CE.EXAMPLES[name]):
        pytest.skip(f"example {name} is not built (python -c 'from suites.peers import cutlass_examples as C; "
                    f"C.build(C.EXAMPLES[\"{name}\"])')")


@pytest.mark.parametrize("name, form, what", [
    ("79b", "mma.sync.aligned.kind::mxf4nvf4.block_scale.scale_vec::4X.m16n8k64.row.col.f32.e2m1.e2m1.f32.ue4m3",
     "SFD"),
    ("79c", "mma.sync.aligned.kind::mxf8f6f4.block_scale.scale_vec::1X.m16n8k32.row.col.f32.e4m3.e3m2.f32.ue8m0",
     "D (bf16)"),
])
def test_sm120_example_equals_the_exact_model_and_fails_planted(name: str, form: str, what: str) -> None:
    """79b (SFD generated in the epilogue, checked code for code) and 79c (e4m3 x packed e3m2) at 128x128x256;
    planted: SFA through the neighbouring row's layout."""
    _cached_or_skip(name)
    r = CE.run_example(name, 128, 128, 256, seed=1)
    assert r.ok, r.message
    assert form in r.stats["forms"], r.stats["forms"]
    bad = CE.run_example(name, 128, 128, 256, seed=1, fault="sfa_rows")
    assert not bad.ok and bad.mismatches > 0 and what in bad.message, bad.message


@pytest.mark.parametrize("name", ["79d", "79d.pingpong"])
def test_grouped_example_equals_the_exact_model_and_fails_planted(name: str) -> None:
    """79d (both schedules the example runs): two groups of different shapes on a 2-CTA persistent grid, every
    shape and pointer read on the device; each group's D and ue4m3 SFD equal the model; planted as above."""
    _cached_or_skip(name)
    problems = ((128, 128, 256), (256, 128, 128))
    r = CE.run_grouped(name, problems, seed=1)
    assert r.ok, r.message
    assert any(f.startswith("mma.sync.aligned.kind::mxf4nvf4.block_scale") for f in r.stats["forms"])
    assert "tensormap.replace.tile.global_address.shared::cta.b1024.b64" in r.stats["forms"]
    bad = CE.run_grouped(name, problems, seed=1, fault="sfa_rows")
    assert not bad.ok and bad.mismatches > 0 and "group 0" in bad.message and "group 1" in bad.message, bad.message


@pytest.mark.parametrize("name, form", [
    ("72b", "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16"),
    ("79a", "mma.sync.aligned.kind::mxf4nvf4.block_scale.scale_vec::4X.m16n8k64.row.col.f32.e2m1.e2m1.f32.ue4m3"),
])
def test_example_equals_the_exact_model(name: str, form: str) -> None:
    _built_or_skip(name)
    r = CE.run_example(name, 128, 128, 256, seed=1)
    assert r.ok, r.message
    assert form in r.stats["forms"]


@pytest.mark.parametrize("name, what", [("72b", "SFD"), ("79a", "D (bf16)")])
def test_planted_sf_layout_fault_fails(name: str, what: str) -> None:
    """Planted: SFA written through the layout of the neighbouring row (rows rotated inside each 32-row group)."""
    _built_or_skip(name)
    r = CE.run_example(name, 128, 128, 256, seed=1, fault="sfa_rows")
    assert not r.ok and r.mismatches > 0 and what in r.message, r.message


@pytest.mark.parametrize("name", [n for n in CE.TWO_SM if not CE.EXAMPLES[n].sparse])
def test_two_sm_examples_equal_the_exact_model(name: str) -> None:
    """72a/72c (2-SM MMA in a 2x4 cluster) equal the exact product and fail with the planted SF-layout fault; their
    verdicts rest on AMB-TCGEN05-LD-NO-WAIT-DEALLOC's reading register-read-completes (see ``RUNNABLE``). Only with
    a cached build (a 2-SM example builds for 10+ minutes on two cores)."""
    _cached_or_skip(name)
    r = CE.run_example(name, 256, 256, 256, seed=1)
    assert r.ok, r.message
    assert any("tcgen05.mma.cta_group::2" in f for f in r.stats["forms"]), r.stats["forms"]
    bad = CE.run_example(name, 256, 256, 256, seed=1, fault="sfa_rows")
    assert not bad.ok and bad.mismatches > 0, bad.message


def test_sparse_cases_name_the_sp_form_and_the_sparse_rows() -> None:
    cases = {c.case_id: c for c in CE.example_cases("standard")}
    c = cases["peers.cutlass.example84a.m256n128k256"]
    assert c.instruction == "tcgen05.mma.sp.cta_group::2.kind::mxf4nvf4.block_scale" and "S9.7.16.10.8" in c.spec_rows
    form = cases["peers.cutlass.example84b.m256n256k512"].instruction
    assert form == "tcgen05.mma.sp.cta_group::2.kind::mxf8f6f4.block_scale"


def test_metadata_image_packs_two_chunks_per_byte_low_first(tmp_path) -> None:
    """The peer's E writer: chunk 2j in the low nibble of byte j of the row, 2j + 1 in the high nibble, at the
    offsets the host program wrote; ``meta_nibbles`` (the planted fault) swaps them."""
    ex = CE.EXAMPLES["84b"]
    meta = np.array([[0b0100, 0b1110, 0b1001, 0b1100], [0b1000, 0b1101, 0b0100, 0b0100]], np.uint8)
    x = CE.Inputs(np.zeros((2, 8), np.uint8), np.zeros((1, 16), np.uint8), np.zeros((2, 1), np.uint8),
                  np.zeros((1, 1), np.uint8), meta)
    np.array([[0, 1], [16, 17]], np.int32).tofile(tmp_path / "e.bin")
    sizes = {"e_logical": 8, "chunk": 4, "e_size": 32}
    img = CE._metadata_image(ex, x, sizes, tmp_path)
    assert img[[0, 1, 16, 17]].tolist() == [0xE4, 0xC9, 0xD8, 0x44] and not img[[2, 15, 18]].any()
    swapped = CE._metadata_image(ex, x, sizes, tmp_path, swap_nibbles=True)
    assert swapped[[0, 1]].tolist() == [0x4E, 0x9C]


def test_entry_is_the_gemm_kernel_beside_the_compressor() -> None:
    ptx = (".visible .entry _ZN7cutlass13device_kernelINS_9transform6kernel30SM90StructuredSparseCompressorE(\n"
           ".visible .entry _ZN7cutlass13device_kernelINS_4gemm6kernel13GemmUniversalE(\n")
    assert CE._entry(ptx, CE.EXAMPLES["84a"].entry) == "_ZN7cutlass13device_kernelINS_4gemm6kernel13GemmUniversalE"


@pytest.mark.parametrize("name, form", [
    ("84a", "tcgen05.mma.sp.cta_group::2.kind::mxf4nvf4.block_scale.block16"),
    ("84b", "tcgen05.mma.sp.cta_group::2.kind::mxf8f6f4.block_scale"),
])
def test_sparse_example_equals_the_exact_model(name: str, form: str) -> None:
    """84a (nvfp4, pairwise 4:8) / 84b (mxf8 x mxf4, 2:4): block-scaled sparse GEMM, 2-SM, metadata copied to TMEM
    by tcgen05.cp.128x128b. A is written compressed with metadata by the project; the reference expands it by its
    own reading (``reference.sparse``). 84a builds here (about 2 minutes); 84b only with a cached build."""
    (_cached_or_skip if name in CE.CACHED_ONLY else _built_or_skip)(name)
    r = CE.run_example(name, 256, 128, 256, seed=1)
    assert r.ok, r.message
    assert form in r.stats["forms"] and "tcgen05.cp.cta_group::2.128x128b" in r.stats["forms"], r.stats["forms"]


@pytest.mark.parametrize("name, fault", [("84a", "meta_nibbles"), ("84a", "sfa_rows"), ("84b", "meta_nibbles")])
def test_planted_sparse_input_fault_fails(name: str, fault: str) -> None:
    """Planted: the two metadata indices of each E byte swapped (high nibble first), or SFA rows rotated."""
    (_cached_or_skip if name in CE.CACHED_ONLY else _built_or_skip)(name)
    r = CE.run_example(name, 256, 128, 256, seed=1, fault=fault)
    assert not r.ok and r.mismatches > 0 and "D (bf16)" in r.message, r.message


@pytest.mark.parametrize("m, n, k", [p[0] for p in CE.SIZES["89"]["standard"]])
def test_example89_k96_equals_the_exact_model(m: int, n: int, k: int) -> None:
    """89 (sm_103a fp4 "ultra": M = 128, K = 96 per MMA on one SM) equals the exact product with the VM told the
    reading also-m128 of AMB-K96-SHAPES; builds in about a minute, so it runs without a cached build."""
    _built_or_skip("89")
    r = CE.run_example("89", m, n, k, seed=1)
    assert r.ok, r.message
    assert "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16" in r.stats["forms"]


def test_example89_planted_fault_and_default_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    """Planted: the SFA layout fault fails 89. Without the reading the VM refuses the M = 128 K = 96 MMA by name
    (Table 39 as printed), and the case message names the reading and the register entries it informs."""
    _built_or_skip("89")
    bad = CE.run_example("89", 128, 128, 768, seed=1, fault="sfa_rows")
    assert not bad.ok and bad.mismatches > 0 and "D (bf16)" in bad.message, bad.message
    case = next(c for c in CE.example_cases("standard") if c.case_id == "peers.cutlass.example89.m128n128k768")
    rec = CE.run_example_case(case)
    assert rec["status"] == "pass", rec["message"]
    assert "VM reading AMB-K96-SHAPES also-m128" in rec["message"]
    assert rec["message"].endswith("register: AMB-K96-SHAPES, AMB-SF-FIGURES-K96, AMB-ABSOLUTE-LBO-CHUNKS")
    monkeypatch.setitem(CE.EXAMPLES, "89", dataclasses.replace(CE.EXAMPLES["89"], readings=()))
    plain = CE.run_example("89", 128, 128, 768, seed=1)
    assert not plain.ok and plain.mismatches < 0 and "AMB-K96-SHAPES, reading m256-cg2-only" in plain.message
