"""Every change visible (detection after bash / ws_shell / eval) and undo / redo of recorded
changes (kli.tools.core.snapshot, kli.tools.core.undo), through Workspace.call."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from kli.tools.core import checkpoints, snapshot, undo
from kli.tools.core.workspace import Workspace


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "root"
    r.mkdir()
    return r.resolve()


@pytest.fixture
def ws(root: Path) -> Workspace:
    return Workspace(str(root))


def _files(result) -> dict[str, dict]:  # type: ignore[no-untyped-def]
    return {f["path"]: f for f in result.details.get("files", [])}


def test_bash_that_creates_modifies_and_deletes_shows_each_file_with_its_diff(ws: Workspace, root: Path) -> None:
    (root / "keep.txt").write_text("one\n")
    (root / "gone.txt").write_text("bye\n")
    r = ws.call("bash", {"command": "echo two >> keep.txt; echo new > made.txt; rm gone.txt"})
    files = _files(r)
    assert files["made.txt"]["change_kind"] == "created" and files["made.txt"]["after"] == "new\n"
    assert files["keep.txt"]["change_kind"] == "modified"
    assert (files["keep.txt"]["before"], files["keep.txt"]["after"]) == ("one\n", "one\ntwo\n")
    assert (files["keep.txt"]["added"], files["keep.txt"]["removed"]) == (1, 0)
    assert files["gone.txt"]["change_kind"] == "deleted" and files["gone.txt"]["before"] == "bye\n"
    assert all(f["detected"] for f in files.values())
    assert r.details["detection"]["complete"] is True
    assert "created made.txt" in r.text and r.details["change"] in r.text


def test_eval_that_writes_a_file_is_detected(ws: Workspace, root: Path) -> None:
    r = ws.call("eval", {"code": f"open({str(root / 'e.txt')!r}, 'w').write('from eval\\n')"})
    assert _files(r)["e.txt"]["change_kind"] == "created"


def test_a_call_that_changes_nothing_adds_no_files_and_no_change(ws: Workspace, root: Path) -> None:
    (root / "a.txt").write_text("a\n")
    r = ws.call("bash", {"command": "cat a.txt; touch a.txt"})
    assert "files" not in r.details and "change" not in r.details
    assert r.details["detection"]["complete"] is True


def test_skipped_folders_are_not_watched(ws: Workspace, root: Path) -> None:
    r = ws.call("bash", {"command": "mkdir -p .git node_modules && echo x > .git/x && echo y > node_modules/y"})
    assert "files" not in r.details


def test_a_jupyter_servers_document_store_is_not_shown_as_a_change(ws: Workspace, root: Path) -> None:
    r = ws.call("bash", {"command": "echo s > .jupyter_ystore.db && echo j > .jupyter_ystore.db-journal"
                                    " && echo mine > mine.txt"})
    assert [f["path"] for f in r.details["files"]] == ["mine.txt"]


def test_the_entry_cap_is_said_in_the_details(ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(snapshot, "MAX_ENTRIES", 5)
    for i in range(10):
        (root / f"f{i}.txt").write_text(f"{i}\n")
    r = ws.call("bash", {"command": "true"})
    assert r.details["detection"]["complete"] is False
    assert r.details["detection"]["reason"] == "over 5 files"


def test_detection_can_be_turned_off(root: Path) -> None:
    ws = Workspace(str(root), {"change_detection": False})
    r = ws.call("bash", {"command": "echo x > new.txt"})
    assert "detection" not in r.details and "files" not in r.details


def test_undo_of_a_write_restores_the_exact_bytes_and_redo_puts_the_change_back(ws: Workspace, root: Path) -> None:
    (root / "a.txt").write_bytes(b"old\r\nbytes\xe2\x82\xac\n")
    ws.call("read", {"path": "a.txt"})
    w = ws.call("write", {"path": "a.txt", "content": "new\n"})
    assert w.ok, w.text
    u = ws.call("undo", {"change": w.details["change"]})
    assert u.ok, u.text
    assert (root / "a.txt").read_bytes() == b"old\r\nbytes\xe2\x82\xac\n"
    assert u.details["undoes"] == w.details["change"] and u.details["change"]
    r = ws.call("redo", {"change": w.details["change"]})
    assert r.ok, r.text
    assert (root / "a.txt").read_bytes() == b"new\n"


def test_undo_of_a_created_file_deletes_it_and_of_a_delete_brings_it_back(ws: Workspace, root: Path) -> None:
    w = ws.call("write", {"path": "n.txt", "content": "n\n"})
    assert ws.call("undo", {"change": w.details["change"]}).ok
    assert not (root / "n.txt").exists()
    (root / "d.txt").write_text("d\n")
    d = ws.call("bash", {"command": "rm d.txt"})
    assert ws.call("undo", {"change": d.details["change"]}).ok
    assert (root / "d.txt").read_text() == "d\n"


def test_undo_is_refused_naming_the_file_after_a_person_changed_it_and_force_overrides(ws: Workspace, root: Path) -> None:
    (root / "a.txt").write_text("v1\n")
    ws.call("read", {"path": "a.txt"})
    w = ws.call("write", {"path": "a.txt", "content": "v2\n"})
    (root / "a.txt").write_text("the person's\n")
    u = ws.call("undo", {"change": w.details["change"]})
    assert not u.ok and u.details["error"] == "changed" and "a.txt" in u.text
    # One refusal, two readers: the agent repeats with force=true; the person presses the button.
    assert "repeat with force=true" in u.text and "Undo anyway" not in u.text
    person = u.details[undo.PANEL_TEXT]
    assert "a.txt" in person and "press Undo anyway" in person and "force" not in person
    assert (root / "a.txt").read_text() == "the person's\n"
    f = ws.call("undo", {"change": w.details["change"], "force": True})
    assert f.ok and (root / "a.txt").read_text() == "v1\n"
    back = ws.call("undo", {"change": f.details["change"]})  # the person's bytes were kept
    assert back.ok and (root / "a.txt").read_text() == "the person's\n"


def test_undo_everything_a_session_did_since_a_time_restores_the_state_before(root: Path) -> None:
    ws = Workspace(str(root))
    agent = ws.open_session("agent")
    other = ws.open_session("person")
    (root / "a.txt").write_text("start\n")
    ws.call("write", {"path": "o.txt", "content": "other's\n"}, other)
    import time as _t

    since = _t.time() - 0.001
    ws.call("bash", {"command": "echo 1 >> a.txt"}, agent)
    ws.call("bash", {"command": "echo 2 >> a.txt; echo b > b.txt"}, agent)
    u = ws.call("undo", {"session": "agent", "since": str(since)})
    assert u.ok, u.text
    assert (root / "a.txt").read_text() == "start\n" and not (root / "b.txt").exists()
    assert (root / "o.txt").read_text() == "other's\n"
    assert len(u.details["undone"]) == 2



def test_undo_by_a_label_two_sessions_share_is_refused_naming_their_ids(root: Path) -> None:
    # Two kernels on one root, each with an agent labelled "agent": one label, two sessions.
    first, second = Workspace(str(root)), Workspace(str(root))
    a, b = first.open_session("agent"), second.open_session("agent")
    import time as _t

    since = _t.time() - 0.001
    first.call("write", {"path": "a.txt", "content": "first's\n"}, a)
    second.call("write", {"path": "b.txt", "content": "second's\n"}, b)
    u = first.call("undo", {"session": "agent", "since": str(since)})
    assert not u.ok and u.details["error"] == "ambiguous", u.text
    assert a.id in u.text and b.id in u.text and "Nothing was undone" in u.text
    assert (root / "a.txt").exists() and (root / "b.txt").exists()
    by_id = first.call("undo", {"session": a.id, "since": str(since)})
    assert by_id.ok and not (root / "a.txt").exists() and (root / "b.txt").exists()


def test_a_refused_ambiguous_undo_lists_each_session_as_the_retry_that_takes_only_its_changes(
        root: Path) -> None:
    # Two notebooks' kernels in one folder: each has its magics' session, both labelled "magic".
    first, second = Workspace(str(root)), Workspace(str(root))
    first.notebook, second.notebook = "one.ipynb", "two.ipynb"
    a, b = first.open_session("magic"), second.open_session("magic")
    first.call("write", {"path": "a.txt", "content": "first's\n"}, a)
    second.call("write", {"path": "b.txt", "content": "second's\n"}, b)
    u = first.call("undo", {"session": "magic", "since": "0"})
    assert u.details["error"] == "ambiguous" and u.details["sessions"] == sorted([a.id, b.id])
    retries = {line.split("#")[1].strip(): line.split("#")[0].strip()
               for line in u.text.splitlines() if line.startswith("  undo ")}
    assert retries == {f"magic ({a.id}, one.ipynb)": f"undo session={a.id} since=0",
                       f"magic ({b.id}, two.ipynb)": f"undo session={b.id} since=0"}
    args = dict(kv.split("=") for kv in retries[f"magic ({a.id}, one.ipynb)"].split()[1:])
    assert first.call("undo", args).ok, "the listed retry is the whole next step"
    assert not (root / "a.txt").exists() and (root / "b.txt").exists()


def test_changes_names_each_changes_session_id_and_notebook(root: Path) -> None:
    ws = Workspace(str(root))
    ws.notebook = "one.ipynb"
    magic = ws.open_session("magic")
    w = ws.call("write", {"path": "a.txt", "content": "a\n"}, magic)
    listed = ws.call("changes", {})
    line = next(ln for ln in listed.text.splitlines() if w.details["change"] in ln)
    assert f"magic ({magic.id}, one.ipynb)  write: created a.txt" in line
    assert listed.details["changes"][0]["notebook"] == "one.ipynb"

def test_changes_lists_the_timeline_of_one_session(root: Path) -> None:
    ws = Workspace(str(root))
    agent = ws.open_session("agent")
    ws.call("write", {"path": "x.txt", "content": "x\n"}, agent)
    ws.call("write", {"path": "y.txt", "content": "y\n"})
    listed = ws.call("changes", {"session": "agent"})
    assert [c["files"][0]["path"] for c in listed.details["changes"]] == ["x.txt"]
    assert "created x.txt" in listed.text


def test_the_store_evicts_the_oldest_beyond_its_byte_budget(root: Path) -> None:
    ws = Workspace(str(root), {"checkpoint_budget_mb": 0.25})
    for i in range(4):
        (root / f"big{i}.bin").write_bytes(bytes([i]) * 100_000)
        assert ws.call("bash", {"command": f"rm big{i}.bin"}).ok
    kept = sorted(c.path for c in checkpoints.list_all(str(root)))
    assert kept == ["big2.bin", "big3.bin"]  # 2 × 100 kB fit in 0.25 MiB, 3 do not
    first = [c for c in undo.timeline(str(root)) if c.files[0].path == "big3.bin"]
    assert first and ws.call("undo", {"change": first[0].id}).ok


def test_a_file_too_large_to_keep_is_listed_but_its_undo_is_refused(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = Workspace(str(root))
    monkeypatch.setattr(snapshot, "KEEP_FILE_BYTES", 10)
    (root / "big.txt").write_text("x" * 100)
    ws.call("bash", {"command": "true"})
    r = ws.call("bash", {"command": "echo y >> big.txt"})
    assert _files(r)["big.txt"]["before"] is None
    u = ws.call("undo", {"change": r.details["change"]})
    assert not u.ok and u.details["error"] == "not_kept" and "big.txt" in u.text


def test_an_accepted_held_edit_is_a_recorded_change_that_undo_takes_back(root: Path) -> None:
    import json

    from kli.tools.core import approval
    from kli.tools.file.anchors import line_hash

    (root / ".kli").mkdir()
    (root / ".kli" / "settings.json").write_text(json.dumps({"approval": "review"}))
    (root / "a.py").write_text("def f():\n    return 1\n")
    ws = Workspace(str(root))
    agent = ws.open_session("agent")
    assert ws.call("read", {"path": "a.py"}, agent, source="agent").ok
    patch = f"@@ a.py\n= 2:{line_hash('    return 1')}\n~    return 10\n"
    held = ws.call("edit", {"input": patch}, agent, source="agent")
    assert "change" not in held.details  # nothing written yet, nothing recorded
    a = approval.accept_any(ws, held.details["proposal"], "ui")
    assert a.ok and a.details["change"], a.text
    assert [c.tool for c in undo.timeline(str(root))] == ["edit"]
    assert ws.call("undo", {"change": a.details["change"]}).ok
    assert (root / "a.py").read_text() == "def f():\n    return 1\n"


def _timeline(root: Path, session: str | None = None) -> dict[str, dict]:
    found, _total = undo.timeline_json(str(root), session)
    return {c["id"]: c for c in found}


def test_the_timeline_counts_each_changes_lines_and_marks_what_an_undo_took_back(ws: Workspace, root: Path) -> None:
    (root / "a.txt").write_text("one\ntwo\n")
    ws.call("read", {"path": "a.txt"})
    w1 = ws.call("write", {"path": "a.txt", "content": "one\ntwo\nthree\n"})
    w2 = ws.call("write", {"path": "a.txt", "content": "ONE\ntwo\nthree\n"})
    c1, c2 = w1.details["change"], w2.details["change"]
    t = _timeline(root)
    # the first change's after is the second one's before (a later checkpoint), the second's
    # is the file on disk
    assert (t[c1]["files"][0]["added"], t[c1]["files"][0]["removed"]) == (1, 0)
    assert (t[c2]["files"][0]["added"], t[c2]["files"][0]["removed"]) == (1, 1)
    assert t[c1]["undone_by"] is None and t[c2]["undone_by"] is None
    u = ws.call("undo", {"change": c2})
    t = _timeline(root)
    assert t[c2]["undone_by"] == u.details["change"]
    assert t[u.details["change"]]["undone"] == [c2] and t[u.details["change"]]["tool"] == "undo"
    r = ws.call("redo", {"change": c2})
    assert r.ok, r.text
    t = _timeline(root)
    assert t[c2]["undone_by"] is None, "a redone change stands again"
    assert t[u.details["change"]]["undone_by"] == r.details["change"]
    # the changes tool's details are the same timeline
    listed = {c["id"]: c for c in ws.call("changes", {}).details["changes"]}
    assert listed[c2]["undone_by"] is None and listed[u.details["change"]]["undone_by"]
    assert "undone by" in ws.call("changes", {}).text


def test_a_change_keeps_its_counts_after_the_file_changed_outside_the_tools(ws: Workspace, root: Path) -> None:
    # Counted as the change is recorded: a person editing the file after (no checkpoint between,
    # so its bytes after are gone) no longer loses the first change its +/- counts.
    w = ws.call("write", {"path": "b.txt", "content": "b\nc\n"})
    (root / "b.txt").write_text("the person's\n")
    f = _timeline(root)[w.details["change"]]["files"][0]
    assert (f["added"], f["removed"]) == (2, 0)


def test_a_change_whose_bytes_before_were_not_kept_has_no_counts(ws: Workspace, root: Path) -> None:
    big = root / "big.txt"
    big.write_text("x\n" * (snapshot.KEEP_FILE_BYTES // 2 + 1))  # over what a snapshot keeps
    r = ws.call("bash", {"command": "echo more >> big.txt"})
    f = _timeline(root)[r.details["change"]]["files"][0]
    assert f["kept"] is False and "added" not in f and "removed" not in f


def test_undo_since_leaves_out_changes_undone_already_and_its_redo_puts_all_back(ws: Workspace, root: Path) -> None:
    ids = []
    for name in ("x.txt", "y.txt", "z.txt"):
        ids.append(ws.call("write", {"path": name, "content": f"{name}\n"}).details["change"])
    person = ws.open_session("person")  # as the panel's undo runs: not the agent's session
    one = ws.call("undo", {"change": ids[1]}, person)
    assert one.ok and not (root / "y.txt").exists()
    since = str(_timeline(root)[ids[0]]["time"])
    rest = ws.call("undo", {"session": _timeline(root)[ids[0]]["session"], "since": since}, person)
    assert rest.ok, rest.text
    assert not any((root / n).exists() for n in ("x.txt", "y.txt", "z.txt"))
    assert sorted(rest.details["undone"]) == sorted([ids[0], ids[2]])
    t = _timeline(root)
    assert t[ids[0]]["undone_by"] == t[ids[2]]["undone_by"] == rest.details["change"]
    assert t[ids[1]]["undone_by"] == one.details["change"]
    redo = ws.call("redo", {"change": ids[0]}, person)  # the redo of a multi-change undo: all of it
    assert redo.ok, redo.text
    assert (root / "x.txt").read_text() == "x.txt\n" and (root / "z.txt").read_text() == "z.txt\n"
    assert not (root / "y.txt").exists()


# -- a notebook changed in a live document: taken back cell by cell --------------------------
def _nb(*cells: tuple[str, str]) -> dict:  # type: ignore[type-arg]
    return {"cells": [{"cell_type": "code", "id": cid, "metadata": {}, "outputs": [],
                       "execution_count": None, "source": src} for cid, src in cells],
            "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def _srcs(data: dict) -> list[tuple[str, str]]:  # type: ignore[type-arg]
    return [(c["id"], c["source"]) for c in data["cells"]]


def _revert(cur: dict, before: dict, after: dict, force: bool = False) -> dict:  # type: ignore[type-arg]
    return undo._revert_cells(cur, before, after, force, "undo refused", "nb.ipynb", "ch-1")


def test_taking_back_a_live_change_keeps_the_cells_it_did_not_touch() -> None:
    before = _nb(("a", "1"), ("b", "2"), ("c", "3"))
    after = _nb(("a", "10"), ("b", "2"), ("c", "3"))
    now = _nb(("a", "10"), ("b", "2 # the person's"), ("c", "3"))
    assert _srcs(_revert(now, before, after)) == [("a", "1"), ("b", "2 # the person's"), ("c", "3")]


def test_taking_back_inserts_deletes_and_moves_puts_each_cell_back_in_its_place() -> None:
    before = _nb(("a", "1"), ("b", "2"), ("c", "3"), ("d", "4"))
    after = _nb(("c", "3"), ("a", "1"), ("new", "n"), ("d", "4"))  # b deleted, c moved up
    now = _nb(("c", "3"), ("a", "1"), ("new", "n"), ("d", "4 # typed"))
    assert _srcs(_revert(now, before, after)) == [("a", "1"), ("b", "2"), ("c", "3"),
                                                 ("d", "4 # typed")]
    touched = undo.touched_cells(before, after)  # one of a, c moved (either order is a move)
    assert len(touched) == 3 and set(touched) - {"a", "c"} == {"new", "b"}


def test_a_cell_changed_since_is_a_refusal_naming_it_unless_forced() -> None:
    before = _nb(("a", "1"), ("b", "2"))
    after = _nb(("a", "10"), ("b", "2"))
    now = _nb(("a", "10 # the person's"), ("b", "2"))
    with pytest.raises(undo.ToolError) as refused:
        _revert(now, before, after)
    assert "nb.ipynb#a was changed since change ch-1" in refused.value.message
    assert refused.value.details["paths"] == ["nb.ipynb#a"]
    person = refused.value.details[undo.PANEL_TEXT]
    assert "nb.ipynb#a was changed" in person and "press Undo anyway" in person
    assert "force" not in person and "read path=" not in person
    assert _srcs(_revert(now, before, after, force=True)) == [("a", "1"), ("b", "2")]


def test_a_cell_deleted_since_is_named_and_left_out_when_forced() -> None:
    before = _nb(("a", "1"), ("b", "2"))
    after = _nb(("a", "10"), ("b", "2"))
    now = _nb(("b", "2"))
    with pytest.raises(undo.ToolError) as refused:
        _revert(now, before, after)
    assert "nb.ipynb#a was deleted since" in refused.value.message
    assert _srcs(_revert(now, before, after, force=True)) == [("b", "2")]


def test_a_live_checkpoint_is_not_restored_as_file_bytes(ws: Workspace, root: Path) -> None:
    payload = b'{"before": {}, "after": {}}'
    cp = checkpoints.Checkpoint(
        id=checkpoints.new_id(), path="nb.ipynb", reason="change", tool="edit", session="s",
        time=0.0, size=len(payload), sha256=hashlib.sha256(payload).hexdigest(),
        mode=0o644, kind=checkpoints.LIVE, change="ch-x", cells=["a"])
    checkpoints.save(str(root), cp, payload, 10)
    r = ws.call("ws_checkpoints", {"action": "restore", "id": cp.id})
    assert not r.ok and r.details["error"] == "live_change" and "undo change=ch-x" in r.text
    assert not (root / "nb.ipynb").exists()


def test_a_live_notebook_change_is_counted_over_the_sources_of_the_cells_it_touched(
        ws: Workspace, root: Path) -> None:
    from kli.tools.core.registry import Call
    from kli.tools.core.result import ToolResult
    from kli.tools.registry import REGISTRY

    ws.notebook = "nb.ipynb"
    before = _nb(("a", "1"), ("b", "2"))
    after = _nb(("a", "1\nmore"), ("new", "n"), ("b", "2"))
    call = Call(ws=ws, session=ws.default_session, tool=REGISTRY.tools["edit"], args={},
                source="api")
    with undo.track(call, ws.settings) as tracker:
        notes = undo.live_notes()
        assert notes is not None
        notes.append((str(root / "nb.ipynb"), before, after))  # as the live store notes it
    done = undo.finish(call, tracker, ToolResult.success("edited"), ws.settings)
    [change] = undo.timeline_json(str(root))[0]
    assert change["id"] == done.details["change"] and change["notebook"] == "nb.ipynb"
    [f] = change["files"]
    assert f["kind"] == checkpoints.LIVE and (f["added"], f["removed"]) == (3, 1)
