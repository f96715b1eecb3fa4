"""The kli persona hands a look's image to a model that takes images, and only to one (issue
35). A real Jupyter server with Jupyter AI, a real kli kernel, the real model client (litellm,
which knows gpt-4o takes images and a scripted id does not) — and a SCRIPTED model
(tests/endpoint.py) whose requests are read back."""

from __future__ import annotations

import base64
import io
import json
from typing import Any

import pytest

from tests.ai.harness import AiServer, answer, calls

pytestmark = pytest.mark.timeout(240)
pytest.importorskip("matplotlib")


def _plot_notebook(server: AiServer, name: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.8), dpi=200)
    fig.subplots().hist([x * x for x in range(300)], bins=30)
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    server.notebook(name, [("plot", "plt.hist(data)")])
    nb = json.loads((server.root / name).read_text())
    nb["cells"][0]["outputs"] = [{"output_type": "display_data",
                                  "metadata": {"image/png": {"width": 640, "height": 480}},
                                  "data": {"image/png": base64.b64encode(buf.getvalue()).decode(),
                                           "text/plain": "<Figure size 640x480 with 1 Axes>"}}]
    server.api("PUT", f"/api/contents/{name}", {"type": "notebook", "format": "json",
                                                 "content": nb})


def _image_parts(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for m in request["messages"] if isinstance(m.get("content"), list)
            for p in m["content"] if p.get("type") == "image_url"]


def test_the_persona_sends_the_plot_to_a_model_that_takes_images_and_not_to_one_that_does_not(
        server: AiServer) -> None:
    _plot_notebook(server, "plot.ipynb")
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
