"""tcgen05 beyond the block-scaled MMA, run on the VM from hand-written PTX that ptxas accepts for
sm_100a: kind::f16/tf32/i8 MMAs (disable-output-lane, scale-input-d), the A collector,
tcgen05.shift, .pack::16b / .unpack::16b and .16x32bx2 with immHalfSplitoff."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from mmacts.ptxvm import load_module

HEAD = ".version 8.8\n.target sm_100a\n.address_size 64\n"
SMEM = 8192


def _assemble_ok(ptx: str) -> None:
    from mmacts.backends.assembler import assemble

    try:
        r = assemble(ptx, "sm_100a")
    except Exception as exc:  # noqa: BLE001 -- no toolchain on this machine
        pytest.skip(f"ptxas not available: {exc}")
    assert r.ok, getattr(r, "log", r)


def _kernel(body: str) -> str:
    """128 threads: copy pin[0:nwords] into shared ``buf``, warp 0 allocates 256 TMEM columns (address in
    %r7 for every thread), thread 0 initialises ``mb``; then ``body``; then warp 0 deallocates."""
    return (HEAD + f".shared .align 1024 .b8 buf[{SMEM}];\n.shared .align 8 .b64 mb;\n.shared .align 4 .b32 tptr;\n"
            ".visible .entry k(.param .u64 pin, .param .u64 pout, .param .u64 adesc, .param .u64 bdesc,\n"
            "                  .param .u64 a2desc, .param .u32 idesc, .param .u32 nwords)\n{\n"
            "  .reg .pred %p<8>;\n  .reg .b32 %r<64>;\n  .reg .b64 %rd<16>;\n"
            "  mov.u32 %r0, %tid.x;\n  ld.param.u64 %rd0, [pin];\n  cvta.to.global.u64 %rd0, %rd0;\n"
            "  ld.param.u64 %rd1, [pout];\n  cvta.to.global.u64 %rd1, %rd1;\n  ld.param.u32 %r10, [nwords];\n"
            "  mov.u32 %r1, %r0;\nCP:\n  setp.ge.u32 %p0, %r1, %r10;\n  @%p0 bra CPD;\n"
            "  mul.wide.u32 %rd2, %r1, 4;\n  add.u64 %rd3, %rd0, %rd2;\n  ld.global.u32 %r2, [%rd3];\n"
            "  mov.u32 %r3, buf;\n  shl.b32 %r4, %r1, 2;\n  add.u32 %r3, %r3, %r4;\n  st.shared.u32 [%r3], %r2;\n"
            "  add.u32 %r1, %r1, 128;\n  bra CP;\nCPD:\n  fence.proxy.async.shared::cta;\n"
            "  mov.u32 %r5, tptr;\n  mov.u32 %r6, mb;\n  shr.u32 %r11, %r0, 5;\n  and.b32 %r12, %r0, 31;\n"
            "  setp.eq.u32 %p1, %r11, 0;\n  setp.eq.u32 %p2, %r0, 0;\n"
            "  @!%p1 bra AL;\n  tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r5], 256;\n"
            "  tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\nAL:\n"
            "  @%p2 mbarrier.init.shared::cta.b64 [%r6], 1;\n  bar.sync 0;\n  tcgen05.fence::after_thread_sync;\n"
            "  ld.shared.u32 %r7, [%r5];\n  shl.b32 %r13, %r11, 21;\n  add.u32 %r14, %r7, %r13;\n"
            + body +
            "  tcgen05.fence::before_thread_sync;\n  bar.sync 0;\n"
            "  @!%p1 bra DONE;\n  tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r7, 256;\nDONE:\n  ret;\n}\n")


WAIT = ("  @%p2 tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r6];\n"
        "W{n}:\n  mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r6], {ph};\n  @!%p3 bra W{n};\n"
        "  tcgen05.fence::after_thread_sync;\n")

# every warp reads 8 columns of its lane quadrant (%r14 = TMEM base + quadrant lane) and stores
# out[lane * 8 + j]
READ8 = ("  tcgen05.ld.sync.aligned.32x32b.x8.b32 {%r20, %r21, %r22, %r23, %r24, %r25, %r26, %r27}, [%r14];\n"
         "  tcgen05.wait::ld.sync.aligned;\n  mul.wide.u32 %rd4, %r0, 32;\n  add.u64 %rd5, %rd1, %rd4;\n"
         "  st.global.v4.u32 [%rd5], {%r20, %r21, %r22, %r23};\n"
         "  st.global.v4.u32 [%rd5+16], {%r24, %r25, %r26, %r27};\n")


def _run(ptx: str, image: np.ndarray, params: dict | None = None, n_out: int = 1024,
         profile: dict | None = None):
    mod = load_module(ptx, arch="sm_100a", profile=profile)
    din = mod.rt.to_device(np.ascontiguousarray(image).view(np.uint32))
    dout = mod.rt.empty((n_out,), np.uint32)
    p = {"adesc": 0, "bdesc": 0, "a2desc": 0, "idesc": 0}
    p.update(params or {})
    args = [din, dout, np.uint64(p["adesc"]), np.uint64(p["bdesc"]), np.uint64(p["a2desc"]),
            np.uint32(p["idesc"]), np.uint32(image.view(np.uint32).size)]
    res = mod.launch("k", (1,), (128,), args)
    return res, dout.host.copy()


# ----------------------------------------------------------------------------------------- operands
def _desc(start: int, lbo: int, sbo: int) -> int:
    """Table 40 K-major no-swizzle descriptor (fields >> 4, bits 46-48 = 0b001)."""
    return (start >> 4) | ((lbo >> 4) << 16) | ((sbo >> 4) << 32) | (1 << 46)


def _place(img: np.ndarray, start: int, rows_bytes: np.ndarray) -> int:
    """Write a (rows, row_bytes) K-major matrix at ``start`` in the canonical no-swizzle layout
    (8 rows x 16 bytes core matrices; LBO = 128 between K-neighbours, SBO between 8-row groups)."""
    rows, rb = rows_bytes.shape
    lbo, sbo = 128, 128 * (rb // 16)
    r = np.arange(rows)[:, None]
    b = np.arange(rb)[None, :]
    img[start + (r % 8) * 16 + (r // 8) * sbo + (b % 16) + (b // 16) * lbo] = rows_bytes
    return _desc(start, lbo, sbo)


def _idesc(*, dtype: int, atype: int, btype: int, m: int, n: int, sat: int = 0) -> int:
    """Table 42 fields (K-major A and B, dense)."""
    return (sat << 3) | (dtype << 4) | (atype << 7) | (btype << 10) | ((n >> 3) << 17) | ((m >> 4) << 24)


def _f16_operands(rng, m=128, n=8, k=16):
    a = rng.integers(-4, 5, size=(m, k)).astype(np.float16)
    b = rng.integers(-4, 5, size=(n, k)).astype(np.float16)
    return a, b


MMA_F16 = "  @%p2 tcgen05.mma.cta_group::1.kind::f16 [%r7], %rd8, %rd9, %r15, {DOL}%p4{SID};\n"
LOAD_OPS = ("  ld.param.u64 %rd8, [adesc];\n  ld.param.u64 %rd9, [bdesc];\n  ld.param.u64 %rd10, [a2desc];\n"
            "  ld.param.u32 %r15, [idesc];\n")


def _f16_kernel(dol: str = "", sid: str = "", preset: bool = False) -> str:
    body = LOAD_OPS
    if preset:  # every warp writes 1.0f into its quadrant's 8 D columns, then D += A.B
        body += ("  mov.b32 %r30, 0f3F800000;\n  tcgen05.st.sync.aligned.32x32b.x8.b32 [%r14], "
                 "{%r30, %r30, %r30, %r30, %r30, %r30, %r30, %r30};\n  tcgen05.wait::st.sync.aligned;\n"
                 "  tcgen05.fence::before_thread_sync;\n  bar.sync 0;\n  tcgen05.fence::after_thread_sync;\n"
                 "  setp.eq.u32 %p4, %r0, %r0;\n")
    else:
        body += "  setp.ne.u32 %p4, %r0, %r0;\n"
    body += "  mov.b32 %r40, 0;\n  mov.b32 %r41, 0x80000001;\n  mov.b32 %r42, 0;\n  mov.b32 %r43, 0x10;\n"
    body += MMA_F16.replace("{DOL}", dol).replace("{SID}", sid) + WAIT.format(n=0, ph=0) + READ8
    return _kernel(body)


def _f16_setup(rng):
    a, b = _f16_operands(rng)
    img = np.zeros(SMEM, dtype=np.uint8)
    ad = _place(img, 0, a.view(np.uint8).reshape(128, 32))
    bd = _place(img, 4096, b.view(np.uint8).reshape(8, 32))
    return a, b, img, ad, bd


def test_f16_mma_exact_with_disable_output_lane_and_scale_input_d() -> None:
    rng = np.random.default_rng(1)
    a, b, img, ad, bd = _f16_setup(rng)
    exact = a.astype(np.float64) @ b.astype(np.float64).T
    idesc = _idesc(dtype=1, atype=0, btype=0, m=128, n=8)
    ptx = _f16_kernel()
    _assemble_ok(ptx)
    res, out = _run(ptx, img, {"adesc": ad, "bdesc": bd, "idesc": idesc})
    assert res.status == "ok", res.message
    assert np.array_equal(out.view(np.float32).reshape(128, 8), exact.astype(np.float32))
    # disable lanes 0, 31 and 100 (words {0, 0x80000001, 0, 0x10}); D preset to 1.0, scale-input-d 2
    ptx = _f16_kernel(dol="{%r40, %r41, %r42, %r43}, ", sid=", 2", preset=True)
    _assemble_ok(ptx)
    res, out = _run(ptx, img, {"adesc": ad, "bdesc": bd, "idesc": idesc})
    assert res.status == "ok", res.message
    d = out.view(np.float32).reshape(128, 8)
    want = (exact + 0.25).astype(np.float32)
    off = [32, 63, 100]
    keep = np.setdiff1d(np.arange(128), off)
    assert np.array_equal(d[keep], want[keep])
    assert (d[off] == 1.0).all()


def test_f16_mma_with_f16_accumulator_and_bf16_inputs() -> None:
    rng = np.random.default_rng(2)
    a, b, img, ad, bd = _f16_setup(rng)
    exact = a.astype(np.float64) @ b.astype(np.float64).T
    res, out = _run(_f16_kernel(), img, {"adesc": ad, "bdesc": bd, "idesc": _idesc(dtype=0, atype=0, btype=0,
                                                                                     m=128, n=8)})
    assert res.status == "ok", res.message
    assert (out >> 16 == 0).all()
    assert np.array_equal((out & 0xFFFF).astype(np.uint16).view(np.float16).reshape(128, 8), exact.astype(np.float16))
    ab, bb = a.astype(ml_dtypes.bfloat16), b.astype(ml_dtypes.bfloat16)
    img2 = np.zeros(SMEM, dtype=np.uint8)
    ad2 = _place(img2, 0, ab.view(np.uint8).reshape(128, 32))
    bd2 = _place(img2, 4096, bb.view(np.uint8).reshape(8, 32))
    res, out = _run(_f16_kernel(), img2, {"adesc": ad2, "bdesc": bd2, "idesc": _idesc(dtype=1, atype=1, btype=1,
                                                                                       m=128, n=8)})
    assert res.status == "ok", res.message
    assert np.array_equal(out.view(np.float32).reshape(128, 8), exact.astype(np.float32))


def test_i8_mma_exact_int32_and_tf32() -> None:
    rng = np.random.default_rng(3)
    a = rng.integers(-128, 128, size=(128, 32)).astype(np.int8)
    b = rng.integers(0, 256, size=(8, 32)).astype(np.uint8)
    img = np.zeros(SMEM, dtype=np.uint8)
    ad = _place(img, 0, a.view(np.uint8))
    bd = _place(img, 4096, b)
    body = LOAD_OPS + ("  setp.ne.u32 %p4, %r0, %r0;\n"
                       "  @%p2 tcgen05.mma.cta_group::1.kind::i8 [%r7], %rd8, %rd9, %r15, %p4;\n")
    ptx = _kernel(body + WAIT.format(n=0, ph=0) + READ8)
    _assemble_ok(ptx)
    res, out = _run(ptx, img, {"adesc": ad, "bdesc": bd, "idesc": _idesc(dtype=2, atype=1, btype=0, m=128, n=8)})
    assert res.status == "ok", res.message
    assert np.array_equal(out.view(np.int32).reshape(128, 8), a.astype(np.int64) @ b.astype(np.int64).T)
    # tf32: the low 13 mantissa bits of the fp32 containers are ignored
    af = rng.integers(-8, 9, size=(128, 8)).astype(np.float32)
    bf = rng.integers(-8, 9, size=(8, 8)).astype(np.float32)
    dirty = af.view(np.uint32) | np.uint32(0x1FFF) * (af != 0)
    img = np.zeros(SMEM, dtype=np.uint8)
    ad = _place(img, 0, dirty.view(np.uint8).reshape(128, 32))
    bd = _place(img, 4096, bf.view(np.uint8).reshape(8, 32))
    body = LOAD_OPS + ("  setp.ne.u32 %p4, %r0, %r0;\n"
                       "  @%p2 tcgen05.mma.cta_group::1.kind::tf32 [%r7], %rd8, %rd9, %r15, %p4;\n")
    ptx = _kernel(body + WAIT.format(n=0, ph=0) + READ8)
    _assemble_ok(ptx)
    res, out = _run(ptx, img, {"adesc": ad, "bdesc": bd, "idesc": _idesc(dtype=1, atype=2, btype=2, m=128, n=8)})
    assert res.status == "ok", res.message
    assert np.array_equal(out.view(np.float32).reshape(128, 8), af.astype(np.float64) @ bf.astype(np.float64).T)


def _collector_kernel(first: str, second: str, *, overwrite: bool = True) -> str:
    """MMA 1 (``first`` collector op) D = A.B, then (optionally) the A tile in smem is overwritten
    with zeros, then MMA 2 (``second``) D += A'.B with the same descriptor."""
    body = LOAD_OPS + "  setp.ne.u32 %p4, %r0, %r0;\n  setp.eq.u32 %p5, %r0, %r0;\n"
    body += f"  @%p2 tcgen05.mma.cta_group::1.kind::f16{first} [%r7], %rd8, %rd9, %r15, %p4;\n"
    body += WAIT.format(n=0, ph=0)
    if overwrite:  # every thread zeroes 32 bytes of the A tile (4096 bytes), then makes it visible to the async proxy
        body += ("  mov.u32 %r31, buf;\n  shl.b32 %r32, %r0, 5;\n  add.u32 %r31, %r31, %r32;\n  mov.b32 %r33, 0;\n"
                 "  st.shared.v4.u32 [%r31], {%r33, %r33, %r33, %r33};\n"
                 "  st.shared.v4.u32 [%r31+16], {%r33, %r33, %r33, %r33};\n"
                 "  fence.proxy.async.shared::cta;\n  bar.sync 0;\n")
    body += f"  @%p2 tcgen05.mma.cta_group::1.kind::f16{second} [%r7], %rd8, %rd9, %r15, %p5;\n"
    body += WAIT.format(n=1, ph=1) + READ8
    return _kernel(body)


