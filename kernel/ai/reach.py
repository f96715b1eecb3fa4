"""The review other notebooks ask of a chat's call, inside the Jupyter server (the rule and the
asking: ``kli.kernel.client.reach``).

Jupyter AI's route and the ``@kli`` persona run in the server: they know its kli notebooks from
its own sessions (``chats.server_state``) and its kernels' connection files from its kernel
manager, so nothing goes over HTTP.
"""

from __future__ import annotations

import os
from typing import Any

from kli.kernel.ai.notebooks import Server
from kli.kernel.client.reach import ask, review_among


def _connection_file(app: Any, kernel_id: str) -> str:
    try:
        return str(app.kernel_manager.get_kernel(kernel_id).connection_file)
    except Exception:
        return ""  # gone since the sessions were listed: asking it fails, which fails closed


async def review_for(kernel_id: str, server: Server) -> dict[str, list[str]]:
    """The ``review`` to send with an agent's call to kernel ``kernel_id``, among the server's
    kli notebooks (``server``: ``chats.server_state``); empty with no other."""
    import asyncio

    from kli.kernel.client.find import this_server

    app = this_server()
    notebooks: dict[str, dict[str, str]] = {}
    for path, kid in server.kli().items():
        root = str(getattr(app, "root_dir", "") or os.getcwd())
        notebooks.setdefault(kid, {})[os.path.realpath(os.path.join(root, path))] = path
    if not any(kid != kernel_id for kid in notebooks):
        return {}  # no other kli notebook: nothing else to protect, nothing asked
    kernels = {kid: (_connection_file(app, kid), paths) for kid, paths in notebooks.items()}
    here_file = _connection_file(app, kernel_id)

    def work() -> dict[str, list[str]]:
        here = ask(here_file) if here_file else None
        return review_among(here or {}, kernel_id, kernels)

    return await asyncio.to_thread(work)
