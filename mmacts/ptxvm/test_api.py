"""The kernel-author interface: ``mmacts.ptxvm.api`` (CuPy-shaped) and ``mmacts vm run``.

Why: issue 23 asks for a documented way to run any PTX on the VM; these tests pin what README's
"Running any PTX on the VM" promises: arguments converted to the declared parameter types, cluster
dimensions given at launch time, failures as one message naming the thread, buffers printed, a
per-thread trace, and bad command lines as one line with exit 2.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mmacts.ptxvm import api
from mmacts.runner.cli import main as mmacts_main

PTX = """.version 8.7
.target sm_100a
.address_size 64
.visible .entry scale(.param .u64 px, .param .u64 py, .param .u32 n, .param .f32 f)
{
  .reg .pred %p<2>;
  .reg .b32 %r<8>;
  .reg .f32 %f<4>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd0, [px];
  ld.param.u64 %rd1, [py];
  ld.param.u32 %r1, [n];
  ld.param.f32 %f1, [f];
  mov.u32 %r0, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mad.lo.u32 %r0, %r2, %r3, %r0;
  setp.ge.u32 %p0, %r0, %r1;
  @%p0 bra DONE;
  mul.wide.u32 %rd2, %r0, 4;
  add.u64 %rd3, %rd0, %rd2;
  add.u64 %rd4, %rd1, %rd2;
  ld.global.f32 %f0, [%rd3];
  mul.f32 %f2, %f0, %f1;
  st.global.f32 [%rd4], %f2;
DONE:
  ret;
}

