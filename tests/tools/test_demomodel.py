"""The keyless demo model (kli.tools.demomodel) driving the real agent loop on a real Workspace:
it carries the tour's chat task (binder/chat_agent.ipynb) and ends every other path with an
answer that says what happened; and which models count as set up (kli.tools.agentmodels)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kli.tools import Workspace
from kli.tools.agent import run_agent
from kli.tools.agentmodels import NO_MODEL, agent_model, model_id, models_set_up
from kli.tools.demomodel import DEMO_ID, DemoModel

TOUR = Path(__file__).resolve().parents[2] / "binder" / "chat_agent.ipynb"
BUGGY = "    return sum(xs) / (len(xs) - 1)"
FIXED = "    return sum(xs) / len(xs)"
MODEL_VARS = ("KLI_AGENT_MODEL", "KLI_AGENT_MODELS", "OPENAI_API_KEY", "ANTHROPIC_API_KEY",
              "GEMINI_API_KEY")


def _cell(root: Path, cid: str) -> str:
    nb = json.loads((root / "chat_agent.ipynb").read_text())
    return next("".join(c["source"]) for c in nb["cells"] if c.get("id") == cid)


@pytest.fixture
def tour(tmp_path: Path) -> Workspace:
    shutil.copy(TOUR, tmp_path / "chat_agent.ipynb")
    return Workspace(str(tmp_path))


def test_the_demo_reads_the_tour_notebook_edits_the_buggy_cell_runs_a_check_and_answers(
        tour: Workspace) -> None:
    lines: list[str] = []
    run = run_agent("fix mean in chat_agent.ipynb", agent_model(DEMO_ID), tour,
                    on_event=lambda e: lines.append(e.line()))
    assert [s.tool for s in run.steps] == ["read", "edit", "eval"]
    assert run.stopped == "answered" and run.usage == {}
    assert FIXED in _cell(Path(tour.root), "mean-def")
    assert _cell(Path(tour.root), "weekly") == "sales = [120, 80, 100]\nmean(sales)"
    assert run.answer is not None and "`mean([2, 4, 6])` gives 4.0." in run.answer
    assert "keyless demo model" in run.answer
    assert "[2] edit chat_agent.ipynb#mean-def: ok +1 -1" in lines


def test_the_demo_with_no_notebook_named_or_no_bug_left_says_so_and_changes_nothing(
        tour: Workspace) -> None:
    run = run_agent("make it better", DemoModel(), tour)
    assert run.steps == [] and run.answer is not None and "name it in the task" in run.answer

    run_agent("fix mean in chat_agent.ipynb", DemoModel(), tour)  # fixes it
    before = (Path(tour.root) / "chat_agent.ipynb").read_bytes()
    run = run_agent("fix mean in chat_agent.ipynb", DemoModel(), tour)
    assert [s.tool for s in run.steps] == ["read"]
    assert run.answer is not None and "found no demo bug" in run.answer
    assert (Path(tour.root) / "chat_agent.ipynb").read_bytes() == before


def test_a_stale_anchor_ends_the_demo_with_the_refusal_and_nothing_written(
        tour: Workspace) -> None:
    class Stale(DemoModel):
        """The demo, with the cell changed between its read and its edit."""

        def __call__(self, messages, tools):  # type: ignore[no-untyped-def]
            reply = super().__call__(messages, tools)
            calls = reply["choices"][0]["message"].get("tool_calls") or []
            if calls and calls[0]["function"]["name"] == "edit":
                path = Path(tour.root) / "chat_agent.ipynb"
                path.write_text(path.read_text().replace("(len(xs) - 1)", "(len(xs) - 2)"))
            return reply

    run = run_agent("fix mean in chat_agent.ipynb", Stale(), tour)
    assert [s.tool for s in run.steps] == ["read", "edit"]
    assert run.answer is not None and run.answer.startswith("The edit was refused")
    assert "(len(xs) - 2)" in _cell(Path(tour.root), "mean-def")


def test_models_set_up_come_from_the_model_variables_then_the_providers_keys(
        monkeypatch: pytest.MonkeyPatch) -> None:
    for var in MODEL_VARS:
        monkeypatch.delenv(var, raising=False)
    assert models_set_up() == []
    with pytest.raises(ValueError) as exc:
        model_id()
    assert str(exc.value) == NO_MODEL and "kli/demo" in NO_MODEL and "OPENAI_API_KEY" in NO_MODEL

    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    assert models_set_up() == [("anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY is set")]
    assert model_id() == "anthropic/claude-sonnet-4-5"
    monkeypatch.setenv("KLI_AGENT_MODEL", "ollama/qwen2.5-coder")
    monkeypatch.setenv("KLI_AGENT_MODELS", "openai/a, anthropic/claude-sonnet-4-5")
    assert [m for m, _ in models_set_up()] == [
        "ollama/qwen2.5-coder", "openai/a", "anthropic/claude-sonnet-4-5"]
    assert model_id() == "ollama/qwen2.5-coder" and model_id("openai/b") == "openai/b"
    assert isinstance(agent_model(DEMO_ID), DemoModel)
