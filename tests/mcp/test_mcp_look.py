"""look through ``kli mcp`` over stdio, driven by the MCP SDK's client against a real kli
kernel: a matplotlib figure (Agg) made by eval comes back as an MCP image content block after
the text block — a PNG within the budget, the text free of base64."""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any

import pytest

from .helpers import client_info, run, stdio_params, text_of

pytestmark = [pytest.mark.kernel, pytest.mark.mcp]
pytest.importorskip("matplotlib")
Image = pytest.importorskip("PIL.Image")


def test_look_returns_an_image_block_and_other_tools_none(tmp_path: Path) -> None:
    from mcp import Client

    root = tmp_path / "root"
    root.mkdir()

    async def body() -> Any:
        params = stdio_params(tmp_path, "--start", "--root", str(root))
        async with Client(params, client_info=client_info()) as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            made = await c.call_tool("eval", {"code": (
                "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
                "fig, ax = plt.subplots(figsize=(12.8, 9.6), dpi=100)\n"
                "ax.hist([x * x for x in range(500)], bins=40)\nax.set_title('Skewed')\nNone")})
            looked = await c.call_tool("look", {})
            missing = await c.call_tool("look", {"path": "nope.png"})
            return tools, made, looked, missing

    tools, made, looked, missing = run(body)
    assert "look" in tools and "image" in (tools["look"].description or "")
    assert tools["look"].annotations.read_only_hint is True
    assert not made.is_error and all(b.type == "text" for b in made.content)
    assert not looked.is_error, text_of(looked)
    text, image = looked.content
    assert text.type == "text" and "title 'Skewed'" in text.text
    assert image.type == "image" and image.mime_type == "image/png"
    data = base64.b64decode(image.data)
    with Image.open(io.BytesIO(data)) as img:
        assert max(img.size) <= 1024 and min(img.size) > 300
    assert image.data[:40] not in text.text and len(text.text) < 1000
    assert missing.is_error and [b.type for b in missing.content] == ["text"]
