"""``await_decision``: wait for a person's decision on a pending proposal (approval mode, or a
repair preview), up to a timeout, and return the outcome (``kli.tools.core.approval``).

It changes nothing and touches no image, so in the kernel it runs where file tools run (a
subshell), never holding up a cell or the session's other calls while it waits."""

from __future__ import annotations

import time
from typing import Any

from kli.tools.core import approval
from kli.tools.core.registry import AGENT, Call, Tool
from kli.tools.core.result import ToolError, ToolResult

DEFAULT_TIMEOUT = 60.0


def run(call: Call) -> ToolResult:
    ws, pid = call.ws, call.args["id"]
    timeout = min(max(float(call.args.get("timeout", DEFAULT_TIMEOUT)), 0.0), approval.MAX_WAIT)
    deadline = time.monotonic() + timeout
    with ws.decisions:
        while True:
            done = ws.decided.get(pid)
            if done is not None:
                _own(call, done)
                break
            pending = ws.find_candidate(pid)
            if pending is None:
                raise ToolError(
                    f"no proposal {pid!r}: it is neither pending nor recently decided. Use the "
                    "id a held call's result named (p1, c2…).",
                    error="unknown_candidate",
                    candidate=pid,
                )
            _own(call, pending)
            left = deadline - time.monotonic()
            if left <= 0:
                return ToolResult.success(
                    f"Proposal {pid} is still pending after {timeout:g} s"
                    + (f" ({pending.expired})" if pending.expired else "")
                    + ". Go on with other work, or call await_decision again.",
                    candidate=pid,
                    status="pending",
                )
            ws.decisions.wait(min(left, 1.0))
    approval.take_notice(call.session, pid)
    d = done.decision
    assert d is not None
    return ToolResult.success(
        approval.outcome_text(done),
        candidate=pid,
        status=d.code,
        resolved=d.to_json(pid),
        note=d.note or None,
    )


def _own(call: Call, proposal: Any) -> None:
    """An agent waits only for its own session's proposals: another session's (another
    chat's) outcome and the person's note meant for it are not this agent's to read."""
    if call.source == AGENT and proposal.session_id != call.session.id:
        raise ToolError(
            f"proposal {proposal.id} is another session's, not one of this session's calls: "
            "await_decision waits only for the proposals of your own calls. Nothing was waited "
            "for.",
            error="not_your_proposal",
            candidate=proposal.id,
        )


TOOL = Tool(
    name="await_decision",
    profile="kli",
    gate=None,
    description=(
        "Wait for a person's decision on a pending proposal: a call held for review (approval "
        "mode) or a repair preview. Returns when it is accepted, rejected (with the person's "
        "note, if any) or refused, or after timeout seconds with status pending."
    ),
    parameters={
        "type": "object",
        "properties": {
            "id": {"type": "string", "description": "The proposal id a result named (p3, c2)."},
            "timeout": {
                "type": "number",
                "description": f"Seconds to wait at most (default {DEFAULT_TIMEOUT:g}, up to "
                f"{approval.MAX_WAIT:g}).",
                "minimum": 0,
            },
        },
        "required": ["id"],
        "additionalProperties": False,
    },
    run=run,
    main_arg="id",
    touches_image=False,
    waits=True,
)
