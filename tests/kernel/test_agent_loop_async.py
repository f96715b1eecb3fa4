"""kli.tools.agent.run_agent_async with a real kli kernel as the host, through kli.client.

The model is the one thing faked: a scripted OpenAI-compatible server on 127.0.0.1
(tests/endpoint.py, NOT a model), reached through the real litellm client. The kernel, its
tools and the shell command are real.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

import pytest

from kli import client
from kli.tools.agent import Event, Stopped, run_agent_async
from kli.tools.agentmodels import litellm_model
from tests.endpoint import ScriptedEndpoint, calls
from tests.processes import alive as _alive

pytestmark = pytest.mark.kernel
pytest.importorskip("litellm")


def _sleeper(request: dict[str, Any]) -> dict[str, Any]:
    return calls(("bash", {"command": "echo $$ > pid; exec sleep 60", "directory": None,
                           "input": None, "shell": None, "timeout": 120,
                           "run_in_background": None}))


@pytest.mark.serial  # asserts a wall-clock time
def test_cancelling_the_run_cancels_the_kernels_bash_within_two_seconds(tmp_path: Path) -> None:
    events: list[Event] = []
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "xdg")}

    async def scenario(kernel: Any, url: str) -> float:
        model = litellm_model("openai/scripted", api_base=url, api_key="sk-test")
        task = asyncio.create_task(run_agent_async("wait", model, kernel,
                                                   on_event=events.append))
        pid_file = tmp_path / "pid"
        deadline = time.monotonic() + 60
        while not (pid_file.exists() and pid_file.read_text().strip()):
            assert time.monotonic() < deadline, "the agent's command never started"
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.2)
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - started

    with ScriptedEndpoint(_sleeper) as url, \
            client.start(cwd=str(tmp_path), label="async agent", timeout=30, env=env) as kernel:
        took = asyncio.run(scenario(kernel, url))
        pid = int((tmp_path / "pid").read_text())
        deadline = time.monotonic() + 2.0
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(pid), "the 60 s command still runs in the kernel after the cancel"
        assert kernel.call("read", {"path": "pid"}).ok  # the kernel serves the next call
    assert took < 2.0
    assert isinstance(events[-1], Stopped) and events[-1].during == "bash"
