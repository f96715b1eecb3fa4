"""The ``kli.agent`` comm target with a real kernel (docs/protocol.md, "kli.agent")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kli.tools.file.anchors import line_hash
from kli.tools.registry import REGISTRY

pytestmark = pytest.mark.kernel

SAMPLE = "alpha = 1\nbeta = 2\ngamma = 3\n"

# Plausible values by argument name, so every registered tool can be called without knowing it.
_BY_NAME: dict[str, Any] = {
    "path": "sample.py", "pattern": "alpha", "command": "echo hi", "code": "1 + 1",
    "content": "alpha = 1\n", "input": "@@ sample.py\n", "old_str": "alpha = 1",
    "new_str": "alpha = 1", "source": "sample.py", "destination": "moved_sample.py",
    "query": "alpha", "name": "sample",
}


def sample_args(schema: dict[str, Any], main_arg: str | None) -> dict[str, Any]:
    """Arguments for every required parameter and the main one, typed from the schema."""
    props = schema.get("properties", {})
    args: dict[str, Any] = {}
    for name in dict.fromkeys([*schema.get("required", []), *([main_arg] if main_arg else [])]):
        prop = props.get(name, {})
        kind = prop.get("type")
        if "enum" in prop:
            args[name] = prop["enum"][0]
        elif kind == "string":
            args[name] = _BY_NAME.get(name, "sample")
        elif kind == "integer" or kind == "number":
            args[name] = prop.get("minimum", 1)
        elif kind == "boolean":
            args[name] = False
        elif kind == "array":
            item = prop.get("items", {})
            args[name] = [] if item.get("type") == "object" else ["sample.py"]
        elif kind == "object":
            args[name] = {}
    return args


@pytest.fixture(scope="module")
def agent(kernel: Any) -> str:
    comm_id, hello = kernel.open_comm("kli.agent", {"label": "test agent"})
    assert hello["op"] == "hello"
    return comm_id


def test_open_replies_hello_with_own_session_and_registry_tools(kernel: Any) -> None:
    comm_id, hello = kernel.open_comm("kli.agent", {"label": "hello test"})
    assert hello["v"] == 1 and hello["op"] == "hello" and hello["protocol"] == 1
    assert hello["label"] == "hello test"
    assert hello["session"].startswith("s")
    assert sorted(hello["tools"]) == sorted(REGISTRY.tools)
    kernel.close_comm(comm_id)


def test_ping_is_answered_with_pong_naming_the_id(kernel: Any, agent: str) -> None:
    reply = kernel.request(agent, {"op": "ping"})
    assert reply["op"] == "pong"


def test_list_returns_the_registry_specs_per_profile(kernel: Any, agent: str) -> None:
    for profile in ("kli", "slmcode"):
        reply = kernel.request(agent, {"op": "list", "profile": profile})
        assert reply["op"] == "specs"
        assert [s["name"] for s in reply["specs"]] == REGISTRY.names(profile)
        for spec in reply["specs"]:
            assert spec["parameters"] == REGISTRY.tools[spec["name"]].parameters
    everything = kernel.request(agent, {"op": "list", "profile": "all"})
    assert len(everything["specs"]) == len(REGISTRY.tools)


@pytest.mark.parametrize("tool", sorted(REGISTRY.tools))
def test_every_registered_tool_answers_through_the_comm(kernel: Any, kroot: Path, agent: str,
                                                        tool: str) -> None:
    (kroot / "sample.py").write_text(SAMPLE)
    ui, _ = kernel.open_comm("kli.ui", {"replay": 0})
    start = len(kernel.seen)
    args = sample_args(REGISTRY.tools[tool].parameters, REGISTRY.tools[tool].main_arg)
    reply = kernel.call(agent, tool, args)
    assert reply["op"] == "result"
    assert isinstance(reply["ok"], bool) and isinstance(reply["text"], str) and reply["text"]
    assert reply["details"].get("error") not in ("unknown_tool", "bad_arguments", "internal"), reply
    event = kernel.wait_for(lambda m: m["msg_type"] == "comm_msg"
                            and m["content"]["comm_id"] == ui
                            and m["content"]["data"].get("op") == "event", since=start)
    ev = event["content"]["data"]["event"]
    assert ev["tool"] == tool and ev["source"] == "agent" and ev["session_label"] == "test agent"
    assert ev["ok"] == reply["ok"] and ev["text"] == reply["text"]
    kernel.close_comm(ui)


def test_read_then_edit_through_the_comm_writes_the_file(kernel: Any, kroot: Path, agent: str) -> None:
    (kroot / "flow.py").write_text(SAMPLE)
    read = kernel.call(agent, "read", {"path": "flow.py"})
    assert read["ok"] and f"2:{line_hash('beta = 2')}|beta = 2" in read["text"]
    patch = f"@@ flow.py\n= 2:{line_hash('beta = 2')}..2:{line_hash('beta = 2')}\n~beta = 20\n"
    edited = kernel.call(agent, "edit", {"input": patch})
    assert edited["ok"], edited["text"]
    assert (kroot / "flow.py").read_text() == "alpha = 1\nbeta = 20\ngamma = 3\n"
    (change,) = edited["details"]["files"]
    assert change["status"] == "written" and change["before"] == SAMPLE


def test_bash_runs_in_the_kernel_working_directory(kernel: Any, kroot: Path, agent: str) -> None:
    reply = kernel.call(agent, "bash", {"command": "pwd; echo out; echo err >&2"})
    assert reply["ok"]
    assert str(kroot.resolve()) in reply["text"] and "out" in reply["text"]
    assert reply["details"]["exit_code"] == 0
    failing = kernel.call(agent, "bash", {"command": "exit 3"})
    assert not failing["ok"] and failing["details"]["exit_code"] == 3


def test_a_name_defined_in_a_cell_is_visible_to_agent_eval(kernel: Any, agent: str) -> None:
    content, _ = kernel.execute("from_cell = 41")
    assert content["status"] == "ok"
    reply = kernel.call(agent, "eval", {"code": "from_cell + 1"})
    assert reply["ok"] and "42" in reply["text"]


def test_a_name_defined_by_agent_eval_is_visible_to_a_cell(kernel: Any, agent: str) -> None:
    reply = kernel.call(agent, "eval", {"code": "from_agent = 'made by the agent'"})
    assert reply["ok"], reply["text"]
    content, outputs = kernel.execute("print(from_agent.upper())")
    assert content["status"] == "ok"
    assert any("MADE BY THE AGENT" in o["content"].get("text", "") for o in outputs)


def test_two_agents_have_separate_sessions_and_anchors(kernel: Any, kroot: Path) -> None:
    (kroot / "shared.py").write_text(SAMPLE)
    a, hello_a = kernel.open_comm("kli.agent", {"label": "agent A"})
    b, hello_b = kernel.open_comm("kli.agent", {"label": "agent B"})
    assert hello_a["session"] != hello_b["session"]
    assert kernel.call(a, "read", {"path": "shared.py"})["ok"]
    patch = f"@@ shared.py\n= 1:{line_hash('alpha = 1')}..1:{line_hash('alpha = 1')}\n~alpha = 10\n"
    refused = kernel.call(b, "edit", {"input": patch})
    assert not refused["ok"] and "read" in refused["text"].lower()
    assert (kroot / "shared.py").read_text() == SAMPLE
    accepted = kernel.call(a, "edit", {"input": patch})
    assert accepted["ok"], accepted["text"]
    assert (kroot / "shared.py").read_text().startswith("alpha = 10\n")
    kernel.close_comm(a)
    kernel.close_comm(b)


def test_a_tool_error_is_a_result_and_the_kernel_stays_up(kernel: Any, agent: str) -> None:
    reply = kernel.call(agent, "eval", {"code": "raise ValueError('boom')"})
    assert reply["op"] == "result" and not reply["ok"] and "ValueError" in reply["text"]
    reply = kernel.call(agent, "read", {"path": "../../etc/passwd"})
    assert not reply["ok"]
    kernel.alive_check()
