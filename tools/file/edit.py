"""``edit``: apply a hashline patch to one or more files, or accept a pending repair preview.

Pipeline: ``hashline.parse`` (text → sections) → ``plan.plan_file`` per file (anchors
re-hashed against disk, overlaps, in-memory apply) → ``repair.decide`` per file (balance check
and the safe / unsafe classification) → write every file or none (``atomic.write_many`` under
the workspace's file lock), or return repair previews (``candidates.propose``), or reject.
Accepting and rejecting a candidate is ``candidates.py``'s; loading a file and reporting it
once written is ``target.py``'s.

Where the spec is silent:

- A patch is whole-or-nothing across its files in every outcome: if any file is rejected or
  needs a preview, no file of the patch is written. Previews are made for the files that need
  one; accepting a candidate writes that file alone.
- A preview asked for (``repair="preview"``) is a success (``ok``); a preview forced because a
  repair was unsafe is not (``ok`` false), since nothing the patch asked for was written. Its
  text ends with the exact call that writes it.
- Fresh anchors after a write are recorded in the session's view of the file; lines the patch
  kept keep what the session saw of them, renumbered; so a follow-up edit needs no read.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from kli.tools.core import approval
from kli.tools.core.atomic import Busy, Stale, permission_hint, write_many
from kli.tools.core.changes import file_change
from kli.tools.core.registry import GATE_EDIT, Call, Tool
from kli.tools.core.result import ToolError, ToolResult
from kli.tools.core.textfile import encode
from kli.tools.file import candidates, cellview
from kli.tools.file.anchors import MAX_LINE_CHARS
from kli.tools.file.hashline import Op, PatchSyntaxError, parse
from kli.tools.file.plan import FilePlan, PlanError, plan_file
from kli.tools.file.repair import python as python_repair
from kli.tools.file.repair.common import RepairLanguage
from kli.tools.file.repair.decide import (
    POLICIES,
    PREVIEW,
    REJECT,
    RepairDecision,
    decide,
    language_for,
)
from kli.tools.file.target import load_text, written_report
from kli.tools.notebook import address, magics
from kli.tools.notebook.model import Notebook, NotebookError

DEFAULT_POLICY = "safe"  # spec: repair defaults to safe
GRAMMAR_HINT = (
    "Patch grammar: '@@ PATH' opens a section; then ops: '+ LINE:HH' (insert after), bare '+' "
    "(append at end), '< LINE:HH' (insert before), bare '<' (insert at start), "
    "'- A:HH..B:HH' (delete), '= A:HH..B:HH' (replace; no payload deletes); payload lines "
    "start with '~' (everything after it is verbatim)."
)

@dataclass
class _Cell:
    """A section's target when it is a notebook cell (``@@ nb.ipynb#CELL_ID``)."""

    nb_real: str
    nb_rel: str
    cell_id: str
    index: int = -1
    masked: bool = False  # IPython lines were masked for the Python check (``magics``)


@dataclass
class _Target:
    real: str  # a file's real path, or a cell's key (``address.key``)
    rel: str
    ops: list[Op] = field(default_factory=list)
    before: str = ""
    plan: FilePlan | None = None
    decision: RepairDecision | None = None
    language: RepairLanguage | None = None
    cell: _Cell | None = None


NOTEBOOK_WHOLE = (
    "edit rejected: {rel} is a notebook; edit one cell's source with an '@@ {rel}#CELL_ID' "
    "section (read path='{rel}' shows each cell's id and anchors), and add, delete, move or "
    "retype cells with the cells tool. Nothing was written."
)


def _is_notebook(call: Call, real: str) -> bool:
    """Whether ``real`` loads as a notebook (a ``.ipynb`` that does not — broken JSON — may be
    edited as text to repair it)."""
    try:
        call.ws.notebooks.load(real)
    except NotebookError:
        return False
    except OSError:
        return True  # missing or unreadable: refused as a notebook, by name
    return True


