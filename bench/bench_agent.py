"""What the agent loop (``kli.tools.agent``) adds to a tool call: its cost per step beside the
bare tool call, in one run.

The model is SCRIPTED: tests/endpoint.py, an OpenAI-compatible server on 127.0.0.1 (not a
model), answers every turn with one ``read`` call (a few lines of a 20-line file, a different
range each turn) until the run's steps are done, then with an answer. The model client is the
real one (litellm, streaming, as ``%kli agent`` and the persona use it).

Two hosts, each beside its bare call (the same tool, the same arguments):

- ``kli.client``: ``run_agent_async`` on a ``kli.client`` connection to a kli kernel (a
  script's agent, the Jupyter AI persona); bare: ``await k.acall("read", args)``.
- ``Workspace``: on ``SessionHost(ws, session)`` in process, each call in a worker thread
  (``call_in_thread``), as ``%kli agent`` runs it; bare: ``ws.call("read", args, session)``.

Each host runs with two models: litellm talking to the scripted server (the real path), and
the same script called in process (no model client, no HTTP), which leaves the loop's own share.

Per step, three marks on one clock (the endpoint runs in this process):

- reply: the loop has the model's reply (its ``reply`` event);
- handed back: the loop calls the model again, the tool result in the conversation;
- at the endpoint: that request arrives at the server (adds the model client's own work:
  litellm building and sending the request).

    .venv/bin/python bench/bench_agent.py [--steps 20] [--rounds 4]

Rounds alternate the agent run and the bare calls, so load on a shared machine hits them alike.
The time from a step's result to the step showing in a Jupyter AI chat needs the persona (not
here): a host that renders events can time ``on_event`` the same way (``Marks.event``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FILE = "data.py"
LINES = 20


def args_of(i: int) -> dict[str, Any]:
    start = i % (LINES - 2) + 1
    return {"path": FILE, "start": start, "end": start + 2}


class Marks:
    """The clock marks of one run: ``reply`` (the loop has the reply), ``called`` (the loop
    calls the model), ``arrived`` (the request reaches the endpoint), one list each."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.reply: list[float] = []
        self.outcome: list[float] = []
        self.called: list[float] = []
        self.arrived: list[float] = []

    def event(self, event: Any) -> None:
        if event.kind == "reply" and event.calls:
            self.reply.append(time.perf_counter())
        elif event.kind == "outcome":
            self.outcome.append(time.perf_counter())

    def steps(self) -> dict[str, list[float]]:
        """Per step (seconds): reply → outcome (the call, as the loop makes it), outcome →
        handed back, reply → handed back, reply → at the endpoint."""
        n = len(self.reply)
        return {"call": [self.outcome[i] - self.reply[i] for i in range(n)],
                "after": [self.called[i + 1] - self.outcome[i] for i in range(n)],
                "back": [self.called[i + 1] - self.reply[i] for i in range(n)],
                "sent": [self.arrived[i + 1] - self.reply[i] for i in range(n)]}


class Timed:
    """An ``AsyncModel`` that marks when the loop calls it, then asks ``inner``."""

    def __init__(self, inner: Any, marks: Marks) -> None:
        self.inner, self.marks = inner, marks
        self.model = inner.model

    async def __call__(self, messages: list[dict[str, Any]],
                       tools: list[dict[str, Any]] | None) -> dict[str, Any]:
        self.marks.called.append(time.perf_counter())
        reply: dict[str, Any] = await self.inner(messages, tools)
        return reply


def ms(values: list[float]) -> str:
    """Median / 90th percentile, in milliseconds."""
    cut = sorted(values)[max(0, int(len(values) * 0.9) - 1)]
    return f"{statistics.median(values) * 1000:.1f} / {cut * 1000:.1f}"


ROWS = [("kli.client", "litellm"), ("kli.client", "in process"),
        ("Workspace", "litellm"), ("Workspace", "in process")]


async def bench(steps: int, rounds: int) -> list[tuple[str, str, dict[str, list[float]]]]:
    from kli import client
    from kli.tools import Workspace
    from kli.tools.agent import SessionHost, run_agent_async
    from kli.tools.agentmodels import LitellmModel
    from tests.endpoint import ScriptedEndpoint, answer, calls

    marks = Marks()

    def script(request: dict[str, Any]) -> dict[str, Any]:
        marks.arrived.append(time.perf_counter())
        done = sum(1 for m in request["messages"] if m["role"] == "tool")
        return answer("done") if done >= steps else calls(("read", args_of(done + 1)), n=done)

    async def in_process(messages: list[dict[str, Any]],
                         tools: list[dict[str, Any]] | None) -> dict[str, Any]:
        """The same script with no model client and no HTTP: the loop's own share alone."""
        return {"choices": [{"message": script({"messages": messages})}]}

    in_process.model = "in process"  # type: ignore[attr-defined]
    figures: dict[tuple[str, str], dict[str, list[float]]] = {
        row: {"bare": [], "call": [], "after": [], "back": [], "sent": []} for row in ROWS}
    with tempfile.TemporaryDirectory() as tmp, ScriptedEndpoint(script) as url:
        (Path(tmp) / FILE).write_text("".join(f"value_{i} = {i}\n" for i in range(LINES)))
        models = {"litellm": LitellmModel("openai/scripted", api_base=url, api_key="sk-scripted"),
                  "in process": in_process}
        ws = Workspace(tmp)
        session = ws.open_session("bench")
        with client.start(cwd=tmp, label="bench") as k:
            await k.acall("read", args_of(0))  # warm: the first call imports the tool
            ws.call("read", args_of(0), session)
            await run_agent_async("warm up", models["litellm"], k, max_turns=2)  # its imports
            hosts: dict[str, Any] = {"kli.client": k, "Workspace": SessionHost(ws, session)}
            for _ in range(rounds):
                for host_name, model_name in ROWS:
                    marks.reset()
                    run = await run_agent_async(
                        "bench", Timed(models[model_name], marks), hosts[host_name],
                        max_turns=steps + 1, on_event=marks.event)
                    assert len(run.steps) == steps and all(s.result.ok for s in run.steps)
                    row = figures[(host_name, model_name)]
                    for key, values in marks.steps().items():
                        row[key] += values
                    for i in range(1, steps + 1):
                        started = time.perf_counter()
                        if host_name == "kli.client":
                            result = await k.acall("read", args_of(i))
                        else:
                            result = ws.call("read", args_of(i), session)
                        row["bare"].append(time.perf_counter() - started)
                        assert result.ok, result.text
    return [(host, model, f) for (host, model), f in figures.items()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=20, help="tool calls per agent run")
    parser.add_argument("--rounds", type=int, default=4, help="agent runs per host")
    options = parser.parse_args()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    figures = asyncio.run(bench(options.steps, options.rounds))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{options.rounds} rounds x {options.steps} steps per host; the model is SCRIPTED "
          f"(tests/endpoint.py); load average {load:.1f}\n")
    print("milliseconds, median / p90\n")
    print("| host | model client | bare `read` | step: reply → result | result → handed back "
          "| step: reply → handed back | step: reply → request at the endpoint "
          "| harness per step (median step − median bare) |")
    print("|---|---|---|---|---|---|---|---|")
    for host, model, f in figures:
        extra = (statistics.median(f["back"]) - statistics.median(f["bare"])) * 1000
        sent = ms(f["sent"]) if model == "litellm" else "–"
        print(f"| {host} | {model} | {ms(f['bare'])} | {ms(f['call'])} | {ms(f['after'])} "
              f"| {ms(f['back'])} | {sent} | {extra:.1f} |")


if __name__ == "__main__":
    main()
