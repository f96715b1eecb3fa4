"""Every change visible and undo in a real kernel, through jupyter_client: an agent's ``bash``
that writes a file shows the file's diff in its result and in the UI's event; the person's
``%kli undo`` of an agent's edit restores the exact bytes, and is refused after the person
changed the file (docs/review.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kli.tools.file.anchors import line_hash

pytestmark = pytest.mark.kernel


def _text(outputs: list[dict[str, Any]]) -> str:
    parts = []
    for m in outputs:
        c = m["content"]
        parts.append(c.get("text") or (c.get("data") or {}).get("text/plain", ""))
    return "\n".join(parts)


def test_an_agents_bash_that_writes_a_file_shows_its_diff_in_result_and_event(kernel: Any, kroot: Path) -> None:
    (kroot / "notes.txt").write_text("first\n")
    ui, _ = kernel.open_comm("kli.ui", {"replay": 0})
    agent, _ = kernel.open_comm("kli.agent", {"label": "shell-bot"})
    start = len(kernel.seen)
    r = kernel.call(agent, "bash", {"command": "echo second >> notes.txt && echo hi > made.txt"})
    assert r["ok"], r["text"]
    files = {f["path"]: f for f in r["details"]["files"]}
    assert files["notes.txt"]["before"] == "first\n" and files["notes.txt"]["after"] == "first\nsecond\n"
    assert files["made.txt"]["change_kind"] == "created" and "created made.txt" in r["text"]
    kernel.settle(0.3)
    [event] = [d["event"] for d in kernel.comm_data(ui, start)
               if d["op"] == "event" and d["event"]["tool"] == "bash"]
    shown = {f["path"]: f for f in event["details"]["files"]}
    assert shown["notes.txt"]["added"] == 1 and shown["notes.txt"]["detected"] is True
    assert event["details"]["change"] == r["details"]["change"]
    kernel.close_comm(agent)
    kernel.close_comm(ui)


def test_undo_magic_restores_an_agents_edit_and_is_refused_after_the_person_changed_it(
    kernel: Any, kroot: Path
) -> None:
    original = b"def f():\n    return 1\n"
    (kroot / "u.py").write_bytes(original)
    agent, _ = kernel.open_comm("kli.agent", {"label": "editor"})
    assert kernel.call(agent, "read", {"path": "u.py"})["ok"]
    patch = f"@@ u.py\n= 2:{line_hash('    return 1')}\n~    return 2\n"
    e = kernel.call(agent, "edit", {"input": patch})
    assert e["ok"], e["text"]
    change = e["details"]["change"]
    listed = _text(kernel.execute("%kli changes editor")[1])
    assert change in listed and "edit: u.py" in listed
    _reply, out = kernel.execute(f"%kli undo {change}")
    assert (kroot / "u.py").read_bytes() == original, _text(out)
    _reply, out = kernel.execute(f"%kli redo {change}")
    assert (kroot / "u.py").read_text() == "def f():\n    return 2\n", _text(out)
    (kroot / "u.py").write_text("# the person's\n")
    redone = next(c for c in _text(kernel.execute("%kli changes")[1]).split() if c.startswith("ch-"))
    _reply, out = kernel.execute(f"%kli undo {redone}")
    assert "undo refused: u.py changed" in _text(out)
    assert (kroot / "u.py").read_text() == "# the person's\n"
    kernel.close_comm(agent)


def test_the_panels_undo_request_takes_back_an_agents_change_and_names_a_changed_file(
    kernel: Any, kroot: Path
) -> None:
    ui, _ = kernel.open_comm("kli.ui", {"replay": 0})
    agent, _ = kernel.open_comm("kli.agent", {"label": "panel-bot"})
    r = kernel.call(agent, "bash", {"command": "echo one > p1.txt"})
    change = r["details"]["change"]
    reply = kernel.request(ui, {"op": "undo", "change": change})
    assert reply["op"] == "result" and reply["ok"], reply["text"]
    assert not (kroot / "p1.txt").exists()
    kernel.call(agent, "bash", {"command": "echo two > p2.txt"})
    (kroot / "p2.txt").write_text("the person's\n")
    refused = kernel.request(ui, {"op": "undo", "session": "panel-bot", "since": "0"})
    assert not refused["ok"] and "p2.txt" in refused["text"]
    assert (kroot / "p2.txt").read_text() == "the person's\n"
    bad = kernel.request(ui, {"op": "undo"})
    assert bad["op"] == "error"
    kernel.close_comm(agent)
    kernel.close_comm(ui)


def test_the_panels_changes_request_answers_the_timeline_with_counts_and_undo_state(
    kernel: Any, kroot: Path
) -> None:
    from kli.kernel import protocol as P

    ui, _ = kernel.open_comm("kli.ui", {"replay": 0})
    agent, _ = kernel.open_comm("kli.agent", {"label": "timeline-bot"})
    a = kernel.call(agent, "bash", {"command": "printf 'a\\nb\\n' > t1.txt"})["details"]["change"]
    b = kernel.call(agent, "bash", {"command": "echo c >> t1.txt"})["details"]["change"]
    seen = len(kernel.seen)
    reply = kernel.request(ui, {"op": "changes", "session": "timeline-bot"})
    import jsonschema

    assert list(jsonschema.Draft202012Validator(P.schema_of(P.CHANGES)).iter_errors(reply)) == []
    assert [c["id"] for c in reply["changes"]] == [b, a] and reply["total"] == 2
    assert (reply["changes"][0]["files"][0]["added"], reply["changes"][1]["files"][0]["added"]) == (1, 2)
    # reading the timeline is no tool call: no event reaches the UIs
    assert not any(m["msg_type"] == "comm_msg" and m["content"]["data"].get("op") == "event"
                   for m in kernel.seen[seen:])
    seen = len(kernel.seen)
    done = kernel.request(ui, {"op": "undo", "change": b})
    assert done["ok"], done["text"]
    # The panel's Undo is the person at the panel: source "ui" in the person's own session
    # (which the panel names "you, from the kli panel"), never an agent's or "magic"'s source.
    event = kernel.wait_for(lambda m: m["msg_type"] == "comm_msg"
                            and m["content"]["comm_id"] == ui
                            and m["content"]["data"].get("op") == "event"
                            and m["content"]["data"]["event"].get("tool") == "undo", since=seen)
    said = event["content"]["data"]["event"]
    assert (said["source"], said["session_label"]) == ("ui", "magic")
    assert said["details"]["change"] == done["details"]["change"]
    after = kernel.request(ui, {"op": "changes"})
    by_id = {c["id"]: c for c in after["changes"]}
    assert by_id[b]["undone_by"] == done["details"]["change"]
    assert by_id[done["details"]["change"]]["session_label"] == "magic"
    assert kernel.request(ui, {"op": "changes", "limit": 0})["op"] == "error"
    kernel.close_comm(agent)
    kernel.close_comm(ui)


def _notebook_kernel(root: Path, notebook: str) -> Any:
    """A kernel as a Jupyter server starts it for ``notebook`` (``JPY_SESSION_NAME``)."""
    from jupyter_client.manager import KernelManager

    from tests.kernel.conftest import Harness, kernel_env

    km = KernelManager(kernel_name="kli")
    km.start_kernel(cwd=str(root), env={**kernel_env(root.parent),
                                        "JPY_SESSION_NAME": str(root / notebook)})
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    h = Harness(km, kc, root)
    h.execute("pass")
    h.settle(0.1)
    return h


def test_two_notebooks_in_one_folder_each_see_their_own_changes_and_undo_names_both_sessions(
    tmp_path: Path,
) -> None:
    from tests.kernel.conftest import stop_harness

    root = tmp_path / "root"
    root.mkdir()
    one, two = _notebook_kernel(root, "one.ipynb"), _notebook_kernel(root, "two.ipynb")
    try:
        assert "Created a.txt" in _text(one.execute("%kli write a.txt a")[1])
        assert "Created b.txt" in _text(two.execute("%kli write b.txt b")[1])
        ui, _ = one.open_comm("kli.ui", {"replay": 0})
        reply = one.request(ui, {"op": "changes"})
        assert reply["notebook"] == "one.ipynb"
        mine = {c["files"][0]["path"]: c for c in reply["changes"]}
        assert mine["a.txt"]["notebook"] == "one.ipynb" and mine["b.txt"]["notebook"] == "two.ipynb"
        assert (mine["a.txt"]["files"][0]["added"], mine["a.txt"]["files"][0]["removed"]) == (1, 0)
        listed = _text(one.execute("%kli changes")[1])
        sid = mine["a.txt"]["session"]
        assert f"magic ({sid}, one.ipynb)" in listed
        refused = _text(one.execute("%kli undo --session magic --since 0")[1])
        assert "names 2 sessions" in refused and f"%kli undo --session {sid} --since 0" in refused
        assert (root / "a.txt").exists() and (root / "b.txt").exists()
        done = _text(one.execute(f"%kli undo --session {sid} --since 0")[1])
        assert not (root / "a.txt").exists() and (root / "b.txt").exists(), done
        one.close_comm(ui)
    finally:
        stop_harness(one)
        stop_harness(two)


def test_the_kernels_notebook_is_named_relative_to_the_tools_root(tmp_path: Path) -> None:
    from kli.kernel.kernel import own_notebook

    root = tmp_path / "server" / "work"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "nb.ipynb").write_text("{}")
    # absolute (what a Jupyter server gives), relative to the server's root, outside the root
    assert own_notebook(str(root), {"JPY_SESSION_NAME": str(root / "sub" / "nb.ipynb")}) == "sub/nb.ipynb"
    assert own_notebook(str(root), {"JPY_SESSION_NAME": "work/sub/nb.ipynb"}) == "sub/nb.ipynb"
    assert own_notebook(str(root), {"JPY_SESSION_NAME": "/elsewhere/x.ipynb"}) == "/elsewhere/x.ipynb"
    assert own_notebook(str(root), {}) is None
    assert own_notebook(str(root), {"JPY_SESSION_NAME": "console-1"}) is None
