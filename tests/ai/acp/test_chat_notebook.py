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

import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.ai.acp.conftest import Agent, AiServer, start_ai_server
from tests.ai.harness import Chat
from tests.waiting import wait_until

pytestmark = pytest.mark.timeout(600)

WHO = "import os; print('notebook:', os.environ.get('JPY_SESSION_NAME', '?'))"


@pytest.fixture(scope="module")
def two_notebooks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AiServer]:
    with start_ai_server(tmp_path_factory.mktemp("two"), enable=True,
                         args=("--YDocExtension.disable_rtc=True",)) as server:
        server.api("PUT", "/api/contents/sub", {"type": "directory"})
        for name in ("one.ipynb", "two.ipynb", "sub/three.ipynb"):
            server.notebook(name, [("c1", f"where = {name!r}"), ("c2", "edit_me = 0")])
            server.open(name)
        yield server


def chat_file(server: AiServer, path: str) -> Chat:
    """A chat file open in a chat panel (jupyterlab-chat's WebSocket transport); no persona is
    spoken to."""
    server.api("PUT", f"/api/contents/{path}", {"type": "file", "format": "text", "content": ""})
    return Chat(server, path, persona=False)


def where(chat: Agent, args: dict[str, Any] | None = None) -> tuple[str, bool]:
    return chat.call("eval", {"code": WHO, **(args or {})})


def test_with_two_kli_notebooks_and_nothing_naming_one_nothing_runs_and_the_result_says_how(
        two_notebooks: AiServer) -> None:
    text, is_error = where(two_notebooks.agent(uuid.uuid4().hex))
    assert is_error, text
    assert "one.ipynb" in text and "two.ipynb" in text and "nothing ran" in text, text
    assert "notebook:" not in text


def test_a_chat_runs_on_the_kernel_of_the_notebook_attached_to_its_message(
        two_notebooks: AiServer) -> None:
    with chat_file(two_notebooks, "about_two.chat") as panel:
        panel.send("look at this", [{"type": "notebook", "value": "two.ipynb"}])
        chat = two_notebooks.agent(panel.chat_id)
        text, is_error = where(chat)
        assert not is_error, text
        assert "two.ipynb" in text and "one.ipynb" not in text, text
        panel.send("now this one", [{"type": "file", "value": "one.ipynb"}])
        text, is_error = where(chat)
        assert not is_error, text
        assert "one.ipynb" in text and "two.ipynb" not in text, text  # the newest message wins


def test_a_notebook_named_in_the_call_chooses_its_kernel_and_the_chat_stays_there(
        two_notebooks: AiServer) -> None:
    chat = two_notebooks.agent(uuid.uuid4().hex)
    text, is_error = chat.call("read", {"path": "one.ipynb#c1"})
    assert not is_error, text
    text, is_error = where(chat)
    assert not is_error, text
    assert "one.ipynb" in text and "two.ipynb" not in text, text
    text, is_error = where(two_notebooks.agent(uuid.uuid4().hex))  # another chat
    assert is_error and "nothing ran" in text, text


def test_a_notebook_in_a_folder_is_named_by_its_file_name_as_its_kernel_sees_it(
        two_notebooks: AiServer) -> None:
    chat = two_notebooks.agent(uuid.uuid4().hex)
    text, is_error = chat.call("read", {"path": "three.ipynb#c1"})  # the kernel's cwd is sub/
    assert not is_error, text
    assert "sub/three.ipynb" in text or "where = 'sub/three.ipynb'" in text, text
    text, is_error = where(chat)
    assert not is_error, text
    assert "three.ipynb" in text and "one.ipynb" not in text, text


def test_a_notebook_in_a_folder_named_by_its_root_path_works_from_every_chat(
        two_notebooks: AiServer) -> None:
    """Named as Jupyter AI's attachments and tools name it (from the server's root), from a
    fresh chat, a chat about another notebook and a chat in another folder: it runs on its own
    kernel with the path that kernel (working in sub/) sees — an edit's @@ header too. A later
    call naming none goes back to the chat's attached notebook, else stays on three's."""
    with chat_file(two_notebooks, "about_one.chat") as about_one, \
            chat_file(two_notebooks, "sub/here.chat") as in_sub:
        about_one.send("this one", [{"type": "notebook", "value": "one.ipynb"}])
        for chat_id in (uuid.uuid4().hex, about_one.chat_id, in_sub.chat_id):
            agent = two_notebooks.agent(chat_id)
            text, is_error = agent.call("read", {"path": "sub/three.ipynb#c1"})
            assert not is_error, text
            assert "where = 'sub/three.ipynb'" in text, text
            text, is_error = where(agent)  # a call naming none: the chat's own notebook
            own, other = (("one.ipynb", "three.ipynb") if chat_id == about_one.chat_id
                          else ("three.ipynb", "one.ipynb"))
            assert not is_error and own in text and other not in text, text
        agent = two_notebooks.agent(uuid.uuid4().hex)
        text, _ = agent.call("read", {"path": "sub/three.ipynb#c2"})
        anchor = next(line for line in text.splitlines() if "|edit_me = " in line).split("|")[0]
        text, is_error = agent.call("edit", {"input": f"@@ sub/three.ipynb#c2\n= {anchor}\n"
                                             "~edit_me = 'from the root path'\n"})
        assert not is_error, text
        text, _ = agent.call("read", {"path": "sub/three.ipynb#c2"})
        assert "|edit_me = 'from the root path'" in text, text


def test_a_chats_bash_is_not_charged_with_the_chat_file_the_server_saves_while_it_runs(
        two_notebooks: AiServer) -> None:
    """Issue 33: while a chat's agent's ``bash`` runs, the person goes on writing in the chat
    and the server saves the chat file (jupyterlab-chat): the call records only the file it
    wrote, and its change names no chat file. (The notebook's live document, the collaboration
    store and a checkpoint written by the server meanwhile: tests/notebook_live/
    test_server_files.py.)"""
    server = two_notebooks
    path = server.root / "busy.chat"
    with chat_file(server, "busy.chat") as chat:
        agent = server.agent(chat.chat_id)
        text, is_error = agent.call("read", {"path": "one.ipynb#c1"})  # the chat's notebook
        assert not is_error, text
        chat.send("before the call")
        wait_until(lambda: "before the call" in path.read_text(), "the chat file's first save",
                   timeout=30)
        saved = path.stat().st_mtime_ns

        def person_writes() -> None:
            time.sleep(0.5)
            chat.send("while the agent works")  # the server saves busy.chat

        writer = threading.Thread(target=person_writes)
        writer.start()
        text, is_error = agent.call("bash", {"command": "sleep 5 && echo mine > agent.txt"})
        writer.join()
    assert not is_error, text
    assert path.stat().st_mtime_ns != saved and "while the agent works" in path.read_text()
    assert "busy.chat" not in text, text
    changes, _ = agent.call("changes", {})
    [line] = [line for line in changes.splitlines() if "bash:" in line]  # the session's label
    assert line.split("bash:", 1)[1].strip() == "created agent.txt", changes  # names the chat
