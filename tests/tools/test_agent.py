"""kli.tools.agent: one tool call per turn, never end on a tool call, errors as results.

The models here are scripted stand-ins for a remote chat-completions endpoint (which cannot
run here); they answer from a fixed script. The tools they call are real, on a real workspace.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kli.tools import Workspace
from kli.tools.agent import (
    FINAL_AFTER_SILENCE,
    AgentRun,
    Step,
    dropped_note,
    run_agent,
    system_prompt,
)
from kli.tools.ws.contract import EDIT_CONTRACT

Reply = Callable[[list[dict[str, Any]], list[dict[str, Any]] | None], dict[str, Any]]


def reply(content: str | None = None, *calls: tuple[str, Any]) -> dict[str, Any]:
    """A chat-completions response; each call is (tool name, arguments — a dict or raw text)."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {
                    "name": name,
                    "arguments": args if isinstance(args, str) else json.dumps(args),
                },
            }
            for i, (name, args) in enumerate(calls)
        ]
    return {"choices": [{"message": message}]}


class StandIn:
    """A scripted stand-in for a model (NOT a model): answers ``script[i]`` on its i-th call
    and records what it was sent."""

    def __init__(self, *script: dict[str, Any] | Reply) -> None:
        self.script = list(script)
        self.sent: list[tuple[list[dict[str, Any]], list[dict[str, Any]] | None]] = []

    def __call__(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> dict[str, Any]:
        self.sent.append(([dict(m) for m in messages], tools))
        step = self.script[min(len(self.sent), len(self.script)) - 1]
        return step(messages, tools) if callable(step) else step


def test_only_the_first_tool_call_of_a_message_runs(ws: Workspace, root: Path) -> None:
    model = StandIn(
        reply(
            None,
            ("write", {"path": "first.txt", "content": "1\n"}),
            ("write", {"path": "second.txt", "content": "2\n"}),
            ("bash", {"command": "touch third.txt"}),
        ),
        reply("done"),
    )
    run = run_agent("make files", model, ws)
    assert (root / "first.txt").exists()
    assert not (root / "second.txt").exists() and not (root / "third.txt").exists()
    assert run.answer == "done" and run.stopped == "answered" and run.dropped_calls == 2
    assistant = run.messages[2]
    assert [c["function"]["name"] for c in assistant["tool_calls"]] == ["write"]
    tool_message = run.messages[3]
    assert tool_message["tool_call_id"] == "call_0"
    assert tool_message["content"].endswith(dropped_note(["write", "bash"]))
    assert "only the first call ran; 2 more (write, bash) were dropped" in tool_message["content"]


def test_every_kept_tool_call_has_its_result_in_the_conversation(ws: Workspace) -> None:
    model = StandIn(
        reply(None, ("find", {"pattern": "*"}), ("find", {"pattern": "**"})),
        reply(None, ("bash", {"command": "echo hi"})),
        reply("finished"),
    )
    run = run_agent("look", model, ws)
    ids = [c["id"] for m in run.messages if m.get("tool_calls") for c in m["tool_calls"]]
    answered = [m["tool_call_id"] for m in run.messages if m["role"] == "tool"]
    assert ids == answered == ["call_0", "call_0"]
    assert [s.tool for s in run.steps] == ["find", "bash"]


def test_a_model_that_keeps_calling_tools_is_asked_for_the_answer_without_tools(
    ws: Workspace,
) -> None:
    def calls_while_it_can(
        messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> dict[str, Any]:
        if tools is None:
            return reply("ran out of turns; echo works")
        return reply(None, ("bash", {"command": f"echo {len(messages)}"}))

    model = StandIn(calls_while_it_can)
    run = run_agent("loop", model, ws, max_turns=3)
    assert len(run.steps) == 3 and all(s.result.ok for s in run.steps)
    assert run.answer == "ran out of turns; echo works"
    assert run.stopped == "answered when asked" and run.turns == 4
    final_messages, final_tools = model.sent[-1]
    assert final_tools is None
    assert final_messages[-1]["role"] == "user"
    assert "turn budget (3 turns) is used up" in final_messages[-1]["content"]
    assert all(tools is not None for _, tools in model.sent[:-1])


def test_a_tool_call_in_reply_to_the_final_request_is_not_run(ws: Workspace, root: Path) -> None:
    def always_calls(
        messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> dict[str, Any]:
        name = "turn.txt" if tools is not None else "final.txt"
        return reply(None, ("bash", {"command": f"touch {name}"}))

    model = StandIn(always_calls)
    run = run_agent("never answers", model, ws, max_turns=1)
    assert run.answer is None and run.stopped == "no answer" and len(model.sent) == 2
    assert (root / "turn.txt").exists() and not (root / "final.txt").exists()
    assert len(run.steps) == 1
    assert run.messages[-1] == {"role": "assistant", "content": ""}


def test_an_empty_reply_after_tool_use_is_asked_for_the_answer(ws: Workspace) -> None:
    model = StandIn(
        reply(None, ("bash", {"command": "true"})),
        reply(""),
        reply("all good"),
    )
    run = run_agent("check", model, ws)
    assert run.answer == "all good" and run.stopped == "answered when asked"
    last_messages, last_tools = model.sent[-1]
    assert last_tools is None and last_messages[-1]["content"] == FINAL_AFTER_SILENCE


def test_arguments_that_are_not_json_are_a_result_and_nothing_runs(
    ws: Workspace, root: Path
) -> None:
    model = StandIn(reply(None, ("write", '{"path": "x.txt", "content": ')), reply("gave up"))
    run = run_agent("write", model, ws)
    step = run.steps[0]
    assert not step.result.ok and step.args is None
    assert "arguments are not valid JSON" in run.messages[3]["content"]
    assert "Nothing was run." in run.messages[3]["content"]
    assert not (root / "x.txt").exists()
    assert run.answer == "gave up"


def test_arguments_given_as_an_object_or_empty_are_accepted(ws: Workspace, root: Path) -> None:
    (root / "a.py").write_text("x = 1\n")
    message = reply(None, ("find", "x"))
    message["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = {"pattern": "*.py"}
    run = run_agent(
        "find", StandIn(message, reply(None, ("ws_todo", "")), reply("ok")), ws, profile="all"
    )
    assert run.steps[0].result.ok and "a.py" in run.steps[0].result.text
    assert run.steps[1].args == {}


def test_an_unknown_tool_is_an_error_result_the_model_sees(ws: Workspace) -> None:
    model = StandIn(reply(None, ("reed", {"path": "a"})), reply("sorry"))
    run = run_agent("read", model, ws)
    assert not run.steps[0].result.ok
    assert "unknown tool 'reed'. Did you mean read" in run.messages[3]["content"]


def test_on_step_sees_each_call_as_it_happens(ws: Workspace) -> None:
    seen: list[Step] = []
    model = StandIn(reply(None, ("bash", {"command": "echo one"})), reply("done"))
    run_agent("go", model, ws, on_step=seen.append)
    assert [(s.turn, s.tool, s.result.ok) for s in seen] == [(1, "bash", True)]
    assert "one" in seen[0].result.text


def test_the_model_is_offered_the_profiles_tools_and_prompt(ws: Workspace) -> None:
    model = StandIn(reply("nothing to do"))
    run_agent("hi", model, ws, profile="slmcode")
    messages, tools = model.sent[0]
    assert tools is not None
    assert [t["function"]["name"] for t in tools] == [s["name"] for s in ws.specs("slmcode")]
    assert messages[0] == {"role": "system", "content": system_prompt("slmcode")}
    assert messages[1] == {"role": "user", "content": "hi"}


def test_system_prompts_per_profile() -> None:
    assert EDIT_CONTRACT in system_prompt("slmcode")
    kli = system_prompt("kli")
    assert "LINE:HH" in kli and "One tool call per turn." in kli and "ws_edit" not in kli
    both = system_prompt("all")
    assert "LINE:HH" in both and EDIT_CONTRACT in both
    with pytest.raises(ValueError, match=r"unknown profile 'x'; the profiles are kli, slmcode and all \(every tool\)"):
        system_prompt("x")


@pytest.mark.parametrize(
    "response",
    [
        {},
        {"choices": []},
        {"choices": [{"message": "text"}]},
        None,
        {"choices": [{"message": {"content": None, "tool_calls": ["read"]}}]},
        {"choices": [{"message": {"content": None, "tool_calls": {"name": "read"}}}]},
    ],
)
def test_a_response_not_shaped_like_chat_completions_raises_naming_the_shape(
    ws: Workspace, response: Any
) -> None:
    with pytest.raises(ValueError, match=r"choices\[0\]\.message"):
        run_agent("x", StandIn(response), ws)


def test_max_turns_must_be_positive(ws: Workspace) -> None:
    with pytest.raises(ValueError, match="max_turns must be at least 1"):
        run_agent("x", StandIn(reply("a")), ws, max_turns=0)


def test_a_run_is_plain_data(ws: Workspace) -> None:
    run = run_agent("x", StandIn(reply("answer")), ws)
    assert isinstance(run, AgentRun) and run.turns == 1 and run.steps == []
    json.dumps(run.messages)


def test_tools_are_offered_in_openai_strict_format_and_nulls_mean_absent(
        ws: Workspace, root: Path) -> None:
    (root / "a.py").write_text("x = 1\ny = 2\n")
    model = StandIn(
        reply(None, ("read", {"path": "a.py", "start": None, "end": None, "raw": None})),
        reply("done"),
    )
    run = run_agent("read a.py", model, ws)
    tools = model.sent[0][1]
    assert tools is not None
    read = next(t["function"] for t in tools if t["function"]["name"] == "read")
    assert read["strict"] is True and read["parameters"]["additionalProperties"] is False
    assert read["parameters"]["required"] == ["path", "start", "end", "raw"]
    assert read["parameters"]["properties"]["start"]["type"] == ["integer", "null"]
    step = run.steps[0]
    assert step.args == {"path": "a.py"} and step.result.ok
    assert step.result.text == ws.call("read", {"path": "a.py"}).text
