"""The kli-kernel JupyterLab extension in a real JupyterLab with the kli kernel, in Chromium.

Inline diffs of `%%kli edit` results, Accept / Reject of repair previews (written, unchanged,
refused), and the activity panel fed by an agent attached with kli.client.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Any

import pytest

from kli.tools.file.anchors import line_hash
from tests.waiting import wait_until

pytestmark = pytest.mark.browser

ORIGINAL = "a = 1\nb = 2\nc = 3\n"


def edit_cell(name: str, old: str, new: str, *, repair: str | None = None) -> str:
    """A `%%kli edit` cell replacing the line `old` (line 2 of ORIGINAL) with `new`."""
    h = line_hash(old)
    flag = f" --repair {repair}" if repair else ""
    return f"%%kli edit{flag}\n@@ {name}\n= 2:{h}..2:{h}\n~{new}\n"


def added_lines(scope: Any) -> list[str]:
    return [t.strip() for t in scope.locator(
        ".cm-line.cm-changedLine, .cm-line.cm-inlineChangedLine").all_inner_texts()]


def removed_lines(scope: Any) -> list[str]:
    return [t.strip() for t in scope.locator(".cm-deletedChunk .cm-deletedLine").all_inner_texts()]


def test_kli_edit_cell_renders_a_diff_with_added_and_removed_lines(lab: Any) -> None:
    root: Path = lab.server.root
    (root / "calc.py").write_text("def area(r):\n    return 3.14 * r * r\n\nprint(area(2))\n")
    h = line_hash("    return 3.14 * r * r")
    lab.open("diff.ipynb")
    lab.run("%kli read calc.py").locator(".jp-OutputArea-output").wait_for()
    cell = lab.run(
        "%%kli edit\n@@ calc.py\n"
        f"= 2:{h}..2:{h}\n~    import math\n~    return math.pi * r ** 2\n"
    )
    out = cell.locator(".kli-EditOutput")
    out.locator(".kli-DiffView .cm-editor").wait_for()
    view = out.locator(".kli-FileChange")
    assert view.locator(".kli-FileChange-path").inner_text() == "calc.py"
    assert view.locator(".kli-Added").inner_text() == "+2"
    assert view.locator(".kli-Removed").inner_text() == "-1"
    assert view.locator(".kli-FileChange-status").inner_text() == "written"
    assert added_lines(view) == ["import math", "return math.pi * r ** 2"]
    assert removed_lines(view) == ["return 3.14 * r * r"]
    # Python highlighting from JupyterLab's languages: keywords are styled spans — in the added
    # lines and in the deleted ones (drawn once: the view must have its language by then).
    assert view.locator(".cm-content span", has_text="import").count() >= 1
    deleted_keyword = view.locator(".cm-deletedChunk .cm-deletedLine span",
                                   has_text=re.compile(r"^return$"))
    deleted_keyword.first.wait_for()
    assert (root / "calc.py").read_text().startswith("def area(r):\n    import math\n")
    lab.screenshot("inline-diff-unified", cell)

    view.locator("button.kli-FileChange-mode").click()
    view.locator(".cm-mergeView").wait_for()
    assert view.locator(".cm-merge-a .cm-content").inner_text().count("3.14") == 1
    assert "math.pi" in view.locator(".cm-merge-b .cm-content").inner_text()
    assert view.locator("button.kli-FileChange-mode").get_attribute("aria-pressed") == "true"
    lab.screenshot("inline-diff-split", cell)
    assert lab.console_errors() == []


def test_repair_preview_accept_writes_reject_keeps_and_stale_accept_is_refused(lab: Any) -> None:
    root: Path = lab.server.root
    for name in ("acc.py", "rej.py", "stale.py", "else.py"):
        (root / name).write_text(ORIGINAL)
    lab.open("repair.ipynb")
    lab.run("%kli read acc.py\n%kli read rej.py\n%kli read stale.py\n%kli read else.py").locator(
        ".jp-OutputArea-output").first.wait_for()

    # Accept: the file becomes the candidate the preview showed.
    cell = lab.run(edit_cell("acc.py", "b = 2", "b = max(2, 3", repair="preview"))
    view = cell.locator(".kli-FileChange")
    view.locator(".kli-Repair").wait_for()
    assert view.locator(".kli-FileChange-status").inner_text() == "preview (not written)"
    reason = view.locator(".kli-Repair-reason").inner_text()
    assert reason.startswith("Not applied automatically: a preview was asked for")
    mark = view.locator(".kli-RepairMark")
    assert mark.inner_text() == ")"
    assert "inserted ')'" in (mark.get_attribute("title") or "")
    assert added_lines(view) == ["b = max(2, 3)"]
    assert (root / "acc.py").read_text() == ORIGINAL
    # The extension listens on kli.ui, so the kernel adds no ipywidgets fallback.
    assert cell.locator(".jupyter-widgets").count() == 0
    lab.screenshot("repair-preview", cell)
    accept = view.get_by_role("button", name="Accept")
    reject = view.get_by_role("button", name="Reject")
    accept.click()
    wait_until(lambda: (root / "acc.py").read_text() == "a = 1\nb = max(2, 3)\nc = 3\n",
               "acc.py to be written")
    view.locator(".kli-Repair[data-state='written']").wait_for()
    assert view.locator(".kli-Repair-outcome").inner_text() == "Written."
    assert accept.is_disabled() and reject.is_disabled()
    assert view.locator(".kli-FileChange-status").inner_text() == "written"
    lab.screenshot("repair-accepted", cell)

    # Reject: nothing is written; keyboard only (the buttons are real, focusable buttons).
    cell = lab.run(edit_cell("rej.py", "b = 2", "b = [2, 3", repair="preview"))
    view = cell.locator(".kli-FileChange")
    reject = view.get_by_role("button", name="Reject")
    reject.focus()
    lab.page.keyboard.press("Enter")
    view.locator(".kli-Repair[data-state='rejected']").wait_for()
    assert view.locator(".kli-Repair-outcome").inner_text() == "Rejected."
    assert view.get_by_role("button", name="Accept").is_disabled() and reject.is_disabled()
    assert (root / "rej.py").read_text() == ORIGINAL

    # Accept after the file changed on disk: refused, with the kernel's words, file untouched.
    cell = lab.run(edit_cell("stale.py", "b = 2", "b = {2: 3", repair="preview"))
    view = cell.locator(".kli-FileChange")
    view.locator(".kli-Repair").wait_for()
    (root / "stale.py").write_text("changed = True\n")
    view.get_by_role("button", name="Accept").click()
    view.locator(".kli-Repair[data-state='refused']").wait_for()
    outcome = view.locator(".kli-Repair-outcome").inner_text()
    assert outcome.startswith("Refused: ") and "changed since this preview" in outcome
    assert "run the edit again for a fresh preview" in outcome  # what the person can do
    assert view.get_by_role("button", name="Accept").is_disabled()
    assert (root / "stale.py").read_text() == "changed = True\n"
    lab.screenshot("repair-refused", cell)

    # Resolved elsewhere (a magic accepts it): the inline view follows the kernel's `resolved`.
    cell = lab.run(edit_cell("else.py", "b = 2", "b = max(2, 3", repair="preview"))
    view = cell.locator(".kli-FileChange")
    view.locator(".kli-Repair").wait_for()
    candidate = view.locator(".kli-Repair").get_attribute("data-candidate")
    lab.run(f"%kli edit --accept-repair {candidate} --path else.py").locator(
        ".jp-OutputArea-output").first.wait_for()
    view.locator(".kli-Repair[data-state='written']").wait_for()
    assert view.locator(".kli-Repair-outcome").inner_text() == "Written (by magic)."
    assert view.get_by_role("button", name="Accept").is_disabled()
    assert (root / "else.py").read_text() == "a = 1\nb = max(2, 3)\nc = 3\n"

    # The dark theme: the same views, coloured from --jp-* variables.
    lab.command("apputils:change-theme", {"theme": "JupyterLab Dark"})
    lab.page.wait_for_selector("body[data-jp-theme-light='false']", state="attached")
    lab.page.wait_for_timeout(300)
    lab.screenshot("repair-dark", lab.page)
    lab.command("apputils:change-theme", {"theme": "JupyterLab Light"})
    lab.page.wait_for_selector("body[data-jp-theme-light='true']", state="attached")
    assert lab.console_errors() == []


def test_activity_panel_shows_agent_calls_live_and_accepts_its_preview(lab: Any) -> None:
    from kli import client

    root: Path = lab.server.root
    (root / "early.py").write_text(ORIGINAL)
    (root / "live.py").write_text(ORIGINAL)
    (root / "pend.py").write_text(ORIGINAL)
    lab.open("agent.ipynb")
    lab.run("%kli bash echo from-the-notebook").locator(".jp-OutputArea-output").wait_for()
    agent = client.connect(str(lab.connection_file()), label="test agent",
                           timeout=30)
    try:
        # Before this page's comm exists (the page reloads): replayed by the kernel's hello.
        assert agent.call("read", {"path": "early.py"}).ok
        h = line_hash("b = 2")
        assert agent.call("edit", {"input": f"@@ early.py\n= 2:{h}..2:{h}\n~b = 20\n"}).ok
        lab.command("docmanager:save")
        lab.page.reload()
        lab.page.wait_for_selector(".jp-Notebook .jp-Cell", state="visible")
        lab.wait_idle()
        panel = lab.activity_panel()
        panel.locator(".kli-Row[data-tool='edit']").first.wait_for()
        lab.widen_right_sidebar(220)
        assert panel.locator(".kli-Row[data-tool='bash']").count() == 1

        # Live: a call made while the panel is open shows as a new row with its diff.
        assert agent.call("read", {"path": "live.py"}).ok
        assert agent.call("edit", {"input": f"@@ live.py\n= 2:{h}..2:{h}\n~b = 'live'\n"}).ok
        row = panel.locator(".kli-Row[data-tool='edit']", has_text="live.py")
        row.wait_for()
        assert row.locator(".kli-Row-ok").inner_text() == "written"  # an applied edit wrote
        assert row.locator(".kli-Row-session").inner_text() == "test agent"
        assert row.locator(".kli-Row-counts").inner_text() == "+1 -1"
        assert row.locator(".kli-Row-duration").inner_text().endswith(("ms", "s"))
        row.locator(".kli-Row-toggle").click()
        row.locator(".kli-DiffView .cm-editor").wait_for()
        assert added_lines(row) == ["b = 'live'"]
        assert removed_lines(row) == ["b = 2"]
        assert "Edited live.py" in row.locator(".kli-Row-text").inner_text()

        # Filters: by session (the agent's only) and by tool.
        panel.locator("select.kli-Filter-session").select_option(label="test agent")
        assert panel.locator(".kli-Row[data-tool='bash']").count() == 0
        assert panel.locator(".kli-Row[data-tool='edit']").count() == 2
        panel.locator("select.kli-Filter-tool").select_option("read")
        assert panel.locator(".kli-Row").count() == 2
        assert panel.locator(".kli-Row[data-tool='read']").count() == 2
        panel.locator("select.kli-Filter-tool").select_option("")
        panel.locator("select.kli-Filter-session").select_option("")

        # A pending preview: listed, counted on the sidebar tab, accepted from the panel.
        assert agent.call("read", {"path": "pend.py"}).ok
        r = agent.call("edit", {"input": f"@@ pend.py\n= 2:{h}..2:{h}\n~b = max(2, 3\n",
                                "repair": "preview"})
        assert r.ok is not None and r.details["files"][0]["status"] == "preview"
        item = panel.locator(".kli-Pending-item", has_text="pend.py")
        item.wait_for()
        tab = lab.page.locator(".lm-TabBar-tab.kli-ActivityTab")
        assert tab.get_attribute("data-kli-pending") == "1"
        assert "from test agent" in item.inner_text()
        assert item.locator(".kli-RepairMark").inner_text() == ")"
        lab.screenshot("activity-panel", lab.page)
        item.get_by_role("button", name="Accept").click()
        wait_until(lambda: (root / "pend.py").read_text() == "a = 1\nb = max(2, 3)\nc = 3\n",
                   "pend.py to be written")
        item.locator(".kli-Repair[data-state='written']").wait_for()
        wait_until(lambda: tab.get_attribute("data-kli-pending") is None, "the badge to clear")

        # Bulk: two more previews, Reject all, nothing written.
        for name in ("p1.py", "p2.py"):
            (root / name).write_text(ORIGINAL)
            assert agent.call("read", {"path": name}).ok
            agent.call("edit", {"input": f"@@ {name}\n= 2:{h}..2:{h}\n~b = (2\n",
                                "repair": "preview"})
        wait_until(lambda: tab.get_attribute("data-kli-pending") == "2", "two pending")
        panel.get_by_role("button", name="Reject all").click()
        for name in ("p1.py", "p2.py"):
            panel.locator(f".kli-Pending-item:has-text('{name}') "
                          ".kli-Repair[data-state='rejected']").wait_for()
            assert (root / name).read_text() == ORIGINAL
        wait_until(lambda: tab.get_attribute("data-kli-pending") is None, "the badge to clear")

        # Bulk: two more, Accept all, both written.
        for name in ("p3.py", "p4.py"):
            (root / name).write_text(ORIGINAL)
            assert agent.call("read", {"path": name}).ok
            agent.call("edit", {"input": f"@@ {name}\n= 2:{h}..2:{h}\n~b = (3\n",
                                "repair": "preview"})
        wait_until(lambda: tab.get_attribute("data-kli-pending") == "2", "two pending")
        panel.get_by_role("button", name="Accept all").click()
        accepted = "a = 1\nb = (3)\nc = 3\n"
        wait_until(lambda: all((root / n).read_text() == accepted for n in ("p3.py", "p4.py")),
                   "p3.py and p4.py to be written")
        wait_until(lambda: tab.get_attribute("data-kli-pending") is None, "the badge to clear")

    finally:
        agent.close()
    assert lab.console_errors() == []


def test_notebook_7_renders_previews_accepts_them_and_shows_the_panel(lab: Any) -> None:
    if importlib.util.find_spec("notebook") is None:
        pytest.skip("Notebook 7 (the notebook package) is not installed")
    root: Path = lab.server.root
    (root / "nb7.py").write_text(ORIGINAL)
    lab.open("nb7.ipynb", ui="notebook")
    lab.run("%kli read nb7.py").locator(".jp-OutputArea-output").wait_for()
    cell = lab.run(edit_cell("nb7.py", "b = 2", "b = max(2, 3", repair="preview"))
    view = cell.locator(".kli-FileChange")
    view.locator(".kli-Repair").wait_for()
    assert removed_lines(view) == ["b = 2"]
    view.get_by_role("button", name="Accept").click()
    wait_until(lambda: (root / "nb7.py").read_text() == "a = 1\nb = max(2, 3)\nc = 3\n",
               "nb7.py to be written")
    view.locator(".kli-Repair[data-state='written']").wait_for()
    panel = lab.activity_panel()
    panel.locator(".kli-Row[data-tool='edit']", has_text="nb7.py").first.wait_for()
    lab.screenshot("notebook7", lab.page)
    # Notebook 7.6 with JupyterLab 4.6 logs one error of its own on load ("reading 'schema'",
    # raised in notebook_core); it is there with this extension disabled too.
    ours = [e for e in lab.console_errors() if "/static/notebook/" not in e or "kli" in e]
    assert ours == []


def test_after_a_kernel_restart_the_panel_starts_over_and_old_previews_are_not_accepted(
        lab: Any) -> None:
    root: Path = lab.server.root
    (root / "old.py").write_text(ORIGINAL)
    (root / "new.py").write_text(ORIGINAL)
    lab.open("restart.ipynb")
    panel = lab.activity_panel()
    lab.run("%kli bash echo before-restart")
    panel.locator(".kli-Row", has_text="echo before-restart").wait_for()
    lab.run("%kli read old.py").locator(".jp-OutputArea-output").wait_for()
    old_view = lab.run(edit_cell("old.py", "b = 2", "b = max(2, 3", repair="preview")).locator(
        ".kli-FileChange")
    old_view.locator(".kli-Repair").wait_for()
    lab.page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.restart()")
    lab.wait_idle()
    # The old kernel's calls are gone with it; the new kernel's appear live.
    panel.locator(".kli-Row", has_text="echo before-restart").wait_for(state="detached")
    lab.run("%kli bash echo after-restart")
    panel.locator(".kli-Row", has_text="echo after-restart").wait_for()
    assert panel.locator(".kli-Activity-where").inner_text().endswith("live")

    # The new kernel numbers its candidates afresh: the old output's Accept must not write the
    # new kernel's preview (of another file) that may carry the same id.
    lab.run("%kli read new.py").locator(".jp-OutputArea-output").wait_for()
    new_view = lab.run(edit_cell("new.py", "b = 2", "b = [2, 3", repair="preview")).locator(
        ".kli-FileChange")
    new_view.locator(".kli-Repair").wait_for()
    panel.locator(".kli-Pending-item", has_text="new.py").wait_for()
    old_view.get_by_role("button", name="Accept").click()
    old_view.locator(".kli-Repair[data-state='gone']").wait_for()
    assert old_view.locator(".kli-Repair-outcome").inner_text().startswith("No longer pending")
    assert old_view.get_by_role("button", name="Accept").is_disabled()
    assert (root / "old.py").read_text() == ORIGINAL
    assert (root / "new.py").read_text() == ORIGINAL
    assert new_view.locator(".kli-Repair[data-state='open']").count() == 1
    assert lab.console_errors() == []


def test_activity_panel_follows_the_current_notebook(lab: Any) -> None:
    lab.open("one.ipynb")
    panel = lab.activity_panel()
    lab.run("%kli bash echo in-notebook-one")
    panel.locator(".kli-Row", has_text="echo in-notebook-one").wait_for()
    lab.server.new_notebook("two.ipynb")
    lab.command("docmanager:open", {"path": "two.ipynb"})
    lab.page.wait_for_selector(".kli-Activity-where:has-text('two.ipynb')")
    lab.wait_idle()
    lab.run("%kli bash echo in-notebook-two")
    panel.locator(".kli-Row", has_text="echo in-notebook-two").wait_for()
    assert panel.locator(".kli-Row", has_text="in-notebook-one").count() == 0
    lab.command("docmanager:open", {"path": "one.ipynb"})
    panel.locator(".kli-Row", has_text="echo in-notebook-one").wait_for()
    assert panel.locator(".kli-Row", has_text="in-notebook-two").count() == 0
    assert panel.locator(".kli-Activity-where").inner_text().startswith("one.ipynb")
    assert lab.console_errors() == []


def test_a_created_file_shows_only_added_lines(lab: Any) -> None:
    # @codemirror/merge draws an empty original's one line as removed; nothing was there.
    lab.open("created.ipynb")
    cell = lab.run("%%kli write made.py\nx = 1\ny = 2\n")
    out = cell.locator(".kli-EditOutput")
    out.locator(".kli-DiffView .cm-editor").wait_for()
    view = out.locator(".kli-FileChange")
    assert view.locator(".kli-Added").inner_text() == "+2"
    assert added_lines(view) == ["x = 1", "y = 2"]
    assert view.locator(".cm-deletedChunk .cm-deletedLine:visible").count() == 0
    assert (lab.server.root / "made.py").read_text() == "x = 1\ny = 2\n"
    lab.screenshot("created-file-diff", cell)
    assert lab.console_errors() == []
