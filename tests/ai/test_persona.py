"""The kli persona in Jupyter AI 3.2 (issue 24): ``@kli`` runs kli's agent loop on a notebook's
running kli kernel. A real Jupyter server with Jupyter AI, real kli kernels, the real model client
(litellm) — and a SCRIPTED model (tests/endpoint.py answers with the tool calls each test sets;
a model cannot exist here)."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from kli.tools.file.anchors import line_hash
from tests.ai.harness import AiServer, Chat, Panel, answer, calls, in_thread

pytestmark = pytest.mark.timeout(240)

BUGGY = "def add(a, b):\n    return a - b"
FIX = f"@@ calc.ipynb#c2\n= 2:{line_hash('    return a - b')}\n~    return a + b\n"


def _cells(path: Any) -> dict[str, str]:
    return {c["id"]: "".join(c["source"]) for c in json.loads(path.read_text())["cells"]}


def test_a_task_sent_to_kli_reads_the_notebook_it_runs_in_and_edits_a_cell_on_disk(
        server: AiServer) -> None:
    nb = server.notebook("calc.ipynb", [("c1", "x = 41"), ("c2", BUGGY)])
    server.open("calc.ipynb")
    server.script.set([calls(("edit", {"input": FIX})),
                       calls(("eval", {"code": "2 + 3"}), n=1),
                       answer("add adds now: add(2, 3) is 5.")])

    reply = server.ask("@kli add subtracts; fix it")

    assert _cells(nb)["c2"] == "def add(a, b):\n    return a + b"
    first = server.script.requests[0]["messages"]
    task = next(m["content"] for m in first if m["role"] == "user")
    # The agent starts from what the person sees: the cells with ids, and the live image.
    assert task.startswith("add subtracts; fix it"), task
    assert "calc.ipynb#c2" in task and "2:" + line_hash("    return a - b") + "|" in task
    assert "image_summary" in task
    assert "edit calc.ipynb#c2: ok +1 -1" in reply, reply
    assert "eval 2 + 3: ok" in reply, reply
    assert "add adds now: add(2, 3) is 5." in reply
    assert "tokens" in reply and "chat " in reply and "turn 1" in reply, reply
    assert server.script.tool_results()[1].strip().endswith("5"), server.script.tool_results()


def test_with_no_kli_notebook_running_kli_says_how_to_start_one(server: AiServer) -> None:
    reply = server.ask("@kli tidy up")
    assert "No notebook has a kli kernel running" in reply
    assert "Change Kernel" in reply
    assert server.script.requests == []  # the model was never asked


def test_with_several_kli_notebooks_kli_asks_which_and_a_named_one_is_taken(
        server: AiServer) -> None:
    server.notebook("a.ipynb", [("a1", "a = 1")])
    server.notebook("b.ipynb", [("b1", "b = 2")])
    server.open("a.ipynb")
    server.open("b.ipynb")

    reply = server.ask("@kli what is here?")
    assert "Several notebooks have a kli kernel running: `a.ipynb`, `b.ipynb`" in reply
    assert "name it" in reply
    assert server.script.requests == []

    server.script.set([answer("b holds 2.")])
    reply = server.ask("@kli in b.ipynb what is b?")
    assert "Working on `b.ipynb`" in reply and "b holds 2." in reply
    task = next(m["content"] for m in server.script.requests[0]["messages"]
                if m["role"] == "user")
    assert "b.ipynb#b1" in task and "a.ipynb#a1" not in task

    reply = server.ask("@kli in nothere.ipynb look")
    assert "`nothere.ipynb`" in reply and "has no kli kernel running" in reply


def test_settings_and_model_choice_come_with_the_message(server: AiServer) -> None:
    server.notebook("s.ipynb", [("s1", "s = 1")])
    server.open("s.ipynb")
    server.script.set([calls(("read", {"path": "s.ipynb"})), answer("done")])
    reply = server.ask("@kli look twice", {"model": {"id": "openai/scripted-b"},
                                           "settings": {"steps": "1", "profile": "slmcode"}})
    request = server.script.requests[0]
    assert request["model"] == "scripted-b"
    assert "ws_read" in {t["function"]["name"] for t in request["tools"]}
    assert "answered when asked after 2 turns" in reply, reply  # steps=1: one call, then asked

    reply = server.ask("@kli go", {"settings": {"steps": "zero"}})
    assert "steps='zero'" in reply and "a whole number" in reply, reply


@pytest.mark.serial  # asserts a wall-clock time
def test_stop_in_the_chat_ends_a_long_bash_in_the_kernel_within_two_seconds(
        server: AiServer, chat: Chat) -> None:
    server.notebook("long.ipynb", [("l1", "pass")])
    server.open("long.ipynb")
    marker = server.root / "finished.txt"
    server.script.set([calls(("bash", {"command": f"sleep 60; touch {marker}",
                                        "timeout": 120}))])
    chat.send("@kli run the long job")
    chat.wait(lambda: any("is running bash" in w for w in chat.writing), 60,
              "the bash call to start")
    time.sleep(1.0)  # the command is running in the kernel
    started = time.monotonic()
    assert chat.stop()["cancelled"] == ["jupyter-ai-personas::kli::KliPersona"]
    chat.wait(lambda: "Stopped: the run ended" in chat.replies(), 10, "the stop")
    took = time.monotonic() - started
    assert took < 2.0, f"Stop took {took:.2f} s"
    assert "stopped during bash" in chat.replies()
    # the command itself is gone: nothing of sleep 60 is left in the kernel's process tree
    # within 3 s of the Stop. The chat's reply can come first: the kernel's bash sees the
    # cancel on its next 50 ms poll and then kills its process group (a clean-clone run
    # found both processes still there at the moment the reply arrived).
    import psutil

    def sleeping() -> list[psutil.Process]:
        kernels = [p for p in psutil.process_iter(["cmdline"])  # this server's kernels only
                   if "kli.kernel" in " ".join(p.info["cmdline"] or [])
                   and str(server.runtime) in " ".join(p.info["cmdline"] or [])]
        assert kernels, "no kli kernel of this server found"
        found = []
        for k in kernels:
            for c in k.children(recursive=True):
                try:
                    if "sleep" in " ".join(c.cmdline() or []) and c.status() != "zombie":
                        found.append(c)
                except psutil.NoSuchProcess:
                    pass
        return found

    left = sleeping()
    while left and time.monotonic() - started < 3.0:
        time.sleep(0.05)
        left = sleeping()
    assert not left, (left, f"{time.monotonic() - started:.2f} s after Stop")
    assert len(server.script.requests) == 1  # the model was not asked again


def test_a_held_edit_waits_in_the_chat_and_the_persons_accept_lets_the_run_go_on(
        server: AiServer, chat: Chat) -> None:
    nb = server.notebook("calc.ipynb", [("c1", "x = 41"), ("c2", BUGGY)])
    kid = server.open("calc.ipynb")
    panel_box: dict[str, Any] = {}

    def review_on() -> dict[str, Any]:
        panel_box["panel"] = Panel(server.connection_file(kid))
        return panel_box["panel"].request({"op": "approval", "mode": "review", "kind": "file"})

    thread, box = in_thread(review_on)
    thread.join(120)  # a kernel started on a loaded machine: the switch must be made before the run
    assert not thread.is_alive(), "the panel's approval switch did not answer in 120 s"
    assert "error" not in box, box
    assert (box["value"].get("approval") or {}).get("file") == "review", box["value"]
    server.script.set([calls(("edit", {"input": FIX})), answer("fixed, after your review")])
    chat.send("@kli fix add")
    held = chat.wait(lambda: "held for review as" in chat.replies(), 60,
                     f"the held edit (review switched on in kernel {kid[:8]})")
    assert held
    text = chat.replies()
    proposal = text.split("held for review as ", 1)[1].split()[0]
    assert "kli panel" in text and "waiting up to 60 s" in text, text
    assert _cells(nb)["c2"] == BUGGY  # not written yet

    # The person's Accept, from the panel's comm, on a thread of its own
    thread, box = in_thread(lambda: panel_box["panel"].request(
        {"op": "accept", "candidate": proposal}))
    chat.wait(lambda: "fixed, after your review" in chat.replies(), 60, "the run to go on")
    thread.join(30)
    assert "error" not in box, box
    assert f"{proposal}: accepted" in chat.replies(), chat.replies()
    assert _cells(nb)["c2"] == "def add(a, b):\n    return a + b"
    assert "accepted" in server.script.tool_results()[0]
    thread, box = in_thread(lambda: (
        panel_box["panel"].request({"op": "approval", "mode": "auto"}),
        panel_box["panel"].close()))
    thread.join(30)


def test_undo_this_turn_restores_the_notebooks_bytes_and_is_refused_after_a_later_change(
        server: AiServer, chat: Chat) -> None:
    nb = server.notebook("calc.ipynb", [("c1", "x = 41"), ("c2", BUGGY)])
    server.open("calc.ipynb")
    before = nb.read_bytes()
    server.script.set([calls(("edit", {"input": FIX})), answer("fixed")])
    chat.send("@kli fix add")
    chat.wait(lambda: "fixed" in chat.replies() and "turn 1" in chat.replies(), 60, "turn 1")
    assert nb.read_bytes() != before

    chat.send("@kli undo this turn")
    chat.wait(lambda: "Took back turn 1" in chat.replies(), 60, "the undo")
    assert nb.read_bytes() == before
    # Filed as the chat's persona undoing the turn (not "… turn 1 (undo)", not "default").
    from kli.tools.core import undo as undo_store

    [undone] = [c for c in undo_store.timeline(str(nb.parent)) if c.tool == "undo"]
    assert undone.session_label.startswith("kli in chat "), undone.session_label
    assert undone.session_label.endswith(" (undoing turn 1)"), undone.session_label

    # A second turn, then the person changes the cell: undo is refused, naming it.
    server.script.set([calls(("edit", {"input": FIX})), answer("fixed again")])
    chat.send("@kli fix add again")
    chat.wait(lambda: "fixed again" in chat.replies(), 60, "turn 2")
    data = json.loads(nb.read_text())
    data["cells"][1]["source"] = "def add(a, b):\n    return b + a\n"
    nb.write_text(json.dumps(data))
    chat.send("@kli undo")
    chat.wait(lambda: "was not undone" in chat.replies(), 60, "the refusal")
    tail = chat.replies().rsplit("was not undone", 1)[1]
    assert "calc.ipynb" in tail, tail
    assert "b + a" in nb.read_text()

    # A turn that changed nothing has nothing to take back, and says so.
    server.script.set([answer("just looked")])
    chat.send("@kli just look")
    chat.wait(lambda: "just looked" in chat.replies(), 60, "turn 3")
    chat.send("@kli undo")
    chat.wait(lambda: "Turn 3" in chat.replies() and "changed nothing" in chat.replies(), 60,
              "the empty undo")


def test_a_persona_turn_on_one_notebook_is_held_where_it_can_change_one_under_review(
        server: AiServer) -> None:
    """The persona's calls carry the review other notebooks ask (kli.kernel.ai.reach): a turn
    on sub/b.ipynb whose bash would change ../a.ipynb, under review in its own kernel, is held
    in b's kernel, and a.ipynb stays as it was."""
    a = server.notebook("a.ipynb", [("a1", "a = 1")])
    server.api("PUT", "/api/contents/sub", {"type": "directory"})
    server.notebook("sub/b.ipynb", [("b1", "b = 2")])
    a_kernel = server.open("a.ipynb")
    server.open("sub/b.ipynb")
    thread, box = in_thread(lambda: Panel(server.connection_file(a_kernel)))
    thread.join(120)
    assert "error" not in box, box
    a_panel = box["value"]
    try:
        thread, box = in_thread(lambda: a_panel.request({"op": "approval", "mode": "review"}))
        thread.join(60)
        assert (box.get("value") or {}).get("approval", {}).get("shell") == "review", box
        before = a.read_bytes()
        server.script.set([calls(("bash", {"command": "sed -i 's/a = 1/a = 666/' ../a.ipynb"})),
                           answer("asked")])
        reply = server.ask("@kli in sub/b.ipynb change a", {"settings": {"review_wait": "0"}})
        assert "Working on `b.ipynb`" in reply and "held for review" in reply, reply
        said = server.script.tool_results()[0]
        assert "a.ipynb is under review for shell commands, and this bash can change it" in said, \
            said
        assert a.read_bytes() == before
    finally:
        thread, box = in_thread(lambda: (a_panel.request({"op": "approval", "mode": "auto"}),
                                         a_panel.close()))
        thread.join(30)
