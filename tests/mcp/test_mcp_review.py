"""Review against an agent that tries, through a real ``kli mcp`` process on a notebook's kernel
(issue 23): what the person saw is what Accept runs (a held ``run_cells`` whose cell the agent
edits afterwards, a held reload whose module file it changes), and only a person decides a held
call (another agent's ``edit accept_repair`` of it is refused; the MCP note says how to wait)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kli.tools.core.approval import digest

from .helpers import Notebook, client_info, run, stdio_params, text_of

pytestmark = [pytest.mark.kernel, pytest.mark.mcp]


def _proposal(text: str) -> str:
    found = re.search(r"Proposal (p\d+)", text)
    assert found, text
    return found.group(1)


def _notebook(path: Path, cells: dict[str, str]) -> None:
    path.write_text(json.dumps({
        "nbformat": 4, "nbformat_minor": 5, "metadata": {},
        "cells": [{"cell_type": "code", "id": cid, "metadata": {}, "source": src,
                   "outputs": [], "execution_count": None} for cid, src in cells.items()],
    }))


def _modes(notebook: Notebook) -> dict[str, str]:
    hello = notebook.request("replay", limit=0)
    modes: dict[str, str] = hello["approval"]
    return modes


def test_a_held_run_cells_shows_the_source_and_accept_is_refused_once_the_cell_changed(
        tmp_path: Path, notebook: Notebook) -> None:
    from mcp import Client

    root = tmp_path / "root"
    _notebook(root / "nb.ipynb", {"c1": "print('ran c1')", "c2": "print(40 + 2)"})
    assert notebook.request("approval", mode="review", kind="eval")["approval"]["eval"] == "review"

    async def body() -> tuple[str, str]:
        params = stdio_params(tmp_path, "--connection-file", notebook.connection_file,
                              "--profile", "all")
        async with Client(params, client_info=client_info()) as c:
            held = text_of(await c.call_tool("run_cells", {"path": "nb.ipynb", "cell": "c1"}))
            pid = _proposal(held)
            # files are on auto: the agent changes the cell after the proposal
            read = text_of(await c.call_tool("read", {"path": "nb.ipynb#c1"}))
            row = next(line for line in read.splitlines() if "print('ran c1')" in line)
            anchor = row.split("|", 1)[0]
            edited = await c.call_tool("edit", {"input": (
                f"@@ nb.ipynb#c1\n= {anchor}..{anchor}\n~%kli approval auto\n")})
            assert not edited.is_error, text_of(edited)
            reply = notebook.accept(pid)
            assert not reply["ok"]
            assert "nb.ipynb#c1 changed since proposal" in reply["text"], reply["text"]
            assert "Nothing was run" in reply["text"]
            resolved = notebook.wait(lambda d: d.get("op") == "resolved"
                                     and d["candidate"] == pid)
            assert resolved["status"] == "refused"
            # the unchanged cell runs on Accept, exactly as shown
            second = text_of(await c.call_tool("run_cells", {"path": "nb.ipynb", "cell": "c2"}))
            ok = notebook.accept(_proposal(second))
            assert ok["ok"] and "42" in ok["text"], ok["text"]
            return held, pid

    held, pid = run(body)
    shown = digest(b"print('ran c1')")
    assert "nb.ipynb#c1" in held and "print('ran c1')" in held and shown in held
    proposed = notebook.wait(lambda d: d.get("op") == "proposed"
                             and d["candidate"]["candidate"] == pid)["candidate"]
    [source] = proposed["sources"]
    assert source["what"] == "nb.ipynb#c1" and source["sha256"] == shown
    assert source["source"] == "print('ran c1')" and "print('ran c1')" in proposed["command"]
    cells = json.loads((root / "nb.ipynb").read_text())["cells"]
    assert cells[0]["source"] == "%kli approval auto"
    assert cells[0]["execution_count"] is None and cells[0]["outputs"] == []  # not run
    assert cells[1]["execution_count"] is not None
    assert _modes(notebook)["eval"] == "review"  # the edited cell did not switch review off


def test_a_held_reload_is_refused_once_the_module_changed_and_then_runs_what_was_shown(
        tmp_path: Path, notebook: Notebook) -> None:
    from mcp import Client

    root = tmp_path / "root"
    (root / "mod.py").write_text("VALUE = 1\n")
    changed = "import pathlib\npathlib.Path('imported.txt').write_text('x')\nVALUE = 2\n"

    async def body() -> tuple[str, str]:
        params = stdio_params(tmp_path, "--connection-file", notebook.connection_file,
                              "--profile", "all")
        async with Client(params, client_info=client_info()) as c:
            assert not (await c.call_tool("eval", {"code": "import mod"})).is_error
            notebook.request("approval", mode="review", kind="eval")
            held = text_of(await c.call_tool("redefine", {"reload": "mod", "code": "mod.VALUE"}))
            pid = _proposal(held)
            written = await c.call_tool("write", {"path": "mod.py", "content": changed})
            assert not written.is_error, text_of(written)
            reply = notebook.accept(pid)
            assert not reply["ok"] and "module mod (mod.py) changed since proposal" in reply["text"]
            assert not (root / "imported.txt").exists()  # the new file was not imported
            again = text_of(await c.call_tool("redefine", {"reload": "mod",
                                                           "code": "mod.VALUE"}))
            assert digest(changed.encode()) in again and "imported.txt" in again
            ok = notebook.accept(_proposal(again))
            assert ok["ok"], ok["text"]
            return held, ok["text"]

    held, accepted = run(body)
    assert "VALUE = 1" in held and digest(b"VALUE = 1\n") in held
    assert "[line 1] 2" in accepted or "\n2" in accepted, accepted
    assert (root / "imported.txt").read_text() == "x"


def test_another_agents_accept_repair_of_a_held_write_is_refused_and_the_person_decides(
        tmp_path: Path, notebook: Notebook) -> None:
    from mcp import Client

    root = tmp_path / "root"
    notebook.request("approval", mode="review", kind="file")

    async def body() -> tuple[str, str, str]:
        first = stdio_params(tmp_path, "--connection-file", notebook.connection_file,
                             "--profile", "all")
        async with Client(first, client_info=client_info("agent-one")) as one:
            held = text_of(await one.call_tool("ws_write", {"path": "a.txt",
                                                            "content": "held\n"}))
            pid = _proposal(held)
            # the person switches files back to auto with the write still pending
            notebook.request("approval", mode="auto", kind="file")
            async with Client(first, client_info=client_info("agent-two")) as two:
                tried = await two.call_tool("edit", {"accept_repair": pid, "path": "a.txt"})
                assert tried.is_error
                assert not (root / "a.txt").exists()
                own = await one.call_tool("edit", {"accept_repair": pid, "path": "a.txt"})
                assert own.is_error and not (root / "a.txt").exists()
            reply = notebook.accept(pid)  # still pending: the person decides
            assert reply["ok"], reply["text"]
            return held, text_of(tried), pid

    held, tried, pid = run(body)
    assert (root / "a.txt").read_text() == "held\n"
    assert "only a person decides it" in tried and "Nothing was written" in tried
    assert f"await_decision id='{pid}'" in tried and "internal" not in tried
    assert "To write it yourself" not in held and "accept_repair" not in held
    assert f"await_decision {json.dumps({'id': pid, 'timeout': 60})}" in held
    resolved = notebook.wait(lambda d: d.get("op") == "resolved" and d["candidate"] == pid)
    assert resolved["by"] == "ui" and resolved["status"] == "written"
