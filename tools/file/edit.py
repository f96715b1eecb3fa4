"""``edit``: apply a hashline patch to one or more files, or accept a pending repair preview.

Pipeline: ``hashline.parse`` (text → sections) → ``plan.plan_file`` per file (anchors
re-hashed against disk, overlaps, in-memory apply) → ``repair.decide`` per file (balance check
and the safe / unsafe classification) → write every file or none (``atomic.write_many`` under
the workspace's file lock), or return repair previews, or reject.

Where the spec is silent:

- A patch is whole-or-nothing across its files in every outcome: if any file is rejected or
  needs a preview, no file of the patch is written. Previews are made for the files that need
  one; accepting a candidate writes that file alone.
- A preview asked for (``repair="preview"``) is a success (``ok``); a preview forced because a
  repair was unsafe is not (``ok`` false), since nothing the patch asked for was written. Its
  text ends with the exact call that writes it.
- Candidate ids (``c1``, ``c2``…) are unique in the process. ``accept_repair`` looks in the
  calling session first, then in every session of the workspace (so a host such as the
  kernel's UI comm can accept on the owner's behalf); ``path`` must name the candidate's file.
  ``reject_candidate(ws, id)`` discards a candidate (the kernel's Reject).
- Fresh anchors after a write are recorded in the session's view of the file; lines the patch
  kept keep what the session saw of them, renumbered; so a follow-up edit needs no read.
"""

from __future__ import annotations

import itertools
import json
import os
import stat
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any

from kli.tools.core.atomic import write_atomic, write_many
from kli.tools.core.changes import file_change
from kli.tools.core.jail import Jail
from kli.tools.core.registry import GATE_EDIT, Call, Tool
from kli.tools.core.result import ToolError, ToolResult
from kli.tools.core.session import Candidate, FileView, Session
from kli.tools.core.textfile import NotText, decode, encode, split_lines
from kli.tools.file.hashline import Op, PatchSyntaxError, parse
from kli.tools.file.plan import MAX_SHOWN_ROWS, FilePlan, PlanError, merge_regions, plan_file
from kli.tools.file.read import MAX_LINE_CHARS, render_row
from kli.tools.file.repair.decide import (
    POLICIES,
    PREVIEW,
    REJECT,
    RepairDecision,
    decide,
    language_for,
    still_valid,
)

if TYPE_CHECKING:
    from kli.tools.core.workspace import Workspace

DEFAULT_POLICY = "safe"  # spec: repair defaults to safe
MAX_PENDING_CANDIDATES = 32  # per session; the oldest is dropped beyond this (not in the spec)
EMPTY_FILE = "(empty file)"
GRAMMAR_HINT = (
    "Patch grammar: '@@ PATH' opens a section; then ops: '+ LINE:HH' (insert after), bare '+' "
    "(append at end), '< LINE:HH' (insert before), bare '<' (insert at start), "
    "'- A:HH..B:HH' (delete), '= A:HH..B:HH' (replace; no payload deletes); payload lines "
    "start with '~' (everything after it is verbatim)."
)

_candidate_ids = itertools.count(1)


def _new_candidate_id() -> str:
    return f"c{next(_candidate_ids)}"


def accept_call(candidate_id: str, path: str) -> str:
    """The exact call that writes a candidate, as the model is told to send it."""
    return "edit " + json.dumps({"accept_repair": candidate_id, "path": path})


@dataclass
class _Target:
    real: str
    rel: str
    ops: list[Op] = field(default_factory=list)
    before: str = ""
    plan: FilePlan | None = None
    decision: RepairDecision | None = None
    language: ModuleType | None = None


