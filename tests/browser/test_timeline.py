"""The activity panel's Timeline view in a real JupyterLab, in Chromium (docs/review.md): an
agent's three changes appear live, in order, in its session's timeline; Undo of one restores
its file's bytes and the undo appears as its own entry (in the person's session); "Undo
everything since here" takes back the rest; Redo puts a change back; after the person changed a
file, Undo is refused naming it, and "Undo anyway" applies; a change made by the person's own
magic is in their session's timeline and is undone there."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.waiting import wait_until

pytestmark = pytest.mark.browser


def test_the_timeline_undoes_redoes_and_refuses_a_file_the_person_changed(lab: Any) -> None:
    from kli import client

    root: Path = lab.server.root
    for name in ("a", "b", "c"):
        (root / f"{name}.txt").write_text(f"{name} as it was\n")
    lab.open("timeline.ipynb")
    lab.run("%kli changes").locator(".jp-OutputArea-output").wait_for()
    panel = lab.activity_panel(200)
    panel.get_by_role("tab", name="Timeline").click()
    timeline = panel.locator(".kli-Timeline")
    timeline.wait_for()
    assert panel.locator(".kli-Calls").is_hidden()
    agent = client.connect(str(lab.connection_file()), label="timeline agent",
                           timeout=30)
    try:
        ids = []
        for name in ("a", "b", "c"):
            r = agent.call("bash", {"command": f"echo '{name} by the agent' >> {name}.txt"})
            assert r.ok and r.details.get("change"), r.text
            ids.append(r.details["change"])
        session = timeline.locator(".kli-Timeline-session[data-label='timeline agent']")
        entries = session.locator(".kli-Timeline-entry")
        # live: the panel reads the timeline again as the call events arrive
        wait_until(lambda: entries.count() == 3, "the agent's three changes in the timeline")
        assert [entries.nth(i).get_attribute("data-change") for i in range(3)] == ids
        first = entries.nth(0)
        assert "a.txt" in first.inner_text() and "+1 −0" in first.inner_text()
        assert first.locator(".kli-Timeline-tool").inner_text() == "bash"
        lab.screenshot("timeline-three", panel)

        def entry(change: str) -> Any:
            return timeline.locator(f".kli-Timeline-entry[data-change='{change}']")

        # Undo one: b.txt's bytes come back, the entry is marked undone, the undo is an entry
        entry(ids[1]).get_by_role("button", name="Undo", exact=True).click()
        wait_until(lambda: (root / "b.txt").read_text() == "b as it was\n", "the undo of b.txt")
        wait_until(lambda: entry(ids[1]).get_attribute("data-undone") == "true",
                   "b's change marked undone")
        # this kernel's person session: other kernels on the same root (earlier tests) have a
        # 'magic' session too, each its own group (session ids are unique across processes)
        mine = (timeline.locator(".kli-Timeline-session[data-label='magic']")
                .filter(has_text=ids[1]).locator(".kli-Timeline-entry"))
        wait_until(lambda: mine.count() == 1, "the undo as its own entry")
        assert mine.first.get_attribute("data-tool") == "undo"
        assert ids[1] in mine.first.inner_text()

        # Undo everything since the first: a and c come back; b stays as it was
        entry(ids[0]).get_by_role("button", name="Undo everything since here").click()
        wait_until(lambda: (root / "a.txt").read_text() == "a as it was\n"
                   and (root / "c.txt").read_text() == "c as it was\n", "the undo since a")
        wait_until(lambda: all(entry(i).get_attribute("data-undone") == "true" for i in ids),
                   "all three marked undone")
        assert (root / "b.txt").read_text() == "b as it was\n"
        lab.screenshot("timeline-undone", panel)

        # Redo the undo-since (from a's entry): a and c are the agent's again
        entry(ids[0]).get_by_role("button", name="Redo").click()
        wait_until(lambda: (root / "c.txt").read_text() == "c as it was\nc by the agent\n"
                   and (root / "a.txt").read_text() == "a as it was\na by the agent\n", "the redo")
        wait_until(lambda: entry(ids[2]).get_attribute("data-undone") == "false",
                   "c's change standing again")

        # The person changes c.txt: Undo of c's change is refused naming it; Undo anyway applies
        (root / "c.txt").write_text("the person's c\n")
        entry(ids[2]).get_by_role("button", name="Undo", exact=True).click()
        outcome = entry(ids[2]).locator(".kli-Timeline-outcome")
        wait_until(lambda: outcome.count() == 1 and "undo refused: c.txt changed" in outcome.inner_text(),
                   "the refusal naming c.txt")
        assert (root / "c.txt").read_text() == "the person's c\n"
        # Words for the person, whose control is the button: not the agent's "force=true".
        assert "press Undo anyway" in outcome.inner_text() and "force" not in outcome.inner_text()
        force = entry(ids[2]).get_by_role("button", name="Undo anyway")
        force.wait_for()
        lab.screenshot("timeline-refused", panel)
        force.click()
        wait_until(lambda: (root / "c.txt").read_text() == "c as it was\n", "the forced undo")
        wait_until(lambda: entry(ids[2]).get_attribute("data-undone") == "true", "c undone")

        # the person's own magic is a change too, in their session, and can be undone there
        lab.run("%kli bash echo mine > m.txt").locator(".jp-OutputArea-output").wait_for()
        wait_until(lambda: (root / "m.txt").exists(), "the magic's file")
        made = mine.filter(has_text="m.txt")
        wait_until(lambda: made.count() == 1, "the magic's change in the person's session")
        assert made.first.get_attribute("data-tool") == "bash"
        made.first.get_by_role("button", name="Undo", exact=True).click()
        wait_until(lambda: not (root / "m.txt").exists(), "the undo of the magic's change")
        assert lab.console_errors() == []
    finally:
        agent.close()


def test_the_timeline_of_one_notebook_shows_its_own_changes_with_counts_and_says_what_it_leaves_out(
    lab: Any,
) -> None:
    root: Path = lab.server.root
    # Another notebook's kernel in the same folder changes a file with its magics.
    lab.open("tl-two.ipynb")
    lab.run("%kli bash echo two > two.txt").locator(".jp-OutputArea-output").wait_for()
    wait_until(lambda: (root / "two.txt").exists(), "the other notebook's change")
    lab.open("tl-one.ipynb")
    lab.run("%kli write one.txt first").locator(".jp-OutputArea-output").wait_for()
    wait_until(lambda: (root / "one.txt").exists(), "this notebook's first change")
    # the person changes the file outside the tools: the first change keeps its counts
    (root / "one.txt").write_text("the person's\n")
    lab.run("%kli bash echo more >> one.txt").locator(".jp-OutputArea-output").wait_for()
    panel = lab.activity_panel(300)
    panel.get_by_role("tab", name="Timeline").click()
    timeline = panel.locator(".kli-Timeline")
    sessions = timeline.locator(".kli-Timeline-session")
    wait_until(lambda: sessions.count() == 1
               and timeline.locator(".kli-Timeline-entry").count() == 2, "this notebook's changes")
    session = sessions.first
    assert session.get_attribute("data-notebook") == "tl-one.ipynb"
    heading = session.locator("h4").inner_text()
    sid = session.get_attribute("data-session")
    assert heading.startswith("Your magics and the panel — tl-one.ipynb") and f"session {sid}" in heading
    entries = session.locator(".kli-Timeline-entry")
    assert entries.nth(0).locator(".kli-Timeline-tool").inner_text() == "write"
    assert entries.nth(0).locator(".kli-Timeline-counts").inner_text() == "+1 −0"
    assert entries.nth(1).locator(".kli-Timeline-counts").inner_text() == "+1 −0"
    assert "two.txt" not in timeline.inner_text()
    status = timeline.locator(".kli-Timeline-status").inner_text()
    assert status.startswith("2 changes made from tl-one.ipynb, 1 session; ")
    assert "from other notebooks or tools in this folder not shown" in status
    lab.screenshot("timeline-one-notebook", panel)
    # the person asks for the rest: the other notebook's session, titled with its notebook
    timeline.locator(".kli-Timeline-scope").click()
    other = timeline.locator(".kli-Timeline-session[data-notebook='tl-two.ipynb']")
    wait_until(lambda: other.count() == 1, "the other notebook's session when asked")
    assert other.locator("h4").inner_text().startswith("Your magics and the panel — tl-two.ipynb")
    assert "two.txt" in other.inner_text()
    assert timeline.locator(".kli-Timeline-status").inner_text().startswith(
        "Every change in this folder: ")
    lab.screenshot("timeline-whole-folder", panel)
    timeline.locator(".kli-Timeline-scope").click()
    wait_until(lambda: other.count() == 0, "back to this notebook's changes")
    assert lab.console_errors() == []


def test_undo_this_turn_takes_back_everything_a_chat_turns_session_changed_in_one_step(
        lab: Any) -> None:
    """A chat turn's session (the Jupyter AI persona labels each `chat NAME turn N`) has an
    "Undo this turn" button on its Timeline group: one press puts back every file the turn
    changed; a session of another kind offers "Undo this session"."""
    from kli import client

    root: Path = lab.server.root
    (root / "t1.txt").write_text("t1 as it was\n")
    lab.open("turn.ipynb")
    lab.run("%kli changes").locator(".jp-OutputArea-output").wait_for()
    panel = lab.activity_panel(200)
    panel.get_by_role("tab", name="Timeline").click()
    timeline = panel.locator(".kli-Timeline")
    timeline.wait_for()
    turn = client.connect(str(lab.connection_file()),
                          label="chat team.chat turn 1", timeout=30)
    try:
        assert turn.call("bash", {"command": "echo 'by the turn' >> t1.txt"}).ok
        assert turn.call("write", {"path": "t2.txt", "content": "new from the turn\n"}).ok
        group = timeline.locator(".kli-Timeline-session[data-label='chat team.chat turn 1']")
        wait_until(lambda: group.locator(".kli-Timeline-entry").count() == 2,
                   "the turn's two changes")
        # the switch to the folder's other changes shows only when some are left out (it read
        # "Show the folder's other 0 changes" when none were)
        scope = panel.locator(".kli-Timeline-scope")
        assert scope.is_hidden() or " 0 change" not in scope.inner_text()
        button = group.get_by_role("button", name="Undo this turn")
        assert "in one step" in (button.get_attribute("title") or "")
        lab.screenshot("timeline-undo-turn", panel)
        button.click()
        wait_until(lambda: (root / "t1.txt").read_bytes() == b"t1 as it was\n"
                   and not (root / "t2.txt").exists(), "the turn taken back")
        wait_until(lambda: all(
            group.locator(".kli-Timeline-entry").nth(i).get_attribute("data-undone") == "true"
            for i in range(2)), "both changes marked undone")
        mine = timeline.locator(".kli-Timeline-session[data-label='magic']")
        wait_until(lambda: mine.get_by_role("button", name="Undo this session").count() >= 1,
                   "the person's session offered whole as a session")
        assert lab.console_errors() == []
    finally:
        turn.close()
