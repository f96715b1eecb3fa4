"""ws_edit: replace ``old_str`` with ``new_str`` in one file, uniquely (slmcode spec, ws_edit).

The search walks the match ladder (``kli.tools.ws.ladder``) and stops at the first rung with a
candidate; one candidate is applied (with that rung's note), two or more are refused unless
``replace_all``. Every refusal in the spec's table is a message below, written once.

Read-first is NOT enforced here (ws_write enforces it for overwrites): an ``old_str`` that
matches the file is itself proof that the caller knows the text it replaces, and a miss is
answered with the closest span and the ws_read call that shows it.
"""

from __future__ import annotations

import os
from typing import Any

from kli.tools.core import approval
from kli.tools.core.atomic import Stale, permission_hint
from kli.tools.core.changes import count_changes, count_replaced, edited_lines, file_change
from kli.tools.core.jail import Resolved
from kli.tools.core.registry import GATE_EDIT, Call, Tool
from kli.tools.core.result import ToolError, ToolResult
from kli.tools.core.textfile import IsDirectory, NotRegular, NotText, encode, read_text
from kli.tools.ws import cells, gutter, ladder, splice, telemetry
from kli.tools.ws.closest import closest_span
from kli.tools.ws.syntax import apply_with_syntax_check
from kli.tools.ws.textlines import search_lines

# The over-edit guard: an old_str covering at least this fraction of the lines of a file of at
# least this many lines is a whole-file rewrite in disguise, refused (over_edit_guard).
OVER_EDIT_MIN_LINES = 40
OVER_EDIT_FRACTION = 0.9
# A miss shows the closest span when it is at least this alike (difflib ratio).
FUZZY_MIN_RATIO = 0.5
# Lines of the closest span shown at most.
FUZZY_SHOW_LINES = 12

ALIASES = {
    "old_string": "old_str",
    "search": "old_str",
    "old": "old_str",
    "new_string": "new_str",
    "replace": "new_str",
    "new": "new_str",
}

RUNG_ORDER = ", ".join(ladder.RUNGS)

MSG_EMPTY = (
    "Edit refused — old_str is empty or whitespace-only, and an empty search matches "
    "everywhere (it would silently prepend). Say what you mean instead:\n"
    "• create a new file → ws_write\n"
    "• append to the end of a file → use its last 2–3 lines as old_str and put them, followed "
    "by the new text, in new_str\n"
    "• insert somewhere → use the line(s) just before the insertion point as old_str and repeat "
    "them in new_str with the new lines after them"
)
MSG_NO_OP = "No-op edit refused — old_str and new_str are identical."


def open_text(call: Call, path: str, tool: str) -> tuple[Resolved, str]:
    """Resolve ``path`` for writing and read it as text through the shared loader
    (``textfile.read_text``), or raise the recovery-pointing error."""
    resolved = call.ws.jail.resolve(path, write=True)
    try:
        return resolved, read_text(resolved.real, call.ws.jail).text
    except IsDirectory:
        raise ToolError(
            f"{tool}: {resolved.rel} is a directory, not a file — list it with ws_list "
            f'{{"path":"{resolved.rel}"}} and edit one of its files.',
            error="is_directory",
        ) from None
    except (FileNotFoundError, NotADirectoryError):
        name = os.path.basename(resolved.rel)
        raise ToolError(
            f"{tool}: {resolved.rel} does not exist — find the right path with ws_glob "
            f'{{"pattern":"**/{name}"}} or ws_list; to create a new file use ws_write.',
            error="not_found",
        ) from None
    except NotRegular:
        raise ToolError(
            f"{tool}: {resolved.rel} is not a regular file (a device, socket or pipe); {tool} "
            "changes text files only.",
            error="not_a_file",
        ) from None
    except NotText:
        raise ToolError(
            f"{tool}: {resolved.rel} is a binary file; {tool} changes text files only.",
            error="binary",
        ) from None
    except OSError as exc:
        raise ToolError(
            f"{tool}: cannot read {resolved.rel}: {exc.strerror}.", error="io"
        ) from None


def show_lines(text: str, first: int, last: int, limit: int = FUZZY_SHOW_LINES) -> str:
    """Lines ``first..last`` (1-based) in ws_read's ``%6d|`` display."""
    lines = text.split("\n")
    last = min(last, first + limit - 1, len(lines))
    return "\n".join(f"{n:6d}|{lines[n - 1].rstrip(chr(13))}" for n in range(first, last + 1))


def _line_list(spans: tuple[ladder.Span, ...]) -> str:
    firsts = [str(s.first_line) for s in spans[:10]]
    more = ", …" if len(spans) > 10 else ""
    return ("line " if len(firsts) == 1 else "lines ") + ", ".join(firsts) + more