def _targets(call: Call, sections: list[Any]) -> list[_Target]:
    by_real: dict[str, _Target] = {}
    for section in sections:
        nb_path, cell_id = address.split(section.path)
        resolved = call.ws.jail.resolve(nb_path, write=True)
        if cell_id is not None:
            real = address.key(resolved.real, cell_id)
            rel = f"{resolved.rel}#{cell_id}"
            cell: _Cell | None = _Cell(resolved.real, resolved.rel, cell_id)
        elif address.is_notebook(resolved.rel) and _is_notebook(call, resolved.real):
            raise ToolError(
                NOTEBOOK_WHOLE.format(rel=resolved.rel), error="notebook", path=resolved.rel
            )
        else:
            real, rel, cell = resolved.real, resolved.rel, None
        target = by_real.get(real)
        if target is None:
            target = by_real[real] = _Target(real, rel, cell=cell)
        target.ops.extend(section.ops)
    for target in by_real.values():
        if not call.session.has_read(target.real):
            what = "cell" if target.cell else "file"
            raise ToolError(
                f"edit rejected: {what} {target.rel} has not been read in this session. Read it "
                f"first (read path='{target.rel}', or a search that matches it) and use the "
                "LINE:HH anchors it shows. Nothing was written.",
                error="unread",
                path=target.rel,
                files=[
                    file_change(
                        target.rel,
                        None,
                        None,
                        "rejected",
                        added=0,
                        removed=0,
                        reason="unread",
                        message=f"{what} not read in this session",
                    )
                ],
            )
    return list(by_real.values())


# -- the patch ---------------------------------------------------------------------------------
def _cell_place(t: _Target) -> dict[str, Any]:
    """A cell's ``cell_index`` (its position from 1, as a person counts the notebook's cells)."""
    return {"cell_index": t.cell.index + 1} if t.cell is not None and t.cell.index >= 0 else {}


def _reject_files(
    targets: list[_Target], culprit: _Target | None, message: str, reason: str | None
) -> list[dict[str, Any]]:
    """Every file of a rejected patch as ``rejected``: the culprit with ``reason`` and
    ``message``, the others as collateral (``patch_rejected``)."""
    files = []
    for t in targets:
        after = t.decision.text if t.decision else (t.plan.after if t.plan else None)
        own = culprit is None or t is culprit
        files.append(
            file_change(
                t.rel,
                t.before,
                after,
                "rejected",
                added=t.plan.added if t.plan else 0,
                removed=t.plan.removed if t.plan else 0,
                reason=reason if own else "patch_rejected",
                message=message if own else "not written: another file of the patch was rejected",
                marks=list(t.decision.marks) if t.decision and own else None,
            )
        )
    return files


