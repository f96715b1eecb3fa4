"""Edit results as one MIME bundle, and the ipywidgets Accept / Reject fallback driven through
the comm messages ipywidgets itself uses (a real kernel)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kli.kernel import EDIT_MIME
from kli.kernel.display import edit_bundle, file_html
from kli.tools.core.changes import file_change
from kli.tools.core.result import ToolResult
from kli.tools.file.anchors import line_hash

pytestmark = pytest.mark.kernel

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def test_bundle_has_the_json_html_and_plain_views() -> None:
    change = file_change("a.py", "x = 1\n", "x = 2\n", "written")
    result = ToolResult.success("Edited a.py (+1 -1)", files=[change])
    bundle = edit_bundle("edit", result, "s9")
    assert set(bundle) == {EDIT_MIME, "text/html", "text/plain"}
    assert bundle[EDIT_MIME] == {"v": 1, "tool": "edit", "ok": True, "text": "Edited a.py (+1 -1)",
                                 "session": "s9", "files": [change]}
    assert bundle["text/plain"] == "Edited a.py (+1 -1)"
    assert "-x = 1</span>" in bundle["text/html"] and "+x = 2</span>" in bundle["text/html"]


def test_html_diff_escapes_file_text() -> None:
    change = file_change("<b>.html", "", "<script>alert(1)</script>\n", "written")
    html = file_html(change)
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;b&gt;.html" in html


def _preview_cell(root: Path, name: str) -> tuple[str, str]:
    (root / name).write_text("a = 1\nb = 2\nc = 3\n")
    h = line_hash("b = 2")
    return f"%kli read {name}\n", f"%%kli edit --repair preview\n@@ {name}\n= 2:{h}..2:{h}\n~b = max(2, 3\n"


def _widgets(kernel: Any, since: int) -> dict[str, dict[str, Any]]:
    """Widget models opened since ``since``: comm id → state."""
    return {m["content"]["comm_id"]: m["content"]["data"]["state"] for m in kernel.seen[since:]
            if m["msg_type"] == "comm_open" and m["content"]["target_name"] == "jupyter.widget"}


def _click(kernel: Any, comm_id: str) -> None:
    kernel.send(comm_id, {"method": "custom", "content": {"event": "click"}})


def _show_preview(kernel: Any, name: str) -> tuple[int, list[dict[str, Any]], dict[str, dict[str, Any]]]:
    read, edit = _preview_cell(kernel.root, name)
    kernel.execute(read)
    start = len(kernel.seen)
    content, outputs = kernel.execute(edit)
    assert content["status"] == "ok"
    return start, outputs, _widgets(kernel, start)


def test_preview_shows_bundle_and_widget_whose_accept_writes(kernel: Any) -> None:
    _start, outputs, models = _show_preview(kernel, "wid.py")
    bundles = [o["content"]["data"] for o in outputs if o["msg_type"] == "display_data"]
    edit_views = [b for b in bundles if EDIT_MIME in b]
    assert len(edit_views) == 1 and {"text/html", "text/plain"} <= set(edit_views[0])
    (change,) = edit_views[0][EDIT_MIME]["files"]
    assert change["status"] == "preview" and change["candidate"]
    cid = change["candidate"]
    assert any(WIDGET_MIME in b for b in bundles)
    buttons = {s["description"]: cid_ for cid_, s in models.items() if s["_model_name"] == "ButtonModel"}
    labels = [cid_ for cid_, s in models.items() if s["_model_name"] == "LabelModel"]
    assert set(buttons) == {"Accept", "Reject"} and len(labels) == 1
    ui, _ = kernel.open_comm("kli.ui", {"replay": 0})  # opened after the widget was shown
    click_at = len(kernel.seen)
    _click(kernel, buttons["Accept"])
    note = kernel.wait_for(lambda m: m["msg_type"] == "comm_msg" and m["content"]["comm_id"] == ui
                           and m["content"]["data"].get("op") == "resolved", since=click_at)
    assert note["content"]["data"]["candidate"] == cid
    assert note["content"]["data"]["status"] == "written" and note["content"]["data"]["by"] == "widget"
    assert (kernel.root / "wid.py").read_text() == "a = 1\nb = max(2, 3)\nc = 3\n"
    label_update = kernel.wait_for(
        lambda m: m["msg_type"] == "comm_msg" and m["content"]["comm_id"] == labels[0]
        and "value" in m["content"]["data"].get("state", {}), since=click_at)
    assert label_update["content"]["data"]["state"]["value"].startswith("Accepted: ")
    for button in buttons.values():
        kernel.wait_for(lambda m, b=button: m["msg_type"] == "comm_msg"
                        and m["content"]["comm_id"] == b
                        and m["content"]["data"].get("state", {}).get("disabled") is True,
                        since=click_at)
    kernel.close_comm(ui)


def test_widget_reject_discards_the_candidate(kernel: Any) -> None:
    _start, _outputs, models = _show_preview(kernel, "widrej.py")
    buttons = {s["description"]: c for c, s in models.items() if s["_model_name"] == "ButtonModel"}
    label = next(c for c, s in models.items() if s["_model_name"] == "LabelModel")
    click_at = len(kernel.seen)
    _click(kernel, buttons["Reject"])
    update = kernel.wait_for(lambda m: m["msg_type"] == "comm_msg" and m["content"]["comm_id"] == label
                             and "value" in m["content"]["data"].get("state", {}), since=click_at)
    assert update["content"]["data"]["state"]["value"].startswith("Rejected: ")
    assert (kernel.root / "widrej.py").read_text() == "a = 1\nb = 2\nc = 3\n"
    content, _outputs = kernel.execute("%kli caps")  # still answering
    assert content["status"] == "ok"


def test_no_widget_when_the_extension_listens(kernel: Any) -> None:
    ui, _ = kernel.open_comm("kli.ui", {"replay": 0})
    _start, outputs, models = _show_preview(kernel, "noext.py")
    assert models == {}
    assert any(EDIT_MIME in o["content"].get("data", {}) for o in outputs)
    kernel.close_comm(ui)


def test_huge_texts_get_no_html_diff_but_keep_the_json() -> None:
    before = "x = 1\n" * 60_000
    change = file_change("big.py", before, before.replace("x", "y"), "written")
    assert "diff not shown: file too large" in file_html(change)
    bundle = edit_bundle("write", ToolResult.success("Wrote big.py", files=[change]), "s1")
    assert bundle[EDIT_MIME]["files"][0]["after"].startswith("y = 1")
