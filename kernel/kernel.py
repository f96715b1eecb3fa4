"""The kli kernel: ipykernel's IPython kernel plus one tool Workspace living in its image.

Thin on purpose: it creates the Workspace over the notebook's namespace, hands it to the comm
hub and the magics, and guarantees the concurrency rule of docs/concurrency.md — cells and
tool calls never run in the image at the same time.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

from ipykernel.ipkernel import IPythonKernel
from ipykernel.kernelapp import IPKernelApp

from kli.kernel.protocol import COMM_TARGETS, MODEL_OPS, PROTOCOL_VERSION

T = TypeVar("T")

# How often a tool call handed to the main thread re-checks whether a top-level-await cell has
# finished (such a cell yields the main loop while it awaits, but still owns the image).
_RETRY_S = 0.01
# Subshells the kernel makes for tool calls that do not touch the image (one per agent comm,
# shared round-robin past this many), plus one that answers ping / list while others work.
MAX_TOOL_SUBSHELLS = 4
# Characters of a running cell's code a status shows.
STATUS_CODE_CHARS = 120


def own_notebook(root: str, env: Mapping[str, str] | None = None) -> str | None:
    """The notebook a Jupyter server started this kernel for (``JPY_SESSION_NAME``: absolute,
    or relative to the server's root), relative to the tools' ``root`` when it lies there; None
    for a kernel started otherwise. Each change the kernel records names it (the Timeline of a
    notebook shows that notebook's changes)."""
    name = (os.environ if env is None else env).get("JPY_SESSION_NAME", "")
    if not name.lower().endswith(".ipynb"):
        return None
    if os.path.isabs(name):
        rel = os.path.relpath(os.path.realpath(name), root)
        return name if rel.startswith("..") else rel.replace(os.sep, "/")
    parts = name.replace("\\", "/").split("/")
    for i in range(len(parts)):  # the server's root is this root or a folder above it
        tail = "/".join(parts[i:])
        if os.path.isfile(os.path.join(root, tail)):
            return tail
    return name

class KliKernel(IPythonKernel):
    implementation = "kli"
    implementation_version = "0.1.0"
    banner = (
        "kli — Python 3 kernel whose namespace is a live image for agent tools.\n"
        "%kli tools · %kli help TOOL · %kli TOOL args… · %%kli TOOL (cell = main argument)"
    )

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if self.session is not None:
            self.session.send = _whole_on_sigint(self.session.send)  # type: ignore[method-assign]
        from kli.kernel.comms import Hub
        from kli.kernel.magics import register_magics
        from kli.tools import Workspace

        assert self.shell is not None
        self.workspace = Workspace(os.getcwd(), namespace=self.shell.user_ns,
                                   hidden_names=lambda: self.shell.user_ns_hidden
                                   if self.shell is not None else {})
        self.workspace.notebook = own_notebook(self.workspace.root)
        from kli.kernel.notebook import attach

        attach(self)  # notebooks: the live Y document where open, else the file (docs/notebook.md)
        self.hub = Hub(self, self.workspace)
        self.hub.register(self.comm_manager)
        self._magics = register_magics(self.shell, self.hub)
        self._executing = False
        self._tools_ready = False
        # What the image is busy with, for status replies answered while it runs.
        self._cell: dict[str, Any] | None = None
        self._image_call: dict[str, Any] | None = None
        self._waiting_calls = 0
        self._status_lock = threading.Lock()
        # Subshells made for non-image tool calls (created on the shell channel thread).
        self._tool_subshells: list[str] = []
        self._comm_subshell: dict[str, str] = {}
        self._control_subshell: str | None = None

    def ensure_tools(self) -> None:
        """Import the registry (every tool module) and register the per-tool magic aliases.

        Deferred to the first cell: the registry import costs about as much as a fifth of
        the stock kernel's start, and start-up to the first kernel_info reply stays at the
        stock kernel's pace. Comm handlers import it on their own first use.
        """
        if self._tools_ready:
            return
        self._tools_ready = True
        from kli.kernel.magics import register_aliases

        register_aliases(self.shell, self._magics)

    # -- the stop button: SIGINT, and the tool calls running on subshells --------------------
    def start(self) -> None:
        super().start()
        # Between messages ipykernel ignores SIGINT (kernelapp.init_signal); the handler that
        # replaces that ignoring still ignores it on the main thread, and stops the tool
        # calls running on subshells, which no signal reaches.
        if (threading.current_thread() is threading.main_thread()
                and signal.getsignal(signal.SIGINT) == signal.SIG_IGN):
            signal.signal(signal.SIGINT, self._sigint_between_messages)
        from kli.tools.core.interrupts import install_stop_signal

        install_stop_signal()  # a cancelled eval is stopped alone (interrupts.stop_main_call)

    def pre_handler_hook(self) -> None:
        # ipykernel's own hook installs default_int_handler for the handler's run; this one
        # raises the same KeyboardInterrupt and stops the subshells' tool calls too.
        self.saved_sigint_handler = signal.signal(signal.SIGINT, self._sigint_in_handler)

    def _sigint_between_messages(self, signum: int, frame: Any) -> None:
        _stop_subshell_calls()

    @contextlib.contextmanager
    def _cancel_on_sigint(self, future: Any) -> Iterator[None]:
        # A top-level-await cell runs under ipykernel's own SIGINT handler, which cancels the
        # cell through another loop's callback: the cell went on until what it awaited was
        # done (a 30 s sleep answered CancelledError 28 s after the interrupt). Wrapped here so
        # the cell is cancelled at once, on its own loop, and the subshells' tool calls stop.
        with super()._cancel_on_sigint(future):
            cancels = signal.getsignal(signal.SIGINT)

            def stop_all(signum: int, frame: Any) -> None:
                _stop_subshell_calls()
                with contextlib.suppress(RuntimeError):  # its loop closed: nothing to cancel
                    future.get_loop().call_soon_threadsafe(
                        lambda: None if future.done() else future.cancel())
                if callable(cancels):
                    cancels(signum, frame)

            signal.signal(signal.SIGINT, stop_all)
            yield

    def _sigint_in_handler(self, signum: int, frame: Any) -> None:
        _stop_subshell_calls()
        signal.default_int_handler(signum, frame)

    @property
    def kernel_info(self) -> dict[str, Any]:
        info = dict(super().kernel_info)
        info["kli"] = {"protocol": PROTOCOL_VERSION, "comm_targets": list(COMM_TARGETS)}
        return info

    def do_history(  # type: ignore[override]
        self, hist_access_type: str, output: bool, raw: bool, session: int = 0,
        start: int = 0, stop: int | None = None, n: int | None = None,
        pattern: str | None = None, unique: bool = False,
    ) -> dict[str, Any]:
        # IPython labels the current session's lines "session 0" in a range reply, while a
        # tail names it by number; a client that asks for the range of the session a tail
        # reported then gets rows naming another session. Name the real number.
        reply: dict[str, Any] = super().do_history(hist_access_type, output, raw, session,
                                                   start, stop, n, pattern, unique)
        if hist_access_type == "range" and self.shell is not None:
            current = self.shell.history_manager.session_number
            reply["history"] = [(current if s == 0 else s, *rest) for s, *rest in reply["history"]]
        return reply

    async def do_execute(self, *args: Any, **kwargs: Any) -> Any:
        self.ensure_tools()
        on_main = threading.current_thread() is threading.main_thread()
        if on_main:
            self._executing = True
            code = args[0] if args else kwargs.get("code", "")
            self._cell = {"kind": "cell", "code": str(code)[:STATUS_CODE_CHARS],
                          "started": time.time()}
        try:
            return await super().do_execute(*args, **kwargs)
        finally:
            if on_main:
                self._executing = False
                self._cell = None

    def do_shutdown(self, restart: bool) -> dict[str, Any]:  # type: ignore[override]
        # Every session ends: background jobs are killed with their process groups, traces
        # are removed (docs/live-image.md).
        self.workspace.close()
        close = getattr(self.workspace.notebooks, "close", None)
        if callable(close):
            close()
        reply: dict[str, Any] = super().do_shutdown(restart)
        return reply

    # -- status: answered while the image is busy ---------------------------------------------
    def busy_status(self) -> dict[str, Any]:
        """What the image is doing now: a cell or an image tool call (what, since when), and
        how many image tool calls wait for it. Safe from any thread."""
        with self._status_lock:
            running = self._cell or self._image_call
            waiting = self._waiting_calls
        now = time.time()
        status: dict[str, Any] = {"busy": running is not None, "waiting_calls": waiting}
        if running is not None:
            status["running"] = {**running, "seconds": round(now - running["started"], 3)}
        return status

    # -- which thread a tool call runs on -----------------------------------------------------
    def run_call(self, tool: str, fn: Callable[[], T],
                 done: Callable[[T | None, BaseException | None], None],
                 args: Any = None) -> None:
        """Run a tool call: at once on this thread when the tool does not touch the image
        (its registry entry says so), else in the image after any running cell. A tool that
        only waits for a person (``waits``: ``await_decision``) waits on a thread of its own
        and replies from there: the message that asked for it is handled at once, so the
        kernel's status goes back to idle while only an agent waits (the person saw Busy for
        as long as the wait, up to ten minutes); real work keeps its busy until it ends."""
        from kli.tools.registry import REGISTRY

        entry = REGISTRY.tools.get(tool)
        if entry is not None and entry.waits and not entry.touches_image:
            threading.Thread(target=_finish, args=(fn, done), name=f"kli-{tool}",
                             daemon=True).start()
            return
        if entry is not None and not entry.in_image(self.workspace, args):
            self._answer(fn, done)
            return
        self.run_in_image(fn, done, label=tool)

    def route_agent_comm(self, comm: Any) -> None:
        """Route this agent comm's non-image requests to a tool subshell.

        ipykernel 7.4 asks a comm where each of its incoming ``comm_msg`` goes
        (``_reply_subshell_for(data, default)``, on the shell channel thread). A call to a
        tool that does not touch the image, and ping / list / cancel, go to a subshell of this kernel,
        so they are answered while a cell runs on the main thread; everything else goes where
        it was addressed (the main shell, unless the client chose a subshell).
        """
        if getattr(self, "shell_channel_thread", None) is None:
            return  # no subshells here: every request goes to the main shell as before

        def route(data: Any, default: str | None) -> str | None:
            try:
                return self._route(comm.comm_id, data, default)
            except Exception:  # routing must never lose a message
                return default

        comm._reply_subshell_for = route

    async def shell_channel_thread_main(self, msg: Any) -> None:
        """Open kli comms on the control subshell, so an agent (an MCP client) attaching while
        a cell runs gets its ``hello`` at once instead of queueing behind the cell. Every other
        message is routed by ipykernel as usual.

        ipykernel re-routes only ``comm_msg`` / ``comm_close`` by content; a ``comm_open`` must
        name its subshell in its header, so the message is re-signed with the header naming the
        control subshell (the session's own serializer, as any sender would)."""
        try:
            routed = self._comm_open_route(msg)
        except Exception:  # routing must never lose a message
            routed = None
        if routed is not None:
            sub, frames = routed
            self.shell_channel_thread.manager.get_shell_channel_to_subshell_socket(
                sub).send_multipart(frames)
            return
        await super().shell_channel_thread_main(msg)

    def _comm_open_route(self, msg: Any) -> tuple[str, list[Any]] | None:
        from kli.kernel import AGENT_TARGET, UI_TARGET

        if self.session is None:
            return None
        idents, frames = self.session.feed_identities(msg, copy=False)
        # content=False: checks the signature without recording it, as ipykernel's own peek
        # does; a message not routed here is deserialized again by ipykernel.
        peek = self.session.deserialize(frames, content=False, copy=False)
        head = peek["header"]
        if head.get("msg_type") != "comm_open" or head.get("subshell_id"):
            return None
        content = self.session.unpack(peek["content"])
        if not isinstance(content, dict) or content.get("target_name") not in (AGENT_TARGET,
                                                                                UI_TARGET):
            return None
        if self._control_subshell is None:
            self._control_subshell = self._new_subshell()
        full = {**peek, "header": {**head, "subshell_id": self._control_subshell},
                "content": content}
        return self._control_subshell, self.session.serialize(full, ident=idents)

    def _route(self, comm_id: str, data: Any, default: str | None) -> str | None:
        if not isinstance(data, dict):
            return default
        op = data.get("op", "call")
        if op in ("ping", "reach", "list", "cancel", *MODEL_OPS):  # MODEL_OPS: a tab's answers
            if self._control_subshell is None:
                self._control_subshell = self._new_subshell()
            return self._control_subshell
        if op in ("accept", "reject", "bulk"):
            # A person's decision (the panel's Accept / Reject) is served while a cell runs:
            # the cell may be waiting for it (%kli agent's held call). One that runs an eval
            # is handed to the main thread after the cell (run_in_image), as before.
            return self._tool_subshell(comm_id)
        if op != "call":
            return default
        from kli.tools.registry import REGISTRY

        entry = REGISTRY.tools.get(data.get("tool"))  # type: ignore[arg-type]
        if entry is None or entry.in_image(self.workspace, data.get("args")):
            return default
        return self._tool_subshell(comm_id)

    def _tool_subshell(self, comm_id: str) -> str:
        """The tool subshell serving comm ``comm_id`` (made on first use, up to
        ``MAX_TOOL_SUBSHELLS``, then shared)."""
        sub = self._comm_subshell.get(comm_id)
        if sub is None:
            if len(self._tool_subshells) < MAX_TOOL_SUBSHELLS:
                sub = self._new_subshell()
                self._tool_subshells.append(sub)
            else:
                sub = self._tool_subshells[len(self._comm_subshell) % MAX_TOOL_SUBSHELLS]
            self._comm_subshell[comm_id] = sub
        return sub

    def _new_subshell(self) -> str:
        # On the shell channel thread, where ipykernel's manager makes subshells (the same
        # call a create_subshell_request ends in).
        sub: str = self.shell_channel_thread.manager._create_subshell()
        return sub

    def run_in_image(self, fn: Callable[[], T], done: Callable[[T | None, BaseException | None], None],
                     label: str = "") -> None:
        """Run ``fn`` in the image when no cell is running, then ``done(value, exception)``.

        On the main thread between cells (the normal case: comm messages of the main shell
        queue behind the running cell) it runs at once. A message handled while a
        top-level-await cell is suspended (ipykernel dispatches comms concurrently then), or on
        a subshell thread (JupyterLab ≥ 4.4), is handed to the main loop and run after the
        cell — still on the main thread, where SIGINT and SIGALRM deadlines land.
        """
        if threading.current_thread() is threading.main_thread() and not self._executing:
            self._in_image(fn, done, label)
            return
        loop = self.io_loop
        with self._status_lock:
            self._waiting_calls += 1

        def attempt() -> None:
            if self._executing:
                loop.call_later(_RETRY_S, attempt)
                return
            with self._status_lock:
                self._waiting_calls -= 1
            # Outside a message handler ipykernel ignores SIGINT; an interrupt request must
            # still stop a long eval run from here.
            previous = signal.signal(signal.SIGINT, self._sigint_in_handler)
            try:
                self._in_image(fn, done, label)
            finally:
                signal.signal(signal.SIGINT, previous)

        loop.add_callback(attempt)

    def _in_image(self, fn: Callable[[], T], done: Callable[[T | None, BaseException | None], None],
                  label: str) -> None:
        def finished(value: T | None, exc: BaseException | None) -> None:
            # Not busy any more before the reply goes out: a ping that follows the reply
            # must not see this call still running.
            with self._status_lock:
                self._image_call = None
            done(value, exc)

        with self._status_lock:
            self._image_call = {"kind": "tool call", "tool": label, "started": time.time()}
        try:
            self._answer(fn, finished)
        finally:
            with self._status_lock:
                self._image_call = None

    def _answer(self, fn: Callable[[], T],
                done: Callable[[T | None, BaseException | None], None]) -> None:
        """``_finish(fn, done)``; on the main thread the stop button raises KeyboardInterrupt
        only while ``fn`` runs (``interrupt_only_inside``)."""
        if threading.current_thread() is not threading.main_thread():
            _finish(fn, done)
            return
        interrupt_only_inside(fn, done, raising=self._sigint_in_handler,
                              quiet=self._sigint_between_messages)


def _whole_on_sigint(send: Callable[..., Any]) -> Callable[..., Any]:
    """``Session.send`` that an interrupt cannot cut in two. A message is several zmq frames
    sent one by one; a KeyboardInterrupt between them left a partial message queued, the next
    message's frames were appended to it, and the client rejected the result ("Invalid
    Signature"). The send is a critical section (``interrupts.deferred``): a signal arriving
    during it is delivered to its own handler once the message is whole."""
    from kli.tools.core.interrupts import deferred

    def send_whole(*args: Any, **kwargs: Any) -> Any:
        with deferred():
            return send(*args, **kwargs)

    return send_whole


def _stop_subshell_calls() -> None:
    """From a SIGINT handler on the main thread: interrupt the tool calls running on other
    threads (``interrupts.stop_threads``), from a thread of its own — the handler may have
    interrupted the main thread holding the lock that takes."""
    from kli.tools.core.interrupts import stop_threads

    threading.Thread(target=stop_threads, name="kli-stop-subshell-calls", daemon=True).start()


def interrupt_only_inside(fn: Callable[[], T],
                          done: Callable[[T | None, BaseException | None], None], *,
                          raising: Callable[[int, Any], None],
                          quiet: Callable[[int, Any], None]) -> None:
    """``_finish(fn, done)`` on the main thread, with SIGINT handled by ``raising`` (a
    KeyboardInterrupt: the call is interrupted, its reply says so) while ``fn`` runs and by
    ``quiet`` (no exception) before and after it. An interrupt landing while the reply was
    built or sent raised out of the comm handler: ipykernel logged "KeyboardInterrupt caught in
    kernel" and the reply, not yet sent, was lost. One landing as ``fn`` ends is ``fn``'s:
    the reply says interrupted."""
    held = signal.signal(signal.SIGINT, quiet)

    def interruptible() -> T:
        signal.signal(signal.SIGINT, raising)
        try:
            return fn()
        finally:
            signal.signal(signal.SIGINT, quiet)

    try:
        _finish(interruptible, done)
    finally:
        if held is not None:  # None: a handler not set from Python, which cannot be put back
            signal.signal(signal.SIGINT, held)


def _finish(fn: Callable[[], T], done: Callable[[T | None, BaseException | None], None]) -> None:
    try:
        value = fn()
    except BaseException as exc:  # KeyboardInterrupt included: the caller turns it into a reply
        done(None, exc)
        return
    done(value, None)


class KliKernelApp(IPKernelApp):
    """ipykernel's app, putting the kernel's folder back on ``sys.path`` for the person's cells
    when the kernelspec's PYTHONSAFEPATH kept it off while Python and the kernel loaded
    (IPython then leaves it off: ``sys.flags.safe_path``). It goes where IPython puts it:
    before the first site-packages, after the standard library."""

    def init_path(self) -> None:
        super().init_path()
        if "" in sys.path or self.ignore_cwd or not sys.flags.safe_path:
            return
        at = next((i for i, p in enumerate(sys.path)
                   if os.path.basename(p) in ("site-packages", "dist-packages")), 0)
        sys.path.insert(at, "")
