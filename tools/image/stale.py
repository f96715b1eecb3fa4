"""Telling the agent that an edit left a live module stale.

After a file-changing call (any tool reporting ``details["files"]``: write, edit, ws_write,
ws_edit, ws_patch…) changed a ``.py`` file that a module of the image was imported from
(``Workspace.modules``: ``sys.modules`` of the image's process), the result says which module is
stale — the image still runs the code it loaded — and how to reload it. The text the file had
before its first such change is remembered (per workspace, per file, until the module is
reloaded with ``redefine``), so ``redefine`` can return it as the prior definition.
"""

from __future__ import annotations

import os
import weakref
from typing import TYPE_CHECKING, Any

from kli.tools.core.result import ToolResult

if TYPE_CHECKING:
    from kli.tools.core.registry import Call
    from kli.tools.core.workspace import Workspace

MAX_PRIOR_CHARS = 1_048_576  # a prior text larger than this is not kept

_prior: weakref.WeakKeyDictionary[Workspace, dict[str, str]] = weakref.WeakKeyDictionary()
# A module's __file__ -> its real path: a thousand realpath calls per edit would cost more
# than the edit (an imported file is rarely re-linked while the image runs).
_real: dict[str, str] = {}


def modules_from(ws: Workspace, real: str) -> list[str]:
    """Names of the image's modules loaded from the file ``real``."""
    found = []
    for name, module in list(ws.modules().items()):
        path = getattr(module, "__file__", None)
        if isinstance(path, str) and path.endswith(".py"):
            known = _real.get(path)
            if known is None:
                try:
                    known = _real[path] = os.path.realpath(path)
                except (OSError, ValueError):
                    continue
            if known == real:
                found.append(name)
    return sorted(found)


def prior_text(ws: Workspace, real: str) -> str | None:
    return _prior.get(ws, {}).get(real)


def forget(ws: Workspace, real: str) -> None:
    _prior.get(ws, {}).pop(real, None)


def after_call(call: Call, result: ToolResult) -> ToolResult:
    """The workspace's hook after every call (``Registry.after_call``): a changing call's result
    that names written files, and is no held proposal, gets ``annotate``d."""
    if call.tool.mutates and "files" in result.details and "proposal" not in result.details:
        return annotate(call.ws, result)  # an edited .py the image imported
    return result


def annotate(ws: Workspace, result: ToolResult) -> ToolResult:
    """``result`` with a note per stale module (unchanged when no imported file changed)."""
    files = result.details.get("files")
    if not isinstance(files, list):
        return result
    notes: list[str] = []
    stale: list[dict[str, Any]] = []
    for change in files:
        if not isinstance(change, dict) or change.get("status") not in ("written", "moved"):
            continue
        path = change.get("path")
        if not isinstance(path, str) or not path.endswith(".py"):
            continue
        real = os.path.realpath(os.path.join(ws.root, path))
        names = modules_from(ws, real)
        if not names:
            continue
        before = change.get("before")
        if isinstance(before, str) and len(before) <= MAX_PRIOR_CHARS:
            _prior.setdefault(ws, {}).setdefault(real, before)
        for name in names:
            stale.append({"module": name, "path": path})
            notes.append(
                f"[live module {name} (imported from {path}) is stale: the image still runs "
                f"the code it loaded. Reload it with redefine {{\"reload\": \"{name}\", "
                f"\"code\": \"…\"}} (or eval 'import importlib; importlib.reload({name})'); "
                f"names taken with `from {name} import …` keep the old objects]"
            )
    if not notes:
        return result
    return ToolResult(result.ok, result.text + "\n" + "\n".join(notes),
                      {**result.details, "stale_modules": stale})
