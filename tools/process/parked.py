"""Parked evaluations: an ``eval`` with ``on_error: "interactive"`` whose exception is kept,
with the frames it unwound, for the agent to look into and then resume or end.

What Python can and cannot do here, said plainly: an exception has already unwound the frames
when Python hands it over, so nothing is suspended — no thread waits, no cell is blocked. What
is kept is the traceback, and with it every frame object and its local variables (as
IPython's ``%debug`` post-mortem keeps them). On a parked evaluation:

- ``eval_frame`` evaluates code in a chosen frame: the frame's globals, and a copy of its
  locals taken when it was parked (assignments land in that copy and are seen by the next
  ``eval_frame`` of the same frame; the frame itself has ended and never sees them).
- ``eval_continue`` with ``action: "retry"`` re-executes the remaining top-level statements of
  the evaluation starting at the one that failed, in the same namespace — for after the agent
  fixed what made it fail (redefined a function, created a file). With ``action: "value"`` the
  failing top-level statement is not run again: when it is ``NAME = …`` (names, possibly
  several, possibly annotated) the given value is bound to those names; when it is an
  expression statement the value stands as its value; then the statements after it run. It is
  a value in place of the failing *top-level statement*, not of the innermost call (that frame
  is gone). A new exception under either action parks the evaluation again, same id.
- ``eval_abort`` drops it (its frames are freed).

At most ``MAX_PARKED`` per session; each expires ``PARK_SECONDS`` after it was parked (expired
ones are dropped on the session's next park-related call); all go when the session ends.
"""

from __future__ import annotations

import ast
import itertools
import linecache
import time
import types
from dataclasses import dataclass, field
from typing import Any

from kli.tools.core.registry import Call
from kli.tools.core.result import ToolError, ToolResult
from kli.tools.core.session import Session
from kli.tools.process import eval as eval_
from kli.tools.process.saferepr import saferepr

MAX_PARKED = 3
PARK_SECONDS = 900
MAX_FRAMES = 20  # innermost frames listed (and kept)
MAX_LOCALS = 20  # locals listed per frame
LOCAL_CHARS = 120  # characters of each local's repr
STATE_KEY = "parked"

_ids = itertools.count(1)


@dataclass(eq=False)
class Frame:
    frame: types.FrameType
    line: int
    locals: dict[str, Any] | None  # None for module-level code: its locals are its globals

    @property
    def function(self) -> str:
        return self.frame.f_code.co_name

    @property
    def filename(self) -> str:
        return self.frame.f_code.co_filename


@dataclass(eq=False)
class Parked:
    id: str
    exc: BaseException
    frames: list[Frame]
    omitted: int  # outer frames not kept past MAX_FRAMES
    units: list[eval_.Unit]
    statements: list[ast.stmt]
    index: int  # the failing top-level statement
    namespace: dict[str, Any]
    module: str
    filename: str
    timeout: float
    created: float = field(default_factory=time.time)

    @property
    def expires(self) -> float:
        return self.created + PARK_SECONDS

    @property
    def line(self) -> int:
        return self.units[self.index][0]


def session_parked(session: Session) -> dict[str, Parked]:
    """The session's parked evaluations, expired ones dropped."""
    parked: dict[str, Parked] | None = session.state.get(STATE_KEY)
    if parked is None:
        parked = session.state[STATE_KEY] = {}
        session.closers[STATE_KEY] = parked.clear
    now = time.time()
    for key in [k for k, p in parked.items() if p.expires <= now]:
        del parked[key]
    return parked


def find(call: Call) -> Parked:
    park_id = call.args["park"]
    parked = session_parked(call.session)
    found = parked.get(park_id)
    if found is None:
        listed = ", ".join(parked) or "none"
        raise ToolError(
            f"no parked evaluation {park_id!r} in this session (parked now: {listed}); it may "
            f"have expired ({PARK_SECONDS // 60} minutes after parking), been aborted or "
            "resumed. Run eval again with on_error: \"interactive\" to park a new one.",
            error="unknown_park",
            park=park_id,
        )
    return found


def _frames(exc: BaseException) -> tuple[list[Frame], int]:
    tb = exc.__traceback__
    while tb is not None and not tb.tb_frame.f_code.co_filename.startswith(
        eval_.FILENAME_PREFIX
    ):
        tb = tb.tb_next
    frames: list[Frame] = []
    while tb is not None:
        frame = tb.tb_frame
        module_level = frame.f_code.co_name == "<module>" or frame.f_locals is frame.f_globals
        frames.append(Frame(frame, tb.tb_lineno, None if module_level else dict(frame.f_locals)))
        tb = tb.tb_next
    omitted = max(len(frames) - MAX_FRAMES, 0)
    return frames[omitted:], omitted