def _apply_patch(call: Call, patch_text: str, policy: str) -> ToolResult:
    try:
        patch = parse(patch_text)
    except PatchSyntaxError as exc:
        raise ToolError(
            f"edit rejected: {exc} Nothing was written. {GRAMMAR_HINT}",
            error="parse",
            patch_line=exc.line,
        ) from None
    targets = _targets(call, list(patch.sections))
    locked = [t.cell.nb_real if t.cell else t.real for t in targets]
    with call.ws.writing(locked, tool="edit", rel=targets[0].rel):
        notebooks: dict[str, cellview.Loaded] = {}
        for t in targets:
            if t.cell is None:
                t.before = load_text(t.real, t.rel, call.ws.jail)
            else:
                _load_cell(call, t, notebooks)
        for t in targets:
            view = call.session.views.get(t.real)
            try:
                t.plan = plan_file(
                    t.rel, t.before, t.ops, view, wide=MAX_LINE_CHARS, whole=t.cell is not None
                )
            except PlanError as exc:
                raise ToolError(
                    "edit rejected: " + exc.message,
                    error=exc.kind,
                    path=exc.path,
                    line=exc.line,
                    files=_reject_files(targets, t, exc.message, exc.kind),
                ) from None
            if t.cell is None:
                t.language = language_for(t.rel)
                t.decision = decide(
                    t.language, t.before, t.plan.after, t.plan.edited_lines, policy
                )
            else:
                t.decision = _decide_cell(t, notebooks[t.cell.nb_real].nb, policy)
        decisions = [_decision_json(t) for t in targets]
        rejected = [t for t in targets if t.decision and t.decision.action == REJECT]
        if rejected:
            t = rejected[0]
            assert t.decision is not None
            retry = (
                "Fix the delimiters in your patch and send it again, or send it with "
                "repair='safe' or repair='preview' to let edit repair them."
                if t.decision.reason == "policy_reject"
                else "Fix the patch so the file parses and send it again; the file is "
                "unchanged, so your anchors are still valid."
            )
            message = f"edit rejected for {t.rel} ({t.decision.reason}): {t.decision.message}."
            raise ToolError(
                f"{message} Nothing was written. {retry}",
                error=t.decision.reason,
                path=t.rel,
                reason=t.decision.reason,
                decisions=decisions,
                files=_reject_files(targets, t, t.decision.message, t.decision.reason),
            )
        previews = [t for t in targets if t.decision and t.decision.action == PREVIEW]
        if previews:
            return _previews(call, targets, previews, policy, decisions)
        try:
            changed = _commit(call, targets, notebooks)
        except (Stale, Busy) as exc:
            culprit = next(
                (t for t in targets if exc.filename in (t.real, t.cell and t.cell.nb_real)),
                targets[0],
            )
            shown = culprit.cell.nb_rel if culprit.cell and exc.filename == culprit.cell.nb_real else culprit.rel
            message = exc.refusal("edit", shown)
            raise ToolError(
                message,
                error="stale" if isinstance(exc, Stale) else "busy",
                path=culprit.rel,
                files=_reject_files(targets, culprit, message, "file_changed"),
            ) from None
        except OSError as exc:
            where = f" ({call.ws.jail.rel(exc.filename)})" if isinstance(exc.filename, str) else ""
            raise ToolError(
                f"edit failed while writing the patched files: {exc.strerror or exc}{where}. "
                "Nothing was written (files already replaced were restored)."
                f"{permission_hint(exc)} Check the files and their folders, then send the patch "
                "again.",
                error="io",
                files=_reject_files(targets, None, f"write failed: {exc}", "io"),
            ) from None
    blocks = []
    files = []
    for nb_real, nb in changed.items():
        if nb.ids_written:
            rel = call.ws.jail.rel(nb_real)
            blocks.append(
                f"{rel} had no cell ids: wrote ids for {len(nb.ids_written)} cell(s), each the "
                f"stand-in id read showed, so your anchors stay valid (nbformat "
                f"{nb.version[0]}.{nb.version[1]})."
            )
    for t in targets:
        assert t.plan is not None and t.decision is not None
        text = _text_to_write(t)
        note = ""
        spans = list(t.plan.edited)
        if t.decision.repaired:
            note = f"Repaired delimiters ({t.decision.reason}): " + "; ".join(
                f"line {m['line']}, column {m['column']}: {m['note']}" for m in t.decision.marks
            )
            spans += [(n, n) for n in t.decision.changed_lines]
        elif t.decision.message:  # e.g. original_unparsed: written as patched, still broken
            note = f"Note ({t.decision.reason}): {t.decision.message}."
        blocks.append(
            written_report(t.rel, t.real, t.plan, text, spans, call.session, header_note=note)
        )
        files.append(
            file_change(
                t.rel,
                t.before,
                text if t.cell is None else cellview.cell_source(text, t.before),
                "written",
                added=t.plan.added,
                removed=t.plan.removed,
                reason=_repair_reason(t),
                message=t.decision.message or None,
                marks=list(t.decision.marks) or None,
                **_cell_place(t),
            )
        )
    extra: dict[str, Any] = {}
    written_ids = {call.ws.jail.rel(r): nb.ids_written for r, nb in changed.items() if nb.ids_written}
    if written_ids:
        extra["ids_written"] = written_ids
    return ToolResult.success(
        "\n\n".join(blocks),
        files=files,
        decisions=decisions,
        reason=_patch_repair_reason(targets),
        **extra,
    )


# -- notebook cells ----------------------------------------------------------------------------
def _load_cell(call: Call, t: _Target, notebooks: dict[str, cellview.Loaded]) -> None:
    """Load ``t``'s notebook (once per patch) and find its cell; a cell the session read that
    is no longer there (its stand-in id changed with its source, or it was deleted) is stale."""
    assert t.cell is not None
    loaded = notebooks.get(t.cell.nb_real)
    if loaded is None:
        loaded = notebooks[t.cell.nb_real] = cellview.load(
            call, t.cell.nb_rel, verb="edit", write=True
        )
    index = loaded.nb.index_of(t.cell.cell_id)
    if index is None:
        raise ToolError(
            f"edit rejected: stale cell {t.rel}: {t.cell.nb_rel} has no cell "
            f"{t.cell.cell_id!r} now (it was deleted, or — in a notebook without ids — its "
            f"source changed, which changes its stand-in id) since you read it. Re-read the "
            f"notebook (read path='{t.cell.nb_rel}') and redo the edit. Nothing was written.",
            error="stale",
            path=t.rel,
        )
    if cellview.twin_moved(call.session, loaded, index):
        raise ToolError(
            f"edit rejected: stale cell {t.rel}: {t.cell.nb_rel} has no cell ids and several "
            "identical cells, and its cells changed since you read it, so this stand-in id may "
            f"name another of them now. Re-read the notebook (read path='{t.cell.nb_rel}') "
            "and redo the edit. Nothing was written.",
            error="stale",
            path=t.rel,
        )
    t.cell.index = index
    t.before = loaded.nb.source(index)


