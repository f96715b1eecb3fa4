"""slmcode's use of the checkpoint store (``kli.tools.core.checkpoints``, the one store; the
undo timeline is kept there too): ``save_before`` keeps a file's bytes before ws_delete,
ws_write or ws_mv replaces it, under the ``file_checkpoints`` / ``checkpoint_keep`` settings."""

from __future__ import annotations

import os
from typing import Any

from kli.tools.core.checkpoints import (
    CHECKPOINT_DIR,
    Checkpoint,
    create,
    data_of,
    get,
    list_all,
    prune,
    restore_bytes,
    store_dir,
)

__all__ = [
    "CHECKPOINT_DIR", "Checkpoint", "create", "data_of", "get", "list_all", "prune",
    "restore_bytes", "save_before", "store_dir",
]


def save_before(call: Any, real: str, rel: str, *, reason: str) -> Checkpoint | None:
    """Checkpoint ``real`` before ``call`` changes it, when the ``file_checkpoints`` setting is
    on (the default); None when it is off or there is nothing to save."""
    from kli.tools.ws.common import call_setting

    if not call_setting(call, "file_checkpoints") or not os.path.lexists(real):
        return None
    if not os.path.islink(real) and not os.path.isfile(real):
        return None  # folders, pipes, devices: nothing to keep
    return create(
        call.ws.root,
        real,
        rel,
        reason=reason,
        tool=call.tool.name,
        session=call.session.id,
        keep=call_setting(call, "checkpoint_keep"),
    )
