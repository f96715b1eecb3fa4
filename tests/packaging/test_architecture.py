"""docs/architecture.md stays true: the one rule (``kli.tools`` imports no Jupyter and no
kernel) and the import arrows between packages, checked over the source with ``ast`` — every
import statement, including those inside functions and under ``TYPE_CHECKING``."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
# Source folder -> the package it installs as (setup.py's SOURCES).
SOURCES = {"tools": "kli.tools", "kernel": "kli.kernel", "client": "kli.client"}
FORBIDDEN_IN_TOOLS = ("jupyter", "ipykernel", "IPython", "zmq", "comm", "kli.kernel", "kli.client")


def _modules() -> dict[str, Path]:
    found = {}
    for folder, package in SOURCES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((package, *parts))] = path
    return found


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import in ``path``; ``from X import Y`` gives X and X.Y (Y may
    be a module), and a literal ``importlib.import_module("X")`` / ``__import__("X")`` gives X."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.append((node.lineno, node.module))
            out += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and (
                (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                or (isinstance(node.func, ast.Name) and node.func.id == "__import__")
            )
        ):
            out.append((node.lineno, node.args[0].value))
    return out


def _forbidden(name: str) -> bool:
    return any(name == f or name.startswith(f + ".") or (f == "jupyter" and name.startswith(f))
               for f in FORBIDDEN_IN_TOOLS)


def test_the_forbidden_check_recognises_each_kind_of_import(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import zmq\nfrom jupyter_client import KernelManager\nfrom kli import kernel\n"
        "def f():\n    import IPython.core\n    importlib.import_module('ipykernel.kernelapp')\n"
        "from kli.tools import core\n"
    )
    hits = sorted({name.split(".")[0] if not name.startswith("kli") else name
                   for _, name in _imports(probe) if _forbidden(name)})
    assert hits == ["IPython", "ipykernel", "jupyter_client", "kli.kernel", "zmq"]


def test_kli_tools_source_imports_no_jupyter_and_no_kernel() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for module, path in _modules().items()
        if module.startswith("kli.tools")
        for line, name in _imports(path)
        if _forbidden(name)
    ]
    assert offenders == []


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


def test_the_import_arrows_in_docs_architecture_are_the_real_ones() -> None:
    table = _table()
    assert {"kli.tools", "kli.tools.core", "kli.kernel", "kli.client"} <= set(table)
    parts = list(table)
    real: dict[str, set[str]] = defaultdict(set)
    where: dict[tuple[str, str], str] = {}
    for module, path in _modules().items():
        source = _part(module, parts)
        assert source is not None, f"{module} belongs to no package of docs/architecture.md"
        for line, name in _imports(path):
            target = _part(name, parts)
            if target is not None and target != source:
                real[source].add(target)
                where.setdefault((source, target), f"{path.relative_to(ROOT)}:{line}")
    unlisted = sorted(f"{s} -> {t} ({where[(s, t)]})" for s in real for t in real[s] - table[s])
    unused = sorted(f"{s} -> {t}" for s in table for t in table[s] - real[s])
    assert unlisted == [], "imports docs/architecture.md does not allow"
    assert unused == [], "arrows docs/architecture.md states that no module uses"


@pytest.mark.parametrize("doc", ["README.md"])
def test_architecture_is_linked_from(doc: str) -> None:
    assert "(docs/architecture.md)" in (ROOT / doc).read_text(encoding="utf-8")
