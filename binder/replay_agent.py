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
discard its session, and the preview with it.
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
        from kli import client

        label = transcript.get("label", "REPLAY agent")
        agent = client.connect(ns.connection_file, label=label, timeout=ns.timeout)
        log(ns.log, event="attached", label=label, session=agent.session,
            note="REPLAY of a recorded transcript — no model is running")
        ok = replay(agent, transcript, delay=ns.delay, log_path=ns.log)
        log(ns.log, event="waiting", matches_recording=ok,
            note="the last step is done; staying attached so the preview stays pending")
    except Exception as exc:  # reported in the log for the notebook to show
        log(ns.log, event="error", error=f"{type(exc).__name__}: {exc}")
        if agent is not None:
            agent.close()
        return 1
    finally:
        if ns.ready_file is not None:
            ns.ready_file.touch()
    how = hold(ns.hold)
    assert agent is not None
    agent.close()
    log(ns.log, event="closed", how=how)
    return 0 if ok else 2


if __name__ == "__main__":
    sys.exit(main())
