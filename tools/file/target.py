"""A file ``edit`` changes: loading it (guarded), and what the model is told once it is written.

Shared by the patch pipeline (``edit.py``) and accepting a repair candidate
(``candidates.py``); both load the file the same way and report a written file the same way:
``Edited PATH (+a -r)``, an optional note, and fresh ``LINE:HH|`` anchors of the changed regions,
which are also recorded as the session's new view of the file (lines the patch kept keep what
the session saw of them, renumbered), so a follow-up edit needs no read.
"""

from __future__ import annotations

from kli.tools.core.jail import Jail
from kli.tools.core.result import ToolError
from kli.tools.core.session import FileView, Session, version_of
from kli.tools.core.textfile import IsDirectory, NotRegular, NotText, read_text, split_lines
from kli.tools.file.anchors import render_row
from kli.tools.file.plan import MAX_SHOWN_ROWS, FilePlan, merge_regions

EMPTY_FILE = "(empty file)"


def load_text(real: str, rel: str, jail: Jail | None = None) -> str:
    """The text of ``real`` through the shared loader (``textfile.read_text``); with
    ``jail``, an outside file swapped in after the path was resolved is refused. Errors are
    ``ToolError``s naming ``rel``."""
    try:
        return read_text(real, jail).text
    except IsDirectory:
        raise ToolError(
            f"edit rejected: {rel} is a directory, not a file. Nothing was written.",
            error="is_directory",
            path=rel,
        ) from None
    except NotRegular:
        raise ToolError(
            f"edit rejected: {rel} is not a regular file (a pipe, socket or device); edit "
            "changes text files only. Nothing was written.",
            error="not_regular",
            path=rel,
        ) from None
    except NotText:
        raise ToolError(
            f"edit rejected: {rel} is a binary file; edit changes text files only. "
            "Nothing was written.",
            error="binary",
            path=rel,
        ) from None
    except FileNotFoundError:
        raise ToolError(
            f"edit rejected: {rel} does not exist. Create it with write (write path='{rel}' "
            "content=...), then edit it. Nothing was written.",
            error="not_found",
            path=rel,
        ) from None
    except OSError as exc:
        raise ToolError(
            f"edit rejected: cannot read {rel} ({exc.strerror}). Nothing was written.",
            error="io",
            path=rel,
        ) from None


def _render(
    lines: tuple[str, ...] | list[str], regions: list[tuple[int, int]], rel: str
) -> tuple[list[str], dict[int, str], set[int]]:
    """Rows for ``regions`` with ``…`` between them; returns rows, texts shown, cut rows."""
    rows: list[str] = []
    shown_texts: dict[int, str] = {}
    cut: set[int] = set()
    shown = 0
    for i, (a, b) in enumerate(regions):
        if i:
            rows.append("…")
        for n in range(a, b + 1):
            if shown >= MAX_SHOWN_ROWS:
                rest = sum(y - x + 1 for x, y in regions) - shown
                rows.append(
                    f"[… {rest} more changed line(s) not shown; read path='{rel}' start={n} "
                    "to see them]"
                )
                return rows, shown_texts, cut
            row, _hh, was_cut = render_row(n, lines[n - 1])
            rows.append(row)
            shown_texts[n] = lines[n - 1]
            if was_cut:
                cut.add(n)
            shown += 1
    return rows, shown_texts, cut


def _record(
    session: Session,
    real: str,
    old: FileView | None,
    kept: dict[int, str],
    kept_cut: set[int],
    shown: dict[int, str],
    shown_cut: set[int],
    written: set[int],
    lines: tuple[str, ...] | list[str],
) -> None:
    texts = dict(kept)
    texts.update(shown)
    # A payload line the model wrote itself is known whole even if shown cut.
    cut = (kept_cut | shown_cut) - written
    # The written text is the session's own: it becomes the version the view was taken from.
    session.record_view(
        real,
        FileView(texts=texts, cut=cut, whole=old.whole if old else False, base=version_of(lines)),
    )


def written_report(
    rel: str,
    real: str,
    plan: FilePlan,
    text: str,
    spans: list[tuple[int, int]],
    session: Session,
    *,
    header_note: str = "",
) -> str:
    """``Edited PATH (+a -r)`` and fresh anchors of ``spans`` in ``text`` (what was written:
    the patched text, or a repair of it); records ``session``'s new view of ``real``."""
    old = session.views.get(real)
    lines = plan.lines if text is plan.after else split_lines(text)
    head = f"Edited {rel} (+{plan.added} -{plan.removed})"
    if header_note:
        head += "\n" + header_note
    kept: dict[int, str] = {}
    kept_cut: set[int] = set()
    if old is not None:
        kept = plan.remap(old.texts)
        kept_cut = set(plan.remap({n: "" for n in old.cut}))
    if not lines:
        _record(session, real, old, {}, set(), {}, set(), set(), lines)
        return f"{head}\n{EMPTY_FILE}"
    rows, shown, shown_cut = _render(lines, merge_regions(spans, len(lines)), rel)
    written = {n for a, b in plan.payload for n in range(a, b + 1)}
    # Lines a repair changed are no longer the text the session saw.
    for n in list(kept):
        if n > len(lines) or lines[n - 1] != kept[n]:
            kept.pop(n)
    _record(session, real, old, kept, kept_cut, shown, shown_cut, written, lines)
    return "\n".join([head, *rows])
