"""Repair candidates: a repair ``edit`` would not write unasked, kept pending as a proposal
(``kli.tools.core.proposal``) until it is accepted (written) or rejected (discarded).

Lifecycle: ``propose`` stores a candidate — with its plan, the ``FilePlan`` and the
``RepairDecision`` as made — in the calling session when the patch pipeline (``edit.py``)
returns a preview; ``accept`` writes it (``edit`` with ``accept_repair``); ``edit`` with
``reject_repair`` discards it (``kli.tools.core.approval.reject``, one path for every kind of
proposal). Every end of a candidate is one ``Workspace.decide`` (one ``resolved`` event, whoever
decided); its ``Decision`` is also returned in ``details.resolved``. A candidate is written only
if its file still holds exactly the text the preview was computed against and the candidate
still parses.

- Candidate ids (``c1``, ``c2``…) are unique in the process. Lookup is ``Workspace.find_candidate``
  (every session: a host such as the kernel's UI comm can accept on the owner's behalf); a
  missing id is always ``unknown_candidate`` (``unknown``). ``path`` must name the candidate's
  file.
- A session keeps at most ``MAX_PENDING_CANDIDATES``; beyond that the oldest is decided
  ``discarded``.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kli.tools.core.atomic import Stale, write_atomic
from kli.tools.core.changes import file_change
from kli.tools.core.proposal import (
    ACCEPTED,
    MAX_PENDING_CANDIDATES,
    REFUSED,
    WRITTEN,
    Decision,
    Proposal,
    unknown,
)
from kli.tools.core.registry import Call
from kli.tools.core.result import ToolError, ToolResult
from kli.tools.core.session import Session
from kli.tools.core.textfile import encode, split_lines
from kli.tools.file import cellview
from kli.tools.file.plan import MAX_SHOWN_ROWS, FilePlan, merge_regions
from kli.tools.file.repair.decide import RepairDecision, language_for, still_valid
from kli.tools.file.target import load_text, written_report
from kli.tools.notebook import address

if TYPE_CHECKING:
    from kli.tools.core.workspace import Workspace

KIND = "repair"  # Proposal.kind of a repair candidate

_candidate_ids = itertools.count(1)


@dataclass(frozen=True)
class RepairPlan:
    """A candidate's plan, kept as the patch pipeline made it: the patch applied in memory and
    the repair decision (its text is what accepting writes)."""

    file: FilePlan
    repair: RepairDecision


def not_a_repair(call: Call, proposal: Proposal) -> ToolError:
    """The refusal of ``edit accept_repair`` naming a held call: a person decides it (in the
    activity panel, the widget or ``%kli accept``), whatever the approval mode is now; nothing
    is written and it stays pending for them. Worded for the model when an agent asked."""
    tool = getattr(proposal.plan, "tool", proposal.kind)
    pid = proposal.id
    if call.source == "agent":  # approval.HELD_SOURCE
        text = (
            f"accept_repair refused: {pid} is not a repair preview but a {tool} call held for a "
            f"person's review, and only a person decides it (in the notebook's kli activity "
            f"panel). Nothing was written, and {pid} is still pending for them. Go on with other "
            f"work, or wait for the decision: await_decision id='{pid}' timeout=60."
        )
    else:
        text = (
            f"accept_repair takes repair previews; {pid} is a held {tool} call. Accept it with "
            f"%kli accept {pid}, or in the kli activity panel. Nothing was written."
        )
    return ToolError(text, error="held_call", candidate=pid)


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
    ws: Workspace,
    session: Session,
    rel: str,
    real: str,
    before: str,
    plan: FilePlan,
    d: RepairDecision,
    place: dict[str, Any] | None = None,
) -> tuple[str, dict[str, Any], str]:
    """Store a pending candidate for one file of a previewed patch in ``session``.

    Returns its id, its FILE_CHANGE (status ``preview``) and the preview text for the model,
    which ends with the exact call that writes it. ``place``: extra FILE_CHANGE facts (a cell's
    ``cell_index``).
    """
    cid = f"c{next(_candidate_ids)}"
    change = file_change(
        rel,
        before,
        # a cell's candidate is shown as the source Accept writes (no final newline it lacks)
        d.text if address.cell_of(real) is None else cellview.cell_source(d.text, before),
        "preview",  # counted from the texts: the repair may change lines the plan did not
        candidate=cid,
        reason=d.reason,
        message=d.message,
        marks=list(d.marks),
        **(place or {}),
    )
    ws.hold(session, Proposal(
        id=cid,
        kind=KIND,
        path=rel,
        real=real,
        session_id=session.id,
        before=before,
        after=d.text,
        reason=d.reason,
        message=d.message,
        change=change,
        plan=RepairPlan(plan, d),
    ), MAX_PENDING_CANDIDATES)
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


def _refuse(call: Call, cand: Proposal, reason: str, message: str, **details: Any) -> ToolError:
    """Decide ``cand`` refused (``reason`` is the error code) and return the error to raise."""
    decision = Decision(REFUSED, reason, call.source, message)
    call.ws.decide(cand, decision)
    return ToolError(
        message,
        error=reason,
        candidate=cand.id,
        resolved=decision.to_json(cand.id),
        **details,
    )


def _load_cell(call: Call, cell: tuple[str, str]) -> tuple[Any, int, str | None]:
    """The notebook of a cell candidate, the cell's index and its source (None: gone)."""
    loaded = cellview.load(call, call.ws.jail.rel(cell[0]), verb="accept_repair", write=True)
    index = loaded.nb.index_of(cell[1])
    if index is None:
        return loaded, -1, None
    return loaded, index, loaded.nb.source(index)