def not_found_message(rel: str, text: str, old: str) -> str:
    near = closest_span(text, old)
    head = f"old_str not found in {rel} — no strategy of the match ladder matched ({RUNG_ORDER})."
    retry = (
        "Re-read the region with ws_read and copy old_str from it byte-for-byte (indentation "
        "included, without the NN| gutter), then retry ws_edit. Do NOT use ws_write."
    )
    if near is None or near.ratio < FUZZY_MIN_RATIO:
        return f"{head}\nNothing in the file is close to it. {retry}"
    limit = max(near.last_line - near.first_line + 1, 1)
    return (
        f"{head}\nThe closest span is lines {near.first_line}–{near.last_line} "
        f"({near.ratio:.0%} similar; the NN| gutter is display only):\n"
        f"{show_lines(text, near.first_line, near.last_line)}\n"
        f'See it with ws_read {{"path":"{rel}","offset":{near.first_line},"limit":{limit}}}. '
        f"{retry}"
    )


def _refuse(
    call: Call,
    rel: str,
    text: str,
    reason: str,
    message: str,
    *,
    keys: list[str] | None = None,
    notes: list[str] | None = None,
    **extra: Any,
) -> ToolError:
    """The refusal error: counted in the session's telemetry, the file reported unchanged.
    ``keys`` are the call's telemetry so far, ``notes`` in-band notes to keep (a stripped
    gutter stays visible even when the edit then fails)."""
    counted = telemetry.record(
        call.session, [*(keys or ["ws_edit.calls"]), f"ws_edit.refused.{reason}"]
    )
    message = "\n".join([message, *(notes or [])])
    change = file_change(
        rel, text, text, "rejected", added=0, removed=0, reason=reason, message=message
    )
    return ToolError(message, error=reason, files=[change], telemetry=counted, **extra)


def _run(call: Call) -> ToolResult:
    args = call.args
    old: str = args["old_str"]
    new: str = args["new_str"]
    replace_all = bool(args.get("replace_all", False))
    nb_path, cell_id = cells.split(args["path"])
    target = call.ws.jail.resolve(nb_path, write=True)
    cell: cells.CellText | None = None
    with call.ws.writing([target.real], tool="ws_edit", rel=target.rel):
        if cell_id is None:
            resolved, text = open_text(call, args["path"], "ws_edit")
            rel = resolved.rel
        else:
            cell = cells.open_cell(call, nb_path, cell_id, "ws_edit", write=True)
            text, rel = cell.text, cell.rel
        if old.strip() == "":
            raise _refuse(call, rel, text, "empty_old_str", MSG_EMPTY)
        keys = ["ws_edit.calls"]
        notes_end: list[str] = []
        if old not in text:
            found = gutter.scan(old)
            if found.kind == "partial":
                raise _refuse(call, rel, text, "partial_gutter", gutter.partial_refusal(found))
            if found.kind == "full":
                old = found.stripped
                new = gutter.strip_marked(new)
                keys.append("ws_edit.gutter_stripped")
                notes_end.append(found.note("old_str"))
        ctx: dict[str, Any] = {"keys": keys, "notes": notes_end}
        if old.strip() == "":  # only gutters, no text
            raise _refuse(call, rel, text, "empty_old_str", MSG_EMPTY, **ctx)
        if old == new:
            raise _refuse(call, rel, text, "no_op", MSG_NO_OP, **ctx)
        file_lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        old_lines = len(search_lines(old)[0])
        if file_lines >= OVER_EDIT_MIN_LINES and old_lines >= OVER_EDIT_FRACTION * file_lines:
            raise _refuse(
                call,
                rel,
                text,
                "over_edit_guard",
                f"Edit refused by the over-edit guard (over_edit_guard) — old_str spans "
                f"{old_lines} of the {file_lines} lines of {rel} (≥ {OVER_EDIT_FRACTION:.0%}): "
                "that is a whole-file rewrite, where one drifted line makes the whole edit miss "
                "or silently reverts code you did not mean to touch. Change only what needs "
                "changing: one ws_edit per function or block (old_str = that block plus 2–3 "
                "lines of context), or one ws_patch with a unified diff of just the changed "
                "hunks.",
                **ctx,
            )
        match = ladder.seek(text, old)
        if match.count == 0:
            raise _refuse(call, rel, text, "not_found", not_found_message(rel, text, old), **ctx)
        if match.count > 1 and not replace_all:
            where = _line_list(match.spans)
            if match.rung == ladder.EXACT:
                raise _refuse(
                    call,
                    rel,
                    text,
                    "ambiguous_exact",
                    f"old_str found {match.count} times in {rel} ({where}) — pass "
                    "replace_all:true, or include more surrounding context (2–3 lines before "
                    "or after) so old_str matches exactly one place. Nothing was changed. "
                    "Do NOT use ws_write.",
                    count=match.count,
                    **ctx,
                )
            raise _refuse(
                call,
                rel,
                text,
                "ambiguous",
                f"Ambiguous edit refused — the search text matches {match.count} places in "
                f"{rel} ({where}) under the {match.rung} match. An ambiguous edit is a wrong "
                "edit, so nothing was changed. Include more surrounding context so it matches "
                "one place, or pass replace_all:true to replace every one of them.",
                count=match.count,
                rung=match.rung,
                **ctx,
            )
        try:
            after, replaced, edits = splice.apply_plan(
                text, match, new, replace_all=replace_all, old=old
            )
        except splice.DoesNotFit as exc:
            span = match.spans[0]
            raise _refuse(
                call,
                rel,
                text,
                "not_found",
                f"old_str matched lines {span.first_line}–{span.last_line} of {rel} only on its "
                f"first and last lines ({match.rung}), and there {exc.args[0]} Nothing was "
                "changed.\n" + show_lines(text, span.first_line, span.last_line),
                **ctx,
            ) from None
        if after == text:
            raise _refuse(
                call,
                rel,
                text,
                "no_op",
                f"No-op edit refused — replacing the matched text leaves {rel} unchanged "
                f"({match.rung} match at {_line_list(match.spans)}).",
                **ctx,
            )
        # Counted from what the edit replaced, not by diffing the whole file.
        added, removed = (
            count_replaced(edited_lines(text, edits)) if edits is not None
            else count_changes(text, after)
        )
        keys.append(f"ws_edit.rung.{match.rung}")
        if replace_all and match.count > 1:
            keys.append("ws_edit.replace_all")
        ids_written: list[str] = []
        try:
            if cell is None:
                wrote, syntax_note, outcome = apply_with_syntax_check(
                    call.ws,
                    resolved,
                    text,
                    after,
                    disabled=bool(args.get("disable_syntax_check")),
                    expected=encode(text),
                )
            else:
                wrote, syntax_note, outcome, ids_written = cells.check_and_write(
                    call, cell, after, disabled=bool(args.get("disable_syntax_check"))
                )
        except Stale as exc:
            raise _refuse(call, rel, text, "stale", exc.refusal("ws_edit", rel), **ctx) from None
        except OSError as exc:  # a read-only folder, another owner's file, disk full, …
            raise ToolError(
                f"ws_edit: cannot write {rel} ({exc.strerror}). Nothing was written — the file is "
                f"as it was.{permission_hint(exc)}",
                error="write_failed",
            ) from None
        keys.append(f"syntax.{outcome.status}")
        telemetry.record(call.session, keys)
        spans = [[s.first_line, s.last_line] for s in splice.choose_disjoint(match.spans)]
        common: dict[str, Any] = {
            "path": rel,
            "rung": match.rung,
            "replacements": replaced,
            "spans": spans,
            "syntax": outcome.status,
            "syntax_checker": outcome.checker,
            "telemetry": keys,
        }
        if not wrote:
            change = file_change(
                rel, text, after, "reverted", reason="syntax", message=outcome.message,
                added=added, removed=removed,
            )
            return ToolResult.error(syntax_note, error="syntax_reverted", files=[change], **common)
        head = f"edited {rel} ({replaced} replacement(s))"
        if match.note:
            head += f" {match.note}"
        lines = [head, *([syntax_note] if syntax_note else []), *notes_end]
        if cell is not None and ids_written:
            lines.append(cells.ids_note(cell, ids_written))
            common["ids_written"] = ids_written
        change = file_change(rel, text, after, "written", added=added, removed=removed)
        return ToolResult.success("\n".join(lines), files=[change], **common)


