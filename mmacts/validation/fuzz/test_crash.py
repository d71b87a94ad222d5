"""No generated program crashes the VM (issue 22 item 4): every fresh kernel runs ``ok`` or is refused by
name; a Python exception inside the VM never leaves ``launch()`` (it becomes an error naming the
instruction, CTA and thread, and saying it is a VM bug). Plus the fuzz command line's bad-input lines."""

from __future__ import annotations

import pytest

from mmacts.validation.fuzz.__main__ import main
from mmacts.validation.fuzz.generate import kernel
from mmacts.validation.fuzz.vm import run_vm

FRESH = range(100_000, 100_150)
"""Seeds no record uses (the records use 1-2400): programs the project has never run on silicon."""


@pytest.mark.parametrize("chunk", range(5))
def test_fresh_programs_never_crash_the_vm(chunk: int) -> None:
    bad = []
    for s in list(FRESH)[chunk::5]:
        k = kernel(s)
        run = run_vm(k.ptx, k.inputs(), k.n_out)
        if run.status != "ok" and not run.refused:
            bad.append(f"seed {s}: {run.message}")
    assert not bad, "\n".join(bad)


def test_a_python_exception_in_a_handler_stays_inside_launch(monkeypatch) -> None:
    """Plant: the xor handler raises TypeError, as a VM defect would."""
    from mmacts.ptxvm import handlers, runtime  # noqa: F401 - importing the runtime registers every family

    def broken(m, ins, act):  # noqa: ANN001, ANN202
        raise TypeError("planted")

    monkeypatch.setitem(handlers.HANDLERS, "xor", broken)
    k = next(kernel(s) for s in range(1, 200) if "xor." in kernel(s).ptx)
    run = run_vm(k.ptx, k.inputs(), k.n_out)
    assert run.status == "error"
    assert "TypeError" in run.message and "xor" in run.message and "thread" in run.message, run.message


@pytest.mark.parametrize("argv, text", [
    (["crash", "--seeds", "5-3"], "increasing"),
    (["crash", "--seeds", "abc"], "expected N"),
    (["replay", "--record", "/nonexistent"], "not a fuzz record folder"),
    (["show", "seed999999"], "no kernel"),
    (["store", "/nonexistent", "/tmp/x"], "no device.json"),
    (["frobnicate"], ""),
])
def test_bad_input_is_one_line_and_exit_2(argv, text, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        rc = main(argv)
        raise SystemExit(rc)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert text in err
    if text:
        assert len(err.splitlines()) == 1, err
