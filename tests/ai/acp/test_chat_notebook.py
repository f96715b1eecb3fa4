"""With several kli notebooks open, a chat's tools run on the kernel of the notebook the chat is
about (issue 25): the notebook attached to the chat's messages, else the one its call names;
with neither, nothing runs and the result tells the model how to name one.

What is real: the Jupyter server with Jupyter AI 3.2 and jupyterlab-chat; a chat file opened
over jupyterlab-chat's WebSocket transport (the server runs without its collaborative provider,
``YDocExtension.disable_rtc``, as a JupyterLab without real-time collaboration does), a message
with a notebook attachment sent on it as the chat panel sends one; two notebooks, each with its
own kli kernel started through ``/api/sessions``; MCP calls carrying that chat's
``X-Jupyter-Chat-Id`` as Jupyter AI stamps it on an agent's MCP server. No agent runs: the MCP
client here calls the tools an agent would."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.ai.acp.conftest import AiServer, Chat, start_ai_server

pytestmark = pytest.mark.timeout(600)

WHO = "import os; print('notebook:', os.environ.get('JPY_SESSION_NAME', '?'))"


@pytest.fixture(scope="module")
def two_notebooks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AiServer]:
    with start_ai_server(tmp_path_factory.mktemp("two"), enable=True,
                         args=("--YDocExtension.disable_rtc=True",)) as server:
        server.api("PUT", "/api/contents/sub", {"type": "directory"})
        for name in ("one.ipynb", "two.ipynb", "sub/three.ipynb"):
            server.new_notebook(name, [("c1", f"where = {name!r}")])
            server.start_session(name)
        yield server


class ChatPanel:
    """A chat file open in a chat panel: jupyterlab-chat's WebSocket transport."""

    def __init__(self, server: AiServer, path: str) -> None:
        import websocket

        server.api("PUT", f"/api/contents/{path}", {"type": "file", "format": "text",
                                                     "content": ""})
        self.ws = websocket.create_connection(
            server.url.replace("http", "ws", 1) + f"/api/chat/ws/{path}", timeout=30)
        hello = json.loads(self.ws.recv())
        assert hello["action"] == "connection", hello
        self.chat_id = str(hello["id"])

    def send(self, body: str, attachments: list[dict[str, Any]] | None = None) -> None:
        self.ws.send(json.dumps({"type": "client", "action": "send", "id": uuid.uuid4().hex,
                                 "body": body, "attachments": attachments}))
        while True:  # the server's echo of our message: stored by then
            frame = json.loads(self.ws.recv())
            if frame.get("action") == "message" and frame["message"].get("body") == body:
                return

    def close(self) -> None:
        self.ws.close()


def where(chat: Chat, args: dict[str, Any] | None = None) -> tuple[str, bool]:
    return chat.call("eval", {"code": WHO, **(args or {})})


def test_with_two_kli_notebooks_and_nothing_naming_one_nothing_runs_and_the_result_says_how(
        two_notebooks: AiServer) -> None:
    text, is_error = where(Chat(two_notebooks.mcp_url, uuid.uuid4().hex))
    assert is_error, text
    assert "one.ipynb" in text and "two.ipynb" in text and "nothing ran" in text, text
    assert "notebook:" not in text


def test_a_chat_runs_on_the_kernel_of_the_notebook_attached_to_its_message(
        two_notebooks: AiServer) -> None:
    panel = ChatPanel(two_notebooks, "about_two.chat")
    try:
        panel.send("look at this", [{"type": "notebook", "value": "two.ipynb"}])
        chat = Chat(two_notebooks.mcp_url, panel.chat_id)
        text, is_error = where(chat)
        assert not is_error, text
        assert "two.ipynb" in text and "one.ipynb" not in text, text
        panel.send("now this one", [{"type": "file", "value": "one.ipynb"}])
        text, is_error = where(chat)
        assert not is_error, text
        assert "one.ipynb" in text and "two.ipynb" not in text, text  # the newest message wins
    finally:
        panel.close()


def test_a_notebook_named_in_the_call_chooses_its_kernel_and_the_chat_stays_there(
        two_notebooks: AiServer) -> None:
    chat = Chat(two_notebooks.mcp_url, uuid.uuid4().hex)
    text, is_error = chat.call("read", {"path": "one.ipynb#c1"})
    assert not is_error, text
    text, is_error = where(chat)
    assert not is_error, text
    assert "one.ipynb" in text and "two.ipynb" not in text, text
    text, is_error = where(Chat(two_notebooks.mcp_url, uuid.uuid4().hex))  # another chat
    assert is_error and "nothing ran" in text, text



def test_a_notebook_in_a_folder_is_named_by_its_file_name_as_its_kernel_sees_it(
        two_notebooks: AiServer) -> None:
    chat = Chat(two_notebooks.mcp_url, uuid.uuid4().hex)
    text, is_error = chat.call("read", {"path": "three.ipynb#c1"})  # the kernel's cwd is sub/
    assert not is_error, text
    assert "sub/three.ipynb" in text or "where = 'sub/three.ipynb'" in text, text
    text, is_error = where(chat)
    assert not is_error, text
    assert "three.ipynb" in text and "one.ipynb" not in text, text
