"""A REPLAY agent: plays a recorded tool-call transcript against a running kli kernel.

There is no model here. The transcript (JSON) holds the calls an agent made when it was
recorded, with what each call returned then; this script attaches to a kernel through
``kli.client`` — its own ``kli.agent`` comm, so its own tool session — and makes the same calls
in order, logging each result and whether it matches the recording. The kernel's activity panel
shows every call live, exactly as it would for a real agent.

    python replay_agent.py --connection-file KERNEL.json [--delay 1.0] [--log agent.log]
                           [--ready-file F] [--hold 1800] TRANSCRIPT.json

After its last step the agent stays attached (``--hold`` seconds, or until its stdin closes) so
a repair preview it left stays pending for a person to accept: closing the connection would
discard its session, and the preview with it. An interrupt (SIGINT) ends the run quietly, with
a log entry, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import sys
import time
from pathlib import Path
from typing import Any

# Results are long; the log keeps this much of each (the panel shows them whole).
LOG_TEXT_CHARS = 1500


def log(path: Path | None, **entry: Any) -> None:
    entry.setdefault("time", round(time.time(), 3))
    line = json.dumps(entry, ensure_ascii=False)
    if path is None:
        print(line, flush=True)
        return
    with path.open("a", encoding="utf-8") as fh:
        fh.write(line + "\n")


def hold(seconds: float) -> str:
    """Wait until stdin reaches EOF (the notebook lets go of us) or ``seconds`` pass."""
    deadline = time.monotonic() + seconds
    stdin = sys.stdin
    while time.monotonic() < deadline:
        if stdin is None or stdin.closed or stdin.isatty():
            time.sleep(min(1.0, max(deadline - time.monotonic(), 0)))
            continue
        ready, _, _ = select.select([stdin], [], [], min(1.0, max(deadline - time.monotonic(), 0)))
        if ready and not os.read(stdin.fileno(), 4096):
            return "released"
    return "hold timed out"


def connect_on_subshell(connection_file: str, *, label: str, timeout: float) -> Any:
    """A ``kli.client`` connection whose shell messages go to a subshell of the kernel of its
    own (ipykernel 7's ``create_subshell_request``), so it attaches and calls tools while a
    cell runs: the notebook's log cell waits for this agent, headless runs included. Falls back
    to the main shell (calls then run between cells) where the kernel has no subshells."""
    import queue

    from jupyter_client.blocking.client import BlockingKernelClient

    from kli import client
    from kli.kernel.client.base import AgentClient
    from kli.kernel.client.zmq import ZmqTransport

    control = BlockingKernelClient(connection_file=connection_file)
    control.load_connection_file()
    control.start_channels()
    try:
        control.control_channel.send(control.session.msg("create_subshell_request", {}))
        reply = control.get_control_msg(timeout=30)
        subshell = reply["content"].get("subshell_id")
    except queue.Empty:
        subshell = None
    finally:
        control.stop_channels()
    if not subshell:
        return client.connect(connection_file, label=label, timeout=timeout)

    class SubshellTransport(ZmqTransport):
        def send_shell(self, msg_type: str, content: dict[str, Any]) -> str:
            msg = self.client.session.msg(msg_type, content)
            msg["header"]["subshell_id"] = subshell
            self.client.shell_channel.send(msg)
            return str(msg["header"]["msg_id"])

    kc = BlockingKernelClient(connection_file=connection_file)
    kc.load_connection_file()
    return AgentClient(SubshellTransport(kc), label=label, timeout=timeout)


def replay(agent: Any, transcript: dict[str, Any], *, delay: float, log_path: Path | None) -> bool:
    """Play every step on ``agent`` (a kli.client connection); True when every outcome matched
    the recording."""
    matched = True
    for number, step in enumerate(transcript["steps"], 1):
        time.sleep(delay)
        result = agent.call(step["tool"], step.get("args", {}))
        files = result.details.get("files") or []
        candidate = next((f.get("candidate") for f in files if f.get("candidate")), None)
        expected = step.get("recorded_ok")
        same = expected is None or expected == result.ok
        if "recorded_error" in step:  # and it failed the same way (a stale anchor, a preview…)
            same = same and step["recorded_error"] == result.details.get("error")
        matched = matched and same
        log(log_path, event="step", step=number, say=step.get("say", ""), tool=step["tool"],
            args=step.get("args", {}), ok=result.ok, matches_recording=same,
            candidate=candidate, text=result.text[:LOG_TEXT_CHARS])
    return matched


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Replay a recorded tool-call transcript.")
    parser.add_argument("transcript")
    parser.add_argument("--connection-file", required=True)
    parser.add_argument("--delay", type=float, default=1.0, help="seconds before each call")
    parser.add_argument("--log", type=Path, help="JSON-lines log (default: stdout)")
    parser.add_argument("--ready-file", type=Path, help="touched once the last step is done")
    parser.add_argument("--hold", type=float, default=1800.0,
                        help="seconds to stay attached after the last step (stdin EOF ends it)")
    parser.add_argument("--timeout", type=float, default=120.0, help="per-call timeout")
    ns = parser.parse_args(argv)
    agent = None
    try:
        transcript = json.loads(Path(ns.transcript).read_text(encoding="utf-8"))
        label = transcript.get("label", "REPLAY agent")
        agent = connect_on_subshell(ns.connection_file, label=label, timeout=ns.timeout)
        log(ns.log, event="attached", label=label, session=agent.session,
            note="REPLAY of a recorded transcript — no model is running")
        ok = replay(agent, transcript, delay=ns.delay, log_path=ns.log)
        log(ns.log, event="waiting", matches_recording=ok,
            note="the last step is done; staying attached so the preview stays pending")
    except (Exception, KeyboardInterrupt) as exc:  # reported in the log for the notebook to show
        log(ns.log, event="error", error=f"{type(exc).__name__}: {exc}")
        if agent is not None:
            agent.close()
        return 1
    finally:
        if ns.ready_file is not None:
            ns.ready_file.touch()
    try:
        how = hold(ns.hold)
    except KeyboardInterrupt:  # SIGINT to our process group (a kernel interrupt or shutdown)
        how = "interrupted"
    assert agent is not None
    agent.close()
    log(ns.log, event="closed", how=how)
    return 0 if ok else 2


if __name__ == "__main__":
    sys.exit(main())