# -- loading -----------------------------------------------------------------------------------
def _load(real: str, rel: str, jail: Jail | None = None) -> str:
    """The text of ``real``; with ``jail``, an outside file swapped in after the path was
    resolved is refused (``Jail.open_read``)."""
    if os.path.isdir(real):
        raise ToolError(
            f"edit rejected: {rel} is a directory, not a file. Nothing was written.",
            error="is_directory",
            path=rel,
        )
    try:
        if not stat.S_ISREG(os.stat(real).st_mode):
            raise ToolError(
                f"edit rejected: {rel} is not a regular file (a pipe, socket or device); edit "
                "changes text files only. Nothing was written.",
                error="not_regular", path=rel,
            )
        with (jail.open_read(real) if jail is not None else open(real, "rb")) as fh:
            data = fh.read()
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
    try:
        return decode(data)
    except NotText:
        raise ToolError(
            f"edit rejected: {rel} is a binary file; edit changes text files only. "
            "Nothing was written.",
            error="binary",
            path=rel,
        ) from None


def _targets(call: Call, sections: list[Any]) -> list[_Target]:
    by_real: dict[str, _Target] = {}
    for section in sections:
        resolved = call.ws.jail.resolve(section.path, write=True)
        target = by_real.get(resolved.real)
        if target is None:
            target = by_real[resolved.real] = _Target(resolved.real, resolved.rel)
        target.ops.extend(section.ops)
    for target in by_real.values():
        if not call.session.has_read(target.real):
            raise ToolError(
                f"edit rejected: {target.rel} has not been read in this session. Read it first "
                f"(read path='{target.rel}', or a search that matches it) and use the LINE:HH "
                "anchors it shows. Nothing was written.",
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
                        message="file not read in this session",
                    )
                ],
            )
    return list(by_real.values())


# -- rendering ---------------------------------------------------------------------------------
def _render(
    lines: tuple[str, ...] | list[str], regions: list[tuple[int, int]], rel: str
) -> tuple[list[str], dict[int, str], set[int]]:
    """Rows for ``regions`` with ``…`` between them; returns rows, hashes shown, cut rows."""
    rows: list[str] = []
    hashes: dict[int, str] = {}
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
                return rows, hashes, cut
            row, hh, was_cut = render_row(n, lines[n - 1])
            rows.append(row)
            hashes[n] = hh
            if was_cut:
                cut.add(n)
            shown += 1
    return rows, hashes, cut


def _record(
    session: Session,
    real: str,
    old: FileView | None,
    kept: dict[int, str],
    kept_cut: set[int],
    shown: dict[int, str],
    shown_cut: set[int],
    written: set[int],
) -> None:
    hashes = dict(kept)
    hashes.update(shown)
    # A payload line the model wrote itself is known whole even if shown cut.
    cut = (kept_cut | shown_cut) - written
    session.record_view(real, FileView(hashes=hashes, cut=cut, whole=old.whole if old else False))


def _written_text(
    target: _Target,
    text: str,
    spans: list[tuple[int, int]],
    session: Session,
    old: FileView | None,
    *,
    header_note: str = "",
) -> str:
    """``Edited PATH (+a -r)`` and fresh anchors; records the session's new view."""
    plan = target.plan
    assert plan is not None
    lines = plan.lines if text is plan.after else split_lines(text)
    head = f"Edited {target.rel} (+{plan.added} -{plan.removed})"
    if header_note:
        head += "\n" + header_note
    kept: dict[int, str] = {}
    kept_cut: set[int] = set()
    if old is not None:
        kept = plan.remap(old.hashes)
        kept_cut = set(plan.remap({n: "" for n in old.cut}))
    if not lines:
        _record(session, target.real, old, {}, set(), {}, set(), set())
        return f"{head}\n{EMPTY_FILE}"
    rows, shown, shown_cut = _render(lines, merge_regions(spans, len(lines)), target.rel)
    written = {n for a, b in plan.payload for n in range(a, b + 1)}
    # Lines a repair changed now have different hashes from what the session saw.
    for n in list(kept):
        if n in shown and kept[n] != shown[n]:
            kept.pop(n)
    _record(session, target.real, old, kept, kept_cut, shown, shown_cut, written)
    return "\n".join([head, *rows])


