"""Pins: compile cache hit/miss keying, atomic entries, corrupted entries detected and rebuilt."""

from __future__ import annotations

import base64
import json

from mmacts.toolchain.assemble import assemble
from mmacts.toolchain.cache import DiskCache, cache_dir, cache_key

PTX = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 p)
{
    .reg .b64 %rd<2>;
    .reg .b32 %r<2>;
    ld.param.u64 %rd0, [p];
    cvta.to.global.u64 %rd1, %rd0;
    ld.global.b32 %r0, [%rd1];
    add.u32 %r1, %r0, 7;
    st.global.b32 [%rd1], %r1;
    ret;
}
"""


def test_cache_dir_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("MMACTS_CACHE_DIR", str(tmp_path / "x"))
    assert cache_dir() == tmp_path / "x"
    monkeypatch.delenv("MMACTS_CACHE_DIR")
    assert str(cache_dir()) == ".mmacts-cache"


def test_miss_then_hit_with_identical_result():
    a = assemble(PTX, "sm_90a")
    b = assemble(PTX, "sm_90a")
    assert a.ok and not a.cached
    assert b.cached and b.cubin == a.cubin and b.cubin[:4] == b"\x7fELF"


def test_key_includes_arch_flags_and_text():
    assemble(PTX, "sm_90a")
    assert not assemble(PTX, "sm_90a", ["-O1"]).cached
    assert not assemble(PTX.replace("sm_90a", "sm_100a"), "sm_100a").cached
    assert not assemble(PTX.replace("7;", "8;"), "sm_90a").cached
    assert cache_key("a", "b") != cache_key("ab")


def test_refusals_are_cached_too():
    bad = PTX.replace("add.u32", "add.bogus")
    a = assemble(bad, "sm_90a")
    b = assemble(bad, "sm_90a")
    assert not a.ok and b.cached and b.first_error_line == a.first_error_line != ""


def test_corrupted_entry_is_detected_and_rebuilt(tmp_path):
    store = DiskCache("compile", tmp_path)
    a = assemble(PTX, "sm_90a", cache=store)
    (entry,) = list(store.root.rglob("*.json"))
    doc = json.loads(entry.read_text())
    raw = bytearray(base64.b64decode(doc["payload"]["cubin"]))
    raw[-1] ^= 0xFF  # flip bytes, keep checksum (a fixed tail could equal the real one: 13.1's ends in zeros)
    doc["payload"]["cubin"] = base64.b64encode(bytes(raw)).decode()
    entry.write_text(json.dumps(doc))
    b = assemble(PTX, "sm_90a", cache=store)
    assert not b.cached and store.corrupt_seen == 1 and b.cubin == a.cubin
    assert assemble(PTX, "sm_90a", cache=store).cached  # the rebuilt entry is sound


def test_truncated_entry_is_a_miss(tmp_path):
    store = DiskCache("compile", tmp_path)
    assemble(PTX, "sm_90a", cache=store)
    (entry,) = list(store.root.rglob("*.json"))
    entry.write_bytes(entry.read_bytes()[:40])
    assert not assemble(PTX, "sm_90a", cache=store).cached
    assert store.corrupt_seen == 1


def test_no_temporary_files_are_left_behind(tmp_path):
    store = DiskCache("compile", tmp_path)
    assemble(PTX, "sm_90a", cache=store)
    assert [p.name for p in store.root.rglob("*") if p.is_file() and p.name.startswith(".tmp-")] == []
