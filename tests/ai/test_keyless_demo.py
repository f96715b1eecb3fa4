"""The keyless chat (issue 36): on a server with NO model set up — no ``KLI_AGENT_MODEL``, no
provider key — the kli persona's model is ``kli/demo``, the keyless demo model (a script that
needs no key and no network, kli.tools.demomodel), and it carries the tour's task in
binder/chat_agent.ipynb end to end: read the notebook, the anchored edit of the buggy cell, the
check run in the kernel, the answer.

Real: the Jupyter server with Jupyter AI 3.2 and kli's persona (kli the default persona, as
binder/default_kernel.py sets it for scripts/run and Binder), the kli kernel it starts for the
tour's own notebook, Jupyter AI's headless route (``POST /api/ai/message/kli``) and its chat
websocket, the kli panel's comm for Accept. No model runs: the demo model is the product here,
not a stand-in.
"""

from __future__ import annotations

import json
import shutil
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.ai.harness import PERSONA_ID, AiServer, Chat, Panel, in_thread
from tests.ai.keyless import BUGGY, FIXED, TASK, TOUR, start_keyless_server

pytestmark = pytest.mark.timeout(300)



@pytest.fixture(scope="module")
def keyless(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AiServer]:
    with start_keyless_server(tmp_path_factory.mktemp("keyless")) as server:
        yield server


@pytest.fixture
def tour(keyless: AiServer) -> Iterator[AiServer]:
    """The server with the tour's notebook fresh in its root and its kli kernel started."""
    keyless.close_sessions()
    shutil.copy(TOUR, keyless.root / "chat_agent.ipynb")
    yield keyless
    keyless.close_sessions()


def _source(server: AiServer, cell: str) -> str:
    nb = json.loads((server.root / "chat_agent.ipynb").read_text())
    return next("".join(c["source"]) for c in nb["cells"] if c.get("id") == cell)


def test_with_no_model_set_up_the_demo_model_fixes_the_tours_bug_through_the_headless_route(
        tour: AiServer) -> None:
    assert BUGGY in _source(tour, "mean-def")
    tour.open("chat_agent.ipynb")

    reply = tour.ask(TASK)

    # Named as the keyless demo where the reply says which model works
    assert "model kli/demo — the keyless demo model (a script: no key, no network)" in reply, reply
    # The loop's steps: read the notebook, the anchored edit of the cell, the check in the kernel
    assert "read chat_agent.ipynb: ok" in reply, reply
    assert "edit chat_agent.ipynb#mean-def: ok +1 -1" in reply, reply
    assert "eval # check the fixed cell: mean([2, 4, 6]): ok" in reply, reply
    # The answer, once, with the value the kernel computed
    assert reply.count("Fixed `mean` in `chat_agent.ipynb` (cell mean-def)") == 1, reply
    assert "`mean([2, 4, 6])` gives 4.0" in reply, reply
    assert "keyless demo model" in reply.rsplit("Fixed `mean`", 1)[1]
    # The cell on disk, fixed; nothing else in the notebook changed
    assert FIXED in _source(tour, "mean-def") and BUGGY not in _source(tour, "mean-def")
    assert _source(tour, "weekly") == "sales = [120, 80, 100]\nmean(sales)"

    # Asked again, the bug is gone: the demo says so and changes nothing.
    before = (tour.root / "chat_agent.ipynb").read_bytes()
    reply = tour.ask(TASK)
    assert "found no demo bug" in reply, reply
    assert (tour.root / "chat_agent.ipynb").read_bytes() == before


def _review_panel(server: AiServer, kid: str) -> Panel:
    """The kli panel's comm to the notebook's kernel, review switched on for files."""
    box_panel: dict[str, Any] = {}

    def review_on() -> dict[str, Any]:
        box_panel["panel"] = Panel(server.connection_file(kid))
        return box_panel["panel"].request({"op": "approval", "mode": "review", "kind": "file"})

    thread, box = in_thread(review_on)
    thread.join(120)
    assert not thread.is_alive() and "error" not in box, box
    panel: Panel = box_panel["panel"]
    return panel


def _review_off(panel: Panel) -> None:
    thread, _ = in_thread(lambda: (panel.request({"op": "approval", "mode": "auto"}),
                                   panel.close()))
    thread.join(30)


def test_in_the_chat_stop_ends_the_demo_while_its_edit_waits_and_accept_lets_it_finish(
        tour: AiServer) -> None:
    panel = _review_panel(tour, tour.open("chat_agent.ipynb"))
    name = f"k{uuid.uuid4().hex[:6]}.chat"
    (tour.root / name).write_text("")
    try:
        with Chat(tour, name) as chat:
            # Stop while the edit waits for review: the run ends, nothing is written.
            chat.send(TASK)  # the message names kli by metadata, as the input's picker does
            chat.wait(lambda: "held for review as" in chat.replies(), 90, "the held edit")
            assert "kli/demo — the keyless demo model" in chat.replies(), chat.replies()
            started = time.monotonic()
            assert chat.stop()["cancelled"] == [PERSONA_ID]
            chat.wait(lambda: "Stopped: the run ended" in chat.replies(), 10, "the stop")
            assert time.monotonic() - started < 5
            assert BUGGY in _source(tour, "mean-def")

            # Again, and Accept in the panel: the run goes on to the check and the answer.
            chat.send(TASK)
            chat.wait(lambda: chat.replies().count("held for review as") == 2, 90,
                      "the second held edit")
            proposal = chat.replies().rsplit("held for review as ", 1)[1].split()[0]
            assert BUGGY in _source(tour, "mean-def")  # not written before the Accept
            thread, box = in_thread(lambda: panel.request({"op": "accept",
                                                           "candidate": proposal}))
            chat.wait(lambda: "gives 4.0" in chat.replies(), 90, "the answer after Accept")
            thread.join(30)
            assert "error" not in box, box
            assert f"{proposal}: accepted" in chat.replies()
            assert chat.replies().count("Fixed `mean`") == 1
            assert FIXED in _source(tour, "mean-def")
    finally:
        _review_off(panel)


def test_in_the_chat_undo_this_turn_puts_the_demos_cell_back(tour: AiServer) -> None:
    tour.open("chat_agent.ipynb")
    name = f"u{uuid.uuid4().hex[:6]}.chat"
    (tour.root / name).write_text("")
    with Chat(tour, name) as chat:
        chat.send(TASK)
        chat.wait(lambda: "gives 4.0" in chat.replies(), 90, "the demo's answer")
        assert FIXED in _source(tour, "mean-def")
        chat.send("undo")
        chat.wait(lambda: "Took back turn 1" in chat.replies(), 60, "the undo")
        assert BUGGY in _source(tour, "mean-def"), chat.replies()
