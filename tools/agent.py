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

Two entries run the same loop (docs/agent.md):

- ``run_agent_async(task, model, host, on_event=...)`` for asyncio hosts (a chat persona, the
  ``%kli agent`` magic). ``model`` may be async (``kli.tools.agentmodels.litellm_model``). Each
  step is reported as it happens, as a typed event (``Reply``, ``CallStarted``, ``Outcome``,
  ``Held``, ``Decided``, ``Finished``; ``to_json()`` is their one shape). Cancelling the task
  ends the run at once and stops the call in flight: a ``kli.client`` host's ``acall`` cancels
  it in the kernel; any other host's call runs in a worker thread that is stopped as the
  kernel's stop button stops a subshell call (its command killed, its Python interrupted).
  A call held for review (approval mode) is waited for through ``await_decision`` for
  ``review_wait`` seconds, and the model is told the outcome (a Reject note included); a
  decision still pending then goes on or, with ``on_review_timeout="stop"``, ends the run.
- ``run_agent(...)``: the same, synchronous, every call on the caller's thread.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import threading
from collections.abc import Callable, Coroutine
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from kli.tools.core.approval import MAX_WAIT
from kli.tools.core.formats import absent_nulls, in_format, result_in_format
from kli.tools.core.registry import AGENT
from kli.tools.core.result import ToolResult
from kli.tools.roles import AsyncModel, Host, Model
from kli.tools.ws.contract import EDIT_CONTRACT, TURN_RULES

DEFAULT_MAX_TURNS = 20
DEFAULT_REVIEW_WAIT = 300.0  # seconds a held call waits for a person
MAX_REVIEW_WAIT = MAX_WAIT  # await_decision waits at most this long: a longer wait is refused
REVIEW_SLACK = 30.0  # a kernel client waits this much longer than await_decision itself
MAX_SHOWN = 160  # characters of a target, a reply or a reason an event carries