def _preview_rows(
    text: str, marks: tuple[dict[str, Any], ...], spans: list[tuple[int, int]]
) -> list[str]:
    lines = split_lines(text)
    marked = {m["line"] for m in marks}
    regions = merge_regions([*spans, *((n, n) for n in marked)], len(lines), context=1)
    rows: list[str] = []
    for i, (a, b) in enumerate(regions):
        if i:
            rows.append("   …")
        for n in range(a, min(b, a + MAX_SHOWN_ROWS) + 1):
            flag = "*" if n in marked else " "
            rows.append(f"{flag}{n:>4}|{lines[n - 1]}")
    return rows


# -- the patch ---------------------------------------------------------------------------------
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
    with call.ws.file_lock:
        targets = _targets(call, list(patch.sections))
        for t in targets:
            t.before = _load(t.real, t.rel, call.ws.jail)
        for t in targets:
            view = call.session.views.get(t.real)
            try:
                t.plan = plan_file(t.rel, t.before, t.ops, view, wide=MAX_LINE_CHARS)
            except PlanError as exc:
                raise ToolError(
                    "edit rejected: " + exc.message,
                    error=exc.kind,
                    path=exc.path,
                    line=exc.line,
                    files=_reject_files(targets, t, exc.message, exc.kind),
                ) from None
            t.language = language_for(t.rel)
            t.decision = decide(t.language, t.before, t.plan.after, t.plan.edited_lines, policy)
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
            write_many([(t.real, encode(_final(t))) for t in targets])
        except OSError as exc:
            where = f" ({exc.filename})" if exc.filename else ""
            raise ToolError(
                f"edit failed while writing the patched files: {exc.strerror or exc}{where}. "
                "Nothing was written (files already replaced were restored). Check the files "
                "and their folders, then send the patch again.",
                error="io",
                files=_reject_files(targets, None, f"write failed: {exc}", "io"),
            ) from None
    blocks = []
    files = []
    for t in targets:
        assert t.plan is not None and t.decision is not None
        text = _final(t)
        note = ""
        spans = list(t.plan.edited)
        if t.decision.repaired:
            note = f"Repaired delimiters ({t.decision.reason}): " + "; ".join(
                f"line {m['line']}, column {m['column']}: {m['note']}" for m in t.decision.marks
            )
            spans += [(n, n) for n in t.decision.changed_lines]
        elif t.decision.message:  # e.g. original_unparsed: written as patched, still broken
            note = f"Note ({t.decision.reason}): {t.decision.message}."
        old = call.session.views.get(t.real)
        blocks.append(_written_text(t, text, spans, call.session, old, header_note=note))
        files.append(
            file_change(
                t.rel,
                t.before,
                text,
                "written",
                added=t.plan.added,
                removed=t.plan.removed,
                reason=_reason(t),
                message=t.decision.message or None,
                marks=list(t.decision.marks) or None,
            )
        )
    return ToolResult.success(
        "\n\n".join(blocks),
        files=files,
        decisions=decisions,
        reason=_summary_reason(targets),
    )


def _final(t: _Target) -> str:
    assert t.decision is not None
    return t.decision.text


def _reason(t: _Target) -> str | None:
    return t.decision.reason if t.decision and t.language is not None else None


