"""The PTX VM against silicon on the fuzz records (issue 22): every recorded random and unit kernel runs
on the VM from its recorded PTX and regenerated inputs, and every output word must equal what the GPU
wrote (buffers start as 0xFF bytes on both). A kernel the VM refuses by name (``VmUnsupported``: a
form whose exact answer is not known) is counted, not matched; anything else is a failure naming the
kernel, thread, statement and both values in hex. Known silicon/toolchain deviations: ``known.KNOWN``.

Re-record: ``bash validation/fuzz/run-on-gpu.sh OUT 1-2400 --unit`` on a GPU host, then
``python -m mmacts.validation.fuzz store OUT/fz validation/fuzz/<device>-<date>`` (README, "Differential fuzzing").
"""

from __future__ import annotations

import numpy as np
import pytest

from mmacts.validation.fuzz import records as R
from mmacts.validation.fuzz.known import KNOWN

RECORDS = R.record_dirs()
KERNELS = [k for d in RECORDS for k in R.fuzz_records(d)]


def _param(rec: R.FuzzRecord):
    key = f"{rec.record}/{rec.name}"
    why = KNOWN.get(key)
    marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
    return pytest.param(rec, marks=marks, id=key)


@pytest.mark.skipif(not RECORDS, reason="no fuzz record under validation/fuzz/")
@pytest.mark.parametrize("rec", [_param(k) for k in KERNELS])
def test_fuzz_kernel_on_vm_matches_silicon(rec: R.FuzzRecord) -> None:
    verdict, msg = R.compare(rec)
    assert verdict in ("match", "refused"), msg


def test_known_entries_name_recorded_kernels() -> None:
    """A stale KNOWN entry (a kernel no record holds) would excuse nothing and hide a re-record."""
    names = {f"{k.record}/{k.name}" for k in KERNELS}
    assert not (set(KNOWN) - names), sorted(set(KNOWN) - names)


def test_refusals_stay_rare() -> None:
    """Refusing is honest, but a VM that refused everything would pass the test above: at most 2% of
    the recorded kernels may be refused (21 of 3493 when recorded)."""
    if not KERNELS:
        pytest.skip("no fuzz record")
    refused = [k for k in KERNELS[::7] if R.compare(k)[0] == "refused"]
    assert len(refused) <= 0.02 * len(KERNELS[::7]) + 1, [k.name for k in refused]


def test_a_flipped_silicon_bit_is_named(monkeypatch) -> None:
    """The comparison can fail, and says where: one bit flipped in a record's silicon words."""
    if not KERNELS:
        pytest.skip("no fuzz record")
    rec = next(k for k in KERNELS if k.kind == "random" and f"{k.record}/{k.name}" not in KNOWN
               and R.compare(k)[0] == "match")
    bad = rec.silicon.copy()
    bad[3, 2] ^= np.uint64(1)
    planted = R.FuzzRecord(**{**rec.__dict__, "silicon": bad})
    verdict, msg = R.compare(planted)
    assert verdict == "differ" and "thread 3 slot 2" in msg and "silicon 0x" in msg, msg