def accept(call: Call, candidate_id: str) -> ToolResult:
    """``edit`` with ``accept_repair``: write candidate ``candidate_id`` to ``call.args["path"]``.
    Only a repair preview: a held call (approval) is a person's to decide, never this call's."""
    held = call.ws.find_candidate(candidate_id)
    if held is not None and (held.kind != KIND or not isinstance(held.plan, RepairPlan)):
        raise not_a_repair(call, held)
    path = call.args.get("path")
    if not path:
        raise ToolError(
            f"accept_repair needs path, the candidate's file: {accept_call(candidate_id, 'PATH')} "
            "with PATH as the preview named it.",
            error="bad_arguments",
        )
    nb_path, cell_id = address.split(path)
    resolved = call.ws.jail.resolve(nb_path, write=True)
    real = resolved.real if cell_id is None else address.key(resolved.real, cell_id)
    cand = call.ws.find_candidate(candidate_id)
    if cand is None:
        raise unknown(candidate_id, f"Re-read {resolved.rel} and redo the edit.")
    if cand.real != real:
        raise ToolError(
            f"accept_repair refused: candidate {candidate_id} is for {cand.path}, not "
            f"{resolved.rel}. Send {accept_call(candidate_id, cand.path)}.",
            error="wrong_path",
            candidate=candidate_id,
        )
    plan: RepairPlan = cand.plan
    cell = address.cell_of(cand.real)
    with call.ws.writing(
        [cand.real if cell is None else cell[0]], tool="accept_repair", rel=cand.path
    ):
        loaded: Any = None
        index = -1
        disk: str | None
        try:
            if cell is None:
                disk = load_text(cand.real, cand.path, call.ws.jail)
            else:
                loaded, index, disk = _load_cell(call, cell)
        except ToolError:
            disk = None
        if disk != cand.before:
            message = (
                f"accept_repair refused: {cand.path} changed since preview {candidate_id} was "
                f"made, so the candidate would overwrite those changes. Nothing was written. "
                f"Re-read {cand.path} and redo the edit."
            )
            files = [
                file_change(
                    cand.path,
                    disk,
                    cand.after,
                    "rejected",
                    candidate=candidate_id,
                    reason="file_changed",
                    message=message,
                )
            ]
            raise _refuse(call, cand, "stale_candidate", message, files=files)
        problem = still_valid(language_for(cand.path), cand.after)
        if problem is not None:
            raise _refuse(
                call,
                cand,
                "invalid_candidate",
                f"accept_repair refused: candidate {candidate_id} for {cand.path} no longer "
                f"parses ({problem}). Nothing was written. Re-read {cand.path} and redo the edit.",
            )
        try:
            if cell is None:
                write_atomic(cand.real, encode(cand.after), encode(cand.before))
            else:
                nb = loaded.nb.copy()
                nb.assign_ids()  # before the change: each id is the stand-in read showed
                nb.set_source(index, cellview.cell_source(cand.after, cand.before))
                call.ws.notebooks.commit([(cell[0], nb)])
        except Stale as exc:  # changed between the check above and the replace
            raise _refuse(
                call, cand, "stale_candidate", exc.refusal("accept_repair", cand.path)
            ) from None
        except OSError as exc:
            raise ToolError(
                f"accept_repair failed writing {cand.path}: {exc.strerror or exc}. Nothing was "
                "written; the candidate is still pending, so the call can be retried.",
                error="io",
                candidate=candidate_id,
            ) from None
        repair = plan.repair
        spans = [*plan.file.edited, *((n, n) for n in repair.changed_lines)]
        note = f"Accepted repair candidate {candidate_id} ({cand.reason}): " + "; ".join(
            f"line {m['line']}, column {m['column']}: {m['note']}" for m in repair.marks
        )
        owner = call.ws.sessions.get(cand.session_id)
        if owner is not None and owner is not call.session:
            written_report(cand.path, cand.real, plan.file, cand.after, spans, owner)
        text = written_report(
            cand.path, cand.real, plan.file, cand.after, spans, call.session, header_note=note
        )
        decision = Decision(WRITTEN, ACCEPTED, call.source, text)
        call.ws.decide(cand, decision)
    change = file_change(
        cand.path,
        cand.before,
        cand.after,
        "written",  # counted from the texts, as its preview was
        candidate=candidate_id,
        reason=cand.reason,
        message=cand.message,
        marks=list(repair.marks) or None,
    )
    return ToolResult.success(
        text,
        files=[change],
        candidate=candidate_id,
        reason=cand.reason,
        resolved=decision.to_json(candidate_id),
    )