def check_review_wait(value: float | str) -> float:
    """``value`` as the seconds a run waits for a person's decision on a held call: a number
    from 0 to ``MAX_REVIEW_WAIT``. ValueError saying so otherwise (NaN and infinity too). The
    one rule for every host of the loop (the persona's setting, ``%kli agent --wait``)."""
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = float("nan")
    if not 0 <= seconds <= MAX_REVIEW_WAIT:  # NaN fails both
        raise ValueError(f"the review wait is seconds from 0 to {MAX_REVIEW_WAIT:g} (got {value!r})")
    return seconds

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
FINAL_AFTER_REVIEW = (
    "Proposal {proposal} is still waiting for the person's review after {wait:g} s, and this "
    "run stops here. " + FINAL_REQUEST
)


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
    the loop's final request), "no answer", or "held for review" (a held call was still
    pending after ``review_wait`` with ``on_review_timeout="stop"``; the model was then asked
    for its answer, which ``answer`` holds); ``messages`` is the conversation as sent to the
    model, with the final reply; ``usage`` the tokens the model reported, summed."""

    answer: str | None
    stopped: str
    turns: int
    steps: list[Step]
    messages: list[dict[str, Any]]
    usage: dict[str, int] = field(default_factory=dict)  # tokens, summed over the turns

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


# -- events: each step of a run, as it happens ------------------------------------------------
def bounded(text: str, limit: int = MAX_SHOWN) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@dataclass
class Event:
    """One step of a run. ``to_json()`` is the shape every host renders (``kind`` names the
    class); ``line()`` is the step for a person, one line of plain text."""

    kind: ClassVar[str] = "event"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, **asdict(self)}

    def line(self) -> str:
        return self.kind


@dataclass
class Reply(Event):
    """The model's reply to turn ``turn`` arrived: its text (bounded), the tools it asked for
    (only the first runs), and the tokens it reports (``prompt``, ``completion``, ``total``;
    empty when the provider reports none)."""

    kind: ClassVar[str] = "reply"
    turn: int
    text: str
    calls: list[str]
    usage: dict[str, int]

    def line(self) -> str:
        tokens = f" ({self.usage['total']} tokens)" if "total" in self.usage else ""
        asked = f" → {', '.join(self.calls)}" if self.calls else ""
        said = f": {self.text}" if self.text else ""
        return f"[{self.turn}] model{tokens}{asked}{said}"


@dataclass
class CallStarted(Event):
    """The loop is running ``tool`` on ``target`` (a file, ``nb.ipynb#cell``, a command's head)."""

    kind: ClassVar[str] = "call"
    turn: int
    tool: str
    target: str

    def line(self) -> str:
        return f"[{self.turn}] {self.tool} {self.target}".rstrip() + " …"


@dataclass
class Outcome(Event):
    """How a call ended: ``status`` "ok" or "refused" (``why``: the result's first line, and
    ``error`` its code); ``added`` / ``removed`` count the lines its files changed; ``target``
    names the files it changed when it changed any."""

    kind: ClassVar[str] = "outcome"
    turn: int
    tool: str
    target: str
    status: Literal["ok", "refused"]
    why: str | None = None
    error: str | None = None
    added: int = 0
    removed: int = 0

    def line(self) -> str:
        lines = f" +{self.added} -{self.removed}" if self.added or self.removed else ""
        what = f"{self.tool} {self.target}".rstrip()
        if self.status == "ok":
            return f"[{self.turn}] {what}: ok{lines}"
        return f"[{self.turn}] {what}: refused — {self.why}"


@dataclass
class Held(Event):
    """The call waits for a person's review as proposal ``proposal``; the run waits ``wait``
    seconds for the decision (0: not at all). ``added`` / ``removed``: the change it holds."""

    kind: ClassVar[str] = "held"
    turn: int
    tool: str
    target: str
    proposal: str
    wait: float
    added: int = 0
    removed: int = 0

    def line(self) -> str:
        lines = f" (+{self.added} -{self.removed})" if self.added or self.removed else ""
        waits = f"; waiting up to {self.wait:g} s" if self.wait > 0 else ""
        return (f"[{self.turn}] {self.tool} {self.target}{lines}: held for review as "
                f"{self.proposal} — Accept or Reject it in the cell or the kli panel, or "
                f"%kli accept {self.proposal}{waits}")


@dataclass
class Decided(Event):
    """What became of a held call: ``status`` accepted (its change written, its command or
    code run), rejected, refused (Accept found a file changed since), or pending (no decision
    within the wait); ``note`` the person's Reject note."""

    kind: ClassVar[str] = "decided"
    turn: int
    proposal: str
    status: str
    note: str | None = None

    def line(self) -> str:
        note = f": {self.note}" if self.note else ""
        if self.status == "pending":
            return f"[{self.turn}] {self.proposal}: no decision yet{note}"
        return f"[{self.turn}] {self.proposal}: {self.status}{note}"


@dataclass
class Finished(Event):
    """The run ended: its answer (None when the model gave none), why it stopped (as
    ``AgentRun.stopped``), the turns it took and the tokens it used in all."""

    kind: ClassVar[str] = "answer"
    answer: str | None
    stopped: str
    turns: int
    usage: dict[str, int]

    def line(self) -> str:
        tokens = f", {self.usage['total']} tokens" if "total" in self.usage else ""
        head = f"— {self.stopped} after {self.turns} turn{'s' if self.turns != 1 else ''}{tokens}"
        return f"{head}\n{self.answer}" if self.answer else head


@dataclass
class Stopped(Event):
    """The run was cancelled (the person's Stop) during turn ``turn``; the call in flight, if
    any, was stopped."""

    kind: ClassVar[str] = "stopped"
    turn: int
    during: str  # "model" or the tool that was running

    def line(self) -> str:
        return f"[{self.turn}] stopped during {self.during}"


def _usage(response: dict[str, Any]) -> dict[str, int]:
    raw = response.get("usage")
    if not isinstance(raw, dict):
        return {}
    names = {"prompt_tokens": "prompt", "completion_tokens": "completion",
             "total_tokens": "total"}
    return {short: raw[long] for long, short in names.items() if isinstance(raw.get(long), int)}


def target_of(tool: str, args: dict[str, Any] | None) -> str:
    """What a call works on, for a person, bounded: ``path`` (``path#cell``), the files an
    ``edit``'s patch names, a move's ``src → dst``, else the first line of its main argument."""
    if not args:
        return ""
    path = args.get("path")
    if isinstance(path, str) and path:
        cell = args.get("cell")
        return bounded(f"{path}#{cell}" if isinstance(cell, str) and cell else path)
    if tool == "edit" and isinstance(args.get("input"), str):
        files = [row[3:].strip() for row in args["input"].splitlines() if row.startswith("@@ ")]
        if files:
            return bounded(", ".join(dict.fromkeys(files)))
    if isinstance(args.get("src"), str) and isinstance(args.get("dst"), str):
        return bounded(f"{args['src']} → {args['dst']}")
    from kli.tools.registry import REGISTRY

    entry = REGISTRY.tools.get(tool)
    main = args.get(entry.main_arg) if entry is not None and entry.main_arg else None
    if isinstance(main, str) and main.strip():
        return bounded(main.strip().splitlines()[0])
    return ""


def _files(result: ToolResult) -> tuple[list[str], int, int]:
    files = [f for f in result.details.get("files") or [] if isinstance(f, dict)]
    paths = [str(f["path"]) for f in files if f.get("path")]
    added = sum(f["added"] for f in files if isinstance(f.get("added"), int))
    removed = sum(f["removed"] for f in files if isinstance(f.get("removed"), int))
    return paths, added, removed


def outcome_of(turn: int, tool: str, target: str, result: ToolResult) -> Outcome:
    """The ``Outcome`` event of a call's result."""
    paths, added, removed = _files(result)
    where = bounded(", ".join(dict.fromkeys(paths))) if paths else target
    if result.ok:
        return Outcome(turn, tool, where, "ok", added=added, removed=removed)
    first = result.text.strip().splitlines()[0] if result.text.strip() else "no reason given"
    error = result.details.get("error")
    return Outcome(turn, tool, where, "refused", bounded(first),
                   str(error) if error is not None else None, added, removed)


# -- hosts ------------------------------------------------------------------------------------
class SessionHost:
    """A ``Workspace`` as one agent session's host: every call runs in ``session`` with
    ``source`` (``"agent"``: approval mode holds its mutating calls, and the activity panel
    shows the session's label). ``kli.kernel``'s ``%kli agent`` runs its loop on one."""

    def __init__(self, ws: Any, session: Any, source: str = AGENT) -> None:
        self.ws, self.session, self.source = ws, session, source

    def call(self, tool: str, args: dict[str, Any] | None = None, /) -> ToolResult:
        result: ToolResult = self.ws.call(tool, args, self.session, source=self.source)
        return result

    def specs(self, profile: str = "kli", /) -> list[dict[str, Any]]:
        specs: list[dict[str, Any]] = self.ws.specs(profile)
        return specs


if TYPE_CHECKING:  # a SessionHost is a Host (kli.tools.roles): mypy checks it conforms
    def _is_host(host: SessionHost) -> Host:
        return host


async def call_in_thread(fn: Callable[[], ToolResult]) -> ToolResult:
    """Run one blocking tool call in a worker thread of its own. Cancelling the awaiting task
    stops it as the kernel's stop button stops a tool call on a subshell: its cancel event is
    set (a command is killed with its process tree) and ``KeyboardInterrupt`` is raised in the
    thread (Python code stops; a write it had begun finishes or rolls back first). The stop
    button itself reaches the call too (``interrupts.stoppable``). Returns at once on cancel,
    not waiting for the thread to wind down."""
    from kli.tools.core import interrupts
    from kli.tools.process.runner import CANCEL

    loop = asyncio.get_running_loop()
    done: asyncio.Future[ToolResult] = loop.create_future()
    cancel = threading.Event()
    started = threading.Event()
    ident: list[int] = []

    def settle(value: ToolResult | None, exc: BaseException | None) -> None:
        if done.done():
            return
        if exc is not None:
            done.set_exception(exc)
        else:
            assert value is not None
            done.set_result(value)

    def work() -> None:
        value: ToolResult | None = None
        failure: BaseException | None = None
        token = CANCEL.set(cancel)
        scope = interrupts.stoppable(cancel.set)
        ident.append(scope.ident)
        try:
            try:
                with scope:
                    started.set()
                    value = fn()
            finally:
                scope.close()
        except KeyboardInterrupt:  # stopped as the call ended, outside the tool's handling
            value = ToolResult.error("interrupted: the call was stopped as it ended; what it "
                                     "did is not known.", error="interrupted")
        except BaseException as exc:  # the host's own failure (a dead kernel) reaches the loop
            failure = exc
        finally:
            CANCEL.reset(token)
        try:
            loop.call_soon_threadsafe(settle, value, failure)
        except RuntimeError:  # the loop is gone: nobody waits for this result
            pass

    thread = threading.Thread(target=work, name="kli-agent-call", daemon=True)
    thread.start()
    try:
        return await done
    except asyncio.CancelledError:
        cancel.set()
        started.wait(1.0)
        if ident:
            interrupts.stop_thread(ident[0])
        raise


def takes_images(model: Any) -> tuple[bool, str]:
    """Whether ``model`` is sent the images of a tool result (``look``), and if not, why (the
    note the model reads instead): the model's own ``takes_images()`` (``LitellmModel`` asks
    litellm's ``supports_vision``); a model that does not say is sent none."""
    probe = getattr(model, "takes_images", None)
    if callable(probe):
        try:
            sees, why = probe()
            return bool(sees), str(why)
        except Exception as exc:  # a model that cannot say: text only, and why
            return False, f"whether the model takes images is unknown ({type(exc).__name__})"
    return False, "the model does not say that it takes images"


# -- the loop ---------------------------------------------------------------------------------
class _Run:
    """One run's plumbing: how the model and the host are called (``inline``: on this thread,
    for ``run_agent``; else without blocking the event loop), and where events go."""

    def __init__(self, model: Model | AsyncModel, host: Host, inline: bool,
                 on_event: Callable[[Event], None] | None) -> None:
        self.model, self.host, self.inline, self.on_event = model, host, inline, on_event
        self.during = "model"
        self.sees, self.why_not = takes_images(model)

    def emit(self, event: Event) -> None:
        if self.on_event is not None:
            self.on_event(event)

    async def ask(self, messages: list[dict[str, Any]],
                  tools: list[dict[str, Any]] | None) -> dict[str, Any]:
        self.during = "model"
        model = self.model
        if self.inline or inspect.iscoroutinefunction(model) or inspect.iscoroutinefunction(
                type(model).__call__):
            response: Any = self.model(messages, tools)
        else:  # a blocking model: off the event loop, so the run stays cancellable
            response = await asyncio.to_thread(self.model, messages, tools)
        if inspect.isawaitable(response):
            response = await response
        return response  # _message checks its shape

    async def call(self, tool: str, args: dict[str, Any], wait: float | None = None) -> ToolResult:
        """One tool call on the host; ``wait``: how long the call itself may take (a kernel
        client is given a matching timeout)."""
        self.during = tool
        host: Any = self.host
        client = callable(getattr(host, "acall", None))  # a kli.client kernel connection
        extra = {"timeout": wait + REVIEW_SLACK} if client and wait is not None else {}
        if self.inline:
            result: ToolResult = host.call(tool, args, **extra)
            return result
        if client:
            result = await host.acall(tool, args, **extra)
            return result
        return await call_in_thread(lambda: self.host.call(tool, args))


async def _loop(
    task: str,
    run: _Run,
    *,
    profile: str,
    max_turns: int,
    system: str | None,
    on_step: Callable[[Step], None] | None,
    review_wait: float,
    on_review_timeout: str,
) -> AgentRun:
    if max_turns < 1:
        raise ValueError(f"max_turns must be at least 1 (got {max_turns})")
    if on_review_timeout not in ("continue", "stop"):
        raise ValueError(f"on_review_timeout is 'continue' or 'stop' (got {on_review_timeout!r})")
    specs = run.host.specs(profile)
    tools = in_format(specs, "openai")
    schemas = {spec["name"]: spec.get("parameters") or {} for spec in specs}
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system if system is not None else system_prompt(profile)},
        {"role": "user", "content": task},
    ]
    steps: list[Step] = []
    usage: dict[str, int] = {}
    final_request = FINAL_AFTER_BUDGET.format(turns=max_turns)
    stopped_by_review = False
    turn = 0

    def received(response: dict[str, Any], at: int) -> dict[str, Any]:
        message = _message(response)
        used = _usage(response)
        for k, v in used.items():
            usage[k] = usage.get(k, 0) + v
        calls = [str((c.get("function") or {}).get("name") or "?")
                 for c in message.get("tool_calls") or []]
        content = message.get("content")
        run.emit(Reply(at, bounded(content) if isinstance(content, str) else "", calls, used))
        return message

    def finished(answer: str | None, stopped: str, turns: int) -> AgentRun:
        run.emit(Finished(answer, stopped, turns, dict(usage)))
        return AgentRun(answer, stopped, turns, steps, messages, dict(usage))

    try:
        while turn < max_turns:
            turn += 1
            message = received(await run.ask(messages, tools), turn)
            calls = message.get("tool_calls") or []
            content = message.get("content")
            if not calls:
                if isinstance(content, str) and content.strip():
                    messages.append({"role": "assistant", "content": content})
                    return finished(content, "answered", turn)
                messages.append({"role": "assistant", "content": content or ""})
                final_request = FINAL_AFTER_SILENCE
                break
            first, extra = calls[0], calls[1:]
            messages.append({"role": "assistant", "content": content, "tool_calls": [first]})
            function = first.get("function") or {}
            name = str(function.get("name") or "")
            args, problem = _arguments(function.get("arguments"))
            target = target_of(name, args)
            run.emit(CallStarted(turn, name, target))
            if problem is not None:
                result = ToolResult.error(problem, error="bad_arguments")
            else:
                args = absent_nulls(args, schemas.get(name, {}))
                result = await run.call(name, args or {})
            dropped = [str((c.get("function") or {}).get("name") or "?") for c in extra]
            text = result.text + (dropped_note(dropped) if dropped else "")
            proposal = result.details.get("proposal")
            if result.details.get("status") == "pending" and isinstance(proposal, str):
                paths, added, removed = _files(result)
                where = bounded(", ".join(dict.fromkeys(paths))) if paths else target
                run.emit(Held(turn, name, where, proposal, review_wait, added, removed))
                if review_wait > 0:
                    decision = await run.call(
                        "await_decision", {"id": proposal, "timeout": review_wait}, review_wait)
                    code = decision.details.get("status") or ("refused" if not decision.ok
                                                              else "pending")
                    status = "accepted" if code == "written" else str(code)
                    note = decision.details.get("note")
                    run.emit(Decided(turn, proposal, status,
                                     bounded(note) if isinstance(note, str) else None))
                    text += ("\n\n[review] The harness waited for the person's decision on "
                             f"{proposal}: {decision.text}")
                    if status == "pending" and on_review_timeout == "stop":
                        final_request = FINAL_AFTER_REVIEW.format(proposal=proposal,
                                                                  wait=review_wait)
                        stopped_by_review = True
            else:
                run.emit(outcome_of(turn, name, target, result))
            messages.extend(result_in_format(result, "openai", call_id=first.get("id", ""),
                                             tool=name, text=text, images=run.sees,
                                             why_not=run.why_not))
            step = Step(turn, name, args, result, dropped)
            steps.append(step)
            if on_step is not None:
                on_step(step)
            if stopped_by_review:
                break

        # Never end on a tool call: one more turn, with no tools offered.
        messages.append({"role": "user", "content": final_request})
        message = received(await run.ask(messages, None), turn + 1)
    except asyncio.CancelledError:
        run.emit(Stopped(turn, run.during))
        raise
    content = message.get("content")
    answered = isinstance(content, str) and content.strip()
    # Calls in this reply are not run, and not kept: every kept call has its result.
    messages.append({"role": "assistant", "content": content or ""})
    answer = content if answered and isinstance(content, str) else None
    if stopped_by_review:
        return finished(answer, "held for review", turn + 1)
    return finished(answer, "answered when asked" if answer else "no answer", turn + 1)