def test_collector_fill_then_lastuse_reads_the_filled_a_not_memory() -> None:
    rng = np.random.default_rng(4)
    a, b, img, ad, bd = _f16_setup(rng)
    exact = a.astype(np.float64) @ b.astype(np.float64).T
    idesc = _idesc(dtype=1, atype=0, btype=0, m=128, n=8)
    ptx = _collector_kernel(".collector::a::fill", ".collector::a::lastuse")
    _assemble_ok(ptx)
    res, out = _run(ptx, img, {"adesc": ad, "bdesc": bd, "idesc": idesc})
    assert res.status == "ok", res.message
    assert np.array_equal(out.view(np.float32).reshape(128, 8), (2 * exact).astype(np.float32))
    # without the collector the second MMA reads the zeroed tile: D stays A.B
    res, out = _run(_collector_kernel("", ""), img, {"adesc": ad, "bdesc": bd, "idesc": idesc})
    assert res.status == "ok", res.message
    assert np.array_equal(out.view(np.float32).reshape(128, 8), exact.astype(np.float32))


@pytest.mark.parametrize("first,second", [("", ".collector::a::use"),
                                          (".collector::a::fill.", ""),
                                          (".collector::a::discard", ".collector::a::lastuse")])
def test_collector_use_without_a_valid_fill_is_an_error(first: str, second: str) -> None:
    rng = np.random.default_rng(5)
    a, b, img, ad, bd = _f16_setup(rng)
    idesc = _idesc(dtype=1, atype=0, btype=0, m=128, n=8)
    if first.endswith("."):  # fill, lastuse, then a third use: use after lastuse
        ptx = _collector_kernel(".collector::a::fill", ".collector::a::lastuse", overwrite=False)
        ptx = ptx.replace("  tcgen05.fence::before_thread_sync;\n  bar.sync 0;\n  @!%p1 bra DONE;",
                          "  @%p2 tcgen05.mma.cta_group::1.kind::f16.collector::a::use [%r7], %rd8, %rd9, %r15, %p5;\n"
                          + WAIT.format(n=2, ph=0) + "  tcgen05.fence::before_thread_sync;\n  bar.sync 0;\n"
                          "  @!%p1 bra DONE;")
    else:
        ptx = _collector_kernel(first, second, overwrite=False)
    _assemble_ok(ptx)
    res, _ = _run(ptx, img, {"adesc": ad, "bdesc": bd, "idesc": idesc})
    assert res.status == "error" and "collector" in res.message and "holds nothing valid" in res.message


