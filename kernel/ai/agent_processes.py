"""The agents Jupyter AI's ACP personas start (Claude Code, Codex, …) stop with the server.

jupyter-ai-acp-client starts an agent in a session of its own (``start_new_session``) and stops it
only from a persona's ``shutdown``, which a stopping server does not always reach: a chat whose
persona manager is already gone, an ``end_session`` that waits on the agent, a session left open
by another chat. Stopped with SIGTERM or Ctrl-C, a server then left ``claude-agent-acp`` and
``codex-acp`` running with no parent, and a person collected them (tests/ai/acp found them).

This Jupyter server extension (enabled by the wheel's
``etc/jupyter/jupyter_server_config.d/kli-kernel.json``) ends, when the server stops, the process
group of every agent an ACP persona class of this server started: SIGTERM, then SIGKILL after
``GRACE`` seconds. It runs beside the persona manager's own shutdown, and again at exit for a
server whose extensions were never stopped. It imports Jupyter AI only when it stops, and does
nothing where Jupyter AI is not installed.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import signal
import time
from typing import Any

from jupyter_server.extension.application import ExtensionApp

GRACE = 3.0  # seconds an agent has to end after SIGTERM before SIGKILL


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


def agent_pids() -> list[int]:
    """The pids of the running agents the ACP persona classes of this process started."""
    try:
        from jupyter_ai_acp_client.base_acp_persona import BaseAcpPersona
    except ImportError:
        return []
    pids: list[int] = []
    seen: set[type] = set()
    classes: list[type] = [BaseAcpPersona]
    while classes:
        cls = classes.pop()
        if cls in seen:
            continue
        seen.add(cls)
        classes += cls.__subclasses__()
        started: Any = cls.__dict__.get("_subprocess_future")  # one agent per class, if started
        if started is None or not started.done() or started.cancelled() or started.exception():
            continue
        process = started.result()
        if process.returncode is None and _alive(process.pid):
            pids.append(process.pid)
    return pids


def _signal(pids: list[int], sig: signal.Signals) -> None:
    for pid in pids:  # the agent leads its own session: its group holds what it started
        with contextlib.suppress(OSError):
            os.killpg(pid, sig)


def stop_agents(grace: float = GRACE) -> list[int]:
    """End each running agent's process group (with it what the agent started, such as Claude
    Code's ``claude``): SIGTERM, SIGKILL after ``grace`` seconds; the pids it ended."""
    pids = agent_pids()
    _signal(pids, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    _signal(pids, signal.SIGKILL)
    return pids


class AgentProcesses(ExtensionApp):
    """Stops the agents of Jupyter AI's ACP personas with the server."""

    name = "kli_agent_processes"
    load_other_extensions = True

    def initialize_settings(self) -> None:
        atexit.register(stop_agents)  # a server whose extensions were never stopped

    async def stop_extension(self) -> None:
        ended = agent_pids()  # as stop_agents, without holding up the other extensions' stop
        _signal(ended, signal.SIGTERM)
        deadline = time.monotonic() + GRACE
        while any(_alive(p) for p in ended) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        _signal(ended, signal.SIGKILL)
        if ended:
            self.log.info("kli: ended the agents Jupyter AI's personas started: %s", ended)


def _jupyter_server_extension_points() -> list[dict[str, Any]]:
    return [{"module": "kli.kernel.ai.agent_processes", "app": AgentProcesses}]
