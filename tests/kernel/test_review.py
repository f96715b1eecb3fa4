"""Approval mode in a real kernel, through jupyter_client: an agent comm session under review
has its edit held (the file unchanged) until the UI accepts it, which writes exactly the shown
bytes; a Reject's note reaches the agent's await_decision; bulk accept of three; proposals of
a closed agent comm stay pending as expired and can still be applied (docs/review.md)."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from kli.tools.file.anchors import line_hash

pytestmark = pytest.mark.kernel

TEXT = "def f():\n    return 1\n"


def ui_msg(kernel: Any, ui: str, op: str, since: int, **match: Any) -> dict[str, Any]:
    msg = kernel.wait_for(lambda m: m["msg_type"] == "comm_msg" and m["content"]["comm_id"] == ui
                          and m["content"]["data"].get("op") == op
                          and all(m["content"]["data"].get(k) == v for k, v in match.items()),
                          since=since)
    data: dict[str, Any] = msg["content"]["data"]
    return data


@pytest.fixture(scope="module")
def ui(kernel: Any) -> Any:
    ui, hello = kernel.open_comm("kli.ui", {"replay": 0})
    assert hello["approval"] == {"file": "auto", "shell": "auto", "eval": "auto"}
    reply = kernel.request(ui, {"op": "approval", "mode": "review"})
    assert reply["op"] == "approval" and set(reply["approval"].values()) == {"review"}
    yield ui
    kernel.request(ui, {"op": "approval", "mode": "auto"})
    kernel.close_comm(ui)


def test_an_agent_edit_waits_and_accept_writes_exactly_the_shown_bytes(
    kernel: Any, kroot: Path, ui: str
) -> None:
    (kroot / "a.py").write_text(TEXT)
    agent, _ = kernel.open_comm("kli.agent", {"label": "bot"})
    assert kernel.call(agent, "read", {"path": "a.py"})["ok"]
    start = len(kernel.seen)
    patch = f"@@ a.py\n= 2:{line_hash('    return 1')}\n~    return 2\n"
    r = kernel.call(agent, "edit", {"input": patch})
    assert r["ok"] and r["details"]["status"] == "pending", r["text"]
    pid = r["details"]["proposal"]
    assert (kroot / "a.py").read_text() == TEXT
    proposed = ui_msg(kernel, ui, "proposed", start)["candidate"]
    assert proposed["candidate"] == pid and proposed["kind"] == "call"
    assert proposed["session_label"] == "bot"
    [shown] = proposed["files"]
    assert shown["path"] == "a.py" and shown["before"] == TEXT
    a = kernel.request(ui, {"op": "accept", "candidate": pid})
    assert a["ok"], a["text"]
    assert (kroot / "a.py").read_bytes() == shown["after"].encode()
    assert ui_msg(kernel, ui, "resolved", start, candidate=pid)["status"] == "written"
    kernel.close_comm(agent)


def test_a_reject_note_reaches_the_waiting_agent(kernel: Any, kroot: Path, ui: str) -> None:
    agent, _ = kernel.open_comm("kli.agent", {"label": "bot"})
    r = kernel.call(agent, "write", {"path": "new.txt", "content": "x\n"})
    pid = r["details"]["proposal"]
    rid = uuid.uuid4().hex[:8]
    start = len(kernel.seen)
    kernel.send(agent, {"v": 1, "id": rid, "op": "call", "tool": "await_decision",
                        "args": {"id": pid, "timeout": 30}})
    rej = kernel.request(ui, {"op": "reject", "candidate": pid, "note": "name it notes.txt"})
    assert rej["ok"], rej["text"]
    got = kernel.wait_for(lambda m: m["msg_type"] == "comm_msg"
                          and m["content"]["comm_id"] == agent
                          and m["content"]["data"].get("id") == rid, since=start)
    out = got["content"]["data"]
    assert out["details"]["status"] == "rejected"
    assert out["details"]["note"] == "name it notes.txt" and "name it notes.txt" in out["text"]
    assert not (kroot / "new.txt").exists()
    kernel.close_comm(agent)


def test_bulk_accept_of_three_writes_all_three(kernel: Any, kroot: Path, ui: str) -> None:
    agent, hello = kernel.open_comm("kli.agent", {"label": "bulk"})
    for n in range(3):
        assert kernel.call(agent, "write", {"path": f"b{n}.txt", "content": f"{n}\n"})["ok"]
    assert not any((kroot / f"b{n}.txt").exists() for n in range(3))
    r = kernel.request(ui, {"op": "bulk", "action": "accept", "session": hello["session"]})
    assert r["ok"] and r["text"].startswith("Accepted 3 of 3"), r["text"]
    assert [(kroot / f"b{n}.txt").read_text() for n in range(3)] == ["0\n", "1\n", "2\n"]
    kernel.close_comm(agent)


def test_held_commands_and_code_run_only_on_accept_and_magics_are_never_held(
    kernel: Any, kroot: Path, ui: str
) -> None:
    agent, _ = kernel.open_comm("kli.agent", {"label": "cmd"})
    b = kernel.call(agent, "bash", {"command": "echo ran > ran.txt"})
    e = kernel.call(agent, "eval", {"code": "held_value = 7"})
    assert b["details"]["status"] == e["details"]["status"] == "pending"
    _, outputs = kernel.execute("print('held_value' in globals())")
    assert any("False" in o["content"].get("text", "") for o in outputs)
    assert not (kroot / "ran.txt").exists()
    assert kernel.request(ui, {"op": "accept", "candidate": b["details"]["proposal"]})["ok"]
    assert (kroot / "ran.txt").read_text() == "ran\n"
    assert kernel.request(ui, {"op": "accept", "candidate": e["details"]["proposal"]})["ok"]
    _, outputs = kernel.execute("print(held_value)")
    assert any("7" in o["content"].get("text", "") for o in outputs)
    _, outputs = kernel.execute("%kli bash echo typed > typed.txt")
    assert (kroot / "typed.txt").read_text() == "typed\n"
    kernel.close_comm(agent)


def test_proposals_of_a_closed_agent_comm_stay_as_expired_and_can_be_applied(
    kernel: Any, kroot: Path, ui: str
) -> None:
    agent, _ = kernel.open_comm("kli.agent", {"label": "leaver"})
    pid = kernel.call(agent, "write", {"path": "left.txt", "content": "kept\n"})["details"]["proposal"]
    start = len(kernel.seen)
    kernel.close_comm(agent)
    exp = ui_msg(kernel, ui, "expired", start)
    assert exp["candidates"] == [pid] and exp["text"] == "expired — leaver disconnected"
    hello = kernel.request(ui, {"op": "replay", "limit": 0})
    [c] = [c for c in hello["pending"] if c["candidate"] == pid]
    assert c["expired"] == "expired — leaver disconnected"
    assert kernel.request(ui, {"op": "accept", "candidate": pid})["ok"]
    assert (kroot / "left.txt").read_text() == "kept\n"


def test_a_chat_undo_held_then_accepted_after_it_disconnected_is_filed_under_the_chat(
    kernel: Any, kroot: Path, ui: str
) -> None:
    # As the Jupyter AI persona does: one connection per turn, and @kli undo another one that
    # closes as soon as its undo is held; the person Accepts later, in the panel.
    turn, hello = kernel.open_comm("kli.agent", {"label": "chat k.chat turn 1"})
    pid = kernel.call(turn, "write", {"path": "turn.txt", "content": "t\n"})["details"]["proposal"]
    assert kernel.request(ui, {"op": "accept", "candidate": pid})["ok"]
    kernel.close_comm(turn)
    label = "kli in chat k.chat (undoing turn 1)"
    undoer, _ = kernel.open_comm("kli.agent", {"label": label})
    held = kernel.call(undoer, "undo", {"session": hello["session"], "since": "0"})
    assert held["details"]["status"] == "pending", held["text"]
    kernel.close_comm(undoer)
    done = kernel.request(ui, {"op": "accept", "candidate": held["details"]["proposal"]})
    assert done["ok"] and not (kroot / "turn.txt").exists(), done["text"]
    changes = kernel.request(ui, {"op": "changes", "session": label})["changes"]
    assert [(c["id"], c["tool"]) for c in changes] == [(done["details"]["change"], "undo")]
    assert kernel.request(ui, {"op": "changes", "session": "default"})["changes"] == []


def test_the_review_magics_show_switch_and_decide_and_the_agent_hears_of_it(
    kernel: Any, kroot: Path, ui: str
) -> None:
    def out(code: str) -> str:
        _, outputs = kernel.execute(code)
        return "".join(o["content"].get("text", "") for o in outputs)

    assert out("%kli approval review eval").startswith(
        "approval: file review, shell review, eval review")
    agent, _ = kernel.open_comm("kli.agent", {"label": "magic-bot"})
    pid = kernel.call(agent, "write", {"path": "m.txt", "content": "m\n"})["details"]["proposal"]
    assert f"{pid}  magic-bot" in out("%kli pending")
    assert out(f"%kli reject {pid} use the docs folder").startswith(f"Rejected call {pid}")
    nxt = kernel.call(agent, "read", {"path": "."})
    assert f"[review] Proposal {pid} (write) was rejected by a person. Their note: use the " \
        "docs folder" in nxt["text"]
    assert "%kli approval: approval mode must be one of auto, review" in out(
        "%kli approval later")
    kernel.close_comm(agent)
