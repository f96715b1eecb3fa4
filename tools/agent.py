"""A reference agent loop over kli's tools, keeping slmcode's two harness invariants.

    from kli.tools import Workspace
    from kli.tools.agent import run_agent

    run = run_agent("calc.add is wrong; fix it", model, Workspace("."), profile="slmcode")
    print(run.answer)

The roles (``Model`` and ``Host``, defined in ``kli.tools.roles``):

- ``model(messages, tools)`` is one OpenAI-compatible chat-completions call and returns the
  response as a dict. ``tools`` is the function list in OpenAI's strict format
  (``kli.tools.core.formats``: every parameter required, optional ones nullable), or None when
  the loop asks for the final answer and no tool may be called. A real endpoint, a local
  server, or a test's stand-in. A ``null`` the model sends for an optional parameter is taken
  as "absent" (the tool's default applies).
- The host runs the tools: anything with ``call(name, args) -> ToolResult`` and
  ``specs(profile)`` — a ``Workspace`` in process, or a ``kli.client`` kernel connection (the
  calls then run in that kernel and show in its notebook).

The loop (spec/slmcode-aci.txt, "Two further invariants come from pkg/agents"):

- **One tool call per turn.** An assistant message is truncated to its first tool call before
  it joins the conversation; the extra calls do not run, and the tool result says how many
  were dropped so the model learns to send one.
- **Never end on a tool call.** When the model stops without an answer (empty text) or the
  turn budget runs out, the loop asks once more, offering no tools, for the final answer; a
  reply that still has no text ends the run with ``answer`` None and ``stopped`` saying why.

The system prompt (``system_prompt``) states both invariants; for the slmcode profile it adds
the edit contract with its worked example and repair (``kli.tools.ws.contract``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kli.tools.core.formats import absent_nulls, in_format
from kli.tools.core.result import ToolResult
from kli.tools.roles import Host, Model
from kli.tools.ws.contract import EDIT_CONTRACT, TURN_RULES

DEFAULT_MAX_TURNS = 20

KLI_EDIT_RULES = """\
Editing files:
- read a file before you edit it; edit with the LINE:HH anchors read shows, and read again \
when an edit reports a stale anchor.
- Check a change by running it (bash, or eval in the live Python image)."""

INTRO = (
    "You are a careful coding agent working in a project folder through tools. Each tool result "
    "says how to retry when something fails."
)

FINAL_REQUEST = (
    "Do not call a tool now. Reply with your final answer in plain text: what you did, what you "
    "found, and what is left."
)
FINAL_AFTER_BUDGET = "The turn budget ({turns} turns) is used up. " + FINAL_REQUEST
FINAL_AFTER_SILENCE = "Your last reply was empty. " + FINAL_REQUEST


def dropped_note(dropped: list[str]) -> str:
    """Appended to a tool result when the message asked for more than one call."""
    return (
        f"\n[one tool call per turn: only the first call ran; {len(dropped)} more "
        f"({', '.join(dropped)}) were dropped — send them one at a time if still needed]"
    )


def system_prompt(profile: str = "kli") -> str:
    """The system prompt for an agent using ``profile``'s tools: kli, slmcode or all."""
    parts = {
        "kli": [KLI_EDIT_RULES, TURN_RULES],
        "slmcode": [EDIT_CONTRACT],
        "all": [KLI_EDIT_RULES, EDIT_CONTRACT],
    }.get(profile)
    if parts is None:
        from kli.tools.registry import unknown_profile

        raise ValueError(unknown_profile(profile))
    return "\n\n".join([INTRO, *parts])


@dataclass
class Step:
    """One tool call the loop made (or refused to make, for arguments that are not JSON)."""

    turn: int
    tool: str
    args: dict[str, Any] | None
    result: ToolResult
    dropped: list[str] = field(default_factory=list)


@dataclass
class AgentRun:
    """What a run did. ``stopped`` is "answered" (on its own), "answered when asked" (after
    the loop's final request) or "no answer"; ``messages`` is the conversation as sent to the
    model, with the final reply."""

    answer: str | None
    stopped: str
    turns: int
    steps: list[Step]
    messages: list[dict[str, Any]]

    @property
    def dropped_calls(self) -> int:
        return sum(len(step.dropped) for step in self.steps)


