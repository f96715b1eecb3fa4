"""The kli kernel: ipykernel's IPython kernel plus one tool Workspace living in its image.

Thin on purpose: it creates the Workspace over the notebook's namespace, hands it to the comm
hub and the magics, and guarantees the concurrency rule of docs/concurrency.md — cells and
tool calls never run in the image at the same time.
"""

from __future__ import annotations

import concurrent.futures
import os
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
        register_magics(self.shell, self.hub)
        self._executing = False

    @property
    def kernel_info(self) -> dict[str, Any]:
        info = dict(super().kernel_info)
        info["kli"] = {"protocol": PROTOCOL_VERSION, "comm_targets": ["kli.agent", "kli.ui"]}
        return info

    def do_history(self, hist_access_type: str, output: bool, raw: bool, session: int = 0,
                   start: int = 0, stop: int | None = None, n: int | None = None,
                   pattern: str | None = None, unique: bool = False) -> dict[str, Any]:
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
        on_main = threading.current_thread() is threading.main_thread()
        if on_main:
            self._executing = True
        try:
            return await super().do_execute(*args, **kwargs)
        finally:
            if on_main:
                self._executing = False

    def run_in_image(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on the main thread, between cells.

        Comm messages of the main shell are already handled there, one at a time, after the
        running cell. A message that arrived on a subshell thread (JupyterLab ≥ 4.4) is handed
        to the main loop and waited for, so the tool still runs after the cell and on the thread
        where SIGINT and deadline signals land.
        """
        if threading.current_thread() is threading.main_thread():
            return fn()
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        loop = self.io_loop

        def attempt() -> None:
            if self._executing:  # a top-level-await cell is suspended: wait for it
                loop.call_later(_RETRY_S, attempt)
                return
            try:
                future.set_result(fn())
            except BaseException as exc:
                future.set_exception(exc)

        loop.add_callback(attempt)
        return future.result()
