"""The slmcode profile's universal rules, applied around every ws_* / git_* call.

``before`` — the loop guard. Every slmcode call is recorded in its session's
``recent_calls`` (one key per call: the tool name and its arguments, canonical JSON), so each
session — each task, each agent connection — has its own history. A call is answered with an
intervention nudge instead of running when

- it is the ``LOOP_REPEAT_LIMIT``-th identical call in a row (default: the 3rd), or
- it is the ``LOOP_CYCLE_LIMIT``-th identical call among the last ``LOOP_CYCLE_WINDOW`` calls
  with no file-changing call (``Tool.mutates``) since the first of them — a read-a, read-b,
  read-a, read-b cycle that never changes anything.

Read-only and mutating calls both count. A nudged call is not run and not recorded; insisting
keeps being nudged (the identical calls before it are still there), and any different call
breaks the run. Calls from ``%kli`` magics (a person at a notebook) are not guarded.

``after`` — the result cap. Every result is cut to ``max_tool_chars`` (DefaultMaxToolChars,
8000) keeping its head and its tail, and the cut is marked with steering text that names the
total size and how to ask for less. A result may name where its full text was saved
(``details["full_output"]``, a root-relative path), which the marker repeats.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from kli.tools.core.registry import Call, Profile
from kli.tools.core.result import ToolError, ToolResult
from kli.tools.core.truncate import ends
from kli.tools.ws.common import call_setting

LOOP_REPEAT_LIMIT = 3
LOOP_CYCLE_LIMIT = 4
LOOP_CYCLE_WINDOW = 12
# A person re-running a notebook cell is not a model stuck in a loop.
UNGUARDED_SOURCES = frozenset({"magic"})

# How each tool's output can be narrowed, for the truncation marker.
_NARROW = {
    "ws_read": "page with offset= and limit= (ws_read returns a window of the file)",
    "ws_grep": "narrow with path=, glob= or a more specific pattern",
    "ws_glob": "use a more specific pattern or path=",
    "ws_list": "list a subdirectory, or use ws_glob with a pattern",
    "ws_shell": "make the command print less (e.g. pipe through head/tail or grep, run one test)",
    "git_diff": "pass path= to diff one file",
    "git_status": "pass path= to look at one folder",
}
_DEFAULT_NARROW = "ask for less (a narrower path or pattern)"

# Marker lines start with this, so tests and hosts can recognise a cut.
CUT_PREFIX = "… [result truncated:"


def call_key(name: str, args: dict[str, Any]) -> str:
    return json.dumps([name, args], sort_keys=True, ensure_ascii=False, default=repr)


def _entry(key: str, mutates: bool) -> str:
    return ("W" if mutates else "R") + key


def loop_verdict(history: Sequence[str], entry: str) -> str | None:
    """Why ``entry`` (about to be appended to ``history``) is a loop, or None.

    Pure, so the rule can be tested on its own: returns ``"repeat"`` or ``"cycle"``.
    """
    run = 1
    for previous in reversed(history):
        if previous != entry:
            break
        run += 1
    if run >= LOOP_REPEAT_LIMIT:
        return "repeat"
    window = list(history)[-(LOOP_CYCLE_WINDOW - 1) :]
    seen = [i for i, e in enumerate(window) if e == entry]
    if len(seen) + 1 >= LOOP_CYCLE_LIMIT:
        first = seen[-(LOOP_CYCLE_LIMIT - 1)]
        if not any(e.startswith("W") for e in window[first:]):
            return "cycle"
    return None


def _nudge(call: Call, verdict: str, count: int) -> ToolResult:
    name = call.tool.name
    shown = json.dumps(call.args, ensure_ascii=False, default=repr)
    if len(shown) > 200:
        shown = shown[:200] + "…"
    if verdict == "repeat":
        what = f"you have now made the identical call {name} {shown} {count} times in a row"
    else:
        what = (
            f"you keep coming back to the identical call {name} {shown} ({count} times in your "
            "last calls) without changing anything in between"
        )
    if call.tool.mutates:
        advice = (
            "The earlier identical call already ran; running it again cannot give a different "
            "result. Read its result above. If it failed, change the arguments (re-read the "
            "file with ws_read and copy the exact current text), or try a different tool."
        )
    else:
        advice = (
            "Its result is already above and will not change. Use what it told you and take the "
            "next step: a different file, offset or pattern, an edit, or your final answer."
        )
    return ToolResult.error(
        f"Loop guard: {what}. This call was not run. {advice}",
        error="loop_guard",
        loop=verdict,
        repeats=count,
    )


def before(call: Call) -> ToolResult | None:
    """Record the call in its session; answer it with a nudge when it repeats (see module)."""
    if call.source in UNGUARDED_SOURCES:
        return None
    entry = _entry(call_key(call.tool.name, call.args), call.tool.mutates)
    history = call.session.recent_calls
    verdict = loop_verdict(history, entry)
    count = 1 + sum(1 for e in list(history)[-(LOOP_CYCLE_WINDOW - 1) :] if e == entry)
    if verdict == "repeat":
        count = 1
        for previous in reversed(history):
            if previous != entry:
                break
            count += 1
    call.session.telemetry[f"calls.{call.tool.name}"] += 1
    if verdict is None:
        history.append(entry)
        return None
    call.session.telemetry["loop_guard"] += 1
    return _nudge(call, verdict, count)


def cap_text(text: str, limit: int, *, narrow: str, saved: str | None = None) -> str:
    """``text`` cut to at most ``limit`` characters, head and tail kept (``truncate.ends``),
    with a marker naming the total size. Cuts fall on line boundaries where one is near."""
    if len(text) <= limit:
        return text
    total = len(text)
    where = f" The full output is saved in {saved} (read it with ws_read/ws_grep)." if saved else ""

    def marker(dropped: int) -> str:
        return (
            f"\n{CUT_PREFIX} {dropped:,} of {total:,} characters cut from the middle; the full "
            f"result is {total:,} characters, over the {limit:,}-character cap (max_tool_chars). "
            f"To see the rest, {narrow}.{where}]\n"
        )

    room = limit - len(marker(total))
    if room < 20:  # a tiny cap: the marker alone
        return marker(total)[:limit]
    head, tail = ends(text, room, on_lines=True)
    return head.rstrip("\n") + marker(total - len(head) - len(tail)) + tail


def after(call: Call, result: ToolResult) -> ToolResult:
    """Cap ``result.text`` at ``max_tool_chars``; record the cut in ``details["truncated"]``."""
    try:
        limit = call_setting(call, "max_tool_chars")
    except ToolError as exc:
        return ToolResult.error(exc.message, **exc.details)
    if len(result.text) <= limit:
        return result
    saved = result.details.get("full_output")
    narrow = _NARROW.get(call.tool.name, _DEFAULT_NARROW)
    text = cap_text(
        result.text, limit, narrow=narrow, saved=saved if isinstance(saved, str) else None
    )
    details = dict(result.details)
    details["truncated"] = {"total_chars": len(result.text), "shown_chars": len(text), "cap": limit}
    return ToolResult(result.ok, text, details)


SLMCODE_PROFILE = Profile(
    "slmcode",
    title="the slmcode agent–computer interface (spec/slmcode-aci.txt)",
    before=before,
    after=after,
)