async def run_agent_async(
    task: str,
    model: Model | AsyncModel,
    host: Host,
    *,
    profile: str = "kli",
    max_turns: int = DEFAULT_MAX_TURNS,
    system: str | None = None,
    on_event: Callable[[Event], None] | None = None,
    on_step: Callable[[Step], None] | None = None,
    review_wait: float = DEFAULT_REVIEW_WAIT,
    on_review_timeout: Literal["continue", "stop"] = "continue",
) -> AgentRun:
    """Run ``task`` to a final answer without blocking the event loop; see the module
    docstring.

    ``model`` is ``Model`` or ``AsyncModel`` (a blocking one runs in a worker thread).
    ``on_event`` receives each step's event as it happens, on the loop's thread; ``on_step``
    each ``Step`` as ``run_agent`` does. A held call is waited for ``review_wait`` seconds
    (0: not waited for; the model is told how to wait itself); when no decision came by then
    the run goes on, or with ``on_review_timeout="stop"`` asks for the final answer and stops.
    Cancelling the task raises ``CancelledError`` out of this call after a ``Stopped`` event,
    the call in flight stopped. Raises ``ValueError`` for a response without the
    chat-completions shape, and for a ``review_wait`` outside ``check_review_wait``'s range;
    the host's own errors propagate."""
    return await _loop(task, _Run(model, host, False, on_event), profile=profile,
                       max_turns=max_turns, system=system, on_step=on_step,
                       review_wait=check_review_wait(review_wait),
                       on_review_timeout=on_review_timeout)