def _local_rows(values: dict[str, Any]) -> list[str]:
    rows = []
    for name in list(values)[:MAX_LOCALS]:
        text = saferepr(values[name])
        if len(text) > LOCAL_CHARS:
            text = text[:LOCAL_CHARS] + "…"
        rows.append(f"{name} = {text}")
    if len(values) > MAX_LOCALS:
        rows.append(f"… {len(values) - MAX_LOCALS} more locals")
    return rows


def frames_text(p: Parked) -> tuple[str, list[dict[str, Any]]]:
    lines, facts = [], []
    if p.omitted:
        lines.append(f"  ({p.omitted} outer frames not kept)")
    last = len(p.frames) - 1
    for i, f in enumerate(p.frames):
        source = linecache.getline(f.filename, f.line).strip()
        mark = "   <- raised here" if i == last else ""
        lines.append(f"  [{i}] {f.function}  {f.filename}:{f.line}  {source}{mark}")
        if f.locals is None:
            lines.append(f"      (module-level code: its names are module {p.module}'s)")
        elif f.locals:
            lines.append("      locals: " + "; ".join(_local_rows(f.locals)))
        facts.append({"frame": i, "function": f.function, "file": f.filename, "line": f.line,
                      "locals": _local_rows(f.locals) if f.locals else []})
    return "\n".join(lines), facts


def park_and_report(call: Call, outcome: eval_.Outcome, units: list[eval_.Unit],
                    namespace: dict[str, Any], module: str, filename: str, *,
                    clamp_note: str | None, index_offset: int = 0,
                    statements: list[ast.stmt] | None = None,
                    park_id: str | None = None) -> ToolResult:
    """Park ``outcome``'s exception and report it (or report it unparked, with a note, when
    the session already has ``MAX_PARKED``)."""
    assert outcome.failure is not None and outcome.failed_index is not None
    parked = session_parked(call.session)
    if statements is None:
        statements = _statements(filename)
    extra: dict[str, Any] = {"module": module, "filename": filename}
    if park_id is None and len(parked) >= MAX_PARKED:
        note = (f"[not parked: {len(parked)} evaluations are parked in this session already "
                f"({', '.join(parked)}), at most {MAX_PARKED}; end one with eval_abort or "
                "eval_continue]")
        return eval_.report(call, outcome, clamp_note=clamp_note, extra=extra,
                            after_values=[note])
    p = Parked(
        id=park_id or f"p{next(_ids)}",
        exc=outcome.failure,
        frames=[],
        omitted=0,
        units=units,
        statements=statements,
        index=index_offset + outcome.failed_index,
        namespace=namespace,
        module=module,
        filename=filename,
        timeout=outcome.timeout,
    )
    p.frames, p.omitted = _frames(outcome.failure)
    parked[p.id] = p
    listing, frame_facts = frames_text(p)
    exc = outcome.failure
    last = len(p.frames) - 1
    text = (
        f"{type(exc).__name__}: {eval_._message(exc)}\n"
        f"raised by the statement at line {p.line}; parked as {p.id} (kept "
        f"{PARK_SECONDS // 60} minutes; {len(parked)} of {MAX_PARKED} parked in this session). "
        f"Frames, outermost first:\n{listing}\n"
        f"Next: eval_frame {{\"park\": \"{p.id}\", \"frame\": {last}, \"code\": \"...\"}} "
        f"evaluates code in a frame; eval_continue {{\"park\": \"{p.id}\", \"action\": "
        f"\"retry\"}} re-runs the statements from line {p.line} on (after a fix); "
        f"eval_continue with action \"value\" and value \"EXPR\" uses EXPR in place of the "
        f"statement at line {p.line} and runs the rest; eval_abort ends it."
    )
    extra.update(park=p.id, frames=frame_facts, parked=True, park_expires=p.expires)
    return eval_.report(call, outcome, clamp_note=clamp_note, failure_text=text, extra=extra)


def _statements(filename: str) -> list[ast.stmt]:
    source = "".join(linecache.getlines(filename))
    try:
        return list(ast.parse(source).body)
    except SyntaxError:
        return []
