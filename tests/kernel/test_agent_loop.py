"""kli.tools.agent.run_agent with a real kli kernel as the host, through kli.client.

The model is a scripted stand-in for a remote endpoint (NOT a model); the kernel, its tools
and the file it edits are real.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from kli import client
from kli.tools.agent import run_agent

pytestmark = pytest.mark.kernel


def _call(name: str, args: dict[str, Any], n: int) -> dict[str, Any]:
    call = {"id": f"c{n}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)}}
    return {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [call]}}]}


def test_a_kernel_connection_is_a_host_and_edits_land_in_its_workspace(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    seen = []

    def stand_in(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> dict[str, Any]:
        turn = sum(1 for m in messages if m["role"] == "assistant")
        last = messages[-1]["content"]
        if turn == 0:
            return _call("read", {"path": "calc.py"}, 0)
        if turn == 1:
            anchor = re.search(r"^(\d+:[0-9a-f]{2})\|    return a - b$", last, re.M)
            assert anchor, last
            return _call("edit", {"input": f"@@ calc.py\n= {anchor.group(1)}\n~    return a + b\n"}, 1)
        if turn == 2:
            return _call("eval", {"code": "import calc, importlib; importlib.reload(calc).add(2, 3)"}, 2)
        return {"choices": [{"message": {"role": "assistant", "content": "fixed: " + last.strip()}}]}

    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    with client.start(cwd=str(tmp_path), label="agent loop", timeout=30, env=env) as kernel:
        run = run_agent("fix add", stand_in, kernel, on_step=seen.append)
    assert [s.tool for s in run.steps] == ["read", "edit", "eval"]
    assert all(s.result.ok for s in run.steps), [s.result.text for s in run.steps]
    assert (tmp_path / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert run.stopped == "answered" and run.answer is not None and run.answer.endswith("5")
    assert len(seen) == 3
