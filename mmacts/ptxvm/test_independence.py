"""The VM reads operands independently of the host encoders: an import-graph check.

Why: the old model decoded with the helpers the host encoders used, so a wrong reading of a table
or a figure passed both sides. The VM (every non-test module under ``mmacts/ptxvm``) must not
reach, directly or through the project's own modules, the host encoders or the helpers they call.
The only project code it may call is the spec catalog (tables as data) and the arithmetic cores
``reference.numeric_model`` / ``reference.gemm`` (what one MMA computes, not how operands are laid
out: the issue allows the record-level model's arithmetic as the VM's core). A planted import
makes this test fail (``test_the_check_can_fail``).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VM = ROOT / "mmacts" / "ptxvm"
HOST = "mmacts.ptxvm.host"
"""The VM's own host encoders (the tensor-map encoder): the VM proper must not reach them, and they must not reach
the VM; only the kernel-author entry points (:data:`HOST_FACING`) may call them, as host code calls a driver."""
FORBIDDEN = ("reference.tcgen05", "reference.tcgen05_model", "reference.mma_sync", "reference.formats",
             "reference.predict", "reference.published", "suites", "mmacts.ptx", "mmacts.backends", HOST)
HOST_FACING = ("api.py", "cli.py")
ARITHMETIC_CORES = ("reference.numeric_model", "reference.gemm")
"""Allowed, and not followed further: their own imports (format parameters) are the arithmetic's."""


def _module_file(name: str) -> Path | None:
    p = ROOT.joinpath(*name.split("."))
    if p.with_suffix(".py").exists():
        return p.with_suffix(".py")
    if (p / "__init__.py").exists():
        return p / "__init__.py"
    return None


def _imports(path: Path, pkg: str) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.add(mod)
            out |= {f"{mod}.{a.name}" for a in node.names}
    return {m for m in out if m.split(".")[0] in ("mmacts", "reference", "suites")}


def _package_of(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    else:
        parts = parts[:-1]
    return ".".join(parts)


def reachable(start: Path) -> dict[str, str]:
    """Project modules reachable from ``start`` -> the module that imported them first."""
    seen: dict[str, str] = {}
    todo = [(start, "")]
    while todo:
        path, _ = todo.pop()
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for mod in _imports(path, _package_of(path)):
            if mod in seen:
                continue
            f = _module_file(mod)
            if f is None:
                continue
            seen[mod] = name
            if _under(mod, ARITHMETIC_CORES):
                continue
            todo.append((f, name))
    return seen


def _under(mod: str, prefixes: tuple[str, ...]) -> bool:
    return any(mod == p or mod.startswith(p + ".") for p in prefixes)


def violations(start: Path, forbidden: tuple[str, ...] = FORBIDDEN) -> list[str]:
    return [f"{mod} (imported by {via})" for mod, via in reachable(start).items()
            if _under(mod, forbidden) and not _under(mod, ARITHMETIC_CORES)]


def _modules(under: Path) -> list[Path]:
    return [p for p in under.rglob("*.py") if not p.name.startswith("test_")]


def _vm_modules() -> list[Path]:
    rel = {p: p.relative_to(VM).parts for p in _modules(VM)}
    return [p for p, parts in rel.items() if parts[0] != "host" and parts[0] not in HOST_FACING]


def test_vm_reaches_no_host_encoder() -> None:
    bad = {str(p.relative_to(ROOT)): v for p in _vm_modules() if (v := violations(p))}
    assert not bad, f"the VM reaches host-encoder code: {bad}"
    facing = tuple(f for f in FORBIDDEN if f != HOST)
    bad = {n: v for n in HOST_FACING if (v := violations(VM / n, facing))}
    assert not bad, f"the kernel-author API reaches the suite's host encoders: {bad}"


def test_host_encoders_reach_no_vm_module() -> None:
    """``mmacts/ptxvm/host`` writes its tables from the documentation: it imports nothing of the VM (only its
    tests decode with the VM, to prove the two agree)."""
    bad = {}
    for p in _modules(VM / "host"):
        v = [f"{mod} (imported by {via})" for mod, via in reachable(p).items()
             if _under(mod, ("mmacts", "reference", "suites")) and not _under(mod, (HOST,))]
        if v:
            bad[str(p.relative_to(ROOT))] = v
    assert not bad, f"a host encoder reaches the VM or the suite: {bad}"


def test_the_check_can_fail(tmp_path: Path) -> None:
    planted = VM / "tcgen05" / "_planted_for_test.py"
    planted.write_text("from mmacts.ptxvm.tcgen05 import decode\nfrom reference.tcgen05.idesc import decode_idesc\n")
    try:
        assert violations(planted), "an import of reference.tcgen05.idesc went unnoticed"
        via = VM / "tcgen05" / "_planted_via.py"
        via.write_text("from mmacts.ptxvm.tcgen05 import _planted_for_test\n")
        try:
            assert violations(via), "a transitive import went unnoticed"
        finally:
            via.unlink()
    finally:
        planted.unlink()


def test_the_host_encoder_rule_can_fail() -> None:
    planted = VM / "tcgen05" / "_planted_host.py"
    planted.write_text("from mmacts.ptxvm.host.tensormap import LAYOUT\n")
    try:
        assert violations(planted), "a VM module importing the host tensor-map encoder went unnoticed"
    finally:
        planted.unlink()
