"""Line-number gutters pasted into search text: recognise them, strip them, or refuse by name.

Two displays put a prefix on every line that is not part of the file:
- ws_read's ``%6d|`` gutter (``    42|code``);
- kli's ``LINE:HH|`` anchors from ``read`` (``42:a3|code``) and ``search`` (``*42:a3|code``,
  `` 42:a3|code``).

When EVERY non-blank line carries one the intent is unambiguous: strip, apply, and say so.
When only some lines do it is not a paste, and the edit is refused by name with a before/after
example (slmcode spec, ws_read and ws_edit refusals).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

READ_GUTTER = re.compile(r"^ *\d+\|")
KLI_ANCHOR = re.compile(r"^[* ]?\d+:[0-9a-f]{2}\|")

# The spec's note for a stripped ws_read gutter (verbatim); the kli variant follows its shape.
NOTE_READ = "[stripped ws_read line numbers from {where} — do not include them]"
NOTE_KLI = "[stripped read LINE:HH| anchors from {where} — do not include them]"


def _prefix(line: str) -> re.Match[str] | None:
    return KLI_ANCHOR.match(line) or READ_GUTTER.match(line)


@dataclass(frozen=True)
class GutterScan:
    """What a text carries: ``kind`` is ``none``, ``full`` (every non-blank line) or
    ``partial``; ``stripped`` is the text without the prefixes (only meaningful for full);
    ``marked`` the 1-based numbers of lines carrying one, out of ``nonblank`` lines."""

    kind: str
    style: str  # "ws_read" or "kli" — the first prefix seen
    stripped: str
    marked: tuple[int, ...]
    nonblank: int
    example: tuple[str, str] = ("", "")

    def note(self, where: str = "old_str") -> str:
        return (NOTE_KLI if self.style == "kli" else NOTE_READ).format(where=where)


def scan(text: str) -> GutterScan:
    """Classify ``text`` (lines split on ``\\n``; blank lines never count)."""
    lines = text.split("\n")
    marked: list[int] = []
    nonblank = 0
    style = ""
    example = ("", "")
    out = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            out.append(line)
            continue
        nonblank += 1
        m = _prefix(line)
        if m is None:
            out.append(line)
            continue
        marked.append(number)
        if not style:
            style = "kli" if KLI_ANCHOR.match(line) else "ws_read"
            example = (line, line[m.end() :])
        out.append(line[m.end() :])
    if not marked:
        return GutterScan("none", "", text, (), nonblank)
    kind = "full" if len(marked) == nonblank else "partial"
    return GutterScan(kind, style, "\n".join(out), tuple(marked), nonblank, example)


def strip_marked(text: str) -> str:
    """``text`` with every gutter or anchor prefix removed, wherever it appears."""
    return scan(text).stripped


def _lines_list(numbers: tuple[int, ...]) -> str:
    shown = [str(n) for n in numbers[:8]]
    more = f" and {len(numbers) - 8} more" if len(numbers) > 8 else ""
    if len(shown) == 1:
        return f"line {shown[0]}"
    return "lines " + ", ".join(shown[:-1]) + f" and {shown[-1]}" + more


def partial_refusal(found: GutterScan, where: str = "old_str") -> str:
    """The refusal for a gutter on only some lines: names the failure and shows the fix."""
    name = "ws_read line-number gutter" if found.style == "ws_read" else "read LINE:HH| anchor"
    shape = "NN|" if found.style == "ws_read" else "LINE:HH|"
    before, after = found.example
    return (
        f"Edit refused — partial {name} in {where}: {_lines_list(found.marked)} of "
        f"{found.nonblank} non-blank lines start with a `{shape}` prefix and the others do not. "
        f"The prefix is display only and is not in the file, so this can never match; and since "
        f"only some lines carry it, it was not stripped automatically. Remove it from every line "
        f"and retry.\n"
        f"  before: {before!r}\n"
        f"  after:  {after!r}"
    )
