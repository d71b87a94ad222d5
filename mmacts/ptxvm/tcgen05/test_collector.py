"""The collector buffers' bookkeeping (``collector.py``) without a kernel: which buffer an MMA without a
``.collector`` qualifier discards, which spellings are refused. Written for the generated mutation
(``mmacts.mutants.generated collector``): a ``::use`` after a default discard is undefined behaviour, so no
suite case a GPU runs can tell a VM that forgets the discard from one that does not; only the refusal shows it."""

from __future__ import annotations

import pytest

from mmacts.ptxvm.tcgen05 import collector as C


@pytest.mark.parametrize("ws,buf", [(False, "a"), (True, "b0")])
def test_no_qualifier_discards_the_default_buffer(ws: bool, buf: str) -> None:
    colls = [C.Collector()]
    C.after(colls, *C.parse_usage(f"collector::{buf}::fill", ws=ws), "sig", ["held"])
    assert C.from_buffer(colls, buf, "use", "sig") == ["held"]
    assert C.parse_usage(None, ws=ws) == (buf, "discard")
    C.after(colls, *C.parse_usage(None, ws=ws), "sig", ["new"])
    with pytest.raises(ValueError, match=f"collector buffer {buf} of CTA 0 of the MMA holds nothing valid"):
        C.from_buffer(colls, buf, "use", "sig")


@pytest.mark.parametrize("qual,ws,msg", [
    ("collector::a::keep", False, "unknown collector usage .collector::a::keep"),
    ("collector::a", False, "unknown collector usage"),
    ("collector::a::fill::fill", False, "unknown collector usage"),  # four parts: not "fewer than three" only
    ("collectors::a::fill", False, "unknown collector usage"),
    ("collector::b1::fill", False, r"tcgen05.mma: collector buffer ::b1 not allowed \(allowed a\)"),
    ("collector::a::fill", True, r"tcgen05.mma.ws: collector buffer ::a not allowed \(allowed b0, b1, b2, b3\)"),
])
def test_unknown_or_foreign_buffers_are_refused(qual: str, ws: bool, msg: str) -> None:
    with pytest.raises(ValueError, match=msg):
        C.parse_usage(qual, ws=ws)


def test_a_buffer_filled_by_another_signature_is_refused() -> None:
    colls = [C.Collector(), C.Collector()]
    C.after(colls, "a", "fill", ("e4m3", 128), ["x", "y"])
    assert C.from_buffer(colls, "a", "lastuse", ("e4m3", 128)) == ["x", "y"]
    assert C.from_buffer(colls, "a", "fill", ("e4m3", 128)) is None
    with pytest.raises(ValueError, match=r"filled by an MMA of \('e4m3', 128\), this MMA needs \('e2m1', 128\)"):
        C.from_buffer(colls, "a", "use", ("e2m1", 128))
    C.after(colls, "a", "lastuse", ("e4m3", 128), ["x", "y"])
    assert all("a" not in c.slots for c in colls)
