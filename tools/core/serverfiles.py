"""Files a Jupyter server and its extensions write on their own: never a tool call's change.

While a call runs, the server that hosts the kernel keeps saving its own files: Jupyter AI's
chats (``*.chat``, jupyterlab-chat's documents), jupyter-collaboration's document store
(``.jupyter_ystore.db``), the notebooks' checkpoints (``.ipynb_checkpoints/``) and the autosave
of a notebook open there, which carries only the live document's state. Change detection
(``kli.tools.core.undo``) leaves them out, whatever the call, so a ``bash`` is charged only with
what it did; and undo never writes a file a running server owns (it would be overwritten from
the server's memory, or overwrite what the server holds: a chat showing 12 messages with 10 on
disk). Which files a *running* server owns now is the host's to say (``owner``: the kernel's
notebook store knows its server); the names below are the server's whatever runs. An open
notebook's file is left out of detection (its autosave), but its undo is not refused (the
tools' own changes of it are recorded through the live document, or are writes the server
reloads).
"""

from __future__ import annotations

from typing import Any

CHECKPOINTS_DIR = ".ipynb_checkpoints"
YSTORE = ".jupyter_ystore.db"  # and its -journal / -wal / -shm siblings
CHAT_SUFFIX = ".chat"


def owner_by_name(rel: str) -> str | None:
    """Which program writes ``rel`` (root-relative, POSIX) on its own, by its name; None when
    its name says nothing (an ordinary file)."""
    parts = rel.split("/")
    base = parts[-1]
    if CHECKPOINTS_DIR in parts[:-1]:
        return "the Jupyter server's notebook checkpoints (.ipynb_checkpoints)"
    if base.startswith(YSTORE):
        return "jupyter-collaboration's document store"
    if base.endswith(CHAT_SUFFIX):
        return "the chat (jupyterlab-chat, Jupyter AI)"
    return None


def owner(ws: Any, real: str, rel: str) -> str | None:
    """Which running program owns ``real`` now (the host's store says, ``owner``), else which
    one writes it by its name; None for a file only tools and people write."""
    host = getattr(ws.notebooks, "owner", None)
    if callable(host):
        try:
            said = host(real)
        except Exception:
            said = None
        if isinstance(said, str) and said:
            return said
    return owner_by_name(rel)


def running_owner(ws: Any, real: str, rel: str) -> str | None:
    """The running server's program that owns ``real`` (undo refuses to write it): a file the
    server's extensions write by its name (a chat, the store, a checkpoint) while the host
    knows a running server; None otherwise. A notebook is not refused: its undo goes through
    the live document, or is a write the server's file watcher reloads."""
    if owner_by_name(rel) is None:
        return None
    host = getattr(ws.notebooks, "owner", None)
    if not callable(host):
        return None
    try:
        said = host(real)
    except Exception:
        return None
    return said if isinstance(said, str) and said else None