def _message(response: dict[str, Any]) -> dict[str, Any]:
    try:
        message = response["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        raise ValueError(
            "the model's response has no choices[0].message; model(messages, tools) must return "
            f"a chat-completions response dict (got {str(response)[:200]!r})"
        ) from None
    if not isinstance(message, dict):
        raise ValueError(f"choices[0].message is not an object: {message!r}")
    calls = message.get("tool_calls")
    if calls is not None and not (
        isinstance(calls, list) and all(isinstance(c, dict) for c in calls)
    ):
        raise ValueError(f"choices[0].message.tool_calls is not a list of objects: {calls!r}")
    return message


def _arguments(raw: Any) -> tuple[dict[str, Any] | None, str | None]:
    """The call's arguments as a dict, or the text telling the model what was wrong."""
    if isinstance(raw, dict):
        return raw, None
    if raw is None or raw == "":
        return {}, None
    try:
        args = json.loads(raw)
    except (TypeError, json.JSONDecodeError) as exc:
        return None, f"arguments are not valid JSON ({exc}); send a JSON object. Nothing was run."
    if not isinstance(args, dict):
        return None, "arguments must be a JSON object, not " + type(args).__name__ + "."
    return args, None


def run_agent(
    task: str,
    model: Model,
    host: Host,
    *,
    profile: str = "kli",
    max_turns: int = DEFAULT_MAX_TURNS,
    system: str | None = None,
    on_step: Callable[[Step], None] | None = None,
) -> AgentRun:
    """Run ``task`` to a final answer; see the module docstring.

    ``system`` replaces ``system_prompt(profile)``. ``on_step`` is called after every tool call
    (a notebook prints progress with it). Raises ``ValueError`` when a model response does not
    have the chat-completions shape. A failing tool is a result the model sees, never an
    exception; the host's own errors (a kernel that died, a request that timed out) propagate.
    """
    if max_turns < 1:
        raise ValueError(f"max_turns must be at least 1 (got {max_turns})")
    specs = host.specs(profile)
    tools = in_format(specs, "openai")
    schemas = {spec["name"]: spec.get("parameters") or {} for spec in specs}
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system if system is not None else system_prompt(profile)},
        {"role": "user", "content": task},
    ]
    steps: list[Step] = []
    final_request = FINAL_AFTER_BUDGET.format(turns=max_turns)
    turn = 0
    while turn < max_turns:
        turn += 1
        message = _message(model(messages, tools))
        calls = message.get("tool_calls") or []
        content = message.get("content")
        if not calls:
            if isinstance(content, str) and content.strip():
                messages.append({"role": "assistant", "content": content})
                return AgentRun(content, "answered", turn, steps, messages)
            messages.append({"role": "assistant", "content": content or ""})
            final_request = FINAL_AFTER_SILENCE
            break
        first, extra = calls[0], calls[1:]
        messages.append({"role": "assistant", "content": content, "tool_calls": [first]})
        function = first.get("function") or {}
        name = str(function.get("name") or "")
        args, problem = _arguments(function.get("arguments"))
        if problem is not None:
            result = ToolResult.error(problem, error="bad_arguments")
        else:
            args = absent_nulls(args, schemas.get(name, {}))
            result = host.call(name, args)
        dropped = [str((c.get("function") or {}).get("name") or "?") for c in extra]
        text = result.text + (dropped_note(dropped) if dropped else "")
        messages.append({"role": "tool", "tool_call_id": first.get("id", ""), "content": text})
        step = Step(turn, name, args, result, dropped)
        steps.append(step)
        if on_step is not None:
            on_step(step)

    # Never end on a tool call: one more turn, with no tools offered.
    messages.append({"role": "user", "content": final_request})
    message = _message(model(messages, None))
    content = message.get("content")
    answered = isinstance(content, str) and content.strip()
    # Calls in this reply are not run, and not kept: every kept call has its result.
    messages.append({"role": "assistant", "content": content or ""})
    if answered:
        assert isinstance(content, str)
        return AgentRun(content, "answered when asked", turn + 1, steps, messages)
    return AgentRun(None, "no answer", turn + 1, steps, messages)
