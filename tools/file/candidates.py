"""Repair candidates: a repair ``edit`` would not write unasked, kept pending until it is
accepted (written) or rejected (discarded).

Lifecycle: ``propose`` stores a candidate in the calling session when the patch pipeline
(``edit.py``) returns a preview; ``accept`` writes it (``edit`` with ``accept_repair``);
``reject_candidate`` discards it. A candidate is written only if its file still holds exactly
the text the preview was computed against and the candidate still parses.

- Candidate ids (``c1``, ``c2``…) are unique in the process. ``accept`` looks in the calling
  session first, then in every session of the workspace (so a host such as the kernel's UI comm
  can accept on the owner's behalf); ``path`` must name the candidate's file.
- A session keeps at most ``MAX_PENDING_CANDIDATES``; the oldest is dropped beyond that.
"""

from __future__ import annotations

import itertools
import json
from typing import TYPE_CHECKING, Any

from kli.tools.core.atomic import write_atomic
from kli.tools.core.changes import file_change
from kli.tools.core.registry import Call
from kli.tools.core.result import ToolError, ToolResult
from kli.tools.core.session import Candidate, Session
from kli.tools.core.textfile import encode, split_lines
from kli.tools.file.plan import MAX_SHOWN_ROWS, FilePlan, merge_regions
from kli.tools.file.repair.decide import RepairDecision, language_for, still_valid
from kli.tools.file.target import load_text, written_report

if TYPE_CHECKING:
    from kli.tools.core.workspace import Workspace

MAX_PENDING_CANDIDATES = 32  # per session; the oldest is dropped beyond this (not in the spec)

_candidate_ids = itertools.count(1)


def accept_call(candidate_id: str, path: str) -> str:
    """The exact call that writes a candidate, as the model is told to send it."""
    return "edit " + json.dumps({"accept_repair": candidate_id, "path": path})


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


def propose(
    session: Session, rel: str, real: str, before: str, plan: FilePlan, d: RepairDecision
) -> tuple[str, dict[str, Any], str]:
    """Store a pending candidate for one file of a previewed patch in ``session``.

    Returns its id, its FILE_CHANGE (status ``preview``) and the preview text for the model,
    which ends with the exact call that writes it.
    """
    cid = f"c{next(_candidate_ids)}"
    change = file_change(
        rel,
        before,
        d.text,
        "preview",
        added=plan.added,
        removed=plan.removed,
        candidate=cid,
        reason=d.reason,
        message=d.message,
        marks=list(d.marks),
    )
    while len(session.candidates) >= MAX_PENDING_CANDIDATES:
        session.candidates.pop(next(iter(session.candidates)))
    session.candidates[cid] = Candidate(
        id=cid,
        path=rel,
        real=real,
        disk_text=before,
        candidate_text=d.text,
        reason=d.reason,
        message=d.message,
        session_id=session.id,
        details={
            "file": change,
            "classification": d.classification,
            "language": d.language,
            "marks": list(d.marks),
            "added": plan.added,
            "removed": plan.removed,
            "edited": [list(s) for s in plan.edited],
            "payload": [list(s) for s in plan.payload],
            "segments": [list(s) for s in plan.segments],
            "changed_lines": list(d.changed_lines),
        },
    )
    why = (
        "you asked for a preview (repair='preview')"
        if d.reason == "policy_preview"
        else f"the repair is not safe to write unasked ({d.reason})"
    )
    rows = _preview_rows(d.text, d.marks, list(plan.edited))
    text = (
        f"Not written: {rel} — {d.message}.\n"
        f"Repair preview {cid} for {rel}: {why}. The candidate around your edit "
        "('*' marks lines the repair changed):\n" + "\n".join(rows) + "\n"
        f"To write this candidate exactly as shown: {accept_call(cid, rel)}\n"
        f"Or fix the delimiters in your patch and send it again (nothing was written, so "
        f"your anchors for {rel} are still valid)."
    )
    return cid, change, text


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


def accept(call: Call, candidate_id: str) -> ToolResult:
    """``edit`` with ``accept_repair``: write candidate ``candidate_id`` to ``call.args["path"]``."""
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
            disk = load_text(cand.real, cand.path, call.ws.jail)
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
    spans = [*plan.edited, *((n, n) for n in details.get("changed_lines", []))]
    note = f"Accepted repair candidate {candidate_id} ({cand.reason}): " + "; ".join(
        f"line {m['line']}, column {m['column']}: {m['note']}" for m in details.get("marks", [])
    )
    owner = call.ws.sessions.get(cand.session_id)
    if owner is not None and owner is not call.session:
        written_report(cand.path, cand.real, plan, cand.candidate_text, spans, owner)
    text = written_report(
        cand.path, cand.real, plan, cand.candidate_text, spans, call.session, header_note=note
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
