"""``%kli agent`` with the keyless demo model (kli.tools.demomodel) in a real kli kernel: the
cell names the model as the keyless demo, shows each step and the answer ONCE (the run's last
line; the model's reply that carries it is not shown again), and the tour notebook's cell is
fixed on disk. With no model set up, the magic says how to set one up and names the demo."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.kernel.conftest import Harness, start_harness, stop_harness

pytestmark = pytest.mark.kernel

TOUR = Path(__file__).resolve().parents[2] / "binder" / "chat_agent.ipynb"
MODEL_VARS = ("KLI_AGENT_MODEL", "KLI_AGENT_MODELS", "OPENAI_API_KEY", "ANTHROPIC_API_KEY",
              "GEMINI_API_KEY")


@pytest.fixture
def keyless_kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Harness]:
    for var in MODEL_VARS:
        monkeypatch.delenv(var, raising=False)
    root = tmp_path / "root"
    root.mkdir()
    shutil.copy(TOUR, root / "chat_agent.ipynb")
    h = start_harness(root)
    try:
        yield h
    finally:
        stop_harness(h)


def _texts(h: Harness, start: int) -> list[str]:
    return [m["content"]["data"].get("text/plain", "") for m in h.seen[start:]
            if m["msg_type"] in ("display_data", "update_display_data")]


def test_the_demo_model_in_a_cell_shows_its_steps_and_its_answer_once(
        keyless_kernel: Harness) -> None:
    h = keyless_kernel
    start = len(h.seen)
    reply, _ = h.execute("%kli agent --model kli/demo fix mean in chat_agent.ipynb",
                         timeout=120)
    assert reply["status"] == "ok"
    shown = _texts(h, start)[-1]
    assert shown.splitlines()[0].endswith(
        "kli/demo — the keyless demo model (a script: no key, no network))"), shown
    assert "[1] read chat_agent.ipynb: ok" in shown
    assert "[2] edit chat_agent.ipynb#mean-def: ok +1 -1" in shown
    assert shown.count("Fixed `mean`") == 1, shown
    assert "— answered after 4 turns\nFixed `mean`" in shown, shown
    assert "return sum(xs) / len(xs)" in (h.root / "chat_agent.ipynb").read_text()


def test_with_no_model_set_up_the_magic_says_how_and_names_the_keyless_demo(
        keyless_kernel: Harness) -> None:
    _, outputs = keyless_kernel.execute("%kli agent fix mean in chat_agent.ipynb")
    text = "".join(str(o["content"].get("text", "")) for o in outputs)
    assert "no model is set up" in text and "OPENAI_API_KEY" in text, text
    assert "--model kli/demo runs the keyless demo model" in text, text
