"""Issue 23, rule 1, through a real ``kli mcp`` (stdio, ``--profile all``) and its kernel: an
agent without ``image/eval`` that writes ``tree_sitter.py`` into the root, then writes ``.ts``
files, never gets its Python run in the kernel — the TypeScript check imports the installed
tree-sitter (``kli.tools.core.imports``). The sentinel module leaves a file outside the root
when imported or called."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .helpers import client_info, run, stdio_params, text_of

pytestmark = [pytest.mark.kernel, pytest.mark.mcp]

FILES_ONLY = ["file/read", "file/write", "file/edit"]
BROKEN_TS = "let x: number = ;\n"


def sentinel_source(mark: Path) -> str:
    return (f"open({str(mark)!r}, 'a').write('imported\\n')\n"
            "def Parser(*a, **k):\n"
            f"    open({str(mark)!r}, 'a').write('called\\n')\n"
            "Language = language_typescript = language_tsx = Parser\n")


def project(tmp_path: Path, approval: str) -> Path:
    root = tmp_path / "root"
    (root / ".kli").mkdir(parents=True)
    (root / ".kli" / "settings.json").write_text(json.dumps(
        {"capabilities": FILES_ONLY, "approval": {"file": approval}}))
    return root


def test_an_agents_tree_sitter_py_never_runs_in_the_kernel(tmp_path: Path) -> None:
    from mcp import Client

    root = project(tmp_path, "auto")
    mark = tmp_path / "tripped"

    async def body() -> list[str]:
        params = stdio_params(tmp_path, "--start", "--root", str(root), "--profile", "all")
        texts = []
        async with Client(params, client_info=client_info()) as c:
            denied = await c.call_tool("eval", {"code": "1"})
            assert denied.is_error and "capability 'image/eval' is not granted" in text_of(denied)
            for name in ("tree_sitter.py", "tree_sitter_typescript.py"):
                put = await c.call_tool("ws_write", {"path": name, "content": sentinel_source(mark)})
                assert not put.is_error, text_of(put)
            for name in ("a.ts", "b.tsx", "c.mts"):  # every later check, too
                r = await c.call_tool("ws_write", {"path": name, "content": BROKEN_TS})
                assert not r.is_error, text_of(r)
                texts.append(text_of(r))
        return texts

    texts = run(body)
    assert (root / "tree_sitter.py").exists()
    assert not mark.exists(), mark.read_text()
    # The installed tree-sitter checked each file: its parse error, with line and column.
    for text in texts:
        assert "does not parse (tree-sitter typescript): syntax error (line 1" in text, text


def test_a_held_ts_write_runs_nothing_from_the_root(tmp_path: Path) -> None:
    from mcp import Client

    root = project(tmp_path, "review")
    mark = tmp_path / "tripped"
    for name in ("tree_sitter.py", "tree_sitter_typescript.py"):  # already in place
        (root / name).write_text(sentinel_source(mark))

    async def body() -> Any:
        params = stdio_params(tmp_path, "--start", "--root", str(root), "--profile", "all")
        async with Client(params, client_info=client_info()) as c:
            return await c.call_tool("ws_write", {"path": "a.ts", "content": BROKEN_TS})

    held = run(body)
    assert not held.is_error and "waits for a person's review" in text_of(held), text_of(held)
    assert not (root / "a.ts").exists()
    assert not mark.exists(), mark.read_text()
