"""The ``kli`` console script: call, tools, prompt and serve --stdio, run as real processes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from kli.tools.registry import REGISTRY


def _kli(*args: str, stdin: str | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("kli", path=os.path.dirname(sys.executable))
    cmd = [exe] if exe else [sys.executable, "-m", "kli.tools.cli"]
    return subprocess.run([*cmd, *args], input=stdin, capture_output=True, text=True, cwd=cwd, timeout=60)


def test_tools_prints_specs_of_the_profile() -> None:
    for profile in ("kli", "slmcode"):
        out = _kli("tools", "--profile", profile)
        assert out.returncode == 0
        specs = json.loads(out.stdout)
        assert [s["name"] for s in specs] == REGISTRY.names(profile)


def test_prompt_prints_the_system_prompt_of_the_profile() -> None:
    from kli.tools.agent import system_prompt

    for profile in ("kli", "slmcode", "all"):
        out = _kli("prompt", "--profile", profile)
        assert out.returncode == 0 and out.stdout == system_prompt(profile) + "\n"
    assert "Worked repair" in _kli("prompt", "--profile", "slmcode").stdout
    bad = _kli("prompt", "--profile", "nope")
    assert bad.returncode == 2 and "invalid choice: 'nope'" in bad.stderr


def test_tools_all_lists_every_tool_and_an_unknown_profile_lists_the_profiles() -> None:
    specs = json.loads(_kli("tools", "--profile", "all").stdout)
    assert [s["name"] for s in specs] == REGISTRY.names()
    bad = _kli("tools", "--profile", "lisp")
    assert bad.returncode == 2 and "invalid choice: 'lisp'" in bad.stderr
    assert all(name in bad.stderr.split("choose from")[1] for name in ("kli", "slmcode", "all"))


def test_call_unknown_tool_prints_error_json_and_exits_nonzero(root: Path) -> None:
    out = _kli("call", "no_such_tool", "{}", "--root", str(root))
    assert out.returncode == 1
    result = json.loads(out.stdout)
    assert result["ok"] is False and "unknown tool" in result["text"]


def test_call_bad_json_is_an_error_result_not_a_crash(root: Path) -> None:
    out = _kli("call", "read", "{nope", "--root", str(root))
    assert out.returncode == 1
    assert json.loads(out.stdout)["details"]["error"] == "bad_json"


def test_call_read_prints_anchored_lines(root: Path) -> None:
    (root / "a.lisp").write_text("(defun hello ())\n")
    out = _kli("call", "read", json.dumps({"path": "a.lisp"}), "--root", str(root))
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["ok"] and "1:21|(defun hello ())" in result["text"]


def test_serve_answers_one_line_per_request_and_survives_garbage(root: Path) -> None:
    requests = [
        "this is not json",
        json.dumps([1, 2]),
        json.dumps({"id": 1, "op": "list", "profile": "kli"}),
        json.dumps({"id": 2, "op": "dance"}),
        json.dumps({"id": 3, "tool": 7}),
        json.dumps({"id": 4, "tool": "no_such_tool", "args": {}}),
        json.dumps({"id": 5, "op": "cancel", "request": 4}),
    ]
    out = _kli("serve", "--stdio", "--root", str(root), stdin="\n".join(requests) + "\n")
    assert out.returncode == 0, out.stderr
    replies = [json.loads(line) for line in out.stdout.splitlines()]
    assert len(replies) == len(requests)
    assert replies[0]["error"] == "bad_json" and replies[0]["ok"] is False
    assert replies[1]["error"] == "bad_json"  # not an object: the kernel comm's code too
    assert replies[2]["id"] == 1 and [s["name"] for s in replies[2]["specs"]] == REGISTRY.names("kli")
    assert replies[3] == {"id": 2, "ok": False, "error": "unknown_op", "text": replies[3]["text"]}
    assert replies[4]["error"] == "bad_request"
    assert replies[5]["id"] == 4 and replies[5]["details"]["error"] == "unknown_tool"
    # one line at a time: what a cancel names has already been answered
    assert replies[6] == {"id": 5, "ok": True, "op": "cancel", "request": 4, "found": False}


def test_serve_keeps_one_session_so_read_then_edit_works(root: Path) -> None:
    (root / "a.py").write_text("x = 1\n")
    from kli.tools.file.anchors import line_hash

    patch = f"@@ a.py\n= 1:{line_hash('x = 1')}..1:{line_hash('x = 1')}\n~x = 2\n"
    requests = [
        json.dumps({"id": "r", "tool": "read", "args": {"path": "a.py"}}),
        json.dumps({"id": "e", "tool": "edit", "args": {"input": patch}}),
    ]
    out = _kli("serve", "--stdio", "--root", str(root), stdin="\n".join(requests) + "\n")
    replies = [json.loads(line) for line in out.stdout.splitlines()]
    assert replies[1]["ok"], replies[1]["text"]
    assert (root / "a.py").read_text() == "x = 2\n"


def test_tools_format_prints_the_provider_shape() -> None:
    from kli.tools.core.formats import in_format
    from kli.tools.core.workspace import Workspace

    for fmt in ("openai", "anthropic", "mcp"):
        out = _kli("tools", "--profile", "slmcode", "--format", fmt)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout) == in_format(Workspace(".").specs("slmcode"), fmt)
    assert json.loads(_kli("tools", "--format", "openai").stdout)[0]["function"]["strict"] is True
