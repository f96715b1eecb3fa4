"""The ``kli.ui`` comm target: hello replay, one event per call from any source, accept and
reject of repair candidates, resolved notifications (docs/protocol.md, "kli.ui")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kli.tools.file.anchors import line_hash

pytestmark = pytest.mark.kernel

EVENT_KEYS = {"kind", "id", "time", "tool", "args", "session", "session_label", "source", "ok",
              "text", "details", "duration_ms"}
FILE_KEYS = {"path", "status", "language", "added", "removed", "before", "after", "too_large",
             "candidate", "reason", "message", "marks"}


def make_preview(kernel: Any, agent: str, root: Path, name: str) -> tuple[str, dict[str, Any]]:
    """A pending repair candidate made by ``agent``: its id and the edit's reply."""
    (root / name).write_text("a = 1\nb = 2\nc = 3\n")
    assert kernel.call(agent, "read", {"path": name})["ok"]
    h = line_hash("b = 2")
    reply = kernel.call(agent, "edit", {"input": f"@@ {name}\n= 2:{h}..2:{h}\n~b = max(2, 3\n",
                                        "repair": "preview"})
    (change,) = reply["details"]["files"]
    assert change["status"] == "preview" and change["candidate"], reply["text"]
    return str(change["candidate"]), reply


def resolved_on(kernel: Any, ui: str, cid: str, since: int) -> dict[str, Any]:
    msg = kernel.wait_for(lambda m: m["msg_type"] == "comm_msg" and m["content"]["comm_id"] == ui
                          and m["content"]["data"].get("op") == "resolved"
                          and m["content"]["data"].get("candidate") == cid, since=since)
    data: dict[str, Any] = msg["content"]["data"]
    return data


@pytest.fixture(scope="module")
def agent(kernel: Any) -> str:
    comm_id, _ = kernel.open_comm("kli.agent", {"label": "ui-test agent"})
    return comm_id


def test_hello_replays_recent_events_pending_candidates_and_sessions(kernel: Any, kroot: Path,
                                                                     agent: str) -> None:
    kernel.call(agent, "eval", {"code": "'first'"})
    kernel.call(agent, "eval", {"code": "'second'"})
    cid, _ = make_preview(kernel, agent, kroot, "hello.py")
    ui, hello = kernel.open_comm("kli.ui", {"replay": 3})
    assert hello["v"] == 1 and hello["op"] == "hello"
    assert [e["tool"] for e in hello["events"]] == ["eval", "read", "edit"]
    assert "second" in hello["events"][0]["text"]
    assert all(EVENT_KEYS <= set(e) for e in hello["events"])
    pending = {c["candidate"]: c for c in hello["pending"]}
    cand = pending[cid]
    assert cand["path"] == "hello.py" and cand["session_label"] == "ui-test agent"
    assert cand["reason"] and cand["message"]
    assert FILE_KEYS <= set(cand["file"]) and cand["file"]["status"] == "preview"
    assert cand["file"]["after"] == "a = 1\nb = max(2, 3)\nc = 3\n"
    assert {"id": cand["session"], "label": "ui-test agent"} in hello["sessions"]
    # the tools' root: event paths are relative to it (the extension finds a cell's notebook)
    assert Path(hello["root"]).resolve() == kroot.resolve()
    # the replay op sends a fresh hello naming the request
    again = kernel.request(ui, {"op": "replay", "limit": 1})
    assert again["op"] == "hello" and [e["tool"] for e in again["events"]] == ["edit"]
    kernel.close_comm(ui)


def test_one_event_per_call_from_agent_and_from_magic(kernel: Any, kroot: Path, agent: str) -> None:
    (kroot / "ev.py").write_text("x = 1\n")
    ui, _ = kernel.open_comm("kli.ui", {"replay": 0})
    start = len(kernel.seen)
    kernel.call(agent, "read", {"path": "ev.py"})
    kernel.execute("%kli read ev.py")
    kernel.settle(0.3)
    events = [d["event"] for d in kernel.comm_data(ui, start) if d["op"] == "event"]
    assert [(e["tool"], e["source"]) for e in events] == [("read", "agent"), ("read", "magic")]
    assert events[1]["session_label"] == "magic" and events[0]["session_label"] == "ui-test agent"
    assert all(EVENT_KEYS <= set(e) and e["ok"] and e["duration_ms"] >= 0 for e in events)
    assert events[0]["args"] == {"path": "ev.py"}
    kernel.close_comm(ui)


def test_accept_from_the_ui_writes_and_every_ui_hears_resolved(kernel: Any, kroot: Path,
                                                              agent: str) -> None:
    cid, _ = make_preview(kernel, agent, kroot, "acc.py")
    ui1, _ = kernel.open_comm("kli.ui", {"replay": 0})
    ui2, _ = kernel.open_comm("kli.ui", {"replay": 0})
    start = len(kernel.seen)
    reply = kernel.request(ui1, {"op": "accept", "candidate": cid})
    assert reply["op"] == "result" and reply["ok"], reply["text"]
    assert (kroot / "acc.py").read_text() == "a = 1\nb = max(2, 3)\nc = 3\n"
    for ui in (ui1, ui2):
        note = resolved_on(kernel, ui, cid, start)
        assert note["status"] == "written" and note["by"] == "ui"
    again = kernel.request(ui1, {"op": "accept", "candidate": cid})
    assert again["ok"] is False and again["details"]["error"] == "unknown_candidate"
    kernel.close_comm(ui1)
    kernel.close_comm(ui2)