def test_block_scaled_mma_with_disable_output_lane_is_refused() -> None:
    body = ("  @%p2 tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale [%r7], %rd8, %rd9, %r15, [%r7], [%r7], "
            "{%r40, %r41, %r42, %r43}, %p4;\n")
    res, _ = _run(_kernel(LOAD_OPS + "  setp.ne.u32 %p4, %r0, %r0;\n" + body), np.zeros(64, np.uint8))
    assert res.status == "error" and "operands do not match" in res.message


# ----------------------------------------------------------------------------------------- shift, ld/st
def test_shift_down_moves_31_rows_of_256_bits() -> None:
    # each warp stores lane*100 + column into its quadrant's columns 0-15, then thread 0 shifts
    # the block at lane 32, column 4 (8 columns); every warp reads columns 0-7 and 8-15
    body = ("  mad.lo.u32 %r30, %r0, 100, 0;\n" + "".join(f"  add.u32 %r{31 + j}, %r30, {j};\n" for j in range(16))
            + "  tcgen05.st.sync.aligned.32x32b.x16.b32 [%r14], {" + ", ".join(f"%r{31 + j}" for j in range(16))
            + "};\n  tcgen05.wait::st.sync.aligned;\n  tcgen05.fence::before_thread_sync;\n  bar.sync 0;\n"
            "  tcgen05.fence::after_thread_sync;\n  add.u32 %r50, %r7, 0x200004;\n"
            "  @%p2 tcgen05.shift.cta_group::1.down [%r50];\n" + WAIT.format(n=0, ph=0) + READ8
            + "  add.u32 %r14, %r14, 8;\n  add.u64 %rd6, %rd1, 4096;\n"
            + READ8.replace("add.u64 %rd5, %rd1, %rd4", "add.u64 %rd5, %rd6, %rd4"))
    ptx = _kernel(body)
    _assemble_ok(ptx)
    res, out = _run(ptx, np.zeros(64, np.uint8), n_out=2048)
    assert res.status == "ok", res.message
    d = np.concatenate([out[:1024].reshape(128, 8), out[1024:].reshape(128, 8)], axis=1)
    want = (np.arange(128)[:, None] * 100 + np.arange(16)[None, :]).astype(np.uint32)
    want[33:64, 4:12] = want[32:63, 4:12]
    assert np.array_equal(d, want)