def _summary_reason(targets: list[_Target]) -> str | None:
    for t in targets:
        if t.decision and t.language is not None and t.decision.reason != "balanced":
            return t.decision.reason
    for t in targets:
        if t.language is not None:
            return _reason(t)
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
    candidates: list[str] = []
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
        cid = _new_candidate_id()
        candidates.append(cid)
        change = file_change(
            t.rel,
            t.before,
            d.text,
            "preview",
            added=t.plan.added,
            removed=t.plan.removed,
            candidate=cid,
            reason=d.reason,
            message=d.message,
            marks=list(d.marks),
        )
        files.append(change)
        while len(call.session.candidates) >= MAX_PENDING_CANDIDATES:
            call.session.candidates.pop(next(iter(call.session.candidates)))
        call.session.candidates[cid] = Candidate(
            id=cid,
            path=t.rel,
            real=t.real,
            disk_text=t.before,
            candidate_text=d.text,
            reason=d.reason,
            message=d.message,
            session_id=call.session.id,
            details={
                "file": change,
                "classification": d.classification,
                "language": d.language,
                "marks": list(d.marks),
                "added": t.plan.added,
                "removed": t.plan.removed,
                "edited": [list(s) for s in t.plan.edited],
                "payload": [list(s) for s in t.plan.payload],
                "segments": [list(s) for s in t.plan.segments],
                "changed_lines": list(d.changed_lines),
            },
        )
        why = (
            "you asked for a preview (repair='preview')"
            if d.reason == "policy_preview"
            else f"the repair is not safe to write unasked ({d.reason})"
        )
        rows = _preview_rows(d.text, d.marks, list(t.plan.edited))
        parts.append(
            f"Not written: {t.rel} — {d.message}.\n"
            f"Repair preview {cid} for {t.rel}: {why}. The candidate around your edit "
            "('*' marks lines the repair changed):\n" + "\n".join(rows) + "\n"
            f"To write this candidate exactly as shown: {accept_call(cid, t.rel)}\n"
            f"Or fix the delimiters in your patch and send it again (nothing was written, so "
            f"your anchors for {t.rel} are still valid)."
        )
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
            "candidates": candidates,
            "candidate": candidates[0],
            "reason": previews[0].decision.reason if previews[0].decision else None,
        },
    )
    return result


# -- accepting / rejecting a candidate ---------------------------------------------------------
def _find(call: Call, candidate_id: str) -> Candidate | None:
    own = call.session.candidates.get(candidate_id)
    return own if own is not None else call.ws.find_candidate(candidate_id)


def _drop(ws: Workspace, candidate_id: str) -> bool:
    found = False
    for session in list(ws.sessions.values()):
        if session.candidates.pop(candidate_id, None) is not None:
            found = True
    return found


def reject_candidate(ws: Workspace, candidate_id: str) -> bool:
    """Discard pending repair candidate ``candidate_id`` from whichever session holds it.

    The kernel calls this for the UI's Reject. Returns False when no such candidate is pending
    (already written, rejected or refused). Nothing on disk changes either way.
    """
    with ws.file_lock:
        return _drop(ws, candidate_id)


