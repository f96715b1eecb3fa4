"""The two comm targets of docs/protocol.md: ``kli.agent`` (tool calls, one Session per comm)
and ``kli.ui`` (events, replay, accept / reject of repair candidates).

The Hub is the only place that knows about comms. It listens to the Workspace (one event per
tool call from any source), keeps a ring buffer for the replay, and forwards each decision on a
pending repair candidate (the Workspace's one ``resolved`` event per decision, wherever it was
made) so every UI learns how it was resolved.
Every handler answers malformed input with an ``error`` reply and never raises into ipykernel.
"""

from __future__ import annotations

import json
import os
import threading
import traceback
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kli.kernel import protocol as P
from kli.kernel.protocol import (
    AGENT_TARGET,
    DEFAULT_REPLAY,
    EVENT_RING,
    PROTOCOL_VERSION,
    RING_TEXT_LIMIT,
    UI_TARGET,
    message,
)
from kli.tools.core.registry import AGENT
from kli.tools.core.request import AGENT_OPS, UI_OPS, BadRequest, parse_request
from kli.tools.registry import ALL, PROFILE_CHOICES

if TYPE_CHECKING:
    from kli.tools.core.proposal import Proposal
    from kli.tools.core.result import ToolResult
    from kli.tools.core.session import Session
    from kli.tools.core.workspace import Workspace

# Every message is built with ``protocol.message`` from the one definition (kernel/protocol.py);
# RING_TEXT_LIMIT: texts longer than this are dropped from the *replayed* copy of an event (live
# events keep them), so the ring never pins hundreds of megabytes of file text.



def jsonable(data: Any) -> Any:
    """``data`` if it serialises as JSON, else a copy with odd values turned into strings."""
    try:
        json.dumps(data)
        return data
    except (TypeError, ValueError):
        return json.loads(json.dumps(data, default=repr))


def _error(rid: Any, code: str, text: str) -> dict[str, Any]:
    return message(P.ERROR, id=rid, error=code, text=text)


def _box(described: dict[str, Any]) -> dict[str, Any]:
    """``sandbox.describe``'s answer as the protocol's ``Box``."""
    keys = {f.name for f in P.BOX.fields}
    return P.build(P.BOX, **{k: v for k, v in described.items()
                             if k in keys and (v is not None or k not in ("reason", "problem"))})


def _origin_fields(origin: Any, kept: Any, said: Any) -> dict[str, str]:
    """An ``approval`` message's ``origin``, ``kept`` and ``said`` (each absent when not known)."""
    fields = {"origin": origin, "kept": kept, "said": said}
    return {k: v for k, v in fields.items() if isinstance(v, str)}


def _slim(event: dict[str, Any]) -> dict[str, Any]:
    """The ring's copy of an event: large file texts are dropped (``too_large`` set)."""
    files = (event.get("details") or {}).get("files")
    if not isinstance(files, list):
        return event
    big = [
        f
        for f in files
        if isinstance(f, dict)
        and any(isinstance(f.get(k), str) and len(f[k]) > RING_TEXT_LIMIT for k in ("before", "after"))
    ]
    if not big:
        return event
    slim_files = [
        {**f, "before": None, "after": None, "too_large": True} if f in big else f for f in files
    ]
    return {**event, "details": {**event["details"], "files": slim_files}}


def candidate_json(ws: Workspace, cand: Proposal) -> dict[str, Any]:
    """CANDIDATE of docs/protocol.md: a repair preview or a held call, one shape."""
    from kli.tools.core import approval

    session = ws.sessions.get(cand.session_id)
    extra: dict[str, Any] = {}
    plan = cand.plan
    if isinstance(plan, approval.CallPlan):
        extra = {"files": plan.files, "tool": plan.tool, "action": plan.action,
                 "args": plan.args,
                 "command": None if plan.action == approval.FILE else approval.command_of(plan)}
        if plan.sources:
            extra["sources"] = plan.sources
        steps = approval.steps(ws, plan) if plan.action == approval.FILE else []
        if steps:
            extra["steps"] = steps
    if cand.expired:
        extra["expired"] = cand.expired
    return P.build(P.CANDIDATE, candidate=cand.id, kind=cand.kind, path=cand.path,
                   session=cand.session_id,
                   session_label=session.label if session else cand.session_label,
                   reason=cand.reason, message=cand.message, file=cand.change,
                   time=cand.created, **extra)


