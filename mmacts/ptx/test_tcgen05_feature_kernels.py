"""The feature kernels (every tcgen05.ld/st shape x num, tcgen05.shift) and the plain-kind MMA forms (.ws
collector buffers, disable-output-lane) assemble with the wheel ptxas and spell what they claim to issue."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import pytest

from mmacts.ptx import tcgen05_feature_kernels as FK
from mmacts.ptx.tcgen05_kernels import KernelForm, module_ptx
from mmacts.toolchain.locate import find_tool


def _assemble(ptx: str, arch: str = "sm_100a") -> None:
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "k.ptx"
        src.write_text(ptx)
        r = subprocess.run([str(find_tool("ptxas")), f"-arch={arch}", str(src), "-o", str(Path(d) / "k.cubin")],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("shape", ["16x256b", "16x32bx2"])
def test_ldst_kernel_issues_every_num_and_assembles(shape: str) -> None:
    ptx = FK.module_ptx(FK.FeatureForm("ldst", shape))
    for num in FK.LDST_NUMS[shape]:
        assert f"tcgen05.ld.sync.aligned.{shape}.x{num}.b32" in ptx
        assert f"tcgen05.st.sync.aligned.{shape}.x{num}.b32" in ptx
    _assemble(ptx)


def test_windows_fit_tensor_memory_and_codes_are_distinct() -> None:
    for shape in FK.LDST_NUMS:
        wins = FK.windows(shape)
        num, _, col, reg = wins[-1]
        assert col + FK.ld_cols(shape, num) <= 512 and reg + FK.REGS_PER_X1[shape] * num == FK.total_regs(shape)
    codes = {FK.st_code(i, t, r) for i in range(8) for t in range(128) for r in range(128)}
    assert len(codes) == 8 * 128 * 128


def test_lane_base_pack_form_fits_and_spells_pack_and_unpack() -> None:
    # .16x64b at lane 8 of the quadrant with .pack::16b / .unpack::16b: every access at lane 8 (taddr lane
    # bits 16+), twice the columns per num, the nums that fit 512 columns side by side
    form = FK.FeatureForm("ldst", "16x64b", lane_base=8, pack=True)
    wins = FK.windows("16x64b", 8, True)
    assert {w[1] for w in wins} == {8} and [w[0] for w in wins] == list(FK.ldst_nums("16x64b", True))
    num, _, col, _ = wins[-1]
    assert col + 2 * FK.ld_cols("16x64b", num) <= 512 and FK.ldst_nums("16x64b", True) == (1, 2, 4, 8, 16, 32, 64)
    ptx = FK.module_ptx(form)
    assert form.entry_name == "tc05feat_ldst_16x64b_lane8_pack16b"
    for num in FK.ldst_nums("16x64b", True):
        assert f"tcgen05.ld.sync.aligned.16x64b.x{num}.pack::16b.b32" in ptx
        assert f"tcgen05.st.sync.aligned.16x64b.x{num}.unpack::16b.b32" in ptx
    with pytest.raises(ValueError, match="16-lane"):
        FK.FeatureForm("ldst", "32x32b", lane_base=8)
    _assemble(ptx)


def test_shift_kernel_assembles() -> None:
    ptx = FK.module_ptx(FK.FeatureForm("shift"))
    assert ptx.count("tcgen05.shift.cta_group::1.down") == len(FK.SHIFTS)
    _assemble(ptx)


def test_plain_forms_spell_ws_collectors_and_the_mask() -> None:
    ws = KernelForm("f8f6f4", None, block_scale=False, ws=True, collectors=("b1::fill", "b1::use"))
    text = module_ptx(ws)
    assert "tcgen05.mma.ws.cta_group::1.kind::f8f6f4.collector::b1::fill" in text and "block_scale" not in text
    dol = KernelForm("f8f6f4", None, block_scale=False, dol=True)
    assert "{%r60, %r61, %r62, %r63}" in module_ptx(dol)
    _assemble(text)
    _assemble(module_ptx(dol))
    with pytest.raises(ValueError):
        KernelForm("mxf8f6f4", None, ws=True)  # block-scaled kinds have no .ws (Table 39)


def test_overwrite_form_waits_for_the_fill_then_patches_a() -> None:
    form = KernelForm("mxf8f6f4", None, collectors=("fill", "use", "lastuse"), a_overwrite=True)
    text = module_ptx(form)
    fill, wait, fence, use = (text.index(x) for x in ("collector::a::fill", "OVW_WAITED:", "OVW_DONE:",
                                                       "collector::a::use"))
    assert fill < wait < fence < use and "[%r15], 1;" in text  # the final wait is for phase 1
    _assemble(text)
    with pytest.raises(ValueError):
        KernelForm("mxf8f6f4", None, cta_group=2, collectors=("fill", "use"), a_overwrite=True)
