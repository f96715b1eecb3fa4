"""``%kli agent TASK``: the agent loop (``kli.tools.agent``) run from a cell, on the kernel's own
Workspace — a thin host adapter (docs/agent.md).

Where things run: the magic runs on the kernel's main thread, inside the cell, which keeps the
image for the run (no other cell can run meanwhile). The loop runs on an event loop of its own
in a worker thread; each tool call runs in a further worker thread (``call_in_thread``), in an
agent session of its own (``agent: <task head>``, source ``agent``, so approval mode holds its
calls). The main thread shows the steps as they come, in one display updated in place, and is
where the kernel's stop button lands: the ``KeyboardInterrupt`` cancels the loop, and the
kernel's SIGINT handler stops the tool call in flight (a command killed, Python interrupted).

A held call waits in ``await_decision`` on the loop's thread, never the main thread: the
person's Accept arrives on the UI comm, which the kernel serves on a subshell while the cell
runs (JupyterLab ≥ 4.4). An Accept that runs an ``eval`` runs in the image after the running
cell — after this run — so the run sees it still pending (docs/agent.md).
"""

from __future__ import annotations

import asyncio
import html
import queue
import threading
from typing import Any

from kli.tools.agent import (
    AgentRun,
    CallStarted,
    Event,
    Held,
    Outcome,
    Reply,
    SessionHost,
    bounded,
    run_agent_async,
)
from kli.tools.core.result import ToolResult

TASK_HEAD = 40  # characters of the task in the session's label
STOP_GRACE = 5.0  # seconds the cell waits for a cancelled run to wind down


class StepsView:
    """The run's steps as one display (``text/plain`` and ``text/html``) updated in place. It
    publishes through the display publisher of the moment it was made, so a ``run_cells``
    the agent runs (which swaps the shell's publisher for its own capture) does not swallow it."""

    def __init__(self, shell: Any, title: str) -> None:
        import uuid

        self.publisher = shell.display_pub
        self.display_id = uuid.uuid4().hex
        self.title = title
        self.lines: list[str] = []
        self._started: dict[int, int] = {}  # turn → index of its "running" line
        self._publish(update=False)

    def add(self, event: Event) -> None:
        if isinstance(event, CallStarted):
            self._started[event.turn] = len(self.lines)
            self.lines.append(event.line())
        elif isinstance(event, Outcome | Held) and event.turn in self._started:
            self.lines[self._started.pop(event.turn)] = event.line()
        elif isinstance(event, Reply) and not event.calls:
            return  # the model's answer: the run's last line (Finished) shows it, in full
        else:
            self.lines.append(event.line())
        self._publish(update=True)

    def note(self, text: str) -> None:
        self.lines.append(text)
        self._publish(update=True)

    def text(self) -> str:
        return "\n".join([self.title, *self.lines])

    def _publish(self, update: bool) -> None:
        body = html.escape(self.text())
        data = {"text/plain": self.text(),
                "text/html": f'<pre class="kli-agent-steps">{body}</pre>'}
        self.publisher.publish(data, metadata={}, transient={"display_id": self.display_id},
                               update=update)


class _ReviewedHost(SessionHost):
    """``%kli agent``'s host: each call carries the review the other kli notebooks of this
    machine's Jupyter servers ask of it (``kli.kernel.client.reach``): a notebook under review
    that this kernel's call can change holds it, whatever this kernel's own mode says."""

    def call(self, tool: str, args: dict[str, Any] | None = None, /) -> ToolResult:
        from kli.kernel.client.reach import (
            kernel_id_of,
            notebook_kernels,
            of_workspace,
            review_among,
        )
        from kli.tools.core.approval import required

        kernels = notebook_kernels()
        review = review_among(of_workspace(self.ws), kernel_id_of(_own_connection_file()),
                              kernels) if kernels else {}
        with required(review):
            return super().call(tool, args)


def _own_connection_file() -> str:
    try:
        from ipykernel.kernelapp import IPKernelApp

        return str(IPKernelApp.instance().connection_file) if IPKernelApp.initialized() else ""
    except Exception:
        return ""


def run_in_cell(hub: Any, shell: Any, task: str, *, model: Any, profile: str,
                max_turns: int, review_wait: float) -> AgentRun | None:
    """Run ``task`` with ``model`` on the kernel's Workspace, its steps shown in the cell; the
    run, or None when the person stopped it. The agent session is closed at the end (a call
    still held stays in the queue for the person, marked expired)."""
    ws = hub.ws
    session = ws.open_session(f"agent: {bounded(task, TASK_HEAD)}")
    host = _ReviewedHost(ws, session)
    # A model's label names what it is (a replay says it is a recording); else its id.
    named = getattr(model, "label", None) or getattr(model, "model", "model")
    view = StepsView(shell, f"kli agent ({session.label}, {named})")
    events: queue.Queue[Event] = queue.Queue()
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    box: dict[str, Any] = {}

    def runner() -> None:
        asyncio.set_event_loop(loop)
        job = loop.create_task(run_agent_async(
            task, model, host, profile=profile, max_turns=max_turns, on_event=events.put,
            review_wait=review_wait))
        box["task"] = job
        ready.set()
        try:
            box["run"] = loop.run_until_complete(job)
        except BaseException as exc:  # cancelled, or the model's own failure: shown below
            box["error"] = exc
        finally:
            loop.close()

    thread = threading.Thread(target=runner, name="kli-agent-loop", daemon=True)
    thread.start()

    def drain() -> None:
        while True:
            try:
                view.add(events.get_nowait())
            except queue.Empty:
                return

    try:
        try:
            while thread.is_alive():
                try:
                    view.add(events.get(timeout=0.1))
                except queue.Empty:
                    pass
        except KeyboardInterrupt:  # the kernel's stop button
            ready.wait(STOP_GRACE)
            job = box.get("task")
            if job is not None:
                loop.call_soon_threadsafe(job.cancel)
            _join(thread, STOP_GRACE)
            drain()
            view.note("Stopped (the kernel's stop button): the run ended and the call in "
                      "flight was stopped.")
            return None
        drain()
        error = box.get("error")
        if error is not None:
            view.note(f"The run failed: {type(error).__name__}: {error}")
            return None
        run: AgentRun = box["run"]
        return run
    finally:
        ws.close_session(session.id)


def _join(thread: threading.Thread, timeout: float) -> None:
    """Wait for ``thread``, a second stop press included."""
    import time

    deadline = time.monotonic() + timeout
    while thread.is_alive() and time.monotonic() < deadline:
        try:
            thread.join(0.1)
        except KeyboardInterrupt:
            pass
