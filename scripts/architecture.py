"""Print the measures of issue 25 (the house) from the code's own imports and definitions.

    python scripts/architecture.py                  # the measures, each with what makes it up
    python scripts/architecture.py --json           # the same as one JSON object
    python scripts/architecture.py --write-baseline # lower scripts/architecture-baseline.json to today's counts

Why a script and not a picture: a measure that is printed from the code cannot drift from it, and
``mmacts/test_architecture.py`` holds every count to the committed baseline (a ratchet: a count may go down,
never up), so a measure once met stays met.

The floors are written here, ground floor first (:data:`FLOORS`): a module may import from its own floor and
the floors below, never from a floor above. What is counted, over every non-test module of ``mmacts/``,
``reference/`` and ``suites/`` (tests sit above everything by nature and are left out):

- **upward imports**: an import from a floor to a higher one, at module level or inside a function;
- **cycles**: strongly connected components of the import graph, per file and per package (``mmacts.X``,
  ``suites.X``, ``reference.X``), imports inside functions counted: an import deferred into a function
  still ties the two together, it only hides the tie from the reader;
- **imports inside functions**: project imports (``mmacts``, ``reference``, ``suites``) made in a function body,
  and their share of all project imports;
- **long functions**: functions (and methods) over :data:`LONG_FUNCTION` lines, decorators excluded;
- **string-keyed case reads**: ``x.form["key"]``, ``x.runtime["key"]``, ``.get("key")`` on them, and the same
  on a local name bound to ``x.form`` / ``x.runtime``, outside :data:`SERIALISATION` (where the fields are
  written and read back as data).

Imports under ``if TYPE_CHECKING:`` are not counted (they run nothing: a type checker reads them). Imports
made with ``importlib`` (the runner's suite discovery, the CLI's delegated subcommands) are not
imports here: they name a module by a string on purpose, so that the lower floor does not depend on it.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "scripts" / "architecture-baseline.json"
TOPS = ("mmacts", "reference", "suites")
"""The project's own top-level packages: an import of anything else is a library's."""

FLOORS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("contract", ("mmacts", "mmacts.core", "mmacts.cases", "mmacts.spec", "reference")),
    ("register", ("mmacts.ambiguity",)),
    ("ptx", ("mmacts.ptx",)),
    ("toolchain", ("mmacts.toolchain",)),
    ("vm", ("mmacts.ptxvm",)),
    ("compare", ("mmacts.compare",)),
    ("backends", ("mmacts.backends",)),
    ("suites", ("suites",)),
    ("report", ("mmacts.report", "mmacts.db")),
    ("runner", ("mmacts.runner",)),
    ("tools", ("mmacts.mutants", "mmacts.validation")),
)
"""Ground floor first. ``contract``: what a suite and the generic machinery agree on (the case, the driver
contract, the result record, suite discovery, the spec catalog as data) and, beside it, the oracle
``reference/`` (it imports nothing of the side under test; ``mmacts/ptxvm/test_independence.py`` keeps the VM
from reaching back into it). ``register``: the ambiguity register, the spec's open questions that cases assume.
Then PTX generation, the toolchain, the VM (the model backend's engine), comparison (a function of what came
back and what the contract's ``Expectation`` wants: it needs no backend, and the executor calls it), the generic
backends, the suites (each one a client of the floors below, loaded by name), reports and the results store, the runner
and its CLI, and on top the validation tools that use everything: mutation runs and the VM's silicon checks."""

LONG_FUNCTION = 100
SERIALISATION: tuple[str, ...] = ("mmacts/cases/model.py",)
"""Files allowed to read case fields by string: they turn a case into data and back."""
CASE_FIELDS = ("form", "runtime")


def floor_of(module: str) -> int:
    """Index into :data:`FLOORS` of ``module``: the longest package prefix written there decides."""
    best, index = "", -1
    for i, (_, packages) in enumerate(FLOORS):
        for p in packages:
            if (module == p or module.startswith(p + ".")) and len(p) > len(best):
                best, index = p, i
    if index < 0:
        raise KeyError(f"{module} is on no floor: add its package to FLOORS in scripts/architecture.py")
    return index


def package_of(module: str, files: dict[str, Path]) -> str:
    """The unit of the package-level graph: ``top.sub`` where ``sub`` is a folder, else ``top``."""
    parts = module.split(".")
    if len(parts) > 1 and (files[module].name == "__init__.py" or len(parts) > 2):
        return ".".join(parts[:2])
    return parts[0]


def is_test(path: Path) -> bool:
    return path.name.startswith("test_") or path.name == "conftest.py"


def project_files(root: Path = ROOT) -> dict[str, Path]:
    """Every non-test module of the project, by dotted name."""
    out: dict[str, Path] = {}
    for top in TOPS:
        for p in sorted((root / top).rglob("*.py")):
            if not is_test(p):
                out[".".join(p.relative_to(root).with_suffix("").parts).removesuffix(".__init__")] = p
    return out


@dataclass(frozen=True)
class Import:
    source: str
    target: str
    line: int
    in_function: bool


def _resolve(name: str, files: dict[str, Path]) -> str | None:
    while name:
        if name in files:
            return name
        name = name.rpartition(".")[0]
    return None


def _enclosing_function(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return True
    return False


def _type_checking_only(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """Under ``if TYPE_CHECKING:``: read by a type checker, never run."""
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return True
    return False


def _named(node: ast.Import | ast.ImportFrom, module: str, is_package: bool, files: dict[str, Path]) -> list[str]:
    """The project modules one import statement names (``from pkg import mod`` names ``pkg.mod``)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = node.module or ""
    if node.level:
        pkg = module.split(".") if is_package else module.split(".")[:-1]
        base = ".".join(pkg[: len(pkg) - node.level + 1] + ([node.module] if node.module else []))
    return [f"{base}.{a.name}" if f"{base}.{a.name}" in files else base for a in node.names]


def imports_of(module: str, path: Path, files: dict[str, Path]) -> Iterator[Import]:
    """One :class:`Import` per (statement, project module it names); a module importing itself is skipped."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parents = {c: n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)) or _type_checking_only(node, parents):
            continue
        targets = {_resolve(t, files) for t in _named(node, module, path.name == "__init__.py", files)
                   if t.split(".")[0] in TOPS}
        inside = _enclosing_function(node, parents)
        for t in sorted(t for t in targets if t and t != module):
            yield Import(module, t, node.lineno, inside)


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components with more than one member (a cycle), each sorted, largest first."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out, key=lambda c: (-len(c), c))


def long_functions(path: Path, limit: int = LONG_FUNCTION) -> Iterator[tuple[str, int, int]]:
    """(qualified name, first line, length) of every function in ``path`` longer than ``limit`` lines."""
    tree = ast.parse(path.read_text(encoding="utf-8"))

    def walk(node: ast.AST, prefix: str) -> Iterator[tuple[str, int, int]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    length = (child.end_lineno or child.lineno) - child.lineno + 1
                    if length > limit:
                        yield name, child.lineno, length
                yield from walk(child, name + ".")
            else:
                yield from walk(child, prefix)

    yield from walk(tree, "")


def _case_field(node: ast.AST, aliases: set[str]) -> bool:
    """``x.form`` / ``x.runtime``, or a local name bound to one of them."""
    if isinstance(node, ast.Attribute):
        return node.attr in CASE_FIELDS
    return isinstance(node, ast.Name) and node.id in aliases


def _string(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _bindings(n: ast.Assign) -> Iterator[tuple[ast.AST, ast.AST]]:
    """(target, value) pairs of an assignment, ``f, rt = case.form, case.runtime`` unpacked."""
    for t in n.targets:
        if isinstance(t, ast.Tuple) and isinstance(n.value, ast.Tuple) and len(t.elts) == len(n.value.elts):
            yield from zip(t.elts, n.value.elts, strict=True)
        else:
            yield t, n.value


def string_keyed_reads(path: Path) -> Iterator[tuple[int, str]]:
    """(line, key) of each string-keyed read of a case field; aliases are tracked per function body."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    scopes: list[ast.AST] = [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef,
                                                                                  ast.AsyncFunctionDef)))]
    seen: set[int] = set()
    for scope in scopes:
        body = list(ast.walk(scope))
        aliases = {t.id for n in body if isinstance(n, ast.Assign) for t, v in _bindings(n)
                   if isinstance(t, ast.Name) and _case_field(v, set())}
        for n in body:
            key = None
            if isinstance(n, ast.Subscript) and _case_field(n.value, aliases) and _string(n.slice):
                key = n.slice
            elif (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "get"
                  and _case_field(n.func.value, aliases) and n.args and _string(n.args[0])):
                key = n.args[0]
            if key is not None and id(n) not in seen:
                seen.add(id(n))
                yield n.lineno, key.value  # type: ignore[attr-defined]


TOUCH_KIND = "mxf4nvf4"
"""The newest MMA kind: the files writing its name are where a new kind is written (oracle and VM: twice by design)."""
TOUCH_QUALIFIER = "lastuse"
"""A qualifier value (``.collector::a::lastuse``): the files that write it are where a new qualifier is written."""


def suite_names_in(root: Path) -> set[str]:
    return {p.parent.name for p in (root / "suites").glob("*/driver.py")}


def suite_touch_points(path: Path, suites: set[str]) -> Iterator[tuple[int, str]]:
    """(line, what) where code outside ``suites/`` enumerates suites (a tuple/list/set literal of two or more
    suite names: a list a new suite must join) or gives one suite a rule (``x.suite == "name"``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for n in ast.walk(tree):
        if isinstance(n, (ast.Tuple, ast.List, ast.Set)):
            names = [e.value for e in n.elts if _string(e) and e.value in suites]  # type: ignore[attr-defined]
            if len(names) >= 2:
                yield n.lineno, "lists " + ", ".join(names)
        elif (isinstance(n, ast.Compare) and isinstance(n.left, ast.Attribute) and n.left.attr == "suite"
              and any(_string(c) and c.value in suites for c in n.comparators)):  # type: ignore[attr-defined]
            yield n.lineno, "a rule for " + next(c.value for c in n.comparators if _string(c))  # type: ignore[attr-defined]


def writes_string(path: Path, text: str) -> bool:
    return any(isinstance(n, ast.Constant) and n.value == text for n in ast.walk(ast.parse(path.read_text("utf-8"))))


@dataclass
class Measures:
    upward: list[str] = field(default_factory=list)
    file_cycles: list[list[str]] = field(default_factory=list)
    package_cycles: list[list[str]] = field(default_factory=list)
    imports: int = 0
    imports_in_functions: int = 0
    in_functions_by_file: dict[str, int] = field(default_factory=dict)
    long_functions: list[str] = field(default_factory=list)
    case_reads: list[str] = field(default_factory=list)
    suite_touch: list[str] = field(default_factory=list)
    """Where generic code (outside ``suites/``) names suites: what adding a suite may have to touch."""
    kind_files: list[str] = field(default_factory=list)
    qualifier_files: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        """What the ratchet holds: each may go down, never up. Members as well as cycles: two cycles that merge
        into one are fewer cycles but more members."""
        return {"upward imports": len(self.upward), "file cycles": len(self.file_cycles),
                "files in cycles": sum(map(len, self.file_cycles)), "package cycles": len(self.package_cycles),
                "packages in cycles": sum(map(len, self.package_cycles)),
                "imports inside functions": self.imports_in_functions,
                "functions over 100 lines": len(self.long_functions),
                "string-keyed case reads": len(self.case_reads)}


def _rel(path: Path, root: Path) -> str:
    return str(path.relative_to(root))


def measure(root: Path = ROOT) -> Measures:
    files = project_files(root)
    m = Measures()
    suites = suite_names_in(root)
    file_graph: dict[str, set[str]] = defaultdict(set)
    package_graph: dict[str, set[str]] = defaultdict(set)
    statements: set[tuple[str, int, bool]] = set()
    for module, path in files.items():
        for imp in imports_of(module, path, files):
            file_graph[module].add(imp.target)
            statements.add((module, imp.line, imp.in_function))
            a, b = package_of(module, files), package_of(imp.target, files)
            if a != b:
                package_graph[a].add(b)
            lo, hi = floor_of(module), floor_of(imp.target)
            if hi > lo:
                m.upward.append(f"{_rel(path, root)}:{imp.line} -> {imp.target} ({FLOORS[lo][0]} -> {FLOORS[hi][0]})"
                                + (" [in a function]" if imp.in_function else ""))
        m.long_functions += [f"{_rel(path, root)}:{line} {name} ({n} lines)"
                             for name, line, n in long_functions(path)]
        if not module.startswith("suites."):
            m.suite_touch += [f"{_rel(path, root)}:{line} {what}" for line, what in suite_touch_points(path, suites)]
        if writes_string(path, TOUCH_KIND):
            m.kind_files.append(_rel(path, root))
        if writes_string(path, TOUCH_QUALIFIER):
            m.qualifier_files.append(_rel(path, root))
        if _rel(path, root) not in SERIALISATION:
            m.case_reads += [f"{_rel(path, root)}:{line} {key!r}" for line, key in string_keyed_reads(path)]
    m.imports = len(statements)
    inside = Counter(_rel(files[s], root) for s, _, f in statements if f)
    m.imports_in_functions = sum(inside.values())
    m.in_functions_by_file = dict(inside.most_common())
    m.file_cycles = strongly_connected(file_graph)
    m.package_cycles = strongly_connected(package_graph)
    return m


def _section(title: str, items: Iterable[str], limit: int | None = None) -> list[str]:
    items = list(items)
    out = [f"{title}: {len(items)}"]
    out += [f"  {x}" for x in items[:limit]]
    if limit is not None and len(items) > limit:
        out.append(f"  ... and {len(items) - limit} more (--all)")
    return out


def report(m: Measures, show_all: bool = False) -> str:
    limit = None if show_all else 12
    share = m.imports_in_functions / m.imports if m.imports else 0.0
    out = ["floors, ground first: " + " < ".join(f"{name} ({', '.join(p)})" for name, p in FLOORS)]
    out += _section("upward imports", m.upward)
    out += _section("file cycles (imports inside functions counted)", (" <-> ".join(c) for c in m.file_cycles))
    out += _section("package cycles", (" <-> ".join(c) for c in m.package_cycles))
    out.append(f"project imports inside functions: {m.imports_in_functions} of {m.imports} ({share:.0%});"
               f" most: " + ", ".join(f"{f} {n}" for f, n in list(m.in_functions_by_file.items())[:6]))
    out += _section(f"functions over {LONG_FUNCTION} lines", m.long_functions)
    out += _section("string-keyed reads of case fields outside serialisation", m.case_reads, limit)
    out.append("touch points (printed, not held: what adding a suite, a kind, a qualifier writes outside its home)")
    out += _section("  suite names written in generic code (files: "
                    f"{len({x.split(':')[0] for x in m.suite_touch})})", m.suite_touch, limit)
    out += _section(f"  files writing the kind {TOUCH_KIND!r}", m.kind_files, limit)
    out += _section(f"  files writing the qualifier {TOUCH_QUALIFIER!r}", m.qualifier_files, limit)
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--json", action="store_true", help="one JSON object")
    p.add_argument("--all", action="store_true", help="every item of every list")
    p.add_argument("--root", type=Path, default=ROOT, help="another checkout to measure (default: this one)")
    p.add_argument("--write-baseline", action="store_true", help=f"write today's counts to {BASELINE.name}")
    args = p.parse_args(argv)
    m = measure(args.root.resolve())
    if args.write_baseline:
        BASELINE.write_text(json.dumps(m.counts(), indent=1) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps({"counts": m.counts(), "imports": m.imports, **m.__dict__}, indent=1))
    else:
        print(report(m, args.all))
    return 0


if __name__ == "__main__":
    sys.exit(main())