def test_shift_misaligned_lane_is_an_error() -> None:
    ptx = _kernel("  add.u32 %r50, %r7, 0x100000;\n  @%p2 tcgen05.shift.cta_group::1.down [%r50];\n"
                  + WAIT.format(n=0, ph=0))
    _assemble_ok(ptx)
    res, _ = _run(ptx, np.zeros(64, np.uint8))
    assert res.status == "error" and "aligned to 32" in res.message


def test_unpack_16b_store_and_pack_16b_load_16x32bx2() -> None:
    # each warp: st.16x32bx2.x2.unpack::16b at its quadrant lane with immHalfSplitoff 8; thread t's
    # register r = (t << 20) | (r << 16) | (0x1000 + t*16 + r): two halves go to two columns.
    # Then 32x32b.x16 reads the raw cells, and 16x32bx2.x2.pack::16b reads the registers back.
    body = ("  shl.b32 %r30, %r12, 20;\n  mad.lo.u32 %r31, %r12, 16, 0x1000;\n  or.b32 %r32, %r30, %r31;\n"
            "  add.u32 %r33, %r32, 0x10001;\n"
            "  tcgen05.st.sync.aligned.16x32bx2.x2.unpack::16b.b32 [%r14], 8, {%r32, %r33};\n"
            "  tcgen05.wait::st.sync.aligned;\n"
            "  tcgen05.ld.sync.aligned.32x32b.x16.b32 {" + ", ".join(f"%r{40 + j}" for j in range(16)) + "}, [%r14];\n"
            "  tcgen05.ld.sync.aligned.16x32bx2.x2.pack::16b.b32 {%r34, %r35}, [%r14], 8;\n"
            "  tcgen05.wait::ld.sync.aligned;\n  mul.wide.u32 %rd4, %r0, 72;\n  add.u64 %rd5, %rd1, %rd4;\n"
            + "".join(f"  st.global.u32 [%rd5+{4 * j}], %r{40 + j};\n" for j in range(16))
            + "  st.global.u32 [%rd5+64], %r34;\n  st.global.u32 [%rd5+68], %r35;\n"
            "  xor.b32 %r36, %r34, %r32;\n  xor.b32 %r37, %r35, %r33;\n")
    ptx = _kernel(body)
    _assemble_ok(ptx)
    res, out = _run(ptx, np.zeros(64, np.uint8), n_out=128 * 18)
    assert res.status == "ok", res.message
    o = out.reshape(128, 18)
    for w in range(4):
        for t in range(32):
            reg0 = (t << 20) | (0x1000 + t * 16)
            regs = [reg0, reg0 + 0x10001]
            assert list(o[32 * w + t, 16:18]) == regs  # pack::16b reads back exactly what unpack::16b wrote
            lane, off = t % 16, 8 * (t // 16)
            for r in range(2):  # register r of thread t: lane t%16, columns off + 2r, off + 2r + 1
                c = off + 2 * r
                assert o[32 * w + lane, c] == regs[r] & 0xFFFF
                assert o[32 * w + lane, c + 1] == regs[r] >> 16


# ----------------------------------------------------------------------------------------- maps, masks
def test_ld_st_map_rederivation_agrees_with_the_host_map_except_split_with_pack() -> None:
    """The VM's bit-id derivation against H1's host map (reference/tcgen05/tmem_image.py). The one
    difference: .16x32bx2 with .pack::16b -- the host doubles immHalfSplitoff with the column
    (2 * (r + split)), the VM adds it as the address offset it is (2r + split)."""
    from mmacts.ptxvm.tcgen05.tmem import _table47, ld_st_map
    from reference.tcgen05.tmem_image import ld_st_map as host_map

    t = np.arange(32)[:, None]
    for (shape, num), _ in sorted(_table47().items()):
        for pack in (False, True):
            for split in ((num, 8, 3) if shape == "16x32bx2" else (None,)):
                vm = ld_st_map(shape, num, pack=pack, half_split=split)
                lane, col = host_map(shape, num, pack=pack, split=split)
                assert np.array_equal(vm.lane, lane), (shape, num)
                got = vm.col[..., 0] if pack else vm.col
                if pack and shape == "16x32bx2":
                    assert np.array_equal(got, col - split * (t // 16)), (shape, num, split)
                else:
                    assert np.array_equal(got, col), (shape, num, pack)


def test_zero_column_mask_reproduces_table45_examples() -> None:
    from mmacts.ptxvm.tcgen05.mma_plain import zero_column_mask

    def word(sc, fs, nzm, skip, use, shift):
        w = sum(s << (8 * i) for i, s in enumerate(sc)) | sum(f << (32 + i) for i, f in enumerate(fs))
        return w | (nzm << 39) | (skip << 40) | (use << 48) | (shift << 56)

    def _starts(mask: np.ndarray, at: int, s: str) -> bool:  # the spec's "0b ... 111 0000" strings, LSB last
        want = [bool(int(c)) for c in reversed(s.replace(" ", ""))]
        return list(mask[at:at + len(want)]) == want

    mask, shift = zero_column_mask(word([0] * 4, [0] * 4, 0, 4, 3, 0), 128, 64)
    assert not mask.any() and shift == 0  # example 1
    mask, _ = zero_column_mask(word([0] * 4, [0] * 4, 1, 2, 3, 0), 128, 64)  # example 2
    assert _starts(mask, 0, "111 0000 111 0000")
    mask, _ = zero_column_mask(word([0, 0, 0, 0], [1, 0, 0, 0], 1, 2, 3, 0), 64, 64)  # example 3
    assert _starts(mask, 0, "111 0000 111 0000 111")
    assert _starts(mask, 32, "0000 111 0000 111 0000")
    mask, shift = zero_column_mask(word([0, 1, 2, 1], [1, 1, 0, 0], 1, 2, 3, 2), 32, 128)  # example 4
    assert shift == 2
    assert _starts(mask, 0, "0000 111 0000 111")
    assert _starts(mask, 32, "0000 111 0000 11")
    assert _starts(mask, 64, "111 0000 111 00")
    assert _starts(mask, 96, "111 0000 111 000")


@pytest.mark.parametrize("m", [32, 64, 128])
def test_ws_mma_layouts_mask_shift_and_b_collector(m: int) -> None:
    """tcgen05.mma.ws kind::i8 N = 64 through execute_mma_plain: Layouts G/E/D, a zero-column mask with
    shift 2, then a B collector fill / use (B read from the buffer after the smem tile changed)."""
    from mmacts.ptxvm.tcgen05 import Collector, execute_mma_plain

    rng = np.random.default_rng(m)
    n, k, sh = 64, 32, 2
    a = rng.integers(-128, 128, size=(m, k)).astype(np.int8)
    b = rng.integers(-128, 128, size=(n + sh, k)).astype(np.int8)
    smem = np.zeros(SMEM, dtype=np.uint8)
    ad = _place(smem, 0, a.view(np.uint8))
    bd = _place(smem, 4096, b.view(np.uint8))
    tm = np.full((128, 512), 0xFFFFFFFF, dtype=np.uint32)
    zcm = (1 << 39) | (0 << 40) | (2 << 48) | (sh << 56)  # 3 used columns (fs = 0), then 1 zeroed, repeating
    idesc = _idesc(dtype=2, atype=1, btype=1, m=m, n=n)
    coll = [Collector()]
    execute_mma_plain(kind="i8", cta_group=1, tmems=[tm], smems=[smem], d_taddr=0, a=ad, b_desc=bd, idesc=idesc,
                      enable_input_d=False, ws=True, zero_column_mask_desc=zcm, collectors=coll,
                      collector_usage="collector::b2::fill")
    bb = b[sh:].astype(np.int64)
    mask = np.zeros(n, dtype=bool)
    for i in range({128: 1, 64: 2, 32: 4}[m]):
        w = n // {128: 1, 64: 2, 32: 4}[m]
        mask[i * w:(i + 1) * w] = (np.arange(w) % 4) == 3
    want = a.astype(np.int64) @ np.where(mask[:, None], 0, bb).T
    parts = {128: 1, 64: 2, 32: 4}[m]
    w = n // parts
    got = np.concatenate([tm[(128 // parts) * q:(128 // parts) * q + m, :w] for q in range(parts)], axis=1)
    assert np.array_equal(got.view(np.int32), want)
    smem[4096:8192] = 0  # B tile gone; ::use takes B from collector buffer b2
    execute_mma_plain(kind="i8", cta_group=1, tmems=[tm], smems=[smem], d_taddr=0, a=ad, b_desc=bd, idesc=idesc,
                      enable_input_d=True, ws=True, zero_column_mask_desc=zcm, collectors=coll,
                      collector_usage="collector::b2::use")
    got = np.concatenate([tm[(128 // parts) * q:(128 // parts) * q + m, :w] for q in range(parts)], axis=1)
    assert np.array_equal(got.view(np.int32), 2 * want)
    with pytest.raises(ValueError, match="holds nothing valid"):
        execute_mma_plain(kind="i8", cta_group=1, tmems=[tm], smems=[smem], d_taddr=0, a=ad, b_desc=bd,
                          idesc=idesc, enable_input_d=True, ws=True, collectors=coll,
                          collector_usage="collector::b1::use")


# ------------------------------------------------------------------ tcgen05.ld completion before dealloc
_LD8 = "  tcgen05.ld.sync.aligned.32x32b.x8.b32 {%r20, %r21, %r22, %r23, %r24, %r25, %r26, %r27}, [%r14];\n"
_STORE = ("  mul.wide.u32 %rd4, %r0, 32;\n  add.u64 %rd5, %rd1, %rd4;\n"
          "  st.global.v4.u32 [%rd5], {%r20, %r21, %r22, %r23};\n")


@pytest.mark.parametrize("body, hazard", [
    (_LD8 + _STORE + "  st.global.v4.u32 [%rd5+16], {%r24, %r25, %r26, %r27};\n", False),
    (_LD8 + _STORE, True),
    (_LD8, True),
    (_LD8 + "  tcgen05.wait::ld.sync.aligned;\n", False),
])
def test_dealloc_after_a_tcgen05_ld_whose_registers_were_read(body: str, hazard: bool) -> None:
    """AMB-TCGEN05-LD-NO-WAIT-DEALLOC, reading register-read-completes (CUTLASS's SM100 epilogue): a destination
    register read by its thread (a true register dependency, 9.7.16.6.4.5) has been loaded, so a later dealloc
    needs no tcgen05.wait::ld for it; a register neither read nor waited for still makes dealloc a hazard.
    Planted: without the read clearing the pending register, the first case fails with the hazard."""
    res, _ = _run(_kernel(body), np.zeros(64, dtype=np.uint32))
    if hazard:
        assert res.status == "error" and "tcgen05.dealloc while the tcgen05.ld" in res.message, res.message
    else:
        assert res.status == "ok", res.message


_STORE_HI = "  st.global.v4.u32 [%rd5+16], {%r24, %r25, %r26, %r27};\n"
_WAIT_LD = "  tcgen05.wait::ld.sync.aligned;\n"


@pytest.mark.parametrize("body, named, hazard", [
    (_LD8 + _STORE + _STORE_HI + _LD8 + _WAIT_LD, False, True),
    (_LD8 + _STORE + _STORE_HI + _LD8 + _WAIT_LD, True, False),
    (_LD8 + _STORE + _STORE_HI + "  mov.u32 %r27, 5;\n" + _WAIT_LD, True, False),
    (_LD8 + _STORE + _LD8 + _WAIT_LD, True, True),
    (_LD8 + "  mov.u32 %r20, 5;\n" + _WAIT_LD, True, True),
])
def test_overwrite_of_a_read_tcgen05_ld_register_needs_the_named_reading(body: str, named: bool,
                                                                          hazard: bool) -> None:
    """AMB-TCGEN05-LD-NO-WAIT-OVERWRITE (the CuTe DSL epilogue loops tcgen05.ld into the same registers with no
    tcgen05.wait::ld): by default overwriting a destination register before the wait is the anti-dependency
    hazard of 9.7.16.6.4.5 even after the register was read, and the message names the entry; under the named
    reading register-read-completes a register its thread read may be overwritten (by the next tcgen05.ld or any
    write), one never read may not. Planted: dropping the read check (allowing any overwrite under the reading)
    makes the last two cases fail; ignoring the profile makes the second and third fail."""
    profile = {"readings": {"AMB-TCGEN05-LD-NO-WAIT-OVERWRITE": "register-read-completes"}} if named else None
    res, _ = _run(_kernel(body), np.zeros(64, dtype=np.uint32), profile=profile)
    if hazard:
        assert res.status == "error" and "anti-dependency" in res.message, res.message
        assert named or "AMB-TCGEN05-LD-NO-WAIT-OVERWRITE" in res.message, res.message
    else:
        assert res.status == "ok", res.message


def test_smem_overwritten_under_an_in_flight_mma_is_a_hazard() -> None:
    """The A tile is stored to after the MMA was issued and before its commit was waited on: the VM names the
    overwritten byte and the MMA (the check that the MMA's smem reads and the later stores intersect)."""
    rng = np.random.default_rng(6)
    a, b, img, ad, bd = _f16_setup(rng)
    idesc = _idesc(dtype=1, atype=0, btype=0, m=128, n=8)
    ptx = _collector_kernel("", "", overwrite=True)
    first_wait = WAIT.format(n=0, ph=0)
    ptx = ptx.replace(first_wait, "", 1)  # the stores now race the first MMA's reads of A
    ptx = ptx.replace(WAIT.format(n=1, ph=1), WAIT.format(n=0, ph=0), 1)
    _assemble_ok(ptx)
    res, _ = _run(ptx, img, {"adesc": ad, "bdesc": bd, "idesc": idesc})
    assert res.status == "error" and "was overwritten (line" in res.message and "could still read it" in \
        res.message, res.message


# ------------------------------------------------------------------ tcgen05.ld racing a tcgen05.cp
@pytest.mark.parametrize("wait_first", [False, True])
def test_ld_of_cells_an_unfinished_cp_writes_is_a_hazard(wait_first: bool) -> None:
    """A tcgen05.ld of the 8 columns a tcgen05.cp .128x256b (thread 0, no swizzle) writes, issued before the
    cp's commit mbarrier completed, reads cells the copy may not have written yet: a race no GPU defines,
    which the VM refuses by name (ops_tcgen05: the ld's cells against the cp's written-cells map). After
    the wait the same ld is fine. Planted: a written-cells map of 513 columns (cp.execute_cp) -- the
    check raises numpy's broadcast error instead of the hazard, and the first case fails."""
    cp = ("  ld.param.u64 %rd8, [adesc];\n  @%p2 tcgen05.cp.cta_group::1.128x256b [%r7], %rd8;\n")
    ld = _LD8 + "  tcgen05.wait::ld.sync.aligned;\n" + _STORE
    body = cp + (WAIT.format(n=0, ph=0) + ld if wait_first else ld + WAIT.format(n=0, ph=0))
    res, _ = _run(_kernel(body), np.zeros(SMEM, dtype=np.uint8), {"adesc": _desc(0, 16, 128)})
    if wait_first:
        assert res.status == "ok", res.message
    else:
        assert res.status == "error" and "tcgen05.ld read lane 0 column 0" in res.message \
            and "before the cp issued" in res.message, res.message
