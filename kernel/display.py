"""How a tool result shows in a notebook cell.

A result whose ``details`` has ``files`` (edit, write, ws_patch… — every file-changing tool
reports that shape, see kli.tools.core.changes) is published as ONE MIME bundle:
``application/vnd.kli.edit+json`` for the JupyterLab extension, ``text/html`` with a coloured
unified diff, and ``text/plain`` with the result text. A repair preview also gets an ipywidgets
Accept / Reject control when no extension is listening (no ``kli.ui`` comm is open). Other
results print as text, errors on stderr so the frontend marks them as errors; a result's
images (``look``) follow as images, so the person sees what a model is sent.
"""

from __future__ import annotations

import difflib
import html
import sys
from typing import TYPE_CHECKING, Any

from kli.kernel.protocol import EDIT_BUNDLE, EDIT_MIME, PROTOCOL_VERSION, build

if TYPE_CHECKING:
    from kli.kernel.comms import Hub
    from kli.tools.core.result import ToolResult

# A diff longer than this many lines is cut in the HTML view (the JSON keeps the texts).
MAX_HTML_DIFF_LINES = 2000
# Texts larger than this (before + after) get no HTML diff: difflib can take seconds on them.
MAX_HTML_DIFF_CHARS = 512 * 1024

_STYLE = {
    "+": "color:#116329;background:#dafbe1",
    "-": "color:#82071e;background:#ffebe9",
    "@": "color:#0550ae;background:#ddf4ff",
    " ": "",
}


def edit_payload(tool: str, result: ToolResult, session: str) -> dict[str, Any]:
    """The ``application/vnd.kli.edit+json`` object of docs/protocol.md."""
    from kli.kernel.comms import jsonable

    return build(EDIT_BUNDLE, v=PROTOCOL_VERSION, tool=tool, ok=result.ok, text=result.text,
                 session=session, files=jsonable(result.details.get("files", [])))


def diff_lines(change: dict[str, Any]) -> list[str]:
    """Unified diff lines (no line terminators) of one FILE's before → after."""
    before = change.get("before") or ""
    after = change.get("after") or ""
    path = str(change.get("path", ""))
    return list(
        difflib.unified_diff(
            before.splitlines(), after.splitlines(), f"a/{path}", f"b/{path}", lineterm=""
        )
    )


def file_html(change: dict[str, Any]) -> str:
    """One file's header and coloured diff; every text is escaped."""
    path = html.escape(str(change.get("path", "")))
    status = html.escape(str(change.get("status", "")))
    head = (
        f"<div style='font-weight:bold'>{path} <span style='font-weight:normal'>[{status}] "
        f"+{int(change.get('added') or 0)} -{int(change.get('removed') or 0)}</span></div>"
    )
    notes = []
    if change.get("candidate"):
        notes.append(f"candidate {html.escape(str(change['candidate']))}")
    if change.get("reason"):
        notes.append(f"reason: {html.escape(str(change['reason']))}")
    if change.get("message"):
        notes.append(html.escape(str(change["message"])))
    if notes:
        head += f"<div style='color:#57606a'>{' · '.join(notes)}</div>"
    size = len(change.get("before") or "") + len(change.get("after") or "")
    if change.get("too_large") or size > MAX_HTML_DIFF_CHARS:
        return head + "<div><em>diff not shown: file too large</em></div>"
    lines = diff_lines(change)[2:]  # the ---/+++ header repeats the path
    cut = len(lines) > MAX_HTML_DIFF_LINES
    rows = []
    for line in lines[:MAX_HTML_DIFF_LINES]:
        style = _STYLE.get(line[:1], "")
        rows.append(f"<span style='{style}'>{html.escape(line)}</span>" if style else html.escape(line))
    if cut:
        rows.append(f"<em>… {len(lines) - MAX_HTML_DIFF_LINES} more diff lines</em>")
    body = "\n".join(rows) if rows else "<em>no changes</em>"
    return head + f"<pre style='margin:2px 0 8px 0;padding:4px'>{body}</pre>"


def result_html(payload: dict[str, Any]) -> str:
    colour = "#116329" if payload["ok"] else "#82071e"
    first = html.escape(payload["text"].splitlines()[0] if payload["text"] else "")
    parts = [f"<div class='kli-edit' style='font-family:monospace'>"
             f"<div style='color:{colour}'>{html.escape(payload['tool'])}: {first}</div>"]
    parts += [file_html(f) for f in payload["files"] if isinstance(f, dict)]
    parts.append("</div>")
    return "".join(parts)


def edit_bundle(tool: str, result: ToolResult, session: str) -> dict[str, Any]:
    payload = edit_payload(tool, result, session)
    return {EDIT_MIME: payload, "text/html": result_html(payload), "text/plain": result.text}


def previews(result: ToolResult) -> list[dict[str, Any]]:
    files = result.details.get("files") or []
    return [f for f in files if isinstance(f, dict) and f.get("status") == "preview" and f.get("candidate")]


def show_result(hub: Hub, tool: str, result: ToolResult, session: str) -> None:
    """Display ``result`` in the current cell (see the module docstring)."""
    from IPython.display import display

    if isinstance(result.details.get("files"), list) and result.details["files"]:
        display(edit_bundle(tool, result, session), raw=True)
        if not hub.ui_comms:
            for change in previews(result):
                display(repair_widget(hub, change))
        return
    stream = sys.stdout if result.ok else sys.stderr
    text = result.text
    stream.write(text if text.endswith("\n") else text + "\n")
    stream.flush()
    for part in result.images:  # look: the person sees the images the model is sent
        from IPython.display import Image

        display(Image(data=part.data, format=part.mime.split("/")[-1],
                      width=part.width, height=part.height))


def repair_widget(hub: Hub, change: dict[str, Any]) -> Any:
    """Accept / Reject buttons for one pending candidate (frontends without the extension)."""
    import ipywidgets as widgets

    cid = str(change["candidate"])
    accept = widgets.Button(description="Accept", button_style="success", tooltip=f"write {cid}")
    reject = widgets.Button(description="Reject", button_style="danger", tooltip=f"discard {cid}")
    why = change.get("message") or change.get("reason") or "repair needs review"
    label = widgets.Label(value=f"Repair preview {cid} for {change.get('path')}: {why}")
    box = widgets.HBox([accept, reject, label])
    box.add_class("kli-repair")

    def finish(outcome: str, result: ToolResult) -> None:
        first = result.text.splitlines()[0] if result.text else ""
        label.value = f"{outcome}: {first}" if first else outcome
        accept.disabled = reject.disabled = True

    def on_accept(_button: Any) -> None:
        result = hub.accept(cid, "widget")
        finish("Accepted" if result.ok else "Not accepted", result)

    def on_reject(_button: Any) -> None:
        result = hub.reject(cid, "widget")
        finish("Rejected" if result.ok else "Not rejected", result)

    accept.on_click(on_accept)
    reject.on_click(on_reject)
    return box
