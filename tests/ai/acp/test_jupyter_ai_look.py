"""look on Jupyter AI's own MCP endpoint (issue 35), through real components: a Jupyter server
with Jupyter AI 3.2 and jupyter-server-mcp 0.3, a kli kernel the server starts for a notebook,
``kli ai enable``, and an MCP client speaking streamable HTTP with a chat's identity headers.
A cell's stored plot and a live matplotlib figure come back as MCP image blocks after the text;
no model takes part."""

from __future__ import annotations

import base64
import io
import uuid
from typing import Any

import pytest

from tests.ai.acp.conftest import AiServer
from tests.ai.harness import stored_plot

pytestmark = pytest.mark.timeout(600)
pytest.importorskip("matplotlib")
Image = pytest.importorskip("PIL.Image")


def _blocks(chat: Any, tool: str, args: dict[str, Any]) -> tuple[list[Any], bool]:
    async def body(c: Any) -> Any:
        r = await c.call_tool(tool, args, raise_on_error=False)
        return list(r.content), bool(r.is_error)
    out: tuple[list[Any], bool] = chat.run(body)
    return out


def _size(block: Any) -> tuple[int, int]:
    with Image.open(io.BytesIO(base64.b64decode(block.data))) as img:
        return img.size


def test_look_through_jupyter_ais_route_returns_image_blocks(ai_server: AiServer) -> None:
    name = "look_nb.ipynb"
    stored_plot(ai_server, name, "plt.plot([1, 4, 2, 8])", lambda ax: ax.plot([1, 4, 2, 8]))
    ai_server.open(name)
    chat = ai_server.agent(uuid.uuid4().hex)
    assert "look" in {t.name for t in chat.tools()}

    stored, is_error = _blocks(chat, "look", {"path": f"{name}#plot"})
    assert not is_error, stored
    text, image = stored
    assert text.type == "text" and "from 1280×960" in text.text
    assert image.type == "image" and image.mimeType == "image/png"
    assert _size(image) == (512, 384)
    assert image.data[:40] not in text.text

    made, is_error = _blocks(chat, "eval", {"code": (
        "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
        "fig, ax = plt.subplots()\nax.bar(['a', 'b'], [3, 5])\nax.set_title('Two bars')\nNone")})
    assert not is_error, made
    live, is_error = _blocks(chat, "look", {})
    assert not is_error, live
    assert [b.type for b in live] == ["text", "image"]
    assert "title 'Two bars'" in live[0].text and "2 patches" in live[0].text
