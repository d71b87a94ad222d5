"""The PTX VM against silicon, bit for bit (issue 12): every recorded corpus kernel and every recorded
hopper_validation launch runs on the VM from its recorded PTX and inputs; every output word must equal
what the GPU wrote (buffers start as 0xFF bytes on both). A failure names the kernel, thread and word.

Records: ``validation/silicon/<device>-<date>/`` (see its README for how to re-record).
"""

from __future__ import annotations

import numpy as np
import pytest

from mmacts.validation.corpus import records as R

RECORDS = R.record_dirs()
CORPUS = [r for d in RECORDS for r in R.corpus_records(d)]
HOPPER = [la for d in RECORDS for la in R.hopper_launches(d)]


NOT_YET: dict[str, str] = {}
"""Corpus kernels the VM does not match yet (strict: one that starts matching must leave this list). The
cluster kernels (DSMEM, remote mbarrier arrives, TMA multicast) left it with issue 23's shared::cluster work."""


def _mark(rec: R.CorpusRecord):
    why = NOT_YET.get(rec.name)
    marks = [pytest.mark.xfail(strict=True, reason=f"VM does not implement {why} yet")] if why else []
    return pytest.param(rec, marks=marks, id=f"{rec.record}/{rec.name}")


REFUSED: dict[str, str] = {
    "float_f32": "neg.f32 of a NaN",
}
"""Corpus kernels the VM now refuses by name, with the refusal's text: silicon answered, but the fuzz
records showed the answer depends on the instruction ptxas picks (AMB-FUZZ-NEG-ABS-NAN)."""


@pytest.mark.parametrize("rec", [_mark(r) for r in CORPUS])
def test_corpus_kernel_on_vm_matches_silicon(rec: R.CorpusRecord) -> None:
    msg = R.compare_corpus(rec)
    if rec.name in REFUSED:
        assert "PTX VM unsupported" in msg and REFUSED[rec.name] in msg, msg
        return
    assert not msg, msg


@pytest.mark.parametrize("record", [d for d in RECORDS if R.has_hopper(d)], ids=lambda p: p.name)
def test_hopper_inputs_are_todays(record) -> None:
    """The recorded hopper_validation launches are what today's driver code makes (DRIVER.make_inputs). Today's
    modules are found by their case lists, not their numbers: a new kernel form (its own module, numbered by
    sort order) renumbers the others without changing what they launch."""
    today = {tuple(launches[0]["cases"]): launches for launches in R.regenerate_hopper_inputs(record).values()}
    for la in R.hopper_launches(record):
        now = today.get(tuple(la.cases))
        assert now is not None and la.index < len(now), f"{la.id}: launch gone: inputs changed: re-record on a GPU"
        new = now[la.index]
        assert tuple(new["cases"]) == la.cases, f"{la.id}: cases changed: re-record on a GPU"
        assert (new["entry"], new["grid"], new["block"], new["shared_mem"]) == (
            la.entry, la.grid, la.block, la.shared_mem), f"{la.id}: launch changed: re-record on a GPU"
        assert len(new["args"]) == len(la.args)
        for i, ((kind, arr), (rkind, key, v)) in enumerate(zip(new["args"], la.args, strict=True)):
            assert kind == rkind, f"{la.id} arg {i}: kind changed: re-record on a GPU"
            if kind == "out":
                assert (arr.shape, arr.dtype) == v, f"{la.id} arg {i} ({key}): output changed: re-record on a GPU"
            else:
                old = np.asarray(v).reshape(-1)
                same = old.dtype == arr.dtype and np.array_equal(old.view(np.uint8), arr.reshape(-1).view(np.uint8))
                assert same, f"{la.id} arg {i} ({key}): inputs changed: re-record on a GPU"


@pytest.mark.parametrize("la", HOPPER, ids=lambda la: la.id)
def test_hopper_launch_on_vm_matches_silicon(la: R.HopperLaunch) -> None:
    msg = R.compare_hopper(la)
    assert not msg, msg
