"""The request envelope every host of the tools parses the same way: ``kli serve --stdio`` (a
JSON line) and the kernel's ``kli.agent`` / ``kli.ui`` comms (a comm message's data).

``parse_request`` turns a decoded request into a ``Request`` or a ``BadRequest`` (an error code
of docs/protocol.md and the text that says what was wrong and how to retry); each host only
frames the answer its own way. Pure: nothing here runs a tool. The envelope's version and the
agent comm target live here too, so the agent client (which may not import the kernel package)
and the kernel read them from one place.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from kli.tools.core import approval

PROTOCOL_VERSION = 1  # ``v`` of every message (kli.kernel.protocol lists it with the rest)
AGENT_TARGET = "kli.agent"  # the comm target an agent opens on a kernel (kli.kernel.client)
# kli.agent and serve --stdio (which answers one line at a time: a cancel there finds nothing)
AGENT_OPS = ("call", "list", "ping", "reach", "cancel")
UI_OPS = ("accept", "reject", "replay", "bulk", "approval", "undo", "changes",  # kli.ui
          "sandbox")
DEFAULT_OP = "call"  # an agent request without ``op``
DEFAULT_PROFILE = "kli"  # ``list`` without ``profile``

BAD_JSON = "bad_json"
BAD_REQUEST = "bad_request"
UNKNOWN_OP = "unknown_op"

EXAMPLE = '{"id": 1, "op": "call", "tool": "read", "args": {"path": "a.py"}}'


@dataclass(frozen=True)
class Request:
    """A well-formed request: its ``id``, ``op`` and the fields that op takes."""

    id: str | int
    op: str
    tool: str = ""
    args: dict[str, Any] = field(default_factory=dict)
    profile: str = DEFAULT_PROFILE
    data: dict[str, Any] = field(default_factory=dict)  # the whole request, for op-specific fields


@dataclass(frozen=True)
class BadRequest:
    """Why a request cannot be served: ``error`` is the code, ``text`` the fix."""

    id: str | int | None
    error: str
    text: str


def valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def decode_line(line: str) -> Any | BadRequest:
    """One JSON line of ``serve --stdio`` decoded, or the ``bad_json`` answer."""
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        return BadRequest(
            None,
            BAD_JSON,
            f"request is not valid JSON ({exc.msg} at column {exc.colno}); send one JSON object "
            f"per line, e.g. {EXAMPLE}.",
        )


def parse_request(
    data: Any, profiles: Collection[str], ops: tuple[str, ...] = AGENT_OPS
) -> Request | BadRequest:
    """``data`` (decoded JSON) as a request of one of ``ops``; ``profiles`` are the names
    ``list`` accepts (``kli.tools.registry.PROFILE_CHOICES``). Agent ops default to ``call``;
    UI requests name theirs."""
    if not isinstance(data, dict):
        return BadRequest(
            None,
            BAD_JSON,
            f"request must be a JSON object, got {type(data).__name__}; send e.g. {EXAMPLE}.",
        )
    rid: str | int = data.get("id")  # type: ignore[assignment]  # checked next
    if not valid_id(rid):
        return BadRequest(
            None,
            BAD_REQUEST,
            "request needs an 'id' (string or integer) that the reply will name; resend with one.",
        )
    op = data.get("op", DEFAULT_OP if DEFAULT_OP in ops else None)
    if op not in ops:
        return BadRequest(rid, UNKNOWN_OP, f"unknown op {op!r}; use one of {', '.join(ops)}.")
    if op == "list":
        profile = data.get("profile", DEFAULT_PROFILE)
        if profile not in profiles:
            return BadRequest(
                rid,
                BAD_REQUEST,
                f"'profile' must be one of {', '.join(profiles)}, got {profile!r}.",
            )
        return Request(rid, op, profile=profile, data=data)
    if op == "call":
        tool = data.get("tool")
        if not isinstance(tool, str) or not tool:
            return BadRequest(
                rid,
                BAD_REQUEST,
                "a call needs 'tool', a string naming the tool; list the tools with op 'list'.",
            )
        args = data.get("args")
        if args is not None and not isinstance(args, dict):
            return BadRequest(
                rid,
                BAD_REQUEST,
                f"'args' must be a JSON object of the tool's arguments, got {type(args).__name__}.",
            )
        review = data.get("review")
        if review is not None and not (
            isinstance(review, dict)
            and all(k in approval.ACTIONS and isinstance(v, list)
                    and all(isinstance(n, str) for n in v) for k, v in review.items())
        ):
            return BadRequest(
                rid,
                BAD_REQUEST,
                "'review' must map action kinds (" + ", ".join(approval.ACTIONS) + ") to lists "
                "of notebook names.",
            )
        return Request(rid, op, tool=tool, args=args or {}, data=data)
    if op == "cancel" and not valid_id(data.get("request")):
        return BadRequest(
            rid,
            BAD_REQUEST,
            "cancel needs 'request', the id (string or integer) of the running request to stop.",
        )
    if op in ("accept", "reject"):
        cid = data.get("candidate")
        if not isinstance(cid, str) or not cid:
            return BadRequest(
                rid,
                BAD_REQUEST,
                f"{op} needs 'candidate', the candidate id string of a pending repair preview.",
            )
        note = data.get("note")
        if note is not None and not isinstance(note, str):
            return BadRequest(rid, BAD_REQUEST, "'note' must be a string (a short note for the "
                              "agent).")
    if op == "bulk":
        if data.get("action") not in approval.BULK_ACTIONS:
            return BadRequest(rid, BAD_REQUEST, "bulk needs 'action', \"accept\" or \"reject\", "
                              "and optionally 'session' or 'path' (strings) to narrow it.")
        for key in ("session", "path", "note"):
            if data.get(key) is not None and not isinstance(data.get(key), str):
                return BadRequest(rid, BAD_REQUEST, f"bulk: '{key}' must be a string.")
    if op == "approval":
        mode, keep = data.get("mode"), data.get("keep")
        if (mode not in approval.MODES and (mode is not None or keep is None)) or (
            data.get("kind") is not None and data.get("kind") not in approval.ACTIONS
        ) or (keep is not None and not isinstance(keep, bool)):
            return BadRequest(rid, BAD_REQUEST, "approval needs 'mode', \"auto\" or \"review\", "
                              "and optionally 'kind': \"file\", \"shell\" or \"eval\", and "
                              "'keep' (a boolean; with 'keep' alone, 'mode' may be left out).")
    if op == "undo":
        wanted = [k for k in ("change", "session", "since") if data.get(k) is not None]
        if not wanted or any(not isinstance(data[k], str) for k in wanted) or (
            data.get("force") is not None and not isinstance(data.get("force"), bool)
        ):
            return BadRequest(rid, BAD_REQUEST, "undo needs 'change' (a change id), or 'session' "
                              "and 'since' (strings), and optionally 'force' (a boolean).")
    if op == "changes" and (
        (data.get("session") is not None and not isinstance(data.get("session"), str))
        or (data.get("limit") is not None and not (
            isinstance(data.get("limit"), int) and not isinstance(data.get("limit"), bool)
            and data["limit"] > 0))
    ):
        return BadRequest(rid, BAD_REQUEST, "changes takes optionally 'session' (a string) and "
                          "'limit' (a positive integer).")
    return Request(rid, op, data=data)
