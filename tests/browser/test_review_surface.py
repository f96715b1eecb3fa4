"""The review surface as a person sees it, in a real JupyterLab and Chromium: the diff header
counts the lines that differ, a decided preview reads as decided, a refusal before anything
was proposed is said once with no empty card, side by side asked for in a narrow notebook says
why it shows unified, an edit shows its fresh anchors under the diff, a diff draws exactly the
lines that changed (an append is the appended lines; no empty line after the last), unchanged
lines fold into words the fonts have, and the activity panel opens wide enough, keeps its width
across a reload and keeps file names visible. Screenshots go to tests/artifacts/
(docs/img/ext-review-*)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kli.tools.file.anchors import line_hash
from tests.waiting import wait_until


def added_lines(scope: Any) -> list[str]:
    return [t.strip() for t in scope.locator(
        ".cm-line.cm-changedLine, .cm-line.cm-inlineChangedLine").all_inner_texts()]


def shown_lines(view: Any) -> list[str]:
    """The lines the unified diff draws, in order: removed lines as '-text', the rest as
    '+text' (added) or ' text' (unchanged); a fold as '…N unchanged lines'."""
    return list(view.locator(".kli-DiffView .cm-content").evaluate("""(content) => {
      const out = [];
      for (const el of content.children) {
        if (getComputedStyle(el).display === 'none') continue;
        if (el.classList.contains('cm-deletedChunk')) {
          for (const line of el.querySelectorAll('.cm-deletedLine')) {
            if (getComputedStyle(line).display !== 'none') out.push('-' + line.textContent);
          }
        } else if (el.classList.contains('kli-Fold')) {
          out.push('…' + el.textContent);
        } else if (el.classList.contains('cm-line')) {
          out.push((el.classList.contains('cm-changedLine') ? '+' : ' ') + el.textContent);
        }
      }
      return out;
    }"""))


pytestmark = pytest.mark.browser

FUNC = "def f():\n    x = 1\n    return x\n"


def keep_and_add_patch(name: str) -> str:
    """Replace lines 2..3 with themselves and one unbalanced line between: the patch replaces
    2 lines with 3, the texts differ by one added line (after the repair closes the bracket)."""
    h2, h3 = line_hash("    x = 1"), line_hash("    return x")
    return (f"%%kli edit --repair preview\n@@ {name}\n= 2:{h2}..3:{h3}\n"
            "~    x = 1\n~    y = [1, 2\n~    return x\n")


def test_a_preview_counts_the_lines_that_differ_and_reads_as_decided_once_accepted(lab: Any) -> None:
    root: Path = lab.server.root
    (root / "count.py").write_text(FUNC)
    lab.open("counts.ipynb")
    lab.run("%kli read count.py").locator(".jp-OutputArea-output").wait_for()
    cell = lab.run(keep_and_add_patch("count.py"))
    view = cell.locator(".kli-FileChange")
    view.locator(".kli-Repair").wait_for()
    view.locator(".kli-DiffView .cm-editor").wait_for()
    # The patch replaced 2 lines with 3; the diff shows one added line, and so does the header.
    assert added_lines(view) == ["y = [1, 2]"]
    assert view.locator(".kli-Added").inner_text() == "+1"
    assert view.locator(".kli-Removed").inner_text() == "-0"
    # No phantom empty last line: the file's four lines, the last one its last line.
    assert shown_lines(view) == [" def f():", "     x = 1", "+    y = [1, 2]", "     return x"]
    # A preview reads as a preview: no red error, no agent text ("Not written", the call).
    head = cell.locator(".kli-EditOutput-head")
    assert head.locator(".kli-EditOutput-outcome").inner_text() == "preview"
    assert cell.locator(".kli-EditOutput-text").count() == 0
    text = cell.locator(".kli-EditOutput").inner_text()
    assert "Not written" not in text and "accept_repair" not in text
    # The explanation of the repair is said once (next to Accept / Reject).
    assert text.count("inserted ']'") == 1
    lab.screenshot("review-preview-counts", cell)

    # The activity panel's row repeats the header's numbers.
    panel = lab.activity_panel()
    row = panel.locator(".kli-Row[data-tool='edit']", has_text="count.py")
    row.first.wait_for()
    assert row.first.locator(".kli-Row-counts").inner_text() == "+1 -0"

    view.get_by_role("button", name="Accept").click()
    wait_until(lambda: (root / "count.py").read_text() == FUNC.replace(
        "    return x", "    y = [1, 2]\n    return x"), "count.py to be written")
    view.locator(".kli-Repair[data-state='written']").wait_for()
    head.locator(".kli-EditOutput-outcome:text-is('written')").wait_for()
    assert head.get_attribute("data-ok") == "true"
    assert view.locator(".kli-FileChange-status").inner_text() == "written"
    lab.screenshot("review-decided", cell)
    assert lab.console_errors() == []


def test_a_refusal_before_anything_was_proposed_is_said_once_with_no_empty_card(lab: Any) -> None:
    root: Path = lab.server.root
    (root / "st.py").write_text(FUNC)
    (root / "unread.py").write_text(FUNC)
    lab.open("refusals.ipynb")
    lab.run("%kli read st.py").locator(".jp-OutputArea-output").wait_for()
    (root / "st.py").write_text(FUNC.replace("x = 1", "x = 2"))
    h = line_hash("    x = 1")
    cell = lab.run(f"%%kli edit\n@@ st.py\n= 2:{h}\n~    x = 3\n")
    out = cell.locator(".kli-EditOutput")
    out.locator(".kli-EditOutput-text").wait_for()
    assert out.locator(".kli-FileChange").count() == 0
    text = out.inner_text()
    assert text.count("stale anchor") == 1 and "+0" not in text
    lab.screenshot("review-stale-refusal", cell)

    cell = lab.run(f"%%kli edit\n@@ unread.py\n= 2:{h}\n~    x = 3\n")
    out = cell.locator(".kli-EditOutput")
    out.locator(".kli-EditOutput-text").wait_for()
    assert out.locator(".kli-FileChange").count() == 0
    assert "No text to compare" not in out.inner_text()
    assert "has not been read" in out.inner_text()
    assert lab.console_errors() == []


def test_side_by_side_asked_for_in_a_narrow_notebook_says_why_it_shows_unified(lab: Any) -> None:
    root: Path = lab.server.root
    (root / "narrow.py").write_text(FUNC)
    lab.open("narrow.ipynb")
    lab.run("%kli read narrow.py").locator(".jp-OutputArea-output").wait_for()
    h = line_hash("    x = 1")
    cell = lab.run(f"%%kli edit\n@@ narrow.py\n= 2:{h}\n~    x = 'a much longer value than before'\n")
    view = cell.locator(".kli-FileChange")
    diff = view.locator(".kli-DiffView")
    toggle = view.locator("button.kli-FileChange-mode")
    note = view.locator(".kli-FileChange-narrow")
    diff.locator(".cm-editor").wait_for()
    assert not note.is_visible()
    toggle.click()
    view.locator(".cm-mergeView").wait_for()
    assert diff.get_attribute("data-mode") == "split"
    assert toggle.inner_text() == "Unified"
    lab.page.set_viewport_size({"width": 760, "height": 900})
    lab.page.wait_for_selector(".kli-DiffView[data-mode='unified'][data-narrow='true']")
    assert view.locator(".cm-mergeView").count() == 0
    assert added_lines(view) == ["x = 'a much longer value than before'"]
    # What is drawn is unified: the toggle does not claim otherwise, and a note says why.
    assert toggle.inner_text() == "Side by side"
    note.wait_for()
    assert "needs 640 px" in note.inner_text()
    lab.screenshot("review-narrow-unified", cell)
    lab.page.set_viewport_size({"width": 1500, "height": 950})
    view.locator(".kli-DiffView[data-mode='split'] .cm-mergeView").wait_for()
    assert toggle.inner_text() == "Unified" and not note.is_visible()

    # Asked for while narrow (the case: a click that seemed to do nothing).
    toggle.click()
    lab.page.set_viewport_size({"width": 760, "height": 900})
    lab.page.wait_for_selector(".kli-DiffView[data-narrow='true']")
    assert not note.is_visible()
    toggle.click()
    note.wait_for()
    assert diff.get_attribute("data-mode") == "unified"
    assert toggle.get_attribute("aria-pressed") == "true"
    toggle.click()  # asked back: the note goes
    wait_until(lambda: not note.is_visible(), "the note to go")
    lab.page.set_viewport_size({"width": 1500, "height": 950})
    assert lab.console_errors() == []


def test_an_edit_shows_its_fresh_anchors_under_the_diff(lab: Any) -> None:
    root: Path = lab.server.root
    (root / "anchors.py").write_text(FUNC)
    lab.open("anchors.ipynb")
    lab.run("%kli read anchors.py").locator(".jp-OutputArea-output").wait_for()
    h = line_hash("    x = 1")
    cell = lab.run(f"%%kli edit\n@@ anchors.py\n= 2:{h}\n~    x = 2\n")
    anchors = cell.locator(".kli-EditOutput-anchors")
    anchors.wait_for()
    rows = anchors.locator("pre").inner_text().splitlines()
    assert f"2:{line_hash('    x = 2')}|    x = 2" in rows
    # Below the diff, in view: a person makes the next edit from them.
    diff_box = cell.locator(".kli-FileChange").bounding_box()
    anchors_box = anchors.bounding_box()
    assert diff_box and anchors_box and anchors_box["y"] >= diff_box["y"] + diff_box["height"] - 1
    lab.screenshot("review-fresh-anchors", cell)
    # The anchors it shows are valid for the next edit.
    h2 = line_hash("    x = 2")
    lab.run(f"%%kli edit\n@@ anchors.py\n= 2:{h2}\n~    x = 3\n").locator(
        ".kli-EditOutput-anchors").wait_for()
    wait_until(lambda: "x = 3" in (root / "anchors.py").read_text(), "the second edit")
    assert lab.console_errors() == []


def test_unchanged_lines_fold_into_words_the_fonts_have(lab: Any) -> None:
    root: Path = lab.server.root
    text = "".join(f"line {i}\n" for i in range(1, 21))
    (root / "fold.txt").write_text(text)
    lab.open("fold.ipynb")
    cell = lab.run("%kli bash sed -i 's/^line 1$/line one/' fold.txt")
    view = cell.locator(".kli-FileChange", has_text="fold.txt")
    view.locator(".kli-DiffView .cm-editor").wait_for()
    fold = view.locator(".kli-Fold")
    fold.wait_for()
    # Lines 2-4 stay as context; 5-20 fold: sixteen lines (the empty line after the final
    # line break is not one of them).
    assert fold.inner_text() == "16 unchanged lines"
    assert shown_lines(view) == ["-line 1", "+line one", " line 2", " line 3", " line 4",
                                 "…16 unchanged lines"]
    # Drawn in words of plain ASCII (no "⦚" glyphs the fonts lack), nothing drawn around them.
    pseudo = fold.evaluate("""(el) => [getComputedStyle(el, '::before').content,
                                       getComputedStyle(el, '::after').content]""")
    assert all(p in ("none", "normal", "") for p in pseudo)
    lab.screenshot("review-fold", cell)
    fold.click()
    wait_until(lambda: view.locator(".kli-Fold").count() == 0, "the fold to open")
    shown = shown_lines(view)
    assert shown[-1] == " line 20" and len(shown) == 21
    gutter = [g for g in view.locator(".cm-lineNumbers .cm-gutterElement").all_inner_texts()
              if g.strip()]
    assert gutter[-1] == "20"
    assert lab.console_errors() == []


_PANEL_WIDTH_JS = "() => document.getElementById('kli-activity').getBoundingClientRect().width"

# Whether the last character of an element's text is drawn inside the element's box.
_END_VISIBLE_JS = """
(el) => {
  const node = el.querySelector('bdi') || el;
  const text = node.firstChild;
  const range = document.createRange();
  range.setStart(text, text.length - 1);
  range.setEnd(text, text.length);
  const r = range.getBoundingClientRect(), box = el.getBoundingClientRect();
  return r.width > 0 && r.left >= box.left - 1 && r.right <= box.right + 1;
}
"""


def test_the_activity_panel_opens_wide_keeps_its_width_and_shows_file_names(lab: Any) -> None:
    root: Path = lab.server.root
    deep = "deeply/nested/package/with/many/levels/of/folders"
    (root / deep).mkdir(parents=True)
    (root / deep / "module_name.py").write_text(FUNC)
    lab.open("panel.ipynb")
    lab.run(f"%kli read {deep}/module_name.py").locator(".jp-OutputArea-output").wait_for()
    h = line_hash("    x = 1")
    lab.run(f"%%kli edit\n@@ {deep}/module_name.py\n= 2:{h}\n~    x = 2\n").locator(
        ".kli-FileChange").wait_for()
    panel = lab.activity_panel()
    row = panel.locator(".kli-Row[data-tool='edit']").first
    row.wait_for()
    wait_until(lambda: lab.page.evaluate(_PANEL_WIDTH_JS) >= 400, "the panel to open wide")
    summary = row.locator(".kli-Row-summary")
    # The row is cut from the left: the file name is what shows.
    assert summary.evaluate("el => el.scrollWidth > el.clientWidth")
    assert summary.evaluate(_END_VISIBLE_JS)
    read_summary = panel.locator(".kli-Row[data-tool='read']").first.locator(".kli-Row-summary")
    assert read_summary.evaluate(_END_VISIBLE_JS)  # a path argument keeps its file name too
    lab.screenshot("review-activity-panel", lab.page)

    lab.widen_right_sidebar(120)
    wide = lab.page.evaluate(_PANEL_WIDTH_JS)
    assert wide > 500
    lab.page.wait_for_timeout(800)  # the width is remembered after a short quiet time
    lab.command("docmanager:save")
    lab.page.reload()
    lab.page.wait_for_selector(".jp-Notebook .jp-Cell", state="visible")
    lab.command("kli-kernel:show-activity")
    lab.page.locator("#kli-activity").wait_for()
    wait_until(lambda: abs(lab.page.evaluate(_PANEL_WIDTH_JS) - wide) <= 4,
               f"the panel to reopen at {wide:.0f} px")
    assert lab.console_errors() == []


def test_an_append_shows_as_the_lines_added_after_the_last_line(lab: Any) -> None:
    root: Path = lab.server.root
    (root / "log.txt").write_text("line 1\n")
    lab.open("append.ipynb")
    cell = lab.run("%kli bash echo appended >> log.txt")
    view = cell.locator(".kli-FileChange", has_text="log.txt")
    view.locator(".kli-DiffView .cm-editor").wait_for()
    assert view.locator(".kli-Added").inner_text() == "+1"
    assert view.locator(".kli-Removed").inner_text() == "-0"
    # The last line is not drawn as deleted and added again; no empty line after the last.
    assert shown_lines(view) == [" line 1", "+appended"]
    gutter = view.locator(".cm-lineNumbers .cm-gutterElement").all_inner_texts()
    assert [g for g in gutter if g.strip()][-2:] == ["1", "2"]
    lab.screenshot("review-append", cell)
    # Side by side: the old text's one line, the new text's two, no empty line after either.
    view.locator("button.kli-FileChange-mode").click()
    view.locator(".cm-mergeView").wait_for()
    sides = [[t for t in view.locator(f".cm-merge-{side} .cm-content > .cm-line").evaluate_all(
        "(ls) => ls.filter(l => getComputedStyle(l).display !== 'none').map(l => l.textContent)")]
        for side in "ab"]
    assert sides == [["line 1"], ["line 1", "appended"]]
    assert view.locator(".cm-merge-b .cm-changedLine").all_inner_texts() == ["appended"]
    lab.screenshot("review-append-split", cell)

    # The final line break removed: the last line changed, once each way, nothing else.
    (root / "tail.txt").write_text("a\nb\n")
    cell = lab.run("%kli bash printf 'a\\nb' > tail.txt")
    view = cell.locator(".kli-FileChange", has_text="tail.txt")
    view.locator(".kli-DiffView .cm-editor").wait_for()
    wait_until(lambda: len(shown_lines(view)) >= 3, "the diff to draw")
    assert shown_lines(view) == [" a", "-b", "+b"]
    # A CRLF file's append is the appended line.
    (root / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    cell = lab.run("%kli bash printf 'three\\r\\n' >> crlf.txt")
    view = cell.locator(".kli-FileChange", has_text="crlf.txt")
    view.locator(".kli-DiffView .cm-editor").wait_for()
    assert [t.replace("\r", "") for t in shown_lines(view)] == [" one", " two", "+three"]
    lab.screenshot("review-append-crlf", cell)
    assert lab.console_errors() == []
