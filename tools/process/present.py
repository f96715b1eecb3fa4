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

from kli.tools.core import scratch
from kli.tools.core.jail import Jail
from kli.tools.core.truncate import captured, elided_marker, ends

# Characters of each stream the model is shown (head and tail together).
MODEL_STREAM_CHARS = 16_000
# Capture files kept in .kli/scratch/ per tool; older ones are removed (scratch.keep_newest).
SCRATCH_KEEP = 50


def save_capture(jail: Jail, tool: str, stream: str, text: str) -> str:
    """Write ``text`` to a new file in the scratch folder; return its root-relative path."""
    return scratch.save(jail, text, prefix=tool, suffix=f"{stream}.txt", keep=SCRATCH_KEEP)


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
        body = captured(head, tail, total)
        lines = [f"{label}:", body.rstrip("\n")]
    else:
        file_rel = save_capture(jail, tool, label, captured(head, tail, total))
        facts[f"{label}_file"] = file_rel
        shown_head, shown_tail = ends(head, limit, tail=tail)
        elided = total - len(shown_head) - len(shown_tail)
        body = (
            shown_head
            + elided_marker(elided, total, f"the capture is in {file_rel}")
            + shown_tail
        )
        lines = [f"{label} ({total} characters, shown head and tail):", body.rstrip("\n")]
    if tail:
        lines.append(
            f"[{label} passed the {cap}-character cap: {facts[f'{label}_dropped']} characters "
            f"were dropped while running; the first {len(head)} and last {len(tail)} were kept]"
        )
    return "\n".join(lines), facts
