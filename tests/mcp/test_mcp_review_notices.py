"""Each review outcome reaches the agent once, through a real ``kli mcp`` process on a
notebook's kernel (issue 26): two held calls, the person decides p2 while the agent waits on
p1, then p1; the agent's wait of p1 tells p1 only, its wait of p2 tells p2, and its next call
tells neither again."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from .helpers import Notebook, client_info, run, stdio_params, text_of

pytestmark = [pytest.mark.kernel, pytest.mark.mcp]


def _proposal(text: str) -> str:
    found = re.search(r"Proposal (p\d+)", text)
    assert found, text
    return found.group(1)


def test_an_outcome_decided_while_the_agent_awaits_another_is_told_once_over_mcp(
        tmp_path: Path, notebook: Notebook) -> None:
    import anyio
    from mcp import Client

    assert notebook.request("approval", mode="review", kind="file")["approval"]["file"] == "review"

    def person(p1: str, p2: str) -> None:
        time.sleep(1.0)  # the agent is waiting on p1 by now
        assert notebook.accept(p2)["ok"]
        time.sleep(0.5)
        assert notebook.accept(p1)["ok"]

    async def body() -> list[str]:
        params = stdio_params(tmp_path, "--connection-file", notebook.connection_file)
        async with Client(params, client_info=client_info()) as c:
            p1 = _proposal(text_of(await c.call_tool("write", {"path": "one.txt", "content": "1\n"})))
            p2 = _proposal(text_of(await c.call_tool("write", {"path": "two.txt", "content": "2\n"})))
            told = []
            async with anyio.create_task_group() as tg:
                tg.start_soon(anyio.to_thread.run_sync, person, p1, p2)
                told.append(text_of(await c.call_tool("await_decision", {"id": p1, "timeout": 60})))
            told.append(text_of(await c.call_tool("await_decision", {"id": p2, "timeout": 5})))
            told.append(text_of(await c.call_tool("read", {"path": "two.txt"})))
            return [p1, p2, *told]

    p1, p2, *told = run(body)
    assert [t.count(f"Proposal {p1} (write) was accepted") for t in told] == [1, 0, 0], told
    assert [t.count(f"Proposal {p2} (write) was accepted") for t in told] == [0, 1, 0], told
    assert (tmp_path / "root" / "one.txt").read_text() == "1\n"
