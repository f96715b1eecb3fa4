"""What the running Jupyter server knows, read for ``kli.kernel.ai.notebooks.choose``: its notebooks
and kernels, and of a chat its model, attachments, folder and label.

Both hosts of a chat read through here (the persona ``@kli`` and kli's tools on Jupyter AI's MCP
server); the server is the one this process runs (``kli.kernel.client.find.this_server``).
Everything here is read-only and never raises for a chat it cannot read: what it cannot know
is left unknown (empty, None), and the choice is made without it.
"""

from __future__ import annotations

import os
from typing import Any

from kli.kernel.ai.notebooks import Chat, Open, Server
from kli.kernel.client.find import this_server
from kli.kernel.protocol import KLI_KERNEL_NAMES


async def server_state() -> Server:
    """The server's notebook sessions (any kernel) and its kli kernels; empty outside a server."""
    app = this_server()
    if app is None:
        return Server()
    kernels = {str(k["id"]): k for k in app.kernel_manager.list_kernels()}
    try:
        sessions = await app.session_manager.list_sessions()
    except Exception:
        sessions = []
    opened = []
    for s in sessions:
        kernel = s.get("kernel") or {}
        path = str(s.get("path") or "").lstrip("/")
        kid = str(kernel.get("id") or "")
        if path.endswith(".ipynb") and kid in kernels:
            opened.append(Open(path, kid, str(kernels[kid].get("name") or "")))
    kli = tuple((kid, str(k.get("last_activity") or "")) for kid, k in kernels.items()
                if k.get("name") in KLI_KERNEL_NAMES)
    return Server(tuple(opened), kli)


def chat_model(chat_id: str) -> Any:
    """The live chat model (jupyterlab_chat's) of ``chat_id``, or None."""
    app = this_server()
    try:
        web = app.web_app.settings  # the server's tornado settings (not kli's)
        manager = web.get("jupyter-ai", {}).get("persona-managers", {}).get(chat_id)
        if manager is not None:
            return manager.chat
        chats = web.get("chat_manager")
        return chats.get(chat_id) if chats is not None else None
    except Exception:
        return None


def attached(chat: Any) -> tuple[str, ...]:
    """The notebooks attached to a chat's messages, newest message first, then any other
    attached to the chat; their paths from the server's root."""
    try:
        attachments = chat.get_attachments()
        messages = chat.get_messages()
    except Exception:
        return ()
    out: list[str] = []

    def add(att_id: str) -> None:
        value = str(getattr(attachments.get(att_id), "value", "") or "").lstrip("/")
        if value.endswith(".ipynb") and value not in out:
            out.append(value)

    for msg in sorted(messages, key=lambda m: getattr(m, "time", 0), reverse=True):
        for att_id in getattr(msg, "attachments", None) or ():
            add(att_id)
    for att_id in reversed(list(attachments)):
        add(att_id)
    return tuple(out)


def message_attached(chat: Any, message: Any) -> tuple[str, ...]:
    """The paths of one message's attachments (any file), from the server's root."""
    try:
        known = chat.get_attachments()
    except Exception:  # a chat without attachments support
        return ()
    paths = []
    for aid in getattr(message, "attachments", None) or ():
        value = getattr(known.get(aid), "value", None)
        if isinstance(value, str) and value:
            paths.append(value.lstrip("/"))
    return tuple(paths)


def folder(chat: Any) -> str | None:
    """The chat file's folder from the server's root ("" for the root), or None."""
    try:
        return os.path.dirname(str(chat.get_path())).strip("/")
    except Exception:
        return None


def chat_of(chat: Any, last: str | None, now: tuple[str, ...] = ()) -> Chat:
    """What ``choose`` is told of ``chat`` (a live chat model, or None when unknown)."""
    if chat is None:
        return Chat(attached_now=now, last=last)
    return Chat(now, attached(chat), folder(chat), last)


def label(chat_id: str, persona_id: str, prefix: str) -> str:
    """A session label: ``prefix``, the chat's file and the agent, as Jupyter AI knows them."""
    name, agent = chat_id, ""
    app = this_server()
    try:
        managers = app.web_app.settings.get("jupyter-ai", {}).get("persona-managers", {})
        manager = managers.get(chat_id)
        if manager is not None:
            name = os.path.basename(str(manager.chat.get_path())) or chat_id
            persona = manager.personas.get(persona_id) if persona_id else None
            agent = str(getattr(persona, "name", "") or "")
    except Exception:  # the chat's names are a courtesy: the id still keeps sessions apart
        pass
    return f"{prefix}{name}" + (f" ({agent})" if agent else "")
