"""``undo``: take back a recorded change, or everything a session did since a time
(``kli.tools.core.undo`` keeps the timeline and puts the bytes back)."""

from __future__ import annotations

import contextlib
from typing import Any

from kli.tools.core import approval, undo
from kli.tools.core.registry import GATE_WRITE, Call, Tool
from kli.tools.core.result import ToolError, ToolResult


def _since(value: Any) -> float:
    """``since`` as a time: epoch seconds, ``HH:MM[:SS]`` today (local), or ISO 8601."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    text = str(value).strip()
    import datetime as dt

    with contextlib.suppress(ValueError):
        return float(text)
    try:
        if len(text) <= 8 and ":" in text:
            clock = dt.time.fromisoformat(text)
            return dt.datetime.combine(dt.date.today(), clock).timestamp()
        return dt.datetime.fromisoformat(text).timestamp()
    except ValueError:
        raise ToolError(f"undo: since={text!r} is not a time; give HH:MM (today), an ISO 8601 "
                        "time, or epoch seconds.", error="bad_arguments") from None


def run_undo(call: Call) -> ToolResult:
    args = call.args
    all_changes = undo.timeline(call.ws.root)
    if args.get("change"):
        targets = [c for c in all_changes if c.id == args["change"]]
        if not targets:
            raise ToolError(f"undo: no recorded change {args['change']!r}; list them with changes.",
                            error="not_found")
    elif args.get("since") is not None or args.get("session"):
        if args.get("since") is None or not args.get("session"):
            raise ToolError("undo: since needs session too (whose changes to take back), e.g. "
                            "undo session=agent since=10:30.", error="bad_arguments")
        start = _since(args["since"])
        taken = undo.undone_by(all_changes)  # what is undone already is not taken back twice
        targets = [c for c in all_changes if undo.of_session(c, args["session"]) and c.time >= start
                   and c.id not in taken]
        named = {c.session: c for c in targets}  # the newest change of each session
        if len(named) > 1:  # one label, several sessions (two kernels' magics on one root)
            since = args["since"]
            raise ToolError(
                f"undo: session={args['session']!r} names {len(named)} sessions, whose changes "
                "would all be taken back. Nothing was undone; repeat with the id of the one "
                "you mean:\n" + "\n".join(
                    f"  undo session={sid} since={since}   # {c.who()}"
                    for sid, c in sorted(named.items())),
                error="ambiguous", sessions=sorted(named))
    else:
        raise ToolError("undo needs change=<id>, or session=<label> since=<time>. List the "
                        "changes with changes.", error="bad_arguments")
    return undo.take_back(call, targets, bool(args.get("force")), "undo")


FORCE = {"type": "boolean", "description": "Undo even though a file changed since (a person confirmed)."}

TOOL = Tool(
    name="undo",
    profile="kli",
    gate=GATE_WRITE,
    description="Take back a recorded change (change=<id> from changes), or everything a session "
    "did since a time (session=<id or label> since=HH:MM; changes names each session's id, which "
    "a label shared by several sessions needs). Refused, naming the file, when a file "
    "changed since; force=true overrides. An undo is itself a change (redo takes it back).",
    parameters={"type": "object", "properties": {
        "change": {"type": "string", "description": "A change id (ch-…)."},
        "session": {"type": "string", "description": "Session id or label (with since)."},
        "since": {"type": "string", "description": "HH:MM today, ISO 8601, or epoch seconds."},
        "force": FORCE,
    }, "additionalProperties": False},
    run=run_undo,
    main_arg="change",
    mutates=True,
    touches_image=False,
    image_when=undo.reaches_parts,  # a change holding a live image part: after a running cell
    action=approval.FILE,
)