.visible .entry ranks(.param .u64 py)
{
  .reg .b32 %r<8>;
  .reg .pred %p<2>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [py];
  mov.u32 %r0, %ctaid.x;
  mov.u32 %r1, %cluster_ctarank;
  mov.u32 %r2, %cluster_nctarank;
  shl.b32 %r2, %r2, 8;
  or.b32 %r1, %r1, %r2;
  mul.wide.u32 %rd2, %r0, 4;
  add.u64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r1;
  ret;
}
"""


def test_raw_module_launch_converts_python_scalars() -> None:
    k = api.RawModule(code=PTX).get_function("scale")
    x = api.asarray(np.arange(100, dtype=np.float32))
    y = api.empty(100, np.float32)
    out = k((2,), (64,), (x, y, 100, 0.5))
    assert out.status == "ok" and out.thread_instructions > 0
    assert (y.get() == np.arange(100, dtype=np.float32) * 0.5).all()
    assert [p[:2] for p in k.params] == [("px", "u64"), ("py", "u64"), ("n", "u32"), ("f", "f32")]


def test_cluster_given_at_launch_time() -> None:
    k = api.RawModule(code=PTX).get_function("ranks")
    y = api.zeros(4, np.uint32)
    k(4, 32, (y,), cluster=(2, 1, 1))
    assert (y.get() == [0x200, 0x201, 0x200, 0x201]).all()
    k(4, 32, (y,))
    assert (y.get() == [0x100] * 4).all()


def test_cluster_launch_against_reqnctapercluster_is_refused() -> None:
    ptx = PTX.replace(".visible .entry ranks(.param .u64 py)", ".visible .entry ranks(.param .u64 py)\n"
                      ".reqnctapercluster 4, 1, 1")
    k = api.RawModule(code=ptx).get_function("ranks")
    with pytest.raises(ValueError, match="reqnctapercluster"):
        k(4, 32, (api.zeros(4, np.uint32),), cluster=2)


def test_a_faulting_launch_raises_naming_the_thread() -> None:
    k = api.RawModule(code=PTX).get_function("scale")
    x = api.asarray(np.arange(10, dtype=np.float32))
    with pytest.raises(api.LaunchError, match=r"out-of-bounds global load .* \[CTA 0, thread 10\]") as ei:
        k(1, 32, (x, api.zeros(32, np.float32), 32, 1.0))
    assert ei.value.outcome.status == "error"


def test_wrong_arguments_are_type_errors() -> None:
    k = api.RawModule(code=PTX).get_function("scale")
    x = api.zeros(8, np.float32)
    with pytest.raises(TypeError, match="takes 4 arguments"):
        k(1, 32, (x, x, 8))
    with pytest.raises(TypeError, match="host array"):
        k(1, 32, (np.zeros(8, np.float32), x, 8, 1.0))
    with pytest.raises(OverflowError):
        k(1, 32, (x, x, 1 << 40, 1.0))
    with pytest.raises(KeyError, match="no entry 'nope'"):
        api.RawModule(code=PTX).get_function("nope")


# ------------------------------------------------------------------------------------------ mmacts vm run
@pytest.fixture()
def ptx_file(tmp_path: Path) -> Path:
    p = tmp_path / "k.ptx"
    p.write_text(PTX)
    return p


def test_vm_run_prints_the_buffers(ptx_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = mmacts_main(["vm", "run", str(ptx_file), "--entry", "scale", "--grid", "1", "--block", "32",
                      "--arg", "arange:f32:8", "--arg", "empty:f32:8", "--arg", "u32:8", "--arg", "2.0",
                      "--save", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert out.startswith("ok: scale") and "thread-instructions" in out
    assert "py (float32, shape (8,)): [ 0.,  2.,  4.,  6.,  8., 10., 12., 14.]" in out
    assert (np.load(tmp_path / "out" / "py.npy") == np.arange(8) * 2).all()


def test_vm_run_trace_follows_the_chosen_thread(ptx_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = mmacts_main(["vm", "run", str(ptx_file), "--entry", "scale", "--block", "32", "--arg", "arange:f32:8",
                      "--arg", "zeros:f32:8", "--arg", "8", "--arg", "3", "--trace", "--threads", "0:5"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "[CTA 0 t  5] L27" in out and "%f2=0x41700000(15.0)" in out


def test_vm_run_kernel_fault_exits_1(ptx_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = mmacts_main(["vm", "run", str(ptx_file), "--entry", "scale", "--block", "32", "--arg", "arange:f32:8",
                      "--arg", "zeros:f32:32", "--arg", "32", "--arg", "1"])
    out = capsys.readouterr().out
    assert rc == 1 and out.startswith("error: PTX VM memory: out-of-bounds global load") and "thread 8" in out


@pytest.mark.parametrize("argv,why", [
    (["--arg", "x:1", "--arg", "1", "--arg", "1", "--arg", "1"], "unknown type"),
    (["--arg", "zeros:f32", "--arg", "1", "--arg", "1", "--arg", "1"], "give a shape"),
    (["--arg", "zeros:f32:8"], "takes 4 arguments"),
    (["--grid", "0", "--arg", "1", "--arg", "1", "--arg", "1", "--arg", "1"], "--grid"),
    (["--entry", "nope"], "no entry 'nope'"),
    ([], "2 entries"),
])
def test_vm_run_bad_input_is_one_line_exit_2(ptx_file: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
                                             why: str) -> None:
    if argv and argv[0] not in ("--entry",) and "--entry" not in argv and why != "2 entries":
        argv = ["--entry", "scale", *argv]
    rc = mmacts_main(["vm", "run", str(ptx_file), *argv])
    err = capsys.readouterr().err
    assert rc == 2 and why in err and len(err.strip().splitlines()) == 1, err


def test_vm_run_missing_file_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert mmacts_main(["vm", "run", "/nonexistent/k.ptx"]) == 2
    assert "no such file" in capsys.readouterr().err


def test_trace_prints_b128_registers() -> None:
    import io

    from mmacts.ptxvm.trace import Tracer

    ptx = PTX.split(".visible .entry ranks")[0]
    ptx = ptx.replace("  .reg .b64 %rd<8>;\n", "  .reg .b64 %rd<8>;\n  .reg .b128 %q;\n")
    ptx = ptx.replace("  st.global.f32 [%rd4], %f2;\n", "  st.global.f32 [%rd4], %f2;\n  mov.b128 %q, {%rd3, %rd4};\n")
    buf = io.StringIO()
    k = api.RawModule(code=ptx).get_function("scale")
    x, y = api.zeros(4, np.float32), api.zeros(4, np.float32)
    k(1, 4, (x, y, 4, 1.0), trace=Tracer(((0, 1),), out=buf))
    line = next(ln for ln in buf.getvalue().splitlines() if "%q=" in ln)
    words = line.split("%q=0x")[1].split()[0]
    assert len(words) == 32 and int(words[16:], 16) == x.base + 4 and int(words[:16], 16) == y.base + 4


def test_reset_drops_the_arrays_not_the_modules() -> None:
    k = api.RawModule(code=PTX).get_function("scale")
    old = api.zeros(8, np.float32)
    api.reset()
    x, y = api.asarray(np.ones(8, np.float32)), api.zeros(8, np.float32)
    k(1, 32, (x, y, 8, 4.0))
    assert (y.get() == 4).all()
    with pytest.raises(api.LaunchError, match="out-of-bounds global load"):
        k(1, 32, (old, y, 8, 4.0))


STRUCT_PTX = """.version 8.7
.target sm_100a
.address_size 64
.visible .entry byval(.param .u64 py, .param .align 8 .b8 s[16])
{
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [py];
  ld.param.u64 %rd2, [s+8];
  st.global.u64 [%rd1], %rd2;
  ret;
}
"""


def test_struct_parameter_by_value(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A by-value parameter of 16 bytes (a struct; a tensor map is one of 128): np.void in Python, bytes:FILE in
    the command; the kernel reads its second word."""
    raw = np.array([5, 0x1122334455667788], dtype=np.uint64).tobytes()
    y = api.zeros(1, np.uint64)
    api.RawModule(code=STRUCT_PTX).get_function("byval")(1, 32, (y, np.frombuffer(raw, dtype="V16")[0]))
    assert y.get()[0] == 0x1122334455667788
    (tmp_path / "s.bin").write_bytes(raw)
    (tmp_path / "k.ptx").write_text(STRUCT_PTX)
    rc = mmacts_main(["vm", "run", str(tmp_path / "k.ptx"), "--block", "32", "--arg", "zeros:u64:1",
                      "--arg", f"bytes:{tmp_path / 's.bin'}"])
    out = capsys.readouterr().out
    assert rc == 0 and f"[{0x1122334455667788}]" in out, out
    assert mmacts_main(["vm", "run", str(tmp_path / "k.ptx"), "--arg", "zeros:u64:1", "--arg", "bytes:/nope"]) == 2


