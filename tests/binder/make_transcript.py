"""Record the transcript that binder/watch_agent.ipynb replays.

    python tests/binder/make_transcript.py            # rewrite binder/agent_transcript.json
    python tests/binder/make_transcript.py --check    # exit 1 if the committed one is stale

The session is hand-scripted (there is no model): it runs against a real Workspace in a
temporary folder holding the transcript's sample files, and every anchor in it is taken from
the file as it is at that moment — so the recorded calls, and whether each succeeded, are what
the tools really answered. The replay checks each outcome against ``recorded_ok``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
TRANSCRIPT = ROOT / "binder" / "agent_transcript.json"
GREET = "demo/agent/greet.py"
# What the recording keeps of each result text (the replay shows the live text).
RECORDED_TEXT_CHARS = 600

FILES = {
    GREET: '''"""Greetings: the file the replayed agent works on."""

VERSION = "1.0"


def greet(name):
    return "Hello, " + name


def farewell(name):
    return "Bye, " + name
''',
    "demo/agent/bump_version.py": '''"""The project's release script: bumps VERSION in greet.py by one minor step."""
import pathlib
import re

path = pathlib.Path(__file__).with_name("greet.py")
text = path.read_text()
major, minor = re.search(r'VERSION = "(\\d+)\\.(\\d+)"', text).groups()
new = f"{major}.{int(minor) + 1}"
path.write_text(text.replace(f'VERSION = "{major}.{minor}"', f'VERSION = "{new}"'))
print(f"VERSION {major}.{minor} -> {new}")
''',
}


def record() -> dict[str, Any]:
    from kli.tools import Workspace
    from kli.tools.file.anchors import line_hash

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for rel, text in FILES.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text, encoding="utf-8")
        ws = Workspace(str(root), settings={"capabilities": None})
        session = ws.open_session("recording")
        steps: list[dict[str, Any]] = []

        def anchor(number: int) -> str:
            line = (root / GREET).read_text(encoding="utf-8").split("\n")[number - 1]
            return f"{number}:{line_hash(line)}"

        def step(say: str, tool: str, args: dict[str, Any]) -> None:
            result = ws.call(tool, args, session)
            steps.append({"say": say, "tool": tool, "args": args, "recorded_ok": result.ok,
                          "recorded_error": result.details.get("error"),
                          "recorded_text": result.text[:RECORDED_TEXT_CHARS]})

        step("Task: greetings should end with '!', and the module needs an AUTHOR. "
             "First, read the file.", "read", {"path": GREET})
        step("greet() builds its text with +; make it an f-string ending in '!'.", "edit",
             {"input": f"@@ {GREET}\n= {anchor(7)}\n~    return f\"Hello, {{name}}!\"\n"})
        planned_version_anchor = anchor(3)
        step("Bump the version with the project's release script.", "bash",
             {"command": "python demo/agent/bump_version.py"})
        step("Add AUTHOR after VERSION (anchor from my first read).", "edit",
             {"input": f"@@ {GREET}\n+ {planned_version_anchor}\n~AUTHOR = \"kli\"\n"})
        step("Stale: the release script changed the file since my first read. Re-read it.",
             "read", {"path": GREET})
        step("Insert AUTHOR after the fresh anchor of line 3.", "edit",
             {"input": f"@@ {GREET}\n+ {anchor(3)}\n~AUTHOR = \"kli\"\n"})
        step("Same '!' for farewell(), and a new shout() — typed too fast: one ')' is missing.",
             "edit", {"input": (
                 f"@@ {GREET}\n= {anchor(11)}..{anchor(12)}\n"
                 "~def farewell(name):\n"
                 "~    return f\"Bye, {name}!\"\n"
                 "~\n~\n"
                 "~def shout(name):\n"
                 "~    return greet(name.upper()\n")})
    return {
        "label": "REPLAY agent (recorded transcript)",
        "about": "A hand-scripted session recorded with tests/binder/make_transcript.py against "
                 "a real Workspace; replayed by binder/replay_agent.py. No model runs.",
        "files": FILES,
        "steps": steps,
    }


def _comparable(transcript: dict[str, Any]) -> Any:
    """What must not drift: the files, the calls, whether each succeeded and how it failed."""
    return {"files": transcript["files"],
            "steps": [(s["tool"], s["args"], s["recorded_ok"], s.get("recorded_error"))
                      for s in transcript["steps"]]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true")
    ns = parser.parse_args(argv)
    fresh = record()
    if ns.check:
        current = json.loads(TRANSCRIPT.read_text(encoding="utf-8"))
        if _comparable(current) != _comparable(fresh):
            print(f"{TRANSCRIPT} is stale; run python tests/binder/make_transcript.py",
                  file=sys.stderr)
            return 1
        return 0
    TRANSCRIPT.write_text(json.dumps(fresh, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {TRANSCRIPT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
