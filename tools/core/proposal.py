"""A proposal: a change a tool made but did not write, kept pending until it is decided.

Two kinds share the shape (and one queue): a repair candidate (``tools/file/candidates.py``)
and a held call (``tools/core/approval.py``: an agent's mutating call under approval mode
``review``). A proposal carries its own plan (the kind's
plan object, kept as made, never flattened), its status, and once decided its ``Decision``:
data with a code and a reason, never prose for a reader to parse.

``Workspace.decide(proposal, decision)`` is the one way a proposal stops being pending: it
drops it from every session and reports ONE ``resolved`` event to the workspace's listeners,
whoever decided (an agent's ``edit accept_repair``, a magic, the UI, the widget, a closed
session, the per-session bound).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from kli.tools.core.result import ToolError

PENDING = "pending"
WRITTEN = "written"
REJECTED = "rejected"
REFUSED = "refused"
DECISION_CODES = (WRITTEN, REJECTED, REFUSED)

# Decision reasons besides a refusal's error code.
ACCEPTED = "accepted"  # written on request
REJECTED_ON_REQUEST = "rejected"  # discarded on request (the UI's or widget's Reject)
DISCARDED = "discarded"  # the session's bound dropped it, or the expired queue's bound
KERNEL = "kernel"  # ``by`` for a proposal the host discarded itself

# The queue, both kinds alike: a session keeps at most this many pending proposals (the oldest
# is decided ``discarded`` beyond it; not in the spec), and an id that is not pending is always
# this error (``unknown``).
MAX_PENDING_CANDIDATES = 32
UNKNOWN = "unknown_candidate"


def unknown(candidate_id: str, retry: str = "Re-run the edit to get a new preview.") -> ToolError:
    """The error for a candidate id that is not pending, from every host."""
    return ToolError(
        f"no pending repair candidate {candidate_id!r}: it was already written, rejected or "
        f"discarded (its session closed). {retry}",
        error=UNKNOWN,
        candidate=candidate_id,
    )


@dataclass(frozen=True)
class Decision:
    """How a proposal was resolved. ``code`` is one of ``DECISION_CODES``; ``reason`` refines
    it (``accepted``, ``rejected``, ``discarded``, or a refusal's error code such as
    ``stale_candidate``); ``by`` names who decided (a call's source, or ``kernel``); ``text`` is
    what the decider was told; ``note`` a short note from the person for the agent (a Reject's
reason); ``change`` the recorded change an Accept wrote (``kli.tools.core.undo``), so a UI
offers its Undo on the proposal it decided."""

    code: str
    reason: str
    by: str
    text: str = ""
    note: str = ""
    change: str = ""

    def to_json(self, proposal_id: str) -> dict[str, Any]:
        out = {
            "candidate": proposal_id,
            "status": self.code,
            "reason": self.reason,
            "by": self.by,
        }
        if self.note:
            out["note"] = self.note
        if self.change:
            out["change"] = self.change
        return out


@dataclass
class Proposal:
    """One pending change. ``before`` is the disk text it was computed against, ``after`` the
    text it would write; ``change`` its FILE_CHANGE (status ``preview``); ``plan`` the kind's
    own plan object (a repair: ``candidates.RepairPlan``; a held call: ``approval.CallPlan``).
    ``expired`` is set (``expired — LABEL disconnected``) once its session closed while it was
    pending: it stays in the queue (``Workspace.expired``) and can still be decided by hand."""

    id: str
    kind: str
    path: str  # root-relative, as shown
    real: str
    session_id: str
    before: str
    after: str
    reason: str
    message: str
    change: dict[str, Any] = field(default_factory=dict)
    plan: Any = None
    status: str = PENDING
    decision: Decision | None = None
    created: float = field(default_factory=time.time)
    expired: str = ""
    session_label: str = ""
