"""The agent loop hands a look's image to a model that takes images, and only to one.

The model is the one thing faked: a scripted OpenAI-compatible server on 127.0.0.1
(tests/endpoint.py, NOT a model). litellm decides whether the model takes images from its own
model list (``supports_vision``); the figure is a real matplotlib (Agg) figure in this
process's image, the look tool and the Workspace are real.
"""

from __future__ import annotations

import asyncio
import base64
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kli.tools import Workspace
from kli.tools.agent import run_agent_async
from kli.tools.agentmodels import VISION_VAR, litellm_model
from tests.endpoint import ScriptedEndpoint, answer, calls

pytest.importorskip("litellm")
matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
Image = pytest.importorskip("PIL.Image")


def _look_then_answer(request: dict[str, Any]) -> dict[str, Any]:
    if not any(m["role"] == "tool" for m in request["messages"]):
        return calls(("look", {"path": None, "output": None, "name": None}))
    return answer("The histogram is skewed to the right.")


@pytest.fixture
def ws(root: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    import matplotlib.pyplot as plt

    monkeypatch.delenv(VISION_VAR, raising=False)
    plt.close("all")
    ws = Workspace(str(root))
    r = ws.call("eval", {"code": "import matplotlib.pyplot as plt\n"
                         "plt.hist([x * x for x in range(200)], bins=25)\nNone"})
    assert r.ok, r.text
    yield ws
    plt.close("all")


def _second_request(model_id: str, ws: Workspace, **options: Any) -> list[dict[str, Any]]:
    endpoint = ScriptedEndpoint(_look_then_answer)
    with endpoint as url:
        model = litellm_model(model_id, api_base=url, api_key="sk-test", stream=False, **options)
        run = asyncio.run(run_agent_async("is the data skewed?", model, ws))
    assert run.answer and "skewed" in run.answer
    assert len(endpoint.requests) == 2
    messages: list[dict[str, Any]] = endpoint.requests[1]["messages"]
    return messages


def _image_parts(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [part for m in messages if isinstance(m.get("content"), list)
            for part in m["content"] if part.get("type") == "image_url"]


def test_a_model_litellm_marks_as_taking_images_gets_the_figure_as_an_image_part(
        ws: Workspace) -> None:
    messages = _second_request("openai/gpt-4o", ws)
    tool = next(m for m in messages if m["role"] == "tool")
    assert "figure (plt figure 1)" in tool["content"] and "not shown" not in tool["content"]
    assert "iVBOR" not in tool["content"]  # the text carries no base64
    after = messages[messages.index(tool) + 1]
    assert after["role"] == "user"  # Chat Completions takes images only in user messages
    [part] = _image_parts(messages)
    url = part["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    with Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))) as img:
        assert max(img.size) <= 1024 and img.size[0] > 300


def test_a_model_that_does_not_take_images_gets_the_text_and_why(ws: Workspace) -> None:
    messages = _second_request("openai/scripted", ws)
    assert _image_parts(messages) == []
    tool = next(m for m in messages if m["role"] == "tool")
    assert "title" in tool["content"] or "axes 1" in tool["content"]
    assert "[1 image(s) not shown: openai/scripted does not take images" in tool["content"]
    assert VISION_VAR in tool["content"]  # and how to say it does


def test_the_vision_setting_overrides_litellms_list(ws: Workspace,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VISION_VAR, "1")
    assert len(_image_parts(_second_request("openai/scripted", ws))) == 1
    monkeypatch.setenv(VISION_VAR, "0")
    assert _image_parts(_second_request("openai/gpt-4o", ws)) == []
