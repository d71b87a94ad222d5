"""The generated tcgen05 block-scale modules assemble with the wheel ptxas for sm_100a and sm_103a,
and their SASS contains the tensor-core opcodes we expect (recorded here as the fingerprint)."""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

from mmacts.ptx.tcgen05_kernels import (
    MAX_MMA,
    REC_WORDS,
    W_MMA0,
    KernelForm,
    module_ptx,
    pack,
    unpack_out,
)
from mmacts.toolchain.locate import find_tool
from reference.tcgen05_model.program import CtaProgram, MmaOperands

FORMS = [
    (KernelForm("mxf8f6f4", None), "UTCQMMA"),
    (KernelForm("mxf8f6f4", "block32", cta_group=2, arch="sm_103a"), "UTCQMMA.2CTA"),
    (KernelForm("mxf4", "2X", a_tmem=True, collectors=("fill", "use", "lastuse")), "UTCOMMA"),
    (KernelForm("mxf4nvf4", "block16", cta_group=2, arch="sm_103a"), "UTCOMMA.2CTA.BLOCK16"),
    (KernelForm("mxf8f6f4", "1X", sparse=True), "UTCQMMA"),
]


def _sass(form: KernelForm) -> str:
    ptxas, nvdisasm = find_tool("ptxas"), find_tool("nvdisasm")
    with tempfile.TemporaryDirectory() as d:
        src, cub = Path(d) / "k.ptx", Path(d) / "k.cubin"
        src.write_text(module_ptx(form))
        r = subprocess.run([str(ptxas), f"-arch={form.arch}", str(src), "-o", str(cub)],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        return subprocess.run([str(nvdisasm), "-c", str(cub)], capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize("form,mma_op", FORMS, ids=[f.entry_name for f, _ in FORMS])
def test_assembles_and_sass_fingerprint(form: KernelForm, mma_op: str) -> None:
    sass = _sass(form)
    ops = set(re.findall(r"\b(UTC[A-Z0-9_.]+|LDTM[.A-Za-z0-9]*|STTM|SYNCS[A-Z0-9_.]*)", sass))
    assert any(o.startswith(mma_op) for o in ops), sorted(ops)
    assert any(o.startswith("UTCCP") for o in ops)       # tcgen05.cp
    assert any(o.startswith("LDTM") for o in ops)        # tcgen05.ld
    assert "STTM" in ops                                 # tcgen05.st
    assert any("TRYWAIT" in o for o in ops)              # bounded mbarrier.try_wait
    n_mma = len(re.findall(r"\bUTC[QO]MMA", sass))
    assert n_mma == len(form.collectors)


def test_cluster_directives_only_for_cta_pairs() -> None:
    assert ".reqnctapercluster 2, 1, 1" in module_ptx(KernelForm("mxf4", "2X", cta_group=2))
    assert ".explicitcluster" not in module_ptx(KernelForm("mxf4", "2X"))


def test_pack_round_trip() -> None:
    rng = np.random.default_rng(0)
    pre = rng.integers(0, 2**32, size=(128, 8), dtype=np.uint32)
    op = MmaOperands(a=0x4000404000010040, b_desc=0x4000404000010080, idesc=0x12345678, d_tmem=3,
                     sfa_tmem=(2 << 30) | 256, sfb_tmem=320, enable_input_d=True, sp_meta_tmem=448)
    progs = [CtaProgram(smem=np.arange(32, dtype=np.uint8), tmem_ncols=512, preload=pre, ld_col0=0,
                        ld_ncols=16, cps=[(0, 256, 0x40004000100020)], mmas=[op])]
    lp = pack(progs)
    rec = lp.params[0]
    assert rec.size == REC_WORDS
    w = W_MMA0
    assert int(rec[w]) == op.a and int(rec[w + 1]) == op.b_desc
    assert int(rec[w + 2]) & 0xFFFFFFFF == op.idesc and int(rec[w + 2]) >> 32 == op.d_tmem
    assert int(rec[w + 3]) >> 32 == 320 and int(rec[w + 3]) & 0xFFFFFFFF == op.sfa_tmem
    blob = lp.blob
    assert (blob[int(rec[0]): int(rec[0]) + 32] == np.arange(32)).all()
    got_pre = blob[int(rec[3]): int(rec[3]) + pre.nbytes].view(np.uint32).reshape(128, 8)
    assert (got_pre == pre).all()
    out = np.arange(lp.out_bytes // 4, dtype=np.uint32)
    dumps = unpack_out(out, lp)
    assert dumps[0].shape == (128, 16) and dumps[0][1, 0] == 16
    with pytest.raises(ValueError):
        pack([CtaProgram(smem=np.zeros(8, np.uint8), tmem_ncols=32, preload=pre, ld_col0=0, ld_ncols=8)])
    assert MAX_MMA >= 4