def _decide_cell(t: _Target, nb: Notebook, policy: str) -> RepairDecision:
    """The repair decision for a cell: a code cell of a Python notebook is checked as Python
    (IPython magic lines masked, ``notebook.magics``); any other cell is written as patched."""
    assert t.cell is not None and t.plan is not None
    cell = nb.cells[t.cell.index]
    python = cell.get("cell_type") == "code" and nb.is_python and magics.python_body(t.plan.after)
    if not python:
        return decide(None, t.before, t.plan.after, t.plan.edited_lines, policy)
    t.language = python_repair
    before, after = magics.mask(t.before), magics.mask(t.plan.after)
    d = decide(python_repair, before, after, t.plan.edited_lines, policy)
    if after == t.plan.after and before == t.before:
        return d
    t.cell.masked = True
    return dataclasses.replace(d, text=magics.unmask(d.text, after, t.plan.after))


def _commit(
    call: Call, targets: list[_Target], notebooks: dict[str, cellview.Loaded]
) -> dict[str, Notebook]:
    """Write every file and every changed notebook in one step (``NotebookStore.commit``);
    returns the notebooks written, by real path."""
    files = [(t.real, encode(_text_to_write(t))) for t in targets if t.cell is None]
    changed: dict[str, Notebook] = {}
    for t in targets:
        if t.cell is None:
            continue
        nb = changed.get(t.cell.nb_real)
        if nb is None:
            nb = changed[t.cell.nb_real] = notebooks[t.cell.nb_real].nb.copy()
            nb.assign_ids()  # before any source changes: each id is the stand-in read showed
        nb.set_source(t.cell.index, cellview.cell_source(_text_to_write(t), t.before))
    expected = {t.real: encode(t.before) for t in targets if t.cell is None}
    if changed:
        call.ws.notebooks.commit(list(changed.items()), files, expected)
    else:
        write_many(files, expected)
    return changed


def _text_to_write(t: _Target) -> str:
    """What is written for ``t``: the patched text, or its safe repair."""
    assert t.decision is not None
    return t.decision.text


def _repair_reason(t: _Target) -> str | None:
    """The repair decision's reason for a file a repair language checks; None for others."""
    return t.decision.reason if t.decision and t.language is not None else None


def _patch_repair_reason(targets: list[_Target]) -> str | None:
    """The patch's headline reason (``details.reason``): the first checked file's reason that
    is not ``balanced``, else the first checked file's, else None (no file was checked)."""
    for t in targets:
        if t.decision and t.language is not None and t.decision.reason != "balanced":
            return t.decision.reason
    for t in targets:
        if t.language is not None:
            return _repair_reason(t)
    return None


def _decision_json(t: _Target) -> dict[str, Any]:
    d = t.decision
    assert d is not None
    return {
        "path": t.rel,
        "language": d.language,
        "action": d.action,
        "reason": d.reason if t.language is not None else None,
        "classification": d.classification,
        "message": d.message or None,
        "changed_lines": list(d.changed_lines),
    }


def _previews(
    call: Call,
    targets: list[_Target],
    previews: list[_Target],
    policy: str,
    decisions: list[dict[str, Any]],
) -> ToolResult:
    parts: list[str] = []
    files: list[dict[str, Any]] = []
    proposed: list[str] = []
    for t in targets:
        assert t.plan is not None and t.decision is not None
        d = t.decision
        if t not in previews:
            files.append(
                file_change(
                    t.rel,
                    t.before,
                    d.text,
                    "rejected",
                    added=t.plan.added,
                    removed=t.plan.removed,
                    reason="patch_previewed",
                    message="not written: another file of this patch is awaiting a repair preview",
                )
            )
            continue
        cid, change, text = candidates.propose(
            call.ws, call.session, t.rel, t.real, t.before, t.plan, d, _cell_place(t)
        )
        proposed.append(cid)
        files.append(change)
        parts.append(text)
    if len(targets) > 1:
        parts.append(
            "No file of this patch was written (a patch is whole-or-nothing). Accepting a "
            "candidate writes that file only; send the sections for the other files again "
            "afterwards, with the same anchors."
        )
    asked = policy == "preview" and all(
        t.decision is not None and t.decision.reason == "policy_preview" for t in previews
    )
    result = ToolResult(
        asked,
        "\n\n".join(parts),
        {
            "files": files,
            "decisions": decisions,
            "candidates": proposed,
            "candidate": proposed[0],
            "reason": previews[0].decision.reason if previews[0].decision else None,
        },
    )
    return result


