"""watch_agent.ipynb run headless by papermill shows the run it shows interactively: the
agent's seven steps, its repair preview accepted, the agent let go with exit code 0 — and no
traceback from the replay process when papermill shuts the kernel down."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BINDER = ROOT / "binder"

pytestmark = pytest.mark.kernel


def _stream_text(nb: dict, index: int) -> str:
    return "".join("".join(o.get("text", "")) for o in nb["cells"][index].get("outputs", [])
                   if o.get("output_type") == "stream")


@pytest.mark.timeout(300)
def test_papermill_runs_watch_agent_with_every_step_and_no_traceback(tmp_path: Path) -> None:
    pytest.importorskip("papermill")
    work = tmp_path / "binder"
    work.mkdir()
    for name in ("watch_agent.ipynb", "replay_agent.py", "agent_transcript.json"):
        shutil.copy2(BINDER / name, work / name)
    out = tmp_path / "out.ipynb"
    proc = subprocess.run(
        [sys.executable, "-m", "papermill", "--kernel", "kli", "--cwd", str(work),
         str(work / "watch_agent.ipynb"), str(out)],
        capture_output=True, text=True, timeout=280)
    assert proc.returncode == 0, proc.stderr[-4000:]
    nb = json.loads(out.read_text())
    errors = [o for c in nb["cells"] for o in c.get("outputs", []) if o["output_type"] == "error"]
    assert errors == []
    steps = len(json.loads((BINDER / "agent_transcript.json").read_text())["steps"])
    cells = [c for c in nb["cells"] if c["cell_type"] == "code"]
    log_cell = next(i for i, c in enumerate(nb["cells"]) if "agent_log()" in "".join(c["source"])
                    and "deadline" in "".join(c["source"]))
    shown = _stream_text(nb, log_cell)
    assert "steps so far" not in shown, shown
    assert f"\n{steps}. " in "\n" + shown and "differs from the recording" not in shown
    assert "The agent is done and is waiting for you" in shown
    everything = "".join(_stream_text(nb, i) for i in range(len(nb["cells"])))
    assert "accepting " in everything, everything  # the repair preview of the last step
    assert "replay agent exit code: 0" in everything
    assert len(cells) > 5
    # the replay process writes to the kernel's stderr, which papermill's process inherits.
    # jupyter_client's shutdown_kernel sends the kernel SIGINT before its shutdown_request
    # (manager.py: "the kernel will be immediately sent an interrupt"); landing in a message
    # handler it makes ipykernel log this one line (1 run in ~15 under load): the shutdown's,
    # not the notebook's. Anything else interrupted shows as a Traceback or another line.
    shutdown_line = "[IPKernelApp] ERROR | KeyboardInterrupt caught in kernel"
    stderr = proc.stderr.replace(shutdown_line + ".", "").replace(shutdown_line, "")
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, proc.stderr