def resolved_msg(event: dict[str, Any]) -> dict[str, Any]:
    """``resolved`` of docs/protocol.md, from the Workspace's ``resolved`` event."""
    extra = {k: event[k] for k in ("note", "change") if event.get(k)}
    return message(P.RESOLVED, candidate=event["candidate"], status=event["status"],
                   text=event.get("text", ""), by=event["by"], reason=event["reason"], **extra)


class Hub:
    """Comms, events and candidate resolution for one kernel's Workspace."""

    def __init__(self, kernel: Any, ws: Workspace) -> None:
        self.kernel = kernel
        self.ws = ws
        self.events: deque[dict[str, Any]] = deque(maxlen=EVENT_RING)
        self.ui_comms: dict[str, Any] = {}
        self.agent_comms: dict[str, tuple[Any, Session]] = {}
        # The cancel event of each tool call an agent comm has running or queued, by
        # (comm id, request id): a ``cancel`` request sets it (kli.tools.process.runner.CANCEL).
        self.running: dict[tuple[str, Any], threading.Event] = {}
        # Cancels that named a request not seen yet (it waits in the main shell's queue behind
        # a cell): it answers 'cancelled' without running when it arrives. Bounded; client ids
        # are not reused, so a cancel of an answered request here is harmless.
        self.cancelled_early: deque[tuple[str, Any]] = deque(maxlen=256)
        self._lock = threading.RLock()
        self._magic_session: Session | None = None
        ws.add_listener(self._on_event)

    def register(self, comm_manager: Any) -> None:
        comm_manager.register_target(AGENT_TARGET, self._open_agent)
        comm_manager.register_target(UI_TARGET, self._open_ui)

    @property
    def magic_session(self) -> Session:
        """The session every magic call uses, so anchors persist from cell to cell."""
        if self._magic_session is None:
            self._magic_session = self.ws.open_session("magic")
        return self._magic_session

    # -- events -----------------------------------------------------------------------------
    def _on_event(self, event: dict[str, Any]) -> None:
        kind = event.get("kind")
        if kind == "proposed":  # the Proposal itself: turned into its wire shape here
            with self._lock:
                comms = list(self.ui_comms.values())
            if comms:
                cand = jsonable(candidate_json(self.ws, event["proposal"]))
                self._broadcast(comms, message(P.PROPOSED, candidate=cand))
            return
        event = jsonable(event)
        if kind in ("resolved", "expired", "approval", "sandbox"):  # not tool calls: not in the ring
            with self._lock:
                comms = list(self.ui_comms.values())
            if kind == "resolved":  # a proposal was decided, by whoever
                data = resolved_msg(event)
            elif kind == "expired":
                data = message(P.EXPIRED, candidates=event["candidates"],
                               session=event["session"], session_label=event["session_label"],
                               text=event["text"])
            elif kind == "sandbox":
                data = message(P.SANDBOX, box=_box(event))
            else:
                data = message(P.APPROVAL, approval=event["modes"],
                               **_origin_fields(event.get("origin"), event.get("kept"),
                                                event.get("said")))
            self._broadcast(comms, data)
            return
        with self._lock:
            self.events.append(_slim(event))
            comms = list(self.ui_comms.values())
        self._broadcast(comms, message(P.EVENT_MSG, event=event))

    def _broadcast(self, comms: list[Any], data: dict[str, Any]) -> None:
        for comm in comms:
            try:
                comm.send(data)
            except Exception:
                traceback.print_exc()

    # -- accept / reject (UI comm and widget) ---------------------------------------------------
    def accept(self, candidate_id: str, by: str) -> ToolResult:
        """Accept a pending proposal: a repair candidate is ``edit`` with ``accept_repair`` in
        the owning session; a held call is written as proposed, or run
        (``kli.tools.core.approval.accept_any``)."""
        from kli.tools.core import approval

        return approval.accept_any(self.ws, candidate_id, by)

    def reject(self, candidate_id: str, by: str, note: str = "") -> ToolResult:
        """Discard a pending proposal; nothing is written or run; ``note`` reaches the agent."""
        from kli.tools.core import approval

        return approval.reject(self.ws, candidate_id, by, note)

    def _image_route(self, ids: list[str]) -> str:
        """The tool whose routing the accepts of ``ids`` take: an eval runs in the image."""
        from kli.tools.core import approval

        for cid in ids:
            cand = self.ws.find_candidate(cid)
            if cand is not None and isinstance(cand.plan, approval.CallPlan):
                if not self._touches_image(cand.plan.tool):
                    continue
                return cand.plan.tool
        return "edit"

    @staticmethod
    def _touches_image(tool: str) -> bool:
        from kli.tools.registry import REGISTRY

        entry = REGISTRY.tools.get(tool)
        return entry is None or entry.touches_image

    # -- kli.agent --------------------------------------------------------------------------
    def _open_agent(self, comm: Any, msg: dict[str, Any]) -> None:
        data = msg.get("content", {}).get("data")
        data = data if isinstance(data, dict) else {}
        label = data.get("label")
        label = label if isinstance(label, str) and label else "agent"
        session = self.ws.open_session(label)
        with self._lock:
            self.agent_comms[comm.comm_id] = (comm, session)
        # Non-image calls of this comm are routed to a subshell (docs/concurrency.md).
        route = getattr(self.kernel, "route_agent_comm", None)
        if route is not None:
            route(comm)

        def on_msg(m: dict[str, Any]) -> None:
            self.agent_request(session, m["content"].get("data"), self._responder(comm),
                               comm.comm_id)

        def on_close(_m: dict[str, Any]) -> None:
            with self._lock:
                self.agent_comms.pop(comm.comm_id, None)
                # The client went away: what it still has running is nobody's any more.
                gone = [e for (cid, _), e in self.running.items() if cid == comm.comm_id]
            for event in gone:
                event.set()
            self.ws.close_session(session.id)

        comm.on_msg(on_msg)
        comm.on_close(on_close)
        comm.send(message(P.AGENT_HELLO, protocol=PROTOCOL_VERSION, session=session.id,
                          label=session.label, tools=sorted(t.name for t in self.ws.tools(None)),
                          # Where the agent landed: the tools' root, the process's working
                          # directory, the notebook a Jupyter server started the kernel for.
                          root=str(self.ws.root), cwd=os.getcwd(),
                          notebook=os.environ.get("JPY_SESSION_NAME") or None))

    @staticmethod
    def _responder(comm: Any) -> Callable[[dict[str, Any]], None]:
        def respond(reply: dict[str, Any]) -> None:
            try:
                comm.send(jsonable(reply))
            except Exception:
                traceback.print_exc()

        return respond

    @staticmethod
    def _failure(rid: Any, exc: BaseException) -> dict[str, Any]:
        if isinstance(exc, KeyboardInterrupt):
            return _error(rid, "interrupted", "the request was interrupted before it finished; "
                          "the image may be partially modified. Retry if needed.")
        return _error(rid, "internal", f"kernel error while handling the request: "
                      f"{type(exc).__name__}: {exc}")

    def _safe_reply(self, comm: Any, make: Callable[[], dict[str, Any]]) -> None:
        try:
            reply = make()
        except BaseException as exc:  # a handler bug must not leave the client waiting
            reply = self._failure(None, exc)
        self._responder(comm)(reply)

    def agent_request(self, session: Session, data: Any,
                      respond: Callable[[dict[str, Any]], None], comm_id: str = "") -> None:
        """Answer one ``kli.agent`` request through ``respond`` (now, or after the running
        cell for a tool call); malformed input gets an error reply, never an exception.
        ``comm_id`` scopes request ids for ``cancel``."""
        try:
            reply = self._check_agent(data, comm_id)
        except BaseException as exc:
            reply = self._failure(None, exc)
        if reply is not None:
            respond(reply)
            return
        rid, tool, args = data["id"], data["tool"], data.get("args") or {}
        review = data.get("review")
        key = (comm_id, rid)
        cancel = threading.Event()
        with self._lock:
            self.running[key] = cancel
            if key in self.cancelled_early:
                self.cancelled_early.remove(key)
                cancel.set()

        def done(result: ToolResult | None, exc: BaseException | None) -> None:
            with self._lock:
                if self.running.get(key) is cancel:
                    del self.running[key]
            if result is None:
                respond(self._failure(rid, exc or RuntimeError("no result")))
            else:
                respond(message(P.RESULT, id=rid, **result.to_json()))

        def run() -> ToolResult:
            from kli.tools.core.interrupts import on_main
            from kli.tools.core.result import ToolResult
            from kli.tools.process.runner import CANCEL

            if cancel.is_set():  # cancelled while it waited for a running cell
                return ToolResult.error(f"{tool}: the request was cancelled before it started; "
                                        "nothing ran. Call it again if it is still wanted.",
                                        error="cancelled")
            from kli.tools.core.approval import required

            token = CANCEL.set(cancel)
            try:
                with required(review):  # the host's review for notebooks on other kernels
                    if threading.current_thread() is threading.main_thread():
                        with on_main(cancel):  # a cancel of this request stops it (an eval)
                            return self.ws.call(tool, args, session, source=AGENT)
                    return self._stoppable_call(session, tool, args, cancel)
            finally:
                CANCEL.reset(token)

        self.kernel.run_call(tool, run, done, args)

    def _stoppable_call(self, session: Session, tool: str, args: Any,
                        cancel: threading.Event) -> ToolResult:
        """A tool call on a subshell thread, which the kernel's stop button reaches through
        ``interrupts.stop_threads`` (SIGINT reaches the main thread only): the call answers as
        an interrupted call on the main thread does. A stop landing just after the call ended
        keeps the call's own result."""
        from kli.tools.core.interrupts import stoppable

        result: ToolResult | None = None
        scope = stoppable(cancel.set)
        try:
            try:
                with scope:
                    result = self.ws.call(tool, args, session, source=AGENT)
            finally:
                scope.close()
        except KeyboardInterrupt:
            scope.close()
        if result is None:  # stopped outside the tool's own handling, as the call ended
            from kli.tools.core.result import ToolResult

            result = ToolResult.error(
                f"interrupted: {tool} was stopped by an interrupt (the kernel's stop button) as "
                "it ended; what it did is not known. Re-read what it would change before "
                "retrying it.", error="interrupted")
        return result

    def cancel(self, comm_id: str, rid: Any) -> bool:
        """Set the cancel event of request ``rid`` of comm ``comm_id``; False when it is not
        running or queued here (already answered, or not arrived yet: then it answers
        'cancelled' without running when it arrives)."""
        with self._lock:
            event = self.running.get((comm_id, rid))
            if event is None:
                self.cancelled_early.append((comm_id, rid))
        if event is None:
            return False
        event.set()
        from kli.tools.core.interrupts import stop_main_call

        stop_main_call(event)  # the call runs on the main thread (an eval): stop it, only it
        return True

    def _check_agent(self, data: Any, comm_id: str = "") -> dict[str, Any] | None:
        """The reply to a request that is not a tool call, or an error; None for a valid call."""
        request = parse_request(data, PROFILE_CHOICES, AGENT_OPS)
        if isinstance(request, BadRequest):
            return _error(request.id, request.error, request.text)
        if request.op == "ping":
            status = getattr(self.kernel, "busy_status", None)
            if status is None:
                return message(P.PONG, id=request.id)
            # busy with what, for how long; never "dead"
            return message(P.PONG, id=request.id, status=status())
        if request.op == "cancel":
            target = data["request"]
            return message(P.CANCELLED, id=request.id, request=target,
                           found=self.cancel(comm_id, target))
        if request.op == "list":
            specs = self.ws.specs(None if request.profile == ALL else request.profile)
            return message(P.SPECS, id=request.id, specs=specs)
        if request.op == "reach":
            from kli.kernel.client.reach import of_workspace

            return message(P.REACH_MSG, id=request.id, **of_workspace(self.ws))
        return None

    # -- kli.ui -----------------------------------------------------------------------------
    def hello(self, limit: Any = DEFAULT_REPLAY, rid: Any = None) -> dict[str, Any]:
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
            limit = DEFAULT_REPLAY
        with self._lock:
            events = list(self.events)[-limit:] if limit else []
        fields: dict[str, Any] = {} if rid is None else {"id": rid}
        return message(
            P.UI_HELLO,
            **fields,
            protocol=PROTOCOL_VERSION,
            events=events,
            pending=[candidate_json(self.ws, c) for c in self.ws.pending_candidates()],
            sessions=[P.build(P.SESSION, id=s.id, label=s.label)
                      for s in list(self.ws.sessions.values())],
            tools=[t.info() for t in self.ws.tools(None)],
            approval=self._modes(),
            **{f"approval_{k}": v for k, v in self._origin().items()},
            root=str(self.ws.root),
            resolved=self._decided(),
            sandbox=self._box(),
        )

    def _origin(self) -> dict[str, str]:
        from kli.tools.core import approval

        where = approval.origin(self.ws)
        return _origin_fields(where.where, where.file, where.words(self.ws.root))

    def _box(self) -> dict[str, Any]:
        from kli.tools.core import sandbox

        return _box(sandbox.describe(self.ws))

    def _decided(self) -> list[dict[str, Any]]:
        """How the proposals decided lately ended (``Workspace.decided``), oldest first."""
        with self.ws.decisions:
            decided = list(self.ws.decided.values())
        return [p.decision.to_json(p.id) for p in decided if p.decision is not None]

    def _modes(self) -> dict[str, str]:
        from kli.tools.core import approval

        return approval.modes(self.ws.settings)[0]

    def _open_ui(self, comm: Any, msg: dict[str, Any]) -> None:
        data = msg.get("content", {}).get("data")
        data = data if isinstance(data, dict) else {}

        def on_msg(m: dict[str, Any]) -> None:
            data = m["content"].get("data")
            if isinstance(data, dict) and data.get("op") in P.MODEL_OPS:
                self._open_model_msg(comm, data)
                return
            route = self._ui_route(data)
            run_call = getattr(self.kernel, "run_call", None)
            if route is None or run_call is None:
                self._safe_reply(comm, lambda: self.ui_request(data))
                return
            respond = self._responder(comm)

            def done(reply: dict[str, Any] | None, exc: BaseException | None) -> None:
                respond(reply if reply is not None else self._failure(
                    data.get("id"), exc or RuntimeError("no reply")))

            # An Accept that runs an eval, or an undo of a live image part, runs in the image,
            # after any running cell.
            run_call(route, lambda: self.ui_request(data), done,
                     {k: data[k] for k in ("change", "session", "since") if k in data})

        def on_close(_m: dict[str, Any]) -> None:
            with self._lock:
                self.ui_comms.pop(comm.comm_id, None)
            models = getattr(self.ws.notebooks, "models", None)
            if models is not None:
                models.forget(comm.comm_id)

        comm.on_msg(on_msg)
        comm.on_close(on_close)
        route = getattr(self.kernel, "route_agent_comm", None)
        if route is not None:  # the tab's model replies go to the control subshell
            route(comm)
        with self._lock:
            self.ui_comms[comm.comm_id] = comm
        comm.send(jsonable(self.hello(data.get("replay", DEFAULT_REPLAY))))

    def _open_model_msg(self, comm: Any, data: dict[str, Any]) -> None:
        """``notebooks`` / ``model_reply`` from the extension, for the open-model store
        (``kli.kernel.notebook.openmodel``); no reply. A store without one ignores them."""
        models = getattr(self.ws.notebooks, "models", None)
        if models is None:
            return
        try:
            if data.get("op") == P.OPEN_NOTEBOOKS.op:
                models.report(comm.comm_id, lambda m: comm.send(jsonable(m)), data.get("paths"))
            else:
                models.answer(comm.comm_id, data)
        except Exception:  # a bad message never reaches ipykernel as an exception
            traceback.print_exc()

    def _ui_route(self, data: Any) -> str | None:
        """For an accept (one or bulk) that would run a held call in the image, or an undo that
        takes back a live image part, the tool to route it by; None for every other request
        (answered at once)."""
        if isinstance(data, dict) and data.get("op") == "undo":
            from kli.tools.registry import REGISTRY

            args = {k: data[k] for k in ("change", "session", "since") if k in data}
            return "undo" if REGISTRY.tools["undo"].in_image(self.ws, args) else None
        if not isinstance(data, dict) or data.get("op") not in ("accept", "bulk"):
            return None
        if data.get("op") == "bulk" and data.get("action") != "accept":
            return None
        from kli.tools.core import approval

        if data.get("op") == "accept":
            cid = data.get("candidate")
            ids = [cid] if isinstance(cid, str) else []
        else:
            session, path = data.get("session"), data.get("path")
            if not all(v is None or isinstance(v, str) for v in (session, path)):
                return None
            ids = [p.id for p in approval.matching(self.ws, session, path)]
        route = self._image_route(ids)
        return route if self._touches_image(route) else None

    def ui_request(self, data: Any) -> dict[str, Any]:
        """The reply to one ``kli.ui`` request (never raises for bad input)."""
        from kli.tools.core import approval

        request = parse_request(data, PROFILE_CHOICES, UI_OPS)
        if isinstance(request, BadRequest):
            return _error(request.id, request.error, request.text)
        rid = request.id
        if request.op == "replay":
            return self.hello(data.get("limit", DEFAULT_REPLAY), rid)
        if request.op == "approval":
            try:
                modes, problem = approval.set_mode(self.ws, data.get("mode"), data.get("kind"),
                                                   data.get("keep")), {}
            except approval.KeepError as exc:
                modes, problem = self._modes(), {"problem": str(exc)}
            return message(P.APPROVAL, id=rid, approval=modes, **self._origin(), **problem)
        if request.op == "sandbox":
            from kli.tools.core import sandbox

            problem = {}
            try:
                sandbox.set_choice(self.ws, data.get("mode"), data.get("network"),
                                   data.get("keep") is not False)
            except approval.KeepError as exc:
                problem = {"problem": str(exc)}
            except ValueError as exc:
                return _error(rid, "bad_request", str(exc))
            return message(P.SANDBOX, id=rid, box=self._box(), **problem)
        if request.op == "changes":  # the panel's timeline: the store, read (no call, no event)
            from kli.tools.core import undo

            found, total = undo.timeline_json(self.ws.root, data.get("session"),
                                              data.get("limit") or P.UI_CHANGES_LIMIT)
            return message(P.CHANGES, id=rid, changes=found, total=total,
                           notebook=self.ws.notebook)
        if request.op == "bulk":
            result = approval.bulk(self.ws, data["action"], "ui", session=data.get("session"),
                                   path=data.get("path"), note=data.get("note") or "")
        elif request.op == "undo":  # the panel's Undo: the undo tool, as the person
            args = {k: data[k] for k in ("change", "session", "since", "force") if k in data}
            result = self.ws.call("undo", args, self.magic_session, source="ui")
        elif request.op == "accept":
            result = self.accept(data["candidate"], "ui")
        else:
            result = self.reject(data["candidate"], "ui", data.get("note") or "")
        return message(P.RESULT, id=rid, **result.to_json())
