"""PTX module scaffolding: header (``.version``/``.target``/``.address_size``), register files,
entry functions.

Why a scaffold: every generated kernel must be a *complete, loadable* module (the compile suite
assembles exactly what the hardware suites launch), and the pieces every module needs -- header
with the right minimum ISA version, register declarations that match the registers used,
parameter loads -- are where hand-written PTX goes wrong. Keeping them here means an instruction
builder only has to think about its own line.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

TARGET_MIN_PTX: dict[str, str] = {
    "sm_80": "7.0",
    "sm_89": "7.8",
    "sm_90": "7.8",
    "sm_90a": "8.0",
    "sm_100": "8.6",
    "sm_100a": "8.6",
    "sm_100f": "8.8",
    "sm_103": "8.8",
    "sm_103a": "8.8",
    "sm_103f": "8.8",
    "sm_110": "9.0",
    "sm_110a": "9.0",
    "sm_110f": "9.0",
    "sm_120": "8.7",
    "sm_120a": "8.7",
    "sm_120f": "8.8",
    "sm_121": "8.8",
    "sm_121a": "8.8",
    "sm_121f": "8.8",
}
"""First PTX ISA version whose ``.target`` accepts each architecture (PTX ISA release notes;
pinned against ptxas by ``test_module.py``). sm_101* was renamed sm_110* in PTX ISA 9.0."""


def version_key(v: str) -> tuple[int, int]:
    """``"8.10"`` -> ``(8, 10)``: PTX ISA versions compare numerically per component."""
    major, minor = v.split(".")
    return int(major), int(minor)


def max_version(*versions: str) -> str:
    """The largest of the given PTX ISA versions."""
    return max(versions, key=version_key)


def min_ptx_for_target(arch: str) -> str:
    """Minimum ``.version`` that can name ``arch`` in ``.target``."""
    try:
        return TARGET_MIN_PTX[arch]
    except KeyError:
        raise ValueError(f"unknown target {arch!r}; known: {', '.join(TARGET_MIN_PTX)}") from None


def module_header(arch: str, ptx_version: str | None = None, address_size: int = 64) -> str:
    """``.version V`` / ``.target arch`` / ``.address_size 64``.

    With ``ptx_version=None`` the target's minimum version is used. An explicit version below
    that minimum is spelled as given (the compile suite uses such modules as negative cases).
    """
    v = ptx_version or min_ptx_for_target(arch)
    return f".version {v}\n.target {arch}\n.address_size {address_size}\n"


_REG_PREFIX: dict[str, str] = {
    "pred": "%p",
    "b16": "%h",
    "b32": "%r",
    "b64": "%rd",
    "f32": "%f",
    "f64": "%fd",
}


@dataclass
class RegFile:
    """Hands out fresh register names per PTX type and declares exactly those it handed out."""

    counts: dict[str, int] = field(default_factory=dict)

    def new(self, rtype: str, n: int = 1) -> list[str]:
        """``n`` fresh registers of ``rtype`` (``pred``, ``b16``, ``b32``, ``b64``, ``f32``, ``f64``)."""
        if rtype not in _REG_PREFIX:
            raise ValueError(f"unknown register type {rtype!r}")
        start = self.counts.get(rtype, 0)
        self.counts[rtype] = start + n
        return [f"{_REG_PREFIX[rtype]}{start + i}" for i in range(n)]

    def one(self, rtype: str) -> str:
        """One fresh register of ``rtype``."""
        return self.new(rtype, 1)[0]

    def declarations(self) -> list[str]:
        """``.reg .b32 %r<N>;`` lines for every type used."""
        return [
            f".reg .{t} {_REG_PREFIX[t]}<{n}>;" for t, n in sorted(self.counts.items()) if n > 0
        ]


@dataclass
class Entry:
    """One ``.visible .entry``: parameters, shared declarations, register file and body lines."""

    name: str
    params: Sequence[tuple[str, str]] = ()
    """``(ptx_type, name)`` pairs, e.g. ``("u64", "out")``."""
    regs: RegFile = field(default_factory=RegFile)
    shared: list[str] = field(default_factory=list)
    """Declarations inside the entry, e.g. ``.shared .align 16 .b8 smem[1024];``."""
    body: list[str] = field(default_factory=list)
    directives: list[str] = field(default_factory=list)
    """Performance-tuning directives after the signature, e.g. ``.reqntid 128, 1, 1``."""

    def emit(self, *lines: str) -> None:
        """Append instruction lines to the body."""
        self.body.extend(lines)

    def extend(self, lines: Iterable[str]) -> None:
        """Append many instruction lines."""
        self.body.extend(lines)

    def label(self, name: str) -> None:
        """Append a label line."""
        self.body.append(f"{name}:")

    def load_param_u64(self, pname: str) -> str:
        """Load a ``.u64`` parameter into a fresh register and convert it to a global address."""
        r = self.regs.one("b64")
        g = self.regs.one("b64")
        self.emit(f"ld.param.u64 {r}, [{pname}];", f"cvta.to.global.u64 {g}, {r};")
        return g

    def render(self) -> str:
        """The entry's PTX text."""
        sig = ", ".join(f".param .{t} {n}" for t, n in self.params)
        head = f".visible .entry {self.name}({sig})"
        if self.directives:
            head += "\n" + "\n".join(self.directives)
        inner = [*self.regs.declarations(), *self.shared, *self.body]
        if not self.body or not self.body[-1].strip().startswith("ret"):
            inner.append("ret;")
        text = "\n".join(ln if ln.endswith(":") else "    " + ln for ln in inner)
        return head + "\n{\n" + text + "\n}\n"


def module(arch: str, entries: Sequence[Entry], ptx_version: str | None = None,
           globals_: Sequence[str] = ()) -> str:
    """A complete module: header, module-scope declarations, then every entry."""
    parts = [module_header(arch, ptx_version), *globals_, *(e.render() for e in entries)]
    return "\n".join(parts)
