"""docs/architecture.md stays true: the one rule (``kli.tools`` imports no Jupyter and no
kernel), the import arrows between its packages, the floor (``kli.tools.core`` imports nothing
above it) and no circle between packages — checked over the source with ``ast``.

Every import counts: ``import`` statements anywhere (inside functions, under ``TYPE_CHECKING``,
relative ones), and module names handed to ``importlib.import_module`` / ``__import__``, as a
literal or as a string held in a module-level constant (a name, a list, a dict). A call whose
module name this test cannot read fails it: a module name in a variable is still an arrow."""

from __future__ import annotations

import ast
import itertools
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
# Source folder -> the package it installs as (setup.py's SOURCES).
SOURCES = {"tools": "kli.tools", "kernel": "kli.kernel", "client": "kli.client"}
FORBIDDEN_IN_TOOLS = ("jupyter", "ipykernel", "IPython", "zmq", "comm", "kli.kernel", "kli.client")
FLOOR = "kli.tools.core"
IMPORTERS = {"import_module", "__import__"}  # functions that import the module they are named


def _modules() -> dict[str, Path]:
    found = {}
    for folder, package in SOURCES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((package, *parts))] = path
    return found


@dataclass
class Read:
    """What one module imports: ``imports`` (line, module name), and ``unreadable`` (line, the
    source of an ``import_module`` / ``__import__`` argument no string could be read from)."""

    imports: list[tuple[int, str]] = field(default_factory=list)
    unreadable: list[tuple[int, str]] = field(default_factory=list)


def _constants(tree: ast.Module) -> dict[str, list[str]]:
    """Each module-level name bound to strings: a string, or a list, tuple, set or dict of them
    (a dict's values: the module names of ``{"mcp": "kli.kernel.mcp.cli"}``)."""
    out: dict[str, list[str]] = {}
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AnnAssign) and node.value is not None else []
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        strings = _strings(value, {}) if value is not None else None
        for target in targets:
            if isinstance(target, ast.Name) and strings:
                out[target.id] = strings
    return out


def _strings(node: ast.expr, constants: dict[str, list[str]]) -> list[str] | None:
    """The module names ``node`` can evaluate to, or None when they cannot be read."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    if isinstance(node, ast.Subscript):  # HOST_COMMANDS[name]: any of its values
        return _strings(node.value, constants)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr == "get":  # HOST_COMMANDS.get(name)
        return _strings(node.func.value, constants)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        found = [_strings(e, constants) for e in node.elts]
        return None if any(f is None for f in found) else [s for f in found for s in f or []]
    if isinstance(node, ast.Dict):
        found = [_strings(v, constants) for v in node.values]
        return None if any(f is None for f in found) else [s for f in found for s in f or []]
    return None


def _read(module: str, path: Path, known: frozenset[str] = frozenset()) -> Read:
    """Every import of ``module`` (at ``path``); ``from X import Y`` gives X.Y, and X too unless
    every Y is a module of ``known`` (``from kli.kernel import protocol`` imports the module
    ``kli.kernel.protocol``); a relative import is resolved against ``module``'s package."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    constants = _constants(tree)
    out = Read()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.imports += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*up, *([node.module] if node.module else [])])
            names = [f"{base}.{a.name}" for a in node.names]
            if not all(n in known for n in names):
                out.imports.append((node.lineno, base))
            out.imports += [(node.lineno, n) for n in names]
        elif isinstance(node, ast.Call) and _importer(node.func):
            names = _strings(node.args[0], constants) if node.args else None
            if names is None:
                out.unreadable.append((node.lineno, ast.unparse(node)))
            else:
                out.imports += [(node.lineno, n.partition(":")[0]) for n in names]
    return out


def _importer(func: ast.expr) -> bool:
    return (isinstance(func, ast.Attribute) and func.attr in IMPORTERS) or \
        (isinstance(func, ast.Name) and func.id in IMPORTERS)


def _forbidden(name: str) -> bool:
    return any(name == f or name.startswith(f + ".") or (f == "jupyter" and name.startswith(f))
               for f in FORBIDDEN_IN_TOOLS)


