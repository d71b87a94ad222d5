"""Parse PTX module text into entries, declarations and decoded instructions.

Why a parser of our own: the VM must execute the exact text ptxas assembles, so it reads the
module the suite generated, not a description of it. It covers the PTX the suite and its peers
emit: module directives (``.version``, ``.target``, ``.address_size``), module-level ``.shared`` /
``.extern .shared`` / ``.global`` arrays with alignment, ``.entry`` with its ``.param`` list and
performance directives (``.maxntid``, ``.reqntid``, ``.explicitcluster``, ``.reqnctapercluster``),
``.reg`` declarations including the ``%r<96>`` range form, function-level ``.shared`` and
``.local`` (per-thread) arrays, labels,
predicated instructions (``@%p`` / ``@!%p``), vector operands ``{...}``, address operands
``[base+off]``, integer / hex / ``0f`` float immediates. Anything else is a
:class:`~mmacts.ptxvm.errors.VmUnsupported` naming the line, never silently dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from mmacts.ptxvm.errors import VmUnsupported
from mmacts.ptxvm.ptxtypes import ptx_type


@dataclass(frozen=True)
class Operand:
    """One instruction operand.

    ``kind``: ``reg`` (``name``; ``neg`` for ``!%p``), ``imm`` (``value`` int), ``fimm``
    (``value`` = raw bits, ``bits`` = 32/64), ``sym`` (a variable or label name), ``addr``
    (``base`` operand or None + ``offset``; ``[tmap, {c0, c1}]`` keeps the coordinates in ``items``), ``vec``
    (``items``), ``sink`` (``_``).
    """

    kind: str
    name: str = ""
    value: int = 0
    bits: int = 0
    neg: bool = False
    offset: int = 0
    base: Operand | None = None
    items: tuple[Operand, ...] = ()

    def __str__(self) -> str:
        if self.kind == "reg":
            return ("!" if self.neg else "") + self.name
        if self.kind in ("imm",):
            return str(self.value)
        if self.kind == "fimm":
            return f"0f{self.value:08X}" if self.bits == 32 else f"0d{self.value:016X}"
        if self.kind == "sym":
            return self.name
        if self.kind == "addr":
            inner = str(self.base) if self.base is not None else ""
            if self.offset:
                inner = f"{inner}+{self.offset}" if inner else str(self.offset)
            return "[" + ", ".join([inner, *(str(i) for i in self.items)]) + "]"
        if self.kind == "vec":
            return "{" + ", ".join(str(i) for i in self.items) + "}"
        return "_"


@dataclass(frozen=True)
class Instr:
    """One decoded instruction: opcode split at the dots, operands, guard, provenance."""

    opcode: str
    """Everything before the operands, e.g. ``tcgen05.ld.sync.aligned.32x32b.x8.b32``."""
    parts: tuple[str, ...]
    operands: tuple[Operand, ...]
    guard: str | None
    guard_neg: bool
    line: int
    text: str

    @property
    def base(self) -> str:
        return self.parts[0]

    def has(self, qualifier: str) -> bool:
        return qualifier in self.parts[1:]

    def where(self) -> str:
        return f"line {self.line}: {self.text}"


@dataclass(frozen=True)
class RegDecl:
    name: str
    type: str


@dataclass(frozen=True)
class VarDecl:
    """A ``.shared`` / ``.global`` variable: ``size`` 0 with ``extern`` for the dynamic array."""

    name: str
    space: str
    type: str
    align: int
    size: int
    extern: bool = False


@dataclass(frozen=True)
class Param:
    name: str
    type: str
    align: int
    size: int


@dataclass
class Entry:
    """One ``.entry``: parameters, directives, registers, function-level ``.shared`` and ``.local``
    variables, code."""

    name: str
    params: list[Param]
    directives: dict[str, tuple[int, ...]]
    regs: dict[str, RegDecl] = field(default_factory=dict)
    shared: list[VarDecl] = field(default_factory=list)
    local: list[VarDecl] = field(default_factory=list)
    """``.local`` arrays: per-thread memory (each thread has its own copy)."""
    code: list[Instr] = field(default_factory=list)
    labels: dict[str, int] = field(default_factory=dict)


@dataclass
class Module:
    version: str
    target: str
    address_size: int
    variables: list[VarDecl]
    entries: dict[str, Entry]


_COMMENT_RE = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_LOC_RE = re.compile(r"(?m)^[ \t]*\.loc\b[^\n]*")
_RANGE_RE = re.compile(r"^(%?[A-Za-z_$][\w$]*)<(\d+)>$")
_NAME = r"[A-Za-z_$%][\w$.]*"


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def parse_module(text: str) -> Module:
    """Parse a whole PTX module."""
    clean = _COMMENT_RE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    # ".loc" debug directives end at the line, with no ';' (LLVM's PTX puts them between statements)
    clean = _LOC_RE.sub(lambda m: " " * len(m.group(0)), clean)
    version, target, asz = "", "", 64
    variables: list[VarDecl] = []
    entries: dict[str, Entry] = {}
    pos = 0
    n = len(clean)
    while pos < n:
        m = re.compile(r"\s*").match(clean, pos)
        pos = m.end() if m else pos
        if pos >= n:
            break
        line = _line_of(clean, pos)
        if clean.startswith(".version", pos):
            end = clean.index("\n", pos) if "\n" in clean[pos:] else n
            version = clean[pos:end].split()[1]
            pos = end
            continue
        if clean.startswith(".target", pos):
            end = clean.index("\n", pos) if "\n" in clean[pos:] else n
            target = clean[pos:end].split()[1].split(",")[0]
            pos = end
            continue
        if clean.startswith(".address_size", pos):
            end = clean.index("\n", pos) if "\n" in clean[pos:] else n
            asz = int(clean[pos:end].split()[1])
            pos = end
            continue
        if clean.startswith(".file", pos):  # debug line tables (Triton's PTX): no semantics
            end = clean.find("\n", pos)
            pos = n if end == -1 else end
            continue
        if clean.startswith(".section", pos):  # DWARF sections ".section .debug_x { ... }": skipped
            open_ = clean.find("{", pos)
            close = clean.find("}", open_) if open_ != -1 else -1
            if close == -1:
                raise VmUnsupported(f"line {line}: cannot parse {clean[pos:pos + 60].strip()!r}")
            pos = close + 1
            continue
        # an entry: header up to '{', then the body up to the matching '}'
        brace = clean.find("{", pos)
        semi = clean.find(";", pos)
        if semi != -1 and (brace == -1 or semi < brace):
            stmt = clean[pos:semi].strip()
            variables.append(_parse_var(stmt, line))
            pos = semi + 1
            continue
        if brace == -1:
            raise VmUnsupported(f"line {line}: cannot parse {clean[pos:pos + 60].strip()!r}")
        header = clean[pos:brace]
        depth, j = 0, brace
        while j < n:
            if clean[j] == "{":
                depth += 1
            elif clean[j] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        body_start = brace + 1
        entry = _parse_entry_header(header, line)
        _parse_body(entry, clean, body_start, j)
        entries[entry.name] = entry
        pos = j + 1
    return Module(version, target, asz, variables, entries)


def _parse_var(stmt: str, line: int) -> VarDecl:
    toks = stmt.replace("[", " [").split()
    extern = False
    space = ""
    align = 0
    ty = ""
    name = ""
    size = 0
    i = 0
    while i < len(toks):
        t = toks[i]
        if t in (".extern", ".visible", ".weak"):
            extern = extern or t == ".extern"
        elif t in (".shared", ".global", ".const", ".local"):
            space = t[1:]
        elif t == ".align":
            i += 1
            align = int(toks[i])
        elif t.startswith("."):
            ty = t[1:]
        elif t.startswith("["):
            inner = t[1:].rstrip("]")
            size = int(inner) if inner else 0
        else:
            name = t
        i += 1
    if not space or not name:
        raise VmUnsupported(f"line {line}: unsupported module-level declaration {stmt!r}")
    esize = ptx_type(ty).nbytes
    return VarDecl(name, space, ty, align or esize, size * esize if size else esize * (0 if extern else 1),
                   extern)


def _parse_entry_header(header: str, line: int) -> Entry:
    m = re.search(r"\.entry\s+([\w$]+)\s*\((.*?)\)(.*)$", header, re.S)
    if not m:
        raise VmUnsupported(f"line {line}: only .entry functions are supported: {header.strip()[:80]!r}")
    name, plist, rest = m.group(1), m.group(2), m.group(3)
    params: list[Param] = []
    for p in [x.strip() for x in plist.split(",") if x.strip()]:
        toks = p.split()
        align = 0
        ty = ""
        pname = ""
        pointee = False
        k = 0
        while k < len(toks):
            t = toks[k]
            if t in (".param", ".ptr", ".global", ".shared", ".const", ".local"):
                pointee = pointee or t == ".ptr"  # ".ptr .global .align N": the pointee's space and alignment
            elif t == ".align":
                k += 1
                if not pointee:  # an .align after .ptr is the pointee's, not the parameter's
                    align = int(toks[k])
            elif t.startswith("."):
                ty = t[1:]
            else:
                pname = t
            k += 1
        count = 1
        am = re.match(r"([\w$]+)\[(\d+)\]", pname)
        if am:
            pname, count = am.group(1), int(am.group(2))
        esize = ptx_type(ty).nbytes
        params.append(Param(pname, ty, align or esize, esize * count))
    directives: dict[str, tuple[int, ...]] = {}
    for dm in re.finditer(r"\.(\w+)((?:\s+\d+\s*,?)*)", rest):
        vals = tuple(int(v) for v in re.findall(r"\d+", dm.group(2)))
        directives[dm.group(1)] = vals
    return Entry(name, params, directives)


def _split_operands(s: str) -> list[str]:
    out, depth, cur = [], 0, []
    for ch in s:
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    if depth:  # an unbalanced '{' / '[' would shift every later operand: refused, never guessed
        raise VmUnsupported(f"unbalanced braces or brackets in operands {s!r}")
    return out


_INT_RE = re.compile(r"^[-+]?(0[xX][0-9a-fA-F]+|0[bB][01]+|\d+)[uU]?$")


def parse_int(tok: str) -> int:
    t = tok.rstrip("uU")
    neg = t.startswith("-")
    t = t.lstrip("+-")
    if t.lower().startswith("0x"):
        v = int(t[2:], 16)
    elif t.lower().startswith("0b"):
        v = int(t[2:], 2)
    elif len(t) > 1 and t.startswith("0") and t.isdigit():
        v = int(t, 8)
    else:
        v = int(t)
    return -v if neg else v


def parse_operand(tok: str, line: int) -> Operand:
    tok = tok.strip()
    if tok == "_":
        return Operand("sink")
    if tok.startswith("{"):
        if not tok.endswith("}"):
            raise VmUnsupported(f"line {line}: cannot parse vector operand {tok!r}")
        items = tuple(parse_operand(x, line) for x in _split_operands(tok[1:-1]))
        return Operand("vec", items=items)
    if tok.startswith("["):
        if not tok.endswith("]"):
            raise VmUnsupported(f"line {line}: cannot parse address operand {tok!r}")
        inner = tok[1:-1].strip()
        parts = _split_operands(inner)
        if len(parts) > 1:  # "[tmap, {c0, c1}]" (bulk tensor copies): the base, then the coordinates in items
            return Operand("addr", base=parse_operand(parts[0], line),
                           items=tuple(parse_operand(x, line) for x in parts[1:]))
        m = re.match(r"^(.*?)\s*([+-])\s*(0[xX][0-9a-fA-F]+|\d+)$", inner)
        off = 0
        if m and m.group(1):
            inner, off = m.group(1).strip(), parse_int(m.group(3)) * (-1 if m.group(2) == "-" else 1)
        if _INT_RE.match(inner):
            return Operand("addr", offset=parse_int(inner))
        return Operand("addr", base=parse_operand(inner, line), offset=off)
    if tok.startswith("!"):
        inner = parse_operand(tok[1:], line)
        return Operand("reg", name=inner.name, neg=True)
    if re.match(r"^0[fF][0-9a-fA-F]{8}$", tok):
        return Operand("fimm", value=int(tok[2:], 16), bits=32)
    if re.match(r"^0[dD][0-9a-fA-F]{16}$", tok):
        return Operand("fimm", value=int(tok[2:], 16), bits=64)
    if _INT_RE.match(tok):
        return Operand("imm", value=parse_int(tok))
    if re.match(r"^[-+]?\d*\.\d+([eE][-+]?\d+)?$|^[-+]?\d+[eE][-+]?\d+$", tok):
        import struct

        return Operand("fimm", value=struct.unpack("<Q", struct.pack("<d", float(tok)))[0], bits=64)
    if tok.startswith("%"):
        return Operand("reg", name=tok)
    if re.match(r"^[A-Za-z_$][\w$]*$", tok):
        return Operand("sym", name=tok)
    raise VmUnsupported(f"line {line}: cannot parse operand {tok!r}")


def _parse_body(entry: Entry, text: str, start: int, end: int) -> None:
    if "{" in text[start:end]:  # nested { } scopes (inline asm blocks): flattened, line numbers kept
        pre = text.count("\n", 0, start)
        text = "\n" * pre + _flatten_scopes(text[start:end])
        start, end = pre, len(text)
    pos = start
    while pos < end:
        semi = text.find(";", pos, end)
        chunk_end = semi if semi != -1 else end
        chunk = text[pos:chunk_end]
        cpos = pos
        pos = chunk_end + 1
        while True:  # leading labels ("NAME:"; not a "::" qualifier)
            lm = re.match(r"\s*([A-Za-z_$][\w$]*)\s*:(?!:)", chunk)
            if not lm:
                break
            entry.labels[lm.group(1)] = len(entry.code)
            chunk = chunk[lm.end():]
            cpos += lm.end()
        stripped = chunk.strip()
        if not stripped:
            continue
        line = _line_of(text, cpos + len(chunk) - len(chunk.lstrip()))
        if stripped.startswith("."):
            _parse_decl(entry, stripped, line)
            continue
        entry.code.append(_parse_instr(stripped, line))


_SCOPE_IDS = iter(range(1, 1 << 62))


def _flatten_scopes(body: str) -> str:
    """Remove nested ``{ ... }`` statement blocks (9.3.3; Triton's inline asm wraps each snippet in
    one, declaring ``.reg .pred complete;`` and labels such as ``waitLoop:``), renaming what each
    block declares (registers, labels) to a name unique to the block, so that the same snippet
    repeated in a kernel does not collide. Vector operands ``{%r1, %r2}`` are left alone: a scope
    brace opens a statement (after ``;``, ``{``, ``}``, a label or the start). Newlines are kept."""
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        j = body.find("{", i)
        if j == -1:
            out.append(body[i:])
            break
        prev = body[:j].rstrip()
        is_scope = not prev or prev[-1] in ";{}" or (prev[-1] == ":" and not prev.endswith("::"))
        depth, k = 0, j
        while k < n:
            if body[k] == "{":
                depth += 1
            elif body[k] == "}":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        if not is_scope:
            out.append(body[i:k + 1])
            i = k + 1
            continue
        inner = _flatten_scopes(body[j + 1:k])
        out.append(body[i:j] + " " + _rename_scoped(inner, next(_SCOPE_IDS)) + " ")
        i = k + 1
    return "".join(out)


def _rename_scoped(inner: str, sid: int) -> str:
    names: dict[str, str] = {}
    for m in re.finditer(r"(?<![\w$.%])\.reg\s+(?:\.v\d\s+)?\.\w+\s+([^;]*);", inner):
        for nm in [x.strip() for x in m.group(1).split(",") if x.strip()]:
            rm = _RANGE_RE.match(nm)
            for full in ([f"{rm.group(1)}{q}" for q in range(int(rm.group(2)))] if rm else [nm]):
                names[full] = "%" + full.lstrip("%") + f"$s{sid}"
    for m in re.finditer(r"(?:^|(?<=[;:]))\s*([A-Za-z_$][\w$]*)\s*:(?!:)", inner):
        names[m.group(1)] = m.group(1) + f"$s{sid}"
    if not names:
        return inner

    def decl(m: re.Match[str]) -> str:  # range declarations become explicit lists of renamed registers
        items = []
        for nm in [x.strip() for x in m.group(2).split(",") if x.strip()]:
            rm = _RANGE_RE.match(nm)
            items += [f"{rm.group(1)}{q}" for q in range(int(rm.group(2)))] if rm else [nm]
        return m.group(1) + ", ".join(items) + ";"

    inner = re.sub(r"(\.reg\s+(?:\.v\d\s+)?\.\w+\s+)([^;]*);", decl, inner)
    pat = re.compile(r"(?<![\w$%.])(" + "|".join(re.escape(x) for x in sorted(names, key=len, reverse=True))
                     + r")(?![\w$])")
    return pat.sub(lambda m: names[m.group(1)], inner)


def _parse_decl(entry: Entry, stmt: str, line: int) -> None:
    if stmt.startswith(".reg"):
        m = re.match(r"\.reg\s+(?:\.v\d\s+)?\.(\w+)\s+(.*)$", stmt, re.S)
        if not m:
            raise VmUnsupported(f"line {line}: cannot parse {stmt!r}")
        ty = m.group(1)
        for nm in [x.strip() for x in m.group(2).split(",") if x.strip()]:
            rm = _RANGE_RE.match(nm)
            if rm:
                for i in range(int(rm.group(2))):
                    entry.regs[f"{rm.group(1)}{i}"] = RegDecl(f"{rm.group(1)}{i}", ty)
            else:
                entry.regs[nm] = RegDecl(nm, ty)
        return
    if stmt.startswith((".shared", ".extern", ".global", ".local")):
        v = _parse_var(stmt, line)
        if v.space == "local":
            if v.extern:
                raise VmUnsupported(f"line {line}: .extern .local is not implemented: {stmt!r}")
            entry.local.append(v)
            return
        if v.space != "shared":
            raise VmUnsupported(f"line {line}: function-level .{v.space} variables are not implemented: {stmt!r}")
        entry.shared.append(v)
        return
    if stmt.startswith((".pragma", ".loc", ".file")):
        return
    raise VmUnsupported(f"line {line}: unsupported declaration {stmt!r}")


_OPCODE_RE = re.compile(r"^([^\s{\[]+)\s*(.*)$", re.S)


def _parse_instr(stmt: str, line: int) -> Instr:
    guard = None
    neg = False
    s = " ".join(stmt.split())
    if s.startswith("@"):
        g, s = s.split(None, 1)
        g = g[1:]
        if g.startswith("!"):
            neg, g = True, g[1:]
        guard = g
    # the opcode ends at the first blank, '{' or '[': "ld.v2.b32{%r1, %r2}, [%r3]" has no blank after it
    om = _OPCODE_RE.match(s)
    if om is None:
        raise VmUnsupported(f"line {line}: cannot parse instruction {s!r}")
    opcode = om.group(1)
    parts = [opcode, om.group(2)] if om.group(2) else [opcode]
    ops = tuple(parse_operand(o, line) for o in _split_operands(parts[1])) if len(parts) > 1 else ()
    # setp/other "p|q" destination pairs
    if len(parts) > 1 and "|" in parts[1].split(",")[0]:
        first, *rest = _split_operands(parts[1])
        a, b = first.split("|")
        ops = (Operand("vec", items=(parse_operand(a, line), parse_operand(b, line))),
               *(parse_operand(o, line) for o in rest))
    # the text as written, with one blank after the opcode: what re-reads the operands from it (the bulk
    # tensor copies split it at the first blank) then sees the same text for "op{..}" and "op {..}"
    text = (f"@{'!' if neg else ''}{guard} " if guard else "") + opcode + (f" {parts[1]}" if len(parts) > 1 else "")
    return Instr(opcode, tuple(opcode.split(".")), ops, guard, neg, line, text)