def test_vm_run_notes_missing_dynamic_shared_memory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ptx = STRUCT_PTX.replace(".visible .entry", ".extern .shared .align 16 .b8 dyn[];\n.visible .entry")
    (tmp_path / "k.ptx").write_text(ptx)
    (tmp_path / "s.bin").write_bytes(bytes(16))
    argv = ["vm", "run", str(tmp_path / "k.ptx"), "--arg", "zeros:u64:1", "--arg", f"bytes:{tmp_path / 's.bin'}"]
    assert mmacts_main(argv) == 0
    assert "declares dynamic (extern) shared memory and --shared-mem is 0" in capsys.readouterr().err
    assert mmacts_main([*argv, "--shared-mem", "64"]) == 0
    assert "extern" not in capsys.readouterr().err


def test_raw_module_from_a_path(ptx_file: Path) -> None:
    mod = api.RawModule(path=str(ptx_file))
    assert mod.entries == ["scale", "ranks"] and mod.arch == "sm_100a"
    with pytest.raises(ValueError, match="exactly one of code= and path="):
        api.RawModule()


def test_vm_run_trace_thread_ranges(ptx_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["vm", "run", str(ptx_file), "--entry", "scale", "--block", "32", "--arg", "arange:f32:8",
            "--arg", "zeros:f32:8", "--arg", "8", "--arg", "3", "--trace"]
    assert mmacts_main([*argv, "--threads", "0:2-4"]) == 0
    out = capsys.readouterr().out
    assert {ln[:12] for ln in out.splitlines() if ln.startswith("[CTA")} == {"[CTA 0 t  2]", "[CTA 0 t  3]",
                                                                           "[CTA 0 t  4]"}
    assert mmacts_main([*argv, "--threads", "0:4-2"]) == 2
    assert "empty or negative range" in capsys.readouterr().err
