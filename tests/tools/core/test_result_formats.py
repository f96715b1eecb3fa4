"""A tool result with an image in each provider's shape (kli.tools.core.formats): the image as
that API's base64 block, never in the text; left out with a note for a model without sight."""

from __future__ import annotations

import base64

import pytest

from kli.tools.core.formats import result_in_format
from kli.tools.core.result import ImagePart, ToolResult

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 40
RESULT = ToolResult(True, "look: 1 image", {}, (ImagePart(PNG, "image/png", 640, 480,
                                                          "nb.ipynb#k1 output [2]"),))
B64 = base64.b64encode(PNG).decode()


def test_openai_a_tool_message_then_a_user_message_with_the_image() -> None:
    tool, user = result_in_format(RESULT, "openai", call_id="call_7", tool="look")
    assert tool == {"role": "tool", "tool_call_id": "call_7", "content": "look: 1 image"}
    assert user["role"] == "user"
    text, image = user["content"]
    assert "nb.ipynb#k1 output [2]" in text["text"]
    assert image == {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{B64}"}}


def test_anthropic_one_tool_result_block_holding_the_image() -> None:
    [block] = result_in_format(RESULT, "anthropic", call_id="toolu_1")
    assert block["type"] == "tool_result" and block["tool_use_id"] == "toolu_1"
    assert "is_error" not in block
    assert block["content"][1] == {"type": "image", "source": {
        "type": "base64", "media_type": "image/png", "data": B64}}
    failed = result_in_format(ToolResult(False, "no"), "anthropic", call_id="t")
    assert failed[0]["is_error"] is True and failed[0]["content"] == [{"type": "text",
                                                                       "text": "no"}]


def test_mcp_content_a_text_block_and_an_image_block() -> None:
    text, image = result_in_format(RESULT, "mcp", text="look: 1 image\n\nnote")
    assert text == {"type": "text", "text": "look: 1 image\n\nnote"}
    assert image == {"type": "image", "data": B64, "mimeType": "image/png"}


@pytest.mark.parametrize("fmt", ["openai", "anthropic", "mcp"])
def test_without_sight_the_images_are_left_out_and_the_text_says_why(fmt: str) -> None:
    out = result_in_format(RESULT, fmt, images=False, why_not="m does not take images")
    flat = repr(out)
    assert B64 not in flat and "image_url" not in flat and "'image'" not in flat
    assert "[1 image(s) not shown: m does not take images." in flat
    plain = result_in_format(ToolResult(True, "x"), fmt, images=False)
    assert "not shown" not in repr(plain)


def test_an_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown format"):
        result_in_format(RESULT, "gemini")
