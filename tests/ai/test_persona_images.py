"""The kli persona hands a look's image to a model that takes images, and only to one (issue
35). A real Jupyter server with Jupyter AI, a real kli kernel, the real model client (litellm,
which knows gpt-4o takes images and a scripted id does not) — and a SCRIPTED model
(tests/endpoint.py) whose requests are read back."""

from __future__ import annotations

from typing import Any

import pytest

from tests.ai.harness import AiServer, answer, calls, stored_plot

pytestmark = pytest.mark.timeout(240)
pytest.importorskip("matplotlib")


def _image_parts(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for m in request["messages"] if isinstance(m.get("content"), list)
            for p in m["content"] if p.get("type") == "image_url"]


def test_the_persona_sends_the_plot_to_a_model_that_takes_images_and_not_to_one_that_does_not(
        server: AiServer) -> None:
    stored_plot(server, "plot.ipynb", "plt.hist(data)",
                lambda ax: ax.hist([x * x for x in range(300)], bins=30))
    server.open("plot.ipynb")

    server.script.set([calls(("look", {"path": "plot.ipynb#plot"})), answer("skewed right")])
    reply = server.ask("@kli is the histogram skewed?", {"model": {"id": "openai/gpt-4o"}})
    assert "skewed right" in reply, reply
    request = server.script.requests[1]
    assert request["model"] == "gpt-4o"
    [part] = _image_parts(request)
    assert part["image_url"]["url"].startswith("data:image/png;base64,")
    tool = next(m for m in request["messages"] if m["role"] == "tool")
    assert "from 1280×960" in tool["content"] and "not shown" not in tool["content"]

    server.script.set([calls(("look", {"path": "plot.ipynb#plot"})), answer("cannot see it")])
    reply = server.ask("@kli is the histogram skewed?", {"model": {"id": "openai/scripted"}})
    assert "cannot see it" in reply, reply
    request = server.script.requests[1]
    assert request["model"] == "scripted" and _image_parts(request) == []
    tool = next(m for m in request["messages"] if m["role"] == "tool")
    assert "[1 image(s) not shown: openai/scripted does not take images" in tool["content"]