# -- the tool ----------------------------------------------------------------------------------
def _run(call: Call) -> ToolResult:
    accept = call.args.get("accept_repair")
    reject = call.args.get("reject_repair")
    patch_text = call.args.get("input")
    if reject:
        if patch_text or accept:
            raise ToolError(
                "edit takes one of input (a patch), accept_repair or reject_repair. Send the "
                "reject alone, then the rest.",
                error="bad_arguments",
            )
        return approval.reject_call(call, reject)
    if accept:
        if patch_text:
            raise ToolError(
                "edit takes either input (a patch) or accept_repair (with path), not both. "
                "Send the accept first, then the patch.",
                error="bad_arguments",
            )
        return candidates.accept(call, accept)
    if not patch_text:
        raise ToolError(
            "edit needs input: a hashline patch such as '@@ a.py\\n= 3:1f..3:1f\\n~new line'. "
            f"{GRAMMAR_HINT} To write a repair preview, send accept_repair and path instead.",
            error="bad_arguments",
        )
    policy = call.args.get("repair") or DEFAULT_POLICY
    return _apply_patch(call, patch_text, policy)


TOOL = Tool(
    name="edit",
    profile="kli",
    gate=GATE_EDIT,
    description=(
        "Apply a hashline patch to one or more files, or accept a pending repair preview. "
        "Anchors LINE:HH come from read or search (the file must have been read or searched in "
        "this session). A patch is whole-or-nothing: every anchor is re-hashed against the "
        "current file before anything is written; a stale anchor, an overlap or any failure "
        "rejects the whole patch and writes nothing.\n"
        "Grammar — a section per file, opened by '@@ PATH', then ops:\n"
        "  + LINE:HH      insert the payload after that line;  + (bare) appends at end of file\n"
        "  < LINE:HH      insert the payload before that line; < (bare) inserts at the start\n"
        "  - A:HH..B:HH   delete lines A..B inclusive ('- A:HH' deletes one line)\n"
        "  = A:HH..B:HH   replace lines A..B with the payload; no payload deletes them\n"
        "  ~content       a payload line (everything after ~ is verbatim; '~' alone is an "
        "empty line)\n"
        "Markers start in column 1; ranges and inserts may not overlap. On success each file "
        "is reported as 'Edited PATH (+added -removed)' followed by fresh LINE:HH|content "
        "anchors of the changed regions, valid for a follow-up edit without re-reading. Files "
        "end with a newline; CRLF files stay CRLF.\n"
        "Common Lisp (.lisp .asd .cl .lsp) and Python (.py) files are checked for balanced "
        "delimiters (and Python must parse). Unbalanced output is repaired in memory by "
        "repair: 'safe' (default) writes only repairs inside your edited lines that keep the "
        "top-level form count; otherwise it returns a preview with a candidate id; 'preview' "
        "always returns the candidate; 'reject' errors. Write a preview with "
        "accept_repair=ID and path=PATH; it is refused if the file changed since the preview. "
        "reject_repair=ID discards a pending proposal of your session (nothing is written)."
    ),
    parameters={
        "type": "object",
        "properties": {
            "input": {
                "type": "string",
                "description": "A hashline patch (grammar above). "
                "Required unless accepting a repair preview.",
            },
            "repair": {
                "type": "string",
                "enum": list(POLICIES),
                "description": "Repair policy for unbalanced Lisp / Python output: "
                "safe (default), preview, or reject.",
            },
            "accept_repair": {
                "type": "string",
                "description": "Candidate id returned by a "
                "repair preview, to write it. Needs path.",
            },
            "reject_repair": {
                "type": "string",
                "description": "A pending proposal id (a repair preview or a held call), to "
                "discard it; nothing is written.",
            },
            "note": {
                "type": "string",
                "description": "With reject_repair: why, for the proposal's owner.",
            },
            "path": {"type": "string", "description": "With accept_repair: the candidate's file."},
        },
        "additionalProperties": False,
    },
    run=_run,
    main_arg="input",
    aliases={"patch": "input", "candidate": "accept_repair"},
    mutates=True,
    touches_image=False,
    action=approval.FILE,
    makes_preview=True,
)
