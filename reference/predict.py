"""``mmacts predict``: what would this GPU path return for these inputs?

Reads vectors in the published file format (``a``/``b``: one test a line, K hex binary32
words; ``c``: one 32-character binary string a line) and prints one 32-character binary
string a line: the result bit pattern, fp16 results widened to binary32 exactly as the
published ``d_*_fp16`` files hold them, so the output can be diffed against such a file.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from reference import formats as F
from reference import numeric_model as NM
from reference import published as P


class _Usage(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, no usage dump, exit code 2 via main
        raise _Usage(message)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="mmacts predict", description=__doc__.splitlines()[0], add_help=True)
    p.add_argument("--list", action="store_true", help="print every model: name, then source")
    p.add_argument("--model", help="numeric model name (see --list)")
    p.add_argument("--format", choices=("e4m3", "e5m2"), help="input element format of a and b")
    p.add_argument("--a", type=Path, help="file of a vectors (hex binary32 words)")
    p.add_argument("--b", type=Path, help="file of b vectors")
    p.add_argument("--c", type=Path, help="file of c values (32-character binary strings)")
    p.add_argument("--out-format", default="fp32", choices=("fp32", "fp16"))
    return p


def _read(path: Path) -> str:
    try:
        return P.open_text(path)
    except (OSError, UnicodeDecodeError, EOFError) as exc:
        raise _Usage(f"cannot read {path}: {exc.strerror if isinstance(exc, OSError) else exc}") from None


def run(args: argparse.Namespace) -> list[str]:
    """The output lines for parsed ``args`` (raises ``_Usage`` on bad input)."""
    if args.list:
        return [f"{name}\t{src}" for name, src in NM.list_models()]
    missing = [n for n in ("model", "format", "a", "b", "c") if getattr(args, n) is None]
    if missing:
        raise _Usage("missing " + ", ".join("--" + m for m in missing) + " (or use --list)")
    if args.model not in NM.MODELS:
        raise _Usage(f"unknown model {args.model!r}; known: {', '.join(NM.MODELS)}")
    try:
        a = P.parse_hex_words(_read(args.a))
        b = P.parse_hex_words(_read(args.b))
        c = P.bits_to_float(P.parse_bit_strings(_read(args.c)))
    except ValueError as exc:
        raise _Usage(f"bad input file: {exc}") from None
    if a.shape != b.shape:
        raise _Usage(f"--a has {a.shape[0]} lines of {a.shape[1]} values, --b {b.shape[0]} of {b.shape[1]}")
    if c.shape[0] != a.shape[0]:
        raise _Usage(f"--c has {c.shape[0]} lines, --a {a.shape[0]}")
    for name, v in (("a", a), ("b", b)):
        bad = ~F.representable(args.format, v) & np.isfinite(v)
        if bad.any():
            line = int(np.argwhere(bad)[0][0]) + 1
            raise _Usage(f"--{name} line {line}: value {v[bad][0]!r} is not exactly {args.format}")
    d = NM.dot(args.model, a, b, c, args.out_format, in_format=args.format)
    return P.float_to_bit_strings(d)


def main(argv: list[str] | None = None) -> int:
    """Entry point; ``argv`` may start with ``predict``. Returns 0, or 2 with one error line."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "predict":
        argv = argv[1:]
    try:
        args = _parser().parse_args(argv)
        lines = run(args)
    except _Usage as exc:
        print(f"mmacts predict: error: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write("".join(line + "\n" for line in lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
