"""Saving a full output the model was shown only part of, under ``.kli/scratch/``.

One saver for every tool (``bash`` and ``eval`` captures, ``ws_shell`` outputs) and one pruning
rule: **keep the newest ``keep`` files of a group**, where a group is the files in one folder
whose names start with one prefix, newest by modification time (then by name). The number
is the caller's (docs/settings.md states each: 50 per kli tool, 20 for ``ws_shell``).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import time

from kli.tools.core import atomic
from kli.tools.core.atomic import write_atomic
from kli.tools.core.jail import SCRATCH_DIR, Jail
from kli.tools.core.textfile import encode

_counter = itertools.count(1)


def save(jail: Jail, text: str, *, prefix: str, suffix: str, keep: int, folder: str = "") -> str:
    """Write ``text`` to a new file ``PREFIX-STAMP-PID-N.SUFFIX`` in the scratch folder (or its
    subfolder ``folder``), prune the group to the newest ``keep``, and return the new file's
    root-relative path. Raises ``OSError`` when it cannot be written."""
    base = os.path.join(jail.root, SCRATCH_DIR)
    where = os.path.join(base, folder) if folder else base
    atomic.makedirs(where)  # held for review (approval): recorded with the write, made on Accept
    stamp = time.strftime("%Y%m%d-%H%M%S")
    name = f"{prefix}-{stamp}-{os.getpid()}-{next(_counter)}.{suffix}"
    path = os.path.join(where, name)
    write_atomic(path, encode(text))
    if not atomic.capturing_now():  # a held call removes nothing
        keep_newest(where, prefix + "-", keep)
    return jail.rel(path)


def keep_newest(folder: str, prefix: str, keep: int) -> None:
    """The pruning rule: of the files in ``folder`` whose names start with ``prefix``, remove
    all but the newest ``keep``. Files that vanish or cannot be removed are passed over."""
    with contextlib.suppress(OSError):
        names = [n for n in os.listdir(folder) if n.startswith(prefix)]
        if len(names) <= keep:
            return
        aged: list[tuple[int, str]] = []
        for n in names:
            with contextlib.suppress(OSError):
                aged.append((os.stat(os.path.join(folder, n)).st_mtime_ns, n))
        aged.sort()
        for _mtime, old in aged[: max(len(aged) - keep, 0)]:
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(folder, old))