def run_agent(
    task: str,
    model: Model,
    host: Host,
    *,
    profile: str = "kli",
    max_turns: int = DEFAULT_MAX_TURNS,
    system: str | None = None,
    on_step: Callable[[Step], None] | None = None,
    on_event: Callable[[Event], None] | None = None,
    review_wait: float = DEFAULT_REVIEW_WAIT,
    on_review_timeout: Literal["continue", "stop"] = "continue",
) -> AgentRun:
    """Run ``task`` to a final answer; see the module docstring.

    ``system`` replaces ``system_prompt(profile)``. ``on_step`` is called after every tool call
    (a notebook prints progress with it), ``on_event`` with each step's event. The model and
    every tool call run on the caller's thread, one after another (``model`` must be
    synchronous; ``run_agent_async`` takes an async one). Raises ``ValueError`` when a model
    response does not have the chat-completions shape. A failing tool is a result the model
    sees, never an exception; the host's own errors (a kernel that died, a request that timed
    out) propagate.
    """
    return _run_now(_loop(task, _Run(model, host, True, on_event), profile=profile,
                          max_turns=max_turns, system=system, on_step=on_step,
                          review_wait=check_review_wait(review_wait),
                          on_review_timeout=on_review_timeout))


def _run_now(coro: Coroutine[Any, Any, AgentRun]) -> AgentRun:
    """Drive a coroutine that never suspends (an inline run: every model and tool call
    blocking) to its value, on this thread and with no event loop — so ``run_agent`` works
    inside a running loop too (a notebook cell). An async model would suspend it: TypeError."""
    try:
        coro.send(None)
    except StopIteration as done:
        value: AgentRun = done.value
        return value
    coro.close()
    raise TypeError("run_agent takes a synchronous model(messages, tools); await "
                    "run_agent_async(...) for an async one")

