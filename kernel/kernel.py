"""The kli kernel: ipykernel's IPython kernel plus one tool Workspace living in its image.

Thin on purpose: it creates the Workspace over the notebook's namespace, hands it to the comm
hub and the magics, and guarantees the concurrency rule of docs/concurrency.md — cells and
tool calls never run in the image at the same time.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from ipykernel.ipkernel import IPythonKernel

from kli.kernel import PROTOCOL_VERSION

T = TypeVar("T")

# How often a tool call handed to the main thread re-checks whether a top-level-await cell has
# finished (such a cell yields the main loop while it awaits, but still owns the image).
_RETRY_S = 0.01


class KliKernel(IPythonKernel):
    implementation = "kli"
    implementation_version = "0.1.0"
    banner = (
        "kli — Python 3 kernel whose namespace is a live image for agent tools.\n"
        "%kli tools · %kli help TOOL · %kli TOOL args… · %%kli TOOL (cell = main argument)"
    )

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        from kli.kernel.comms import Hub
        from kli.kernel.magics import register_magics
        from kli.tools import Workspace

        assert self.shell is not None
        self.workspace = Workspace(os.getcwd(), namespace=self.shell.user_ns)
        self.hub = Hub(self, self.workspace)
        self.hub.register(self.comm_manager)
        self._magics = register_magics(self.shell, self.hub)
        self._executing = False
        self._tools_ready = False

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

    @property
    def kernel_info(self) -> dict[str, Any]:
        info = dict(super().kernel_info)
        info["kli"] = {"protocol": PROTOCOL_VERSION, "comm_targets": ["kli.agent", "kli.ui"]}
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
        try:
            return await super().do_execute(*args, **kwargs)
        finally:
            if on_main:
                self._executing = False

    def run_in_image(self, fn: Callable[[], T], done: Callable[[T | None, BaseException | None], None]
                     ) -> None:
        """Run ``fn`` in the image when no cell is running, then ``done(value, exception)``.

        On the main thread between cells (the normal case: comm messages of the main shell
        queue behind the running cell) it runs at once. A message handled while a
        top-level-await cell is suspended (ipykernel dispatches comms concurrently then), or on
        a subshell thread (JupyterLab ≥ 4.4), is handed to the main loop and run after the
        cell — still on the main thread, where SIGINT and SIGALRM deadlines land.
        """
        if threading.current_thread() is threading.main_thread() and not self._executing:
            _finish(fn, done)
            return
        loop = self.io_loop

        def attempt() -> None:
            if self._executing:
                loop.call_later(_RETRY_S, attempt)
                return
            # Outside a message handler ipykernel ignores SIGINT; an interrupt request must
            # still stop a long eval run from here.
            previous = signal.signal(signal.SIGINT, signal.default_int_handler)
            try:
                _finish(fn, done)
            finally:
                signal.signal(signal.SIGINT, previous)

        loop.add_callback(attempt)


def _finish(fn: Callable[[], T], done: Callable[[T | None, BaseException | None], None]) -> None:
    try:
        value = fn()
    except BaseException as exc:  # KeyboardInterrupt included: the caller turns it into a reply
        done(None, exc)
        return
    done(value, None)
