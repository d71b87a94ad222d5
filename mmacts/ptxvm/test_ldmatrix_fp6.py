"""``ldmatrix .m8n16 .b8x16.b6x16_p32`` (sm_120a's FP6 operand load; CUTLASS example 79c): each row's 12 bytes of
16 packed 6-bit elements are widened to 8-bit slots at ``mma_sync.FP6_SHIFT`` and handed out as ``.m8n8 .b16``
hands out its 16 bytes per row; the 4 padding bytes are not read. Planted fault: without the form the VM refuses
the instruction (the test failed before it was implemented)."""

from __future__ import annotations

import numpy as np
import pytest

from mmacts.ptxvm import api
from mmacts.ptxvm.warpmma import mma_sync

KERNEL = """.version 8.7
.target sm_120a
.address_size 64
.visible .entry k(.param .u64 pin, .param .u64 pout)
{
  .reg .b32 %r<10>;
  .reg .b64 %rd<10>;
  .shared .align 16 .b8 buf[128];
  ld.param.u64 %rd1, [pin];
  ld.param.u64 %rd2, [pout];
  mov.u32 %r0, %tid.x;
  mul.wide.u32 %rd3, %r0, 4;
  add.u64 %rd4, %rd1, %rd3;
  ld.global.u32 %r1, [%rd4];
  mov.u32 %r2, buf;
  shl.b32 %r3, %r0, 2;
  add.u32 %r4, %r2, %r3;
  st.shared.u32 [%r4], %r1;
  bar.sync 0;
  and.b32 %r5, %r0, 7;
  shl.b32 %r5, %r5, 4;
  add.u32 %r6, %r2, %r5;
  ldmatrix.sync.aligned.m8n16.x1.shared.b8x16.b6x16_p32 {%r7}, [%r6];
  add.u64 %rd5, %rd2, %rd3;
  st.global.u32 [%rd5], %r7;
  ret;
}
"""


def _rows(codes: np.ndarray) -> np.ndarray:
    """(8, 16) 6-bit codes -> the 8 x 16-byte shared image: 12 packed bytes (element i at bits 6i..), 4 of 0xFF."""
    c = codes.astype(np.uint32).reshape(8, 4, 4)
    v = c[..., 0] | (c[..., 1] << 6) | (c[..., 2] << 12) | (c[..., 3] << 18)
    packed = np.stack([v & 0xFF, (v >> 8) & 0xFF, v >> 16], axis=-1).reshape(8, 12)
    return np.concatenate([packed, np.full((8, 4), 0xFF)], axis=1).astype(np.uint8)


@pytest.mark.parametrize("shift", [0, 1])
def test_fp6_rows_widen_to_the_slots_mma_sync_reads(monkeypatch: pytest.MonkeyPatch, shift: int) -> None:
    """Lane t holds row t/4, elements 4(t%4)..4(t%4)+3 in bytes 0..3, each code at FP6_SHIFT (the reading the VM's
    mma.sync takes; a different reading moves both, as CUTLASS's unshifted registers imply)."""
    monkeypatch.setattr(mma_sync, "FP6_SHIFT", shift)
    codes = np.random.default_rng(3).integers(0, 64, size=(8, 16))
    out = api.zeros(32, np.uint32)
    api.RawModule(code=KERNEL).get_function("k")(1, 32, (api.asarray(_rows(codes).reshape(-1).view(np.uint32)), out))
    got = out.get().view(np.uint8).reshape(32, 4)
    lane = np.arange(32)
    want = codes[lane[:, None] // 4, 4 * (lane[:, None] % 4) + np.arange(4)] << shift
    assert got.tolist() == want.tolist()


@pytest.mark.parametrize("form", ["ldmatrix.sync.aligned.m8n16.x1.trans.shared.b8x16.b6x16_p32",
                                  "ldmatrix.sync.aligned.m8n16.x1.shared.b8x16.b4x16_p64"])
def test_other_m8n16_forms_are_refused_by_name(form: str) -> None:
    ptx = KERNEL.replace("ldmatrix.sync.aligned.m8n16.x1.shared.b8x16.b6x16_p32", form)
    with pytest.raises(api.LaunchError, match=r"only ldmatrix \.b8x16\.b6x16_p32 is implemented"):
        api.RawModule(code=ptx).get_function("k")(1, 32, (api.zeros(32, np.uint32), api.zeros(32, np.uint32)))
