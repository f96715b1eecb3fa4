"""Re-indenting replacement lines the way a match was made: onto the file's indentation
(``reindent_lines``), through a map of indentation levels (``relevel_lines``), or relative to a
nearby line (``local_reindent``)."""

from __future__ import annotations

from collections.abc import Sequence

from kli.tools.ws.ladder import Span
from kli.tools.ws.textlines import indent_width, leading_ws


def reindent_lines(new_lines: Sequence[str], reindent: tuple[str, str] | None) -> list[str]:
    """Re-apply the file's leading whitespace to replacement lines.

    ``reindent`` is ``(old, file)``: lines written at the search text's indentation ``old``
    move to the file's ``file``, keeping their indentation relative to it. Empty lines stay empty.
    """
    if reindent is None:
        return list(new_lines)
    old, new = reindent
    out = []
    for line in new_lines:
        if not line.strip():
            # A whitespace-only line written at the search text's indentation moves with it
            # (an empty one stays empty).
            moves = bool(old) and line.startswith(old)
            out.append(new + line[len(old) :] if moves else line)
        elif line.startswith(old):
            # The search text's indentation swapped for the file's, the rest kept: so a tab
            # after spaces ("  \t") stays after them.
            out.append(new + line[len(old) :])
        elif new.startswith(old):
            out.append(new[len(old) :] + line)
        elif old.startswith(new):
            extra = len(old) - len(new)
            lead = leading_ws(line)
            out.append(line[min(extra, len(lead)) :])
        else:
            out.append(line)
    return out


def relevel_lines(new_lines: Sequence[str], levels: Sequence[tuple[str, str]]) -> list[str]:
    """Map each replacement line's indentation through ``levels`` (search-text indent → file
    indent); an indent not in the map is extrapolated by the step between the two smallest
    levels when it falls on that grid, else the line is left as it is."""
    table = dict(levels)
    (o0, f0), (o1, f1) = levels[0], levels[1]
    step_old = indent_width(o1) - indent_width(o0)
    step_file = f1[len(f0) :] if f1.startswith(f0) else ""
    out: list[str] = []
    for line in new_lines:
        ind = leading_ws(line)
        if not line:
            out.append(line)  # an empty line gets no indentation it did not have
        elif ind in table:  # column 0 too: halved code's one-column doc lines sat there
            out.append(table[ind] + line[len(ind) :])
        elif not ind:
            out.append(line)
        else:
            k, rem = divmod(indent_width(ind) - indent_width(o0), step_old)
            if rem == 0 and k >= 0 and step_file:
                out.append(f0 + step_file * k + line[len(ind) :])
            else:
                out.append(line)
    return out


def reindent_for(span: Span, new_lines: Sequence[str]) -> list[str]:
    """Replacement lines re-indented the way ``span`` was matched."""
    if span.levels:
        return relevel_lines(new_lines, span.levels)
    return reindent_lines(new_lines, span.reindent)


def local_reindent(line: str, ref_old: str, ref_file: str) -> str | None:
    """``line`` re-indented relative to a nearby line: as ``ref_old`` was written vs as the
    file has it (``ref_file``); None when the two indentations cannot be related."""
    ip, io, if_ = leading_ws(line), leading_ws(ref_old), leading_ws(ref_file)
    if io == if_:
        return line
    if ip.startswith(io):
        return if_ + ip[len(io) :] + line[len(ip) :]
    if io.startswith(ip) and len(if_) >= len(io) - len(ip):
        return if_[: len(if_) - (len(io) - len(ip))] + line[len(ip) :]
    return None
