"""The project's roles, on one screen. Each is a ``typing.Protocol``; mypy checks that the
implementations named below conform (a typed assignment next to each implementation).

| role            | implementations                                                   |
|-----------------|-------------------------------------------------------------------|
| Tool, Profile   | ``core.registry.Tool`` / ``Profile`` entries in ``tools.registry`` |
| Host            | ``core.workspace.Workspace`` (in process), ``kli.client`` clients  |
| Transport       | ``kli.kernel.client``: ``ZmqTransport``, ``ServerTransport``       |
| Model           | an OpenAI-compatible chat call (a script's own, a test stand-in)   |
| AsyncModel      | ``agentmodels.litellm_model`` (any provider, through litellm)      |
| RepairLanguage  | the modules ``file.repair.python`` and ``file.repair.lisp`` (the role
|                 | is defined beside the types it speaks, in ``file.repair.common``)  |
| SyntaxChecker   | the checkers of ``ws.syntax.CHECKERS`` (defined in ``ws.syntax``)   |
| NotebookStore   | ``notebook.disk.DiskNotebooks`` (on disk; a host may swap in another) |
| CellRunner      | ``kli.kernel.notebook.runner.ShellRunner`` (the kernel; none elsewhere) |
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from kli.tools.file.repair.common import RepairLanguage
from kli.tools.ws.syntax import SyntaxChecker

if TYPE_CHECKING:
    from kli.tools.core.registry import Call
    from kli.tools.core.result import ToolResult
    from kli.tools.notebook.model import Notebook
    from kli.tools.process.run_cells import CellRun

# Two roles live beside the types they speak, below this layer (so the packages that implement
# them need not import upward); they are named here with the others.
__all__ = ["AsyncModel", "CellRunner", "Host", "Model", "NotebookStore", "Profile",
           "RepairLanguage", "SyntaxChecker", "Tool", "Transport"]


class Tool(Protocol):
    """One callable tool: its spec for a model, and what a call runs."""

    @property
    def name(self) -> str: ...
    @property
    def profile(self) -> str: ...
    @property
    def run(self) -> Callable[[Call], ToolResult]: ...
    def spec(self) -> dict[str, Any]: ...


class Profile(Protocol):
    """Rules applied around each call of a profile's tools (a loop guard, a result cap)."""

    @property
    def name(self) -> str: ...
    @property
    def before(self) -> Callable[[Call], ToolResult | None]: ...
    @property
    def after(self) -> Callable[[Call, ToolResult], ToolResult]: ...


class Host(Protocol):
    """What calls tools for an agent: in process, or in a kernel over a connection."""

    def call(self, tool: str, args: dict[str, Any] | None = None, /) -> ToolResult: ...
    def specs(self, profile: str = "kli", /) -> list[dict[str, Any]]: ...


class Transport(Protocol):
    """The connection a kernel client speaks over: shell messages out, iopub messages in."""

    def send_shell(self, msg_type: str, content: dict[str, Any]) -> str: ...  # its msg_id
    def recv_iopub(self, timeout: float) -> dict[str, Any] | None: ...  # None: timed out
    def alive(self) -> bool: ...  # False once the kernel is known to be dead
    def interrupt(self) -> None: ...
    def close(self) -> None: ...


class Model(Protocol):
    """One chat-completions call: ``tools`` None asks for the final answer (no tool calls)."""

    def __call__(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> dict[str, Any]: ...


class AsyncModel(Protocol):
    """``Model`` for asyncio: the agent loop awaits it (``agent.run_agent_async``)."""

    async def __call__(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> dict[str, Any]: ...


class NotebookStore(Protocol):
    """Where the notebook tools load notebooks and write change sets (``Workspace.notebooks``).

    The on-disk store is ``notebook.disk.DiskNotebooks``; a host that knows a notebook is open
    (a live document) puts a store of its own in its place. ``load`` gives a ``Notebook`` whose
    ``raw`` is what it was loaded from; ``commit`` writes each ``(real path, changed notebook)``
    and each ``(real path, bytes)`` file whole-or-nothing, and raises ``atomic.Stale`` (nothing
    written) when a notebook is no longer the one loaded or a file not its ``expected`` bytes,
    or another ``OSError`` when a write fails. ``live`` tells the tools whether the person sees
    the change in place (False: on disk)."""

    @property
    def live(self) -> bool: ...
    def load(self, real: str, /) -> Notebook: ...
    def commit(
        self,
        notebooks: Sequence[tuple[str, Notebook]],
        files: Sequence[tuple[str, bytes]] = (),
        expected: Mapping[str, bytes | None] | None = None,
        /,
    ) -> None: ...


class CellRunner(Protocol):
    """Runs one notebook cell's source in the image as a cell (``Workspace.cell_runner``, the
    ``run_cells`` tool): its outputs as nbformat outputs, its execution count, how it ended.
    ``timeout`` seconds bound the run; it never raises for what the code does. ``cell`` (the
    notebook's real path and the cell's id) is where a host that can show outputs while the
    cell runs shows them."""

    def run(self, source: str, timeout: float, /,
            cell: tuple[str, str] | None = None) -> CellRun: ...


if TYPE_CHECKING:  # mypy checks that core's implementations conform to their roles
    from kli.tools.core import registry as _registry
    from kli.tools.core.workspace import Workspace

    def _is_tool(tool: _registry.Tool) -> Tool:
        return tool

    def _is_profile(profile: _registry.Profile) -> Profile:
        return profile

    def _is_host(ws: Workspace) -> Host:
        return ws
