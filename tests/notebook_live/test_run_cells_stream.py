"""run_cells shows a running cell in the live Y document while it runs: the cell marked
running (``[*]``) with its outputs cleared when it starts, its output as it comes, bounded for a
flood, and what it printed before an interrupt kept. The document is read by a second Y client
(the person), while the agent's call has not returned."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.notebook_live.conftest import CollabServer, Person, live_notebook

pytestmark = [pytest.mark.kernel, pytest.mark.notebook_live]


@pytest.fixture(scope="module")
def live(collab: CollabServer) -> Iterator[tuple[str, Any, Person]]:
    with live_notebook(collab, "stream.ipynb", [
        ("slow", "import time\nprint('first line', flush=True)\ntime.sleep(4)\nprint('second')"),
        ("flood", "for i in range(100_000):\n    print('flood line', i)"),
        ("stuck", "import time\nprint('before the interrupt')\nfor _ in range(600): "
                  "time.sleep(0.05)"),
        ("progress", "from IPython.display import display\nh = display('start', display_id=True)\n"
                     "for i in range(50):\n    h.update(f'step {i}')"),
    ]) as live:
        yield live


def _ycell(person: Person, index: int) -> dict[str, Any]:
    """The cell as the person's document holds it, with its execution_state."""
    doc = person.client._doc

    def read() -> dict[str, Any]:
        ycell = doc.ycells[index]
        out = dict(doc.get_cell(index))
        out["execution_state"] = ycell.get("execution_state")
        return out

    return dict(person._on_loop(read))


def _text(cell: dict[str, Any]) -> str:
    return "".join("".join(o.get("text", "")) for o in cell.get("outputs", [])
                   if o.get("output_type") == "stream")


def _in_background(fn: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    got: list[Any] = []
    thread = threading.Thread(target=lambda: got.append(fn()), daemon=True)
    thread.start()
    return thread, got


def test_a_cells_first_line_is_in_the_live_document_before_the_cell_ends(
    live: tuple[str, Any, Person]
) -> None:
    name, agent, person = live
    # a count from an earlier run, so that the cleared count at the start can be seen
    assert agent.call("run_cells", {"path": name, "cell": "flood"}).ok
    thread, got = _in_background(
        lambda: agent.call("run_cells", {"path": name, "cell": "slow", "timeout": 60}))
    person.wait_for(lambda: "first line" in _text(_ycell(person, 0)), timeout=20)
    during = _ycell(person, 0)
    assert thread.is_alive() and not got, "the call had already returned"
    assert during["execution_state"] == "running"  # JupyterLab's prompt shows [*]
    assert during["execution_count"] is None
    assert "second" not in _text(during)
    thread.join(60)
    r = got[0]
    assert r.ok, r.text
    count = r.details["cells"][0]["execution_count"]
    person.wait_for(lambda: _ycell(person, 0)["execution_state"] == "idle")
    after = _ycell(person, 0)
    assert after["execution_count"] == count
    assert _text(after) == "first line\nsecond\n"
    assert "first line" in r.text and "second" in r.text


def test_a_cell_printing_100000_lines_stays_bounded_in_the_document_and_the_result(
    live: tuple[str, Any, Person]
) -> None:
    from kli.kernel.notebook.runner import FLUSH_SECONDS
    from kli.tools.process.run_cells import STREAM_HEAD_CHARS, STREAM_TAIL_CHARS

    name, agent, person = live
    updates: list[float] = []
    ydoc = person.client._doc.ydoc
    sub = person._on_loop(lambda: ydoc.observe(lambda _event: updates.append(time.monotonic())))
    started = time.monotonic()
    r = agent.call("run_cells", {"path": name, "cell": "flood", "timeout": 120})
    assert r.ok, r.text
    took = time.monotonic() - started
    time.sleep(1)
    person._on_loop(lambda: ydoc.unobserve(sub))
    # coalesced: a few document updates per second, not one per line
    assert 1 <= len(updates) <= took / FLUSH_SECONDS + 10, (len(updates), took)
    person.wait_for(lambda: _ycell(person, 1)["execution_count"]
                    == r.details["cells"][0]["execution_count"])
    text = _text(_ycell(person, 1))
    assert len(text) < STREAM_HEAD_CHARS + STREAM_TAIL_CHARS + 300
    assert text.startswith("flood line 0\n") and text.endswith("flood line 99999\n")
    assert "run_cells left out" in text
    assert len(r.text) < 5000  # the agent's view is the bounded summary
    assert took < 60


def test_an_interrupt_mid_stream_keeps_the_outputs_so_far_and_says_interrupted(
    live: tuple[str, Any, Person]
) -> None:
    name, agent, person = live
    thread, got = _in_background(
        lambda: agent.call("run_cells", {"path": name, "cell": "stuck", "timeout": 60}))
    person.wait_for(lambda: "before the interrupt" in _text(_ycell(person, 2)), timeout=20)
    assert thread.is_alive()
    agent.interrupt()
    thread.join(30)
    assert got, "the call did not return after the interrupt"
    r = got[0]
    assert not r.ok and r.details["error"] == "interrupted", r.text
    person.wait_for(lambda: _ycell(person, 2)["execution_state"] == "idle")
    cell = _ycell(person, 2)
    assert _text(cell) == "before the interrupt\n"
    assert [o["ename"] for o in cell["outputs"] if o["output_type"] == "error"] \
        == ["KeyboardInterrupt"]
    assert cell["execution_count"] == r.details["cells"][0]["execution_count"]
    assert "ok" in agent.call("eval", {"code": "'ok'"}).text


def test_a_display_updated_in_place_is_one_output_in_the_document(
    live: tuple[str, Any, Person]
) -> None:
    name, agent, person = live
    r = agent.call("run_cells", {"path": name, "cell": "progress"})
    assert r.ok, r.text
    person.wait_for(lambda: _ycell(person, 3)["execution_state"] == "idle"
                    and _ycell(person, 3)["execution_count"] is not None)
    outputs = _ycell(person, 3)["outputs"]
    assert [o["output_type"] for o in outputs] == ["display_data"]
    assert outputs[0]["data"]["text/plain"] == "'step 49'"