def test_every_kind_of_import_is_read(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import zmq\nfrom jupyter_client import KernelManager\nfrom kli import kernel\n"
        "HOSTS = {'mcp': 'kli.kernel.mcp.cli', 'ai': 'kli.kernel.ai.optin'}\n"
        "ONE = 'kli.client'\n"
        "def f(name):\n    import IPython.core\n    importlib.import_module('ipykernel.kernelapp')\n"
        "    importlib.import_module(HOSTS[name])\n    __import__(ONE)\n"
        "    importlib.import_module(name)\n"
        "if TYPE_CHECKING:\n    from kli.tools import core\n"
        "from .sibling import thing\n"
        "from kli.kernel import protocol\n"
    )
    read = _read("kli.tools.x.probe", probe, frozenset({"kli.kernel.protocol"}))
    names = {name for _, name in read.imports}
    assert {"zmq", "jupyter_client", "kli.kernel", "IPython.core", "ipykernel.kernelapp",
            "kli.kernel.mcp.cli", "kli.kernel.ai.optin", "kli.client", "kli.tools.core",
            "kli.tools.x.sibling", "kli.tools.x.sibling.thing"} <= names
    assert [code for _, code in read.unreadable] == ["importlib.import_module(name)"]
    assert [line for line, name in read.imports if name == "kli.kernel"] == [3]  # not line 15


def test_kli_tools_source_imports_no_jupyter_and_no_kernel() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for module, path in _modules().items()
        if module.startswith("kli.tools")
        for line, name in _read(module, path).imports
        if _forbidden(name)
    ]
    assert offenders == []


def test_every_module_name_handed_to_an_importer_can_be_read() -> None:
    unreadable = [f"{path.relative_to(ROOT)}:{line}: {code}"
                  for module, path in _modules().items()
                  for line, code in _read(module, path).unreadable]
    assert unreadable == [], "name the module in a literal or a module-level constant"


def _table() -> dict[str, set[str]]:
    rows: dict[str, set[str]] = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and re.fullmatch(r"`kli(\.\w+)*`", cells[0]):
            rows[cells[0].strip("`")] = set(re.findall(r"`(kli(?:\.\w+)*)`", cells[2]))
    return rows


def _part(name: str, parts: list[str]) -> str | None:
    owners = [p for p in parts if name == p or name.startswith(p + ".")]
    return max(owners, key=len) if owners else None


def _graph(parts: list[str]) -> tuple[dict[str, set[str]], dict[tuple[str, str], str]]:
    """The package graph of the source: package -> the packages its modules import (each
    module in the longest of ``parts`` that prefixes it), and where each arrow is first seen."""
    real: dict[str, set[str]] = defaultdict(set)
    where: dict[tuple[str, str], str] = {}
    modules = _modules()
    for module, path in modules.items():
        source = _part(module, parts)
        assert source is not None, f"{module} belongs to no package of docs/architecture.md"
        for line, name in _read(module, path, frozenset(modules)).imports:
            target = _part(name, parts)
            if target is not None and target != source:
                real[source].add(target)
                where.setdefault((source, target), f"{path.relative_to(ROOT)}:{line} imports {name}")
    return real, where


def test_every_package_of_the_source_has_its_row() -> None:
    """Each package directly under ``kli.tools`` and ``kli.kernel`` (a folder with an
    ``__init__.py``) is a row of the table; deeper ones belong to their parent's row."""
    table = _table()
    packages = {m for m, p in _modules().items() if p.name == "__init__.py" and m.count(".") <= 2}
    assert sorted(packages - set(table)) == []


def test_the_import_arrows_in_docs_architecture_are_the_real_ones() -> None:
    table = _table()
    assert {"kli.tools", "kli.tools.core", "kli.kernel", "kli.client"} <= set(table)
    real, where = _graph(list(table))
    unlisted = sorted(f"{s} -> {t} ({where[(s, t)]})" for s in real for t in real[s] - table[s])
    unused = sorted(f"{s} -> {t}" for s in table for t in table[s] - real[s])
    assert unlisted == [], "imports docs/architecture.md does not allow"
    assert unused == [], "arrows docs/architecture.md states that no module uses"


def test_the_floor_imports_nothing_above_it() -> None:
    """``kli.tools.core`` imports only itself, the standard library and third-party packages:
    no other part of ``kli`` (not lazily, not for type checking, not by name)."""
    up = sorted(
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for module, path in _modules().items()
        if module == FLOOR or module.startswith(FLOOR + ".")
        for line, name in _read(module, path).imports
        if (name == "kli" or name.startswith("kli.")) and not
        (name == FLOOR or name.startswith(FLOOR + "."))
        and name != "kli.tools"  # ``from kli.tools.core import x`` reads ``kli.tools`` first
    )
    assert up == []
    assert _table()[FLOOR] == set()


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One circle of ``graph`` (its packages in order, the first repeated), or None."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_cycle_finder_finds_a_circle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_no_circle_between_the_packages_of_the_table() -> None:
    real, where = _graph(list(_table()))
    circle = _cycle(real)
    assert circle is None, "a circle of imports: " + "; ".join(
        where[(a, b)] for a, b in itertools.pairwise(circle))


@pytest.mark.parametrize("doc", ["README.md"])
def test_architecture_is_linked_from(doc: str) -> None:
    assert "(docs/architecture.md)" in (ROOT / doc).read_text(encoding="utf-8")
