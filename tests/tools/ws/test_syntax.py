"""Post-edit syntax checks: each checker, the four outcomes, and the revert leaving disk alone."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from kli.tools import Workspace
from kli.tools.ws import syntax
from kli.tools.ws.syntax import apply_with_syntax_check, check_file

HAS_NODE = shutil.which("node") is not None
HAS_GOFMT = shutil.which("gofmt") is not None


def test_python_ok_and_reverted_and_still_broken() -> None:
    assert check_file("a.py", "x = 1\n", "x = 2\n").status == "ok"
    out = check_file("a.py", "x = 1\n", "x = (\n")
    assert (out.status, out.checker) == ("reverted", "python compile")
    assert "line" in out.message
    assert check_file("a.py", "x = (\n", "y = (\n").status == "still_broken"
    assert check_file("a.py", None, "def f(:\n").status == "broken_new_file"


def test_json_checked_in_process() -> None:
    assert check_file("c.json", '{"a": 1}', '{"a": 2}').status == "ok"
    out = check_file("c.json", '{"a": 1}', '{"a": 2,}')
    assert (out.status, out.checker) == ("reverted", "json.load")
    assert "line 1" in out.message


def test_unknown_extension_and_disabled_are_skipped() -> None:
    assert check_file("notes.txt", "a", "(((").status == "skipped"
    out = check_file("a.py", "x = 1\n", "x = (\n", disabled=True)
    assert out.status == "skipped" and "disable_syntax_check" in out.message


@pytest.mark.skipif(not HAS_NODE, reason="node is not installed")
def test_node_check_reverts_broken_js_and_accepts_esm_in_dot_js() -> None:
    assert check_file("a.js", "let a = 1;\n", "let a = 2;\n").status == "ok"
    out = check_file("a.js", "let a = 1;\n", "let a = (2;\n")
    assert (out.status, out.checker) == ("reverted", "node --check")
    assert "SyntaxError" in out.message
    # module syntax in a .js file is not misread as broken
    assert check_file("m.js", None, "import x from './x.js';\nexport const y = x;\n").status == "ok"


def test_missing_runtime_is_skipped_never_broken(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    out = check_file("a.js", "let a = 1;\n", "let a = (2;\n")
    assert out.status == "skipped" and "node not found" in out.message
    out = check_file("a.go", "package a\n", "package a\nfunc (\n")
    assert out.status == "skipped" and "gofmt not found" in out.message


@pytest.mark.skipif(not HAS_NODE, reason="node is not installed")
def test_timed_out_check_is_skipped() -> None:
    out = check_file("a.js", "let a = 1;\n", "let a = (2;\n", timeout=0.0001)
    assert out.status == "skipped" and "timed out" in out.message


@pytest.mark.skipif(not HAS_GOFMT, reason="gofmt is not installed")
def test_gofmt_reverts_broken_go() -> None:
    out = check_file("a.go", "package a\n", "package a\nfunc (\n")
    assert (out.status, out.checker) == ("reverted", "gofmt")


def test_typescript_checked_by_tree_sitter() -> None:
    pytest.importorskip("tree_sitter_typescript")
    good = "const x: number = 1;\nfunction f(a: string): void {}\n"
    assert check_file("a.ts", good, good.replace("1", "2")).status == "ok"
    out = check_file("a.ts", good, "const x: number = (1;\n")
    assert (out.status, out.checker) == ("reverted", "tree-sitter typescript")
    assert "line 1" in out.message
    assert check_file("c.tsx", None, "const e = <div>{x}</div>;\n").status == "ok"


def test_reverted_message_is_the_spec_wording() -> None:
    outcome = syntax.SyntaxOutcome("reverted", "gofmt", "a.go:2:6: expected ')'")
    msg = syntax.reverted_message("pkg/foo/bar.go", outcome)
    spec = (
        "EDIT REVERTED — pkg/foo/bar.go parsed correctly before your change and does NOT parse "
        "after it (gofmt): a.go:2:6: expected ')' The file is unchanged on disk. Fix the syntax in "
        "your replacement text and retry: • check brackets/parens/quotes are balanced in new_str "
        "• check indentation matches the surrounding block Do NOT retry the identical edit — it "
        "will be reverted again."
    )
    assert " ".join(msg.split()) == spec
    assert msg.splitlines()[0].startswith("EDIT REVERTED — pkg/foo/bar.go parsed correctly")


def test_apply_reverts_without_touching_disk(ws: Workspace, root: Path) -> None:
    path = root / "m.py"
    path.write_text("def f():\n    return 1\n")
    before_stat = os.stat(path)
    resolved = ws.jail.resolve("m.py", write=True)
    wrote, note, outcome = apply_with_syntax_check(ws, resolved, path.read_text(), "def f(:\n")
    assert (wrote, outcome.status) == (False, "reverted")
    assert note.startswith("EDIT REVERTED — m.py parsed correctly before your change")
    assert path.read_text() == "def f():\n    return 1\n"
    assert os.stat(path).st_mtime_ns == before_stat.st_mtime_ns


def test_apply_writes_still_broken_with_in_band_error(ws: Workspace, root: Path) -> None:
    path = root / "m.py"
    path.write_text("def f(:\n")
    resolved = ws.jail.resolve("m.py", write=True)
    wrote, note, outcome = apply_with_syntax_check(ws, resolved, "def f(:\n", "def g(:\n")
    assert wrote and outcome.status == "still_broken"
    assert path.read_text() == "def g(:\n"
    assert note.startswith("[syntax: m.py still does not parse (python compile):")


def test_apply_disabled_writes_broken_text(ws: Workspace, root: Path) -> None:
    path = root / "m.py"
    path.write_text("x = 1\n")
    resolved = ws.jail.resolve("m.py", write=True)
    wrote, note, outcome = apply_with_syntax_check(
        ws, resolved, "x = 1\n", "x = (\n", disabled=True
    )
    assert wrote and outcome.status == "skipped" and note == ""
    assert path.read_text() == "x = (\n"