TOOL = Tool(
    name="ws_edit",
    profile="slmcode",
    gate=GATE_EDIT,
    description=(
        "Replace old_str with new_str in one existing file. old_str must match the file "
        "byte-for-byte, indentation included, and match exactly ONE place: ws_read the file "
        "first and copy the lines from it WITHOUT the `NN|` line-number gutter (it is display "
        "only). Include 2–3 surrounding lines when a short span repeats, or pass "
        "replace_all:true to change every occurrence. Small drift in trailing whitespace, "
        "indentation or blank lines is tolerated and reported with a note; an ambiguous match "
        "is never applied. To append, use the file's last lines as old_str and repeat them in "
        "new_str; to create a file use ws_write; for several changes in one file use ws_patch. "
        "A change that makes a parsing file stop parsing (.py, .json, .js, .go, .ts) is "
        "reverted; disable_syntax_check:true skips that check. In a notebook, path "
        "nb.ipynb#CELL_ID edits one cell's source (ws_read path=nb.ipynb shows the ids); a "
        "Python code cell gets the same syntax check."
    ),
    parameters={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File to edit, relative to the root."},
            "old_str": {
                "type": "string",
                "description": "Exact text to replace (copied from ws_read, without the gutter).",
            },
            "new_str": {"type": "string", "description": "Replacement text (may be empty)."},
            "replace_all": {
                "type": "boolean",
                "description": "Replace every match instead of requiring exactly one.",
            },
            "disable_syntax_check": {
                "type": "boolean",
                "description": "Skip the post-edit parse check (and its revert).",
            },
        },
        "required": ["path", "old_str", "new_str"],
        "additionalProperties": False,
    },
    run=_run,
    main_arg="new_str",
    aliases=ALIASES,
    mutates=True,
    touches_image=False,
    action=approval.FILE,
)
