"""Showing captured output to the model: labelled, head and tail, the full capture on disk.

A stream is held as a head (its first characters) and, when it outgrew the capture cap, a tail
(its last characters); what lay between was counted and dropped while it was produced. The
model is shown at most ``MODEL_STREAM_CHARS`` of each stream — its head and tail with the
elided count. Whenever the model sees less than the capture holds, the capture is written to
``.kli/scratch/`` and its path is named in the result.

"Full capture" means everything kept: the whole stream when it fit in the 1 MiB cap, otherwise
its first ``cap - tail`` and last ``tail`` characters with a marker line giving the number of
characters dropped between them. Only the newest ``SCRATCH_KEEP`` capture files are kept.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import time

from kli.tools.core.atomic import write_atomic
from kli.tools.core.jail import Jail
from kli.tools.core.textfile import encode

# Characters of each stream the model is shown (head and tail together).
MODEL_STREAM_CHARS = 16_000
# Capture files kept in .kli/scratch/ per tool; older ones are removed.
SCRATCH_KEEP = 50

_counter = itertools.count(1)


def dropped_marker(dropped: int, total: int) -> str:
    return f"\n… [{dropped} characters dropped while running; {total} were produced in all] …\n"


def capture_text(head: str, tail: str, total: int) -> str:
    """The kept text of a stream as the capture file holds it."""
    if not tail:
        return head
    return head + dropped_marker(total - len(head) - len(tail), total) + tail


def save_capture(jail: Jail, tool: str, stream: str, text: str) -> str:
    """Write ``text`` to a new file in the scratch folder; return its root-relative path."""
    folder = jail.scratch_dir()
    stamp = time.strftime("%Y%m%d-%H%M%S")
    name = f"{tool}-{stamp}-{os.getpid()}-{next(_counter)}.{stream}.txt"
    path = os.path.join(folder, name)
    write_atomic(path, encode(text))
    _prune(folder, tool)
    return jail.rel(path)


def _prune(folder: str, tool: str) -> None:
    with contextlib.suppress(OSError):
        names = [n for n in os.listdir(folder) if n.startswith(tool + "-") and n.endswith(".txt")]
        if len(names) <= SCRATCH_KEEP:
            return
        paths = sorted((os.path.join(folder, n) for n in names), key=os.path.getmtime)
        for old in paths[: len(paths) - SCRATCH_KEEP]:
            with contextlib.suppress(OSError):
                os.unlink(old)


def stream_section(
    label: str,
    head: str,
    tail: str,
    total: int,
    *,
    jail: Jail,
    tool: str,
    cap: int,
) -> tuple[str, dict[str, object]]:
    """The labelled text of one stream for the model, and its facts for ``details``."""
    facts: dict[str, object] = {
        f"{label}_total": total,
        f"{label}_dropped": total - len(head) - len(tail),
        f"{label}_file": None,
    }
    if total == 0:
        return f"{label}: (empty)", facts
    kept = len(head) + len(tail)
    limit = MODEL_STREAM_CHARS
    if kept <= limit:
        body = capture_text(head, tail, total)
        lines = [f"{label}:", body.rstrip("\n")]
    else:
        file_rel = save_capture(jail, tool, label, capture_text(head, tail, total))
        facts[f"{label}_file"] = file_rel
        show_head = limit * 2 // 3
        show_tail = limit - show_head
        whole_tail = tail if tail else head[len(head) - show_tail :]
        tail_text = whole_tail[len(whole_tail) - show_tail :]
        elided = total - show_head - len(tail_text)
        body = (
            head[:show_head]
            + f"\n… [{elided} characters elided of {total}; the capture is in {file_rel}] …\n"
            + tail_text
        )
        lines = [f"{label} ({total} characters, shown head and tail):", body.rstrip("\n")]
    if tail:
        lines.append(
            f"[{label} passed the {cap}-character cap: {facts[f'{label}_dropped']} characters "
            f"were dropped while running; the first {len(head)} and last {len(tail)} were kept]"
        )
    return "\n".join(lines), facts
