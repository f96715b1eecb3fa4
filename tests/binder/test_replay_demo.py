"""binder/agent_fixes_notebook.ipynb, the Binder demo of ``%kli agent`` with a recorded model
(``replay:fix_notebook.replay.json``), run headless by papermill on a real kli kernel.

No model runs: the replay plays back replies recorded from a real run of the loop against
tests/endpoint.py (a scripted server, NOT a model; scripts/record_demo_replay.py). The kernel,
the tools, the held edit and the Accept are real. The person's Accept comes as the activity
panel sends it: a second client of the same kernel opens the ``kli.ui`` comm while the agent's
cell runs and sends ``accept`` for the held proposal when the kernel announces it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
BINDER = ROOT / "binder"
DEMO = "agent_fixes_notebook.ipynb"
RECORDING = "fix_notebook.replay.json"
FIXED = "    return sum(xs) / len(xs)"


class Panel(threading.Thread):
    """The activity panel's part, headless: attaches to the kernel whose connection file
    appears in ``runtime`` (papermill's kernel manager writes it with ``tempfile.mkstemp``:
    the papermill process's TMPDIR is that folder), opens ``kli.ui``, and Accepts each held call it is told about
    (``proposed``, or pending in the ``hello``). ``accepted``: the ids and the replies."""

    def __init__(self, runtime: Path, deadline: float) -> None:
        super().__init__(name="panel", daemon=True)
        self.runtime, self.deadline = runtime, deadline
        self.accepted: list[tuple[str, dict[str, Any]]] = []
        self.failure: str | None = None
        self.stop = threading.Event()

    def run(self) -> None:
        try:
            self._run()
        except Exception as exc:  # reported by the test
            self.failure = f"{type(exc).__name__}: {exc}"

    def _connection_file(self) -> Path | None:
        for path in self.runtime.glob("*.json"):
            try:
                if "shell_port" in json.loads(path.read_text()):
                    return path
            except (OSError, ValueError):  # still being written
                continue
        return None

    def _run(self) -> None:
        from jupyter_client.blocking.client import BlockingKernelClient

        while not (found := self._connection_file()):
            if time.monotonic() > self.deadline or self.stop.is_set():
                raise TimeoutError("papermill's kernel never started")
            time.sleep(0.1)
        kc = BlockingKernelClient(connection_file=str(found))
        kc.load_connection_file()
        kc.start_channels()
        try:
            while True:  # the file is written before the kernel listens: ask until it answers
                try:
                    kc.wait_for_ready(timeout=10)
                    break
                except RuntimeError:
                    if time.monotonic() > self.deadline or self.stop.is_set():
                        raise
                    time.sleep(0.2)
            comm = uuid.uuid4().hex
            kc.shell_channel.send(kc.session.msg("comm_open", {
                "comm_id": comm, "target_name": "kli.ui", "data": {"replay": 0}}))
            asked: set[str] = set()
            while not self.stop.is_set() and time.monotonic() < self.deadline:
                try:
                    msg = kc.get_iopub_msg(timeout=0.2)
                except Exception:  # queue.Empty
                    continue
                if msg["msg_type"] != "comm_msg" or msg["content"].get("comm_id") != comm:
                    continue
                data = msg["content"]["data"]
                held = ([data["candidate"]] if data.get("op") == "proposed"
                        else data.get("pending") or [] if data.get("op") == "hello" else [])
                for candidate in held:
                    cid = candidate["candidate"]
                    if candidate.get("kind") == "call" and cid not in asked:
                        asked.add(cid)
                        kc.shell_channel.send(kc.session.msg("comm_msg", {
                            "comm_id": comm, "data": {"v": 1, "id": cid, "op": "accept",
                                                      "candidate": cid}}))
                if data.get("op") == "result" and data.get("id") in asked:
                    self.accepted.append((data["id"], data))
        finally:
            kc.stop_channels()


def _shown(cell: dict[str, Any]) -> str:
    texts = ["".join(o.get("data", {}).get("text/plain", "")) + "".join(o.get("text", ""))
             for o in cell.get("outputs", [])]
    return "\n".join(texts)


@pytest.mark.kernel
@pytest.mark.timeout(300)
def test_papermill_runs_the_replay_demo_the_held_edit_accepted_from_the_panel(
        tmp_path: Path) -> None:
    pytest.importorskip("papermill")
    work = tmp_path / "binder"
    work.mkdir()
    for name in (DEMO, RECORDING):
        shutil.copy2(BINDER / name, work / name)
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    env = {**os.environ, "TMPDIR": str(runtime)}
    env.pop("OPENAI_API_KEY", None)  # the demo needs no key
    env.pop("KLI_AGENT_MODEL", None)
    panel = Panel(runtime, time.monotonic() + 240)
    panel.start()
    out = tmp_path / "out.ipynb"
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "papermill", "--kernel", "kli", "--cwd", str(work),
             str(work / DEMO), str(out)], capture_output=True, text=True, timeout=280, env=env)
    finally:
        panel.stop.set()
        panel.join(10)
    assert panel.failure is None, panel.failure
    assert proc.returncode == 0, proc.stderr[-4000:]
    nb = json.loads(out.read_text())
    errors = [o for c in nb["cells"] for o in c.get("outputs", []) if o["output_type"] == "error"]
    assert errors == []
    cells = {c["id"]: c for c in nb["cells"]}
    steps = _shown(cells["agent"])
    # named as a recording where the run shows
    assert steps.startswith("kli agent (agent: mean() in stats.ipynb gives the wrong a…, "
                            "replay:fix_notebook.replay.json — a recorded model (replay)"), steps
    assert "[1] read stats.ipynb: ok" in steps
    held = [line for line in steps.splitlines() if "held for review as p" in line]
    assert held and held[0].startswith("[2] edit stats.ipynb#mean-def (+1 -1)"), steps
    assert len(panel.accepted) == 1 and panel.accepted[0][1]["ok"], panel.accepted
    assert f"[2] {panel.accepted[0][0]}: accepted" in steps
    assert "answered after 3 turns" in steps and "stops at reply" not in steps
    assert "mean([120, 80, 100]) = 100.0" in _shown(cells["check"])
    assert FIXED in (work / "stats.ipynb").read_text()


def test_the_demo_recording_matches_a_fresh_recording_of_the_loop() -> None:
    pytest.importorskip("litellm")
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "record_demo_replay.py"),
                           "--check"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    recording = json.loads((BINDER / RECORDING).read_text(encoding="utf-8"))
    assert "scripted" in recording["recorded_from"] and "replay" in recording["label"]
    # read, the anchored cell edit (held, then accepted), the answer
    replies = [[c["function"]["name"] for c in t["reply"].get("tool_calls", [])]
               for t in recording["turns"]]
    assert replies == [["read"], ["edit"], []]
    assert "was accepted by a person" in recording["turns"][2]["request"]["last"]["content"]


def test_the_demo_opens_on_the_kli_kernel_names_its_replay_and_is_copied_to_the_tour() -> None:
    nb = json.loads((BINDER / DEMO).read_text(encoding="utf-8"))
    assert nb["metadata"]["kernelspec"]["name"] == "kli"
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code and all(not c.get("outputs") and c.get("execution_count") is None for c in code)
    assert "".join(nb["cells"][0]["source"]).count("replay") >= 2
    assert f"--model replay:{RECORDING}" in "".join(
        next(c for c in nb["cells"] if c["id"] == "agent")["source"])
    assert "binder/*.replay.json" in (ROOT / "scripts" / "run").read_text()
