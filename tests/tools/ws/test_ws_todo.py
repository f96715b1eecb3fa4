"""ws_todo: the checklist is replaced, echoed back, and kept per session."""

from __future__ import annotations

from kli.tools import Workspace


def test_checklist_is_echoed_back_and_stored(ws: Workspace) -> None:
    items = [
        {"text": "write the parser test", "status": "done"},
        {"text": "fix split()", "status": "in_progress"},
        {"text": "run the tests", "status": "pending"},
    ]
    r = ws.call("ws_todo", {"items": items})
    assert r.ok
    assert r.text == (
        "Checklist (1/3 done):\n"
        "[x] 1. write the parser test\n"
        "[>] 2. fix split()  ← in progress\n"
        "[ ] 3. run the tests"
    )
    assert ws.default_session.todo == items


def test_replace_not_append(ws: Workspace) -> None:
    ws.call("ws_todo", {"items": [{"text": "a", "status": "pending"}]})
    r = ws.call("ws_todo", {"items": [{"text": "b", "status": "done"}]})
    assert r.text == "Checklist (1/1 done):\n[x] 1. b"
    assert [t["text"] for t in ws.default_session.todo] == ["b"]


def test_string_items_and_status_aliases(ws: Workspace) -> None:
    r = ws.call("ws_todo", {"items": ["[x] one", "- [ ] two", "three", {"task": "four", "status": "completed"}]})
    assert r.ok
    assert [t["status"] for t in ws.default_session.todo] == ["done", "pending", "pending", "done"]
    assert "[ ] 2. two" in r.text


def test_no_items_shows_current_and_empty_list_clears(ws: Workspace) -> None:
    assert ws.call("ws_todo", {}).text == "(checklist is empty)"
    ws.call("ws_todo", {"items": ["a"]})
    assert ws.call("ws_todo", {}).text == "Checklist (0/1 done):\n[ ] 1. a"
    assert ws.call("ws_todo", {"items": []}).text == "(checklist is empty)"


def test_bad_status_and_too_many_items_are_refused(ws: Workspace) -> None:
    r = ws.call("ws_todo", {"items": [{"text": "a", "status": "maybe"}]})
    assert not r.ok and "use one of pending, in_progress, done" in r.text
    r = ws.call("ws_todo", {"items": [f"i{n}" for n in range(21)]})
    assert not r.ok and "at most 20" in r.text


def test_sessions_have_their_own_checklists(ws: Workspace) -> None:
    other = ws.open_session("b")
    ws.call("ws_todo", {"items": ["mine"]})
    assert ws.call("ws_todo", {}, session=other).text == "(checklist is empty)"
