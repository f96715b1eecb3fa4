"""Record binder/fix_notebook.replay.json: the recorded model the Binder demo
binder/agent_fixes_notebook.ipynb replays (docs/agent.md, "A recorded model").

The recording is real loop traffic. The demo's own set-up cell writes stats.ipynb into a fresh
folder; kli's agent loop (``run_agent_async``) runs the demo's own task on a Workspace there,
as ``%kli agent`` runs it (an agent session, review on for files, the demo's ``--wait``), with
the real model client (litellm, streaming) talking to tests/endpoint.py — a SCRIPTED
OpenAI-compatible server on 127.0.0.1, NOT a model: it answers with the tool calls written
below, reading the anchors it edits with from the tool results it is sent. A thread stands in
for the person and Accepts the held edit (as the panel's Accept does: source ``ui``).
``RecordingModel`` keeps each request the model got and each reply it gave.

    python scripts/record_demo_replay.py           # (re)write the recording
    python scripts/record_demo_replay.py --check   # exit 1 when a fresh recording differs

Needs litellm (the ``ai`` extra) and nbformat; run from anywhere.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import os
import re
import shlex
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "binder" / "agent_fixes_notebook.ipynb"
RECORDING = ROOT / "binder" / "fix_notebook.replay.json"
ABOUT = ("Recorded by scripts/record_demo_replay.py from a real run of kli's agent loop "
         "(review on, the held edit accepted) with litellm talking to tests/endpoint.py, a "
         "scripted OpenAI-compatible server standing in for a model. Played back by "
         "binder/agent_fixes_notebook.ipynb (%kli agent --model replay:fix_notebook.replay.json).")
BUGGY = r"^(\d+:[0-9a-f]{2})\|    return sum\(xs\) / \(len\(xs\) - 1\)$"


def scripted(request: dict[str, Any]) -> dict[str, Any]:
    """The scripted endpoint's answers: read the notebook, edit the cell with the anchor the
    read showed, answer."""
    from tests.endpoint import answer, calls

    done = sum(1 for m in request["messages"] if m["role"] == "tool")
    last = request["messages"][-1].get("content") or ""
    if done == 0:
        return {**calls(("read", {"path": "stats.ipynb"})),
                "content": "Let me look at the notebook first."}
    if done == 1:
        cell = last.split("── stats.ipynb#mean-def", 1)[-1].split("── ", 1)[0]
        anchor = re.search(BUGGY, cell, re.M)
        if anchor is None:
            raise SystemExit(f"the read did not show mean's buggy line:\n{last}")
        return {**calls(("edit", {"input": f"@@ stats.ipynb#mean-def\n= {anchor.group(1)}\n"
                                           "~    return sum(xs) / len(xs)\n"}), n=1),
                "content": "mean() divides by len(xs) - 1; a mean divides by len(xs)."}
    if "was accepted by a person" not in last:
        raise SystemExit(f"the edit was not accepted:\n{last}")
    return answer(
        "Fixed: `mean` (stats.ipynb#mean-def) divided the sum by len(xs) - 1; it now divides "
        "by len(xs), so mean([120, 80, 100]) is 100.0, not 150.0. The edit was held for your "
        "review and you accepted it. Run the notebook's cells again to see the new average.")


def demo_cells() -> tuple[str, str]:
    """The demo's set-up cell and its ``%kli agent`` line."""
    cells = json.loads(DEMO.read_text(encoding="utf-8"))["cells"]
    by_id = {c.get("id"): "".join(c["source"]) for c in cells}
    return by_id["setup"], by_id["agent"]


def record() -> Any:
    """Run the demo's task once, recorded; the ``RecordingModel``."""
    sys.path.insert(0, str(ROOT))
    from kli.kernel.agentcell import TASK_HEAD
    from kli.kernel.magics import parse_agent_args
    from kli.tools import Workspace
    from kli.tools.agent import Held, SessionHost, bounded, run_agent_async
    from kli.tools.agentmodels import LitellmModel, RecordingModel
    from kli.tools.core import approval
    from tests.endpoint import ScriptedEndpoint

    setup, line = demo_cells()
    words = shlex.split(line)
    assert words[:2] == ["%kli", "agent"], line
    options, task = parse_agent_args(line.split("agent", 1)[1])
    with tempfile.TemporaryDirectory() as tmp, ScriptedEndpoint(scripted) as url:
        here = os.getcwd()
        os.chdir(tmp)
        try:
            with contextlib.redirect_stdout(io.StringIO()):  # the cell's note to the reader
                exec(compile(setup, "setup cell", "exec"), {})  # writes stats.ipynb here
            ws = Workspace(tmp)
            approval.set_mode(ws, "review", "file")  # the demo's %kli approval review file
            session = ws.open_session(f"agent: {bounded(task, TASK_HEAD)}")
            model = RecordingModel(
                LitellmModel("openai/scripted", api_base=url, api_key="sk-scripted"),
                about=ABOUT, recorded_from="openai/scripted (tests/endpoint.py: a scripted "
                                           "server, not a model)")

            def person(event: Any) -> None:  # Accepts a held call, as the panel's Accept does
                if isinstance(event, Held):
                    threading.Timer(0.2, approval.accept_any, (ws, event.proposal, "ui")).start()

            run = asyncio.run(run_agent_async(
                task, model, SessionHost(ws, session), profile=options.get("profile", "kli"),
                max_turns=int(options.get("steps", 20)),
                review_wait=float(options.get("wait", 300)), on_event=person))
            fixed = (Path(tmp) / "stats.ipynb").read_text(encoding="utf-8")
        finally:
            os.chdir(here)
    if run.answer is None or "return sum(xs) / len(xs)" not in fixed:
        raise SystemExit(f"the recorded run did not fix the notebook ({run.stopped})")
    return model


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="compare a fresh recording with the committed one; write nothing")
    check = parser.parse_args().check
    fresh = record()
    text = fresh.text()
    if check:
        if RECORDING.read_text(encoding="utf-8") != text:
            print(f"{RECORDING.relative_to(ROOT)} differs from a fresh recording: run "
                  "scripts/record_demo_replay.py and commit it", file=sys.stderr)
            return 1
        print("the recording matches a fresh one")
        return 0
    fresh.save(RECORDING)
    print(f"wrote {RECORDING.relative_to(ROOT)}: {len(fresh.turns)} replies")
    return 0


if __name__ == "__main__":
    sys.exit(main())