def _accept(call: Call, candidate_id: str) -> ToolResult:
    path = call.args.get("path")
    if not path:
        raise ToolError(
            f"accept_repair needs path, the candidate's file: {accept_call(candidate_id, 'PATH')} "
            "with PATH as the preview named it.",
            error="bad_arguments",
        )
    resolved = call.ws.jail.resolve(path, write=True)
    cand = _find(call, candidate_id)
    if cand is None:
        raise ToolError(
            f"accept_repair refused: no pending repair candidate {candidate_id!r} (it was "
            f"already written or rejected, or its session closed). Re-read {resolved.rel} and "
            "redo the edit.",
            error="no_candidate",
            candidate=candidate_id,
        )
    if cand.real != resolved.real:
        raise ToolError(
            f"accept_repair refused: candidate {candidate_id} is for {cand.path}, not "
            f"{resolved.rel}. Send {accept_call(candidate_id, cand.path)}.",
            error="wrong_path",
            candidate=candidate_id,
        )
    language = language_for(cand.path)
    details = cand.details
    with call.ws.file_lock:
        try:
            disk = _load(cand.real, cand.path, call.ws.jail)
        except ToolError:
            disk = None
        if disk != cand.disk_text:
            _drop(call.ws, candidate_id)
            message = (
                f"accept_repair refused: {cand.path} changed since preview {candidate_id} was "
                f"made, so the candidate would overwrite those changes. Nothing was written. "
                f"Re-read {cand.path} and redo the edit."
            )
            raise ToolError(
                message,
                error="stale_candidate",
                candidate=candidate_id,
                resolved={"candidate": candidate_id, "status": "refused"},
                files=[
                    file_change(
                        cand.path,
                        disk,
                        cand.candidate_text,
                        "rejected",
                        candidate=candidate_id,
                        reason="file_changed",
                        message=message,
                    )
                ],
            )
        problem = still_valid(language, cand.candidate_text)
        if problem is not None:
            _drop(call.ws, candidate_id)
            raise ToolError(
                f"accept_repair refused: candidate {candidate_id} for {cand.path} no longer "
                f"parses ({problem}). Nothing was written. Re-read {cand.path} and redo the edit.",
                error="invalid_candidate",
                candidate=candidate_id,
                resolved={"candidate": candidate_id, "status": "refused"},
            )
        try:
            write_atomic(cand.real, encode(cand.candidate_text))
        except OSError as exc:
            raise ToolError(
                f"accept_repair failed writing {cand.path}: {exc.strerror or exc}. Nothing was "
                "written; the candidate is still pending, so the call can be retried.",
                error="io",
                candidate=candidate_id,
            ) from None
        _drop(call.ws, candidate_id)
    plan = FilePlan(
        path=cand.path,
        before=cand.disk_text,
        after=cand.candidate_text,
        lines=tuple(split_lines(cand.candidate_text)),
        added=int(details.get("added", 0)),
        removed=int(details.get("removed", 0)),
        edited=tuple(tuple(s) for s in details.get("edited", [])),
        payload=tuple(tuple(s) for s in details.get("payload", [])),
        segments=tuple(tuple(s) for s in details.get("segments", [])),
        crlf=False,
        old_count=len(split_lines(cand.disk_text)),
    )
    target = _Target(cand.real, cand.path, plan=plan)
    spans = [*plan.edited, *((n, n) for n in details.get("changed_lines", []))]
    note = f"Accepted repair candidate {candidate_id} ({cand.reason}): " + "; ".join(
        f"line {m['line']}, column {m['column']}: {m['note']}" for m in details.get("marks", [])
    )
    owner = call.ws.sessions.get(cand.session_id)
    if owner is not None and owner is not call.session:
        _written_text(target, cand.candidate_text, spans, owner, owner.views.get(cand.real))
    text = _written_text(
        target,
        cand.candidate_text,
        spans,
        call.session,
        call.session.views.get(cand.real),
        header_note=note,
    )
    change = file_change(
        cand.path,
        cand.disk_text,
        cand.candidate_text,
        "written",
        added=plan.added,
        removed=plan.removed,
        candidate=candidate_id,
        reason=cand.reason,
        message=cand.message,
        marks=list(details.get("marks", [])) or None,
    )
    return ToolResult.success(
        text,
        files=[change],
        candidate=candidate_id,
        reason=cand.reason,
        resolved={"candidate": candidate_id, "status": "written"},
    )


# -- the tool ----------------------------------------------------------------------------------
def _run(call: Call) -> ToolResult:
    accept = call.args.get("accept_repair")
    patch_text = call.args.get("input")
    if accept:
        if patch_text:
            raise ToolError(
                "edit takes either input (a patch) or accept_repair (with path), not both. "
                "Send the accept first, then the patch.",
                error="bad_arguments",
            )
        return _accept(call, accept)
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
        "accept_repair=ID and path=PATH; it is refused if the file changed since the preview."
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
            "path": {"type": "string", "description": "With accept_repair: the candidate's file."},
        },
        "additionalProperties": False,
    },
    run=_run,
    main_arg="input",
    aliases={"patch": "input", "candidate": "accept_repair"},
    mutates=True,
)