def test_reject_from_the_ui_discards_without_writing(kernel: Any, kroot: Path, agent: str) -> None:
    cid, _ = make_preview(kernel, agent, kroot, "rej.py")
    ui, _ = kernel.open_comm("kli.ui", {"replay": 0})
    start = len(kernel.seen)
    reply = kernel.request(ui, {"op": "reject", "candidate": cid})
    assert reply["ok"] and cid in reply["text"]
    assert (kroot / "rej.py").read_text() == "a = 1\nb = 2\nc = 3\n"
    note = resolved_on(kernel, ui, cid, start)
    assert note["status"] == "rejected" and note["by"] == "ui"
    kernel.settle(0.3)
    data = kernel.comm_data(ui, start)
    calls = [d["event"] for d in data if d["op"] == "event"]
    assert [(e["tool"], e["source"], e["args"]) for e in calls] == [
        ("edit", "ui", {"reject_repair": cid})]  # a row in the activity panel, as an accept
    assert [d["candidate"] for d in data if d["op"] == "resolved"] == [cid]  # and one resolved
    accept = kernel.call(agent, "edit", {"accept_repair": cid, "path": "rej.py"})
    assert not accept["ok"]
    kernel.close_comm(ui)


def test_agent_accept_repair_is_announced_to_the_ui(kernel: Any, kroot: Path, agent: str) -> None:
    cid, _ = make_preview(kernel, agent, kroot, "ag.py")
    ui, _ = kernel.open_comm("kli.ui", {"replay": 0})
    start = len(kernel.seen)
    reply = kernel.call(agent, "edit", {"accept_repair": cid, "path": "ag.py"})
    assert reply["ok"], reply["text"]
    note = resolved_on(kernel, ui, cid, start)
    assert note["status"] == "written" and note["by"] == "agent"
    kernel.close_comm(ui)


def test_accept_of_a_changed_file_is_refused_and_announced(kernel: Any, kroot: Path, agent: str) -> None:
    cid, _ = make_preview(kernel, agent, kroot, "stale.py")
    (kroot / "stale.py").write_text("changed = True\n")
    ui, _ = kernel.open_comm("kli.ui", {"replay": 0})
    start = len(kernel.seen)
    reply = kernel.request(ui, {"op": "accept", "candidate": cid})
    assert not reply["ok"] and "changed since preview" in reply["text"]
    assert (kroot / "stale.py").read_text() == "changed = True\n"
    note = resolved_on(kernel, ui, cid, start)
    assert note["status"] == "refused" and note["by"] == "ui"
    assert note["reason"] == "stale_candidate"
    kernel.close_comm(ui)


def test_closing_an_agent_comm_leaves_its_candidates_pending_as_expired(
    kernel: Any, kroot: Path
) -> None:
    temp, _ = kernel.open_comm("kli.agent", {"label": "short-lived"})
    cid, _ = make_preview(kernel, temp, kroot, "gone.py")
    ui, hello = kernel.open_comm("kli.ui", {"replay": 0})
    assert cid in [c["candidate"] for c in hello["pending"]]
    start = len(kernel.seen)
    kernel.close_comm(temp)
    msg = kernel.wait_for(lambda m: m["msg_type"] == "comm_msg" and m["content"]["comm_id"] == ui
                          and m["content"]["data"].get("op") == "expired", since=start)
    data = msg["content"]["data"]
    assert cid in data["candidates"] and data["text"] == "expired — short-lived disconnected"
    again = kernel.request(ui, {"op": "replay", "limit": 0})
    [c] = [c for c in again["pending"] if c["candidate"] == cid]
    assert c["expired"] == "expired — short-lived disconnected"
    kernel.close_comm(ui)


def test_every_message_the_kernel_sends_matches_the_protocol_definition(kernel: Any,
                                                                        kroot: Path) -> None:
    """Each message kind of both targets, validated against kli.kernel.protocol's JSON Schema."""
    import jsonschema

    from kli.kernel import protocol as P

    validators = {(s.target, s.op): jsonschema.Draft202012Validator(P.schema_of(s))
                  for s in P.MESSAGES if s.sender == "kernel" and s.target}
    shared = {s.op: jsonschema.Draft202012Validator(P.schema_of(s))
              for s in P.MESSAGES if s.sender == "kernel" and not s.target}
    start = len(kernel.seen)
    agent, _ = kernel.open_comm("kli.agent", {"label": "schema"})
    ui, _ = kernel.open_comm("kli.ui", {"replay": 5})
    kernel.request(agent, {"op": "ping"})
    kernel.request(agent, {"op": "list", "profile": "all"})
    kernel.request(agent, {"op": "explode"})
    first, _ = make_preview(kernel, agent, kroot, "schema1.py")
    second, _ = make_preview(kernel, agent, kroot, "schema2.py")
    kernel.request(ui, {"op": "accept", "candidate": first})
    kernel.request(ui, {"op": "reject", "candidate": second})
    kernel.request(ui, {"op": "reject", "candidate": second})  # unknown_candidate
    kernel.request(ui, {"op": "replay", "limit": 3})
    kernel.request(ui, {"op": "nope"})
    kernel.settle(0.3)
    seen: set[tuple[str, str]] = set()
    for comm, target in ((agent, "kli.agent"), (ui, "kli.ui")):
        for data in kernel.comm_data(comm, start):
            op = data.get("op")
            validator = validators.get((target, op)) or shared.get(op)
            assert validator is not None, (target, data)
            errors = [e.message for e in validator.iter_errors(data)]
            assert errors == [], (target, op, errors)
            seen.add((target, op))
    kernel.close_comm(agent)
    kernel.close_comm(ui)
    assert seen >= {("kli.agent", op) for op in ("hello", "pong", "specs", "error", "result")}
    assert seen >= {("kli.ui", op) for op in ("hello", "event", "resolved", "result", "error")}
