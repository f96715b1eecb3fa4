"""THE definition of the kernel's wire protocol (docs/protocol.md): constants and every message.

Typed Python definitions, not JSON Schema files: the kernel builds its messages from them
(``message``), so the definition is what runs; the JSON Schema (``json_schema``, used by the
tests to validate what the kernel sends), the TypeScript types and constants of the extension
(``labextension/src/protocol.gen.ts``) and the tables of docs/protocol.md are generated from it
by ``scripts/gen_docs.py`` (``--check`` in the test suite). Values that tools/ owns are taken
from there, not restated: the request envelope's ops and codes (``kli.tools.core.request``, which
``kli serve --stdio`` shares), file statuses (``kli.tools.core.changes``) and decision codes
(``kli.tools.core.proposal``).

Light on purpose: ``kli.kernel`` imports it at start-up.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from kli.tools.core import approval, request, sandbox, undo
from kli.tools.core.changes import STATUSES as FILE_STATUSES
from kli.tools.core.proposal import DECISION_CODES, UNKNOWN
from kli.tools.core.registry import SOURCES

# -- constants ------------------------------------------------------------------------------
PROTOCOL_VERSION = request.PROTOCOL_VERSION
AGENT_TARGET = request.AGENT_TARGET
UI_TARGET = "kli.ui"
KERNEL_NAME = "kli"  # the kernelspec a notebook names to get this kernel (kernel/kernelspec)
SANDBOXED_KERNEL_NAME = "kli-sandboxed"  # the same kernel started in the box (kernel/sandbox.py)
KLI_KERNEL_NAMES = (KERNEL_NAME, SANDBOXED_KERNEL_NAME)  # a notebook on either has kli's tools
COMM_TARGETS = (AGENT_TARGET, UI_TARGET)
EDIT_MIME = "application/vnd.kli.edit+json"
EVENT_RING = 500  # recent events the kernel keeps for a UI that opens late
DEFAULT_REPLAY = 200  # how many of them a hello replays by default
UI_CHANGES_LIMIT = 200  # changes a `changes` request answers by default
RING_TEXT_LIMIT = 256 * 1024  # file texts longer than this are dropped from replayed events
UNKNOWN_CANDIDATE = UNKNOWN  # a proposal id that is not pending (kli.tools.core.proposal)
PANEL_TEXT = undo.PANEL_TEXT  # a result's words for the person at the panel
EVENT_SOURCES = SOURCES  # who made a call (kli.tools.core.registry)
RESOLVED_BY = (*EVENT_SOURCES, "kernel")
MODEL_TIMEOUT = 10.0  # seconds the kernel waits for an open notebook tab's model_reply
MODEL_ERRORS = ("stale", "not_open", "failed")  # error codes of a model_reply

# Error codes of an ``error`` reply, and when each is sent.
REQUEST_ERRORS = {
    request.BAD_JSON: "`data` is not a JSON object (a string, a list…); on `serve --stdio` also "
    "a line that is not JSON",
    request.BAD_REQUEST: "missing or mistyped `id`, `tool`, `args`, `candidate`, or an unknown "
    "`profile`",
    request.UNKNOWN_OP: "`op` is not one the target serves",
    "interrupted": "a KeyboardInterrupt ended the request outside a tool that handles it",
    "internal": "a bug in the kernel's handler (the kernel stays up)",
}

# Constants the extension gets, in the order docs/protocol.md lists them: name -> (value, meaning)
CONSTANTS: dict[str, tuple[Any, str]] = {
    "PROTOCOL_VERSION": (PROTOCOL_VERSION, "`v` of every message; a message without `v` is v1"),
    "AGENT_TARGET": (AGENT_TARGET, "comm target an agent opens"),
    "UI_TARGET": (UI_TARGET, "comm target the extension opens"),
    "EDIT_MIME": (EDIT_MIME, "MIME type of a magic's edit / write result"),
    "EVENT_RING": (EVENT_RING, "recent events the kernel keeps"),
    "DEFAULT_REPLAY": (DEFAULT_REPLAY, "events a `kli.ui` hello replays by default"),
    "RING_TEXT_LIMIT": (RING_TEXT_LIMIT, "file texts longer than this (characters) are "
                        "dropped from replayed events"),
    "UNKNOWN_CANDIDATE": (UNKNOWN_CANDIDATE, "`details.error` for a candidate id not pending"),
    "PANEL_TEXT": (PANEL_TEXT, "`details` key of a result's words for the person at the panel, "
                   "shown instead of its `text` (written for the agent) when present"),
    "UI_CHANGES_LIMIT": (UI_CHANGES_LIMIT, "changes a `changes` request answers by default"),
    "MODEL_TIMEOUT": (MODEL_TIMEOUT, "seconds the kernel waits for a tab's `model_reply`"),
}


# -- the type language ------------------------------------------------------------------------
class Type:
    def schema(self) -> dict[str, Any]:
        raise NotImplementedError

    def ts(self) -> str:
        raise NotImplementedError

    def doc(self) -> str:
        return self.ts()


@dataclass(frozen=True)
class Prim(Type):
    json_type: str | None  # None: any JSON value
    ts_type: str

    def schema(self) -> dict[str, Any]:
        return {"type": self.json_type} if self.json_type else {}

    def ts(self) -> str:
        return self.ts_type

    def doc(self) -> str:
        return self.json_type or "any"


STR = Prim("string", "string")
INT = Prim("integer", "number")
NUM = Prim("number", "number")
BOOL = Prim("boolean", "boolean")
NULL = Prim("null", "null")
ANY = Prim(None, "unknown")


@dataclass(frozen=True)
class Lit(Type):
    value: str

    def schema(self) -> dict[str, Any]:
        return {"const": self.value}

    def ts(self) -> str:
        return f"'{self.value}'"

    def doc(self) -> str:
        return f"`{json.dumps(self.value)}`"


@dataclass(frozen=True)
class Enum(Type):
    """A named set of strings; ``open``: other strings are accepted too (newer kernels)."""

    name: str
    values: tuple[str, ...]
    open: bool = False

    def schema(self) -> dict[str, Any]:
        return {"type": "string"} if self.open else {"enum": list(self.values)}

    def ts(self) -> str:
        return f"{self.name} | string" if self.open else self.name

    def doc(self) -> str:
        values = " | ".join(f"`{v}`" for v in self.values)
        return values + (" (or another string)" if self.open else "")


@dataclass(frozen=True)
class ListOf(Type):
    item: Type

    def schema(self) -> dict[str, Any]:
        return {"type": "array", "items": self.item.schema()}

    def ts(self) -> str:
        inner = self.item.ts()
        return f"({inner})[]" if " " in inner else f"{inner}[]"

    def doc(self) -> str:
        return f"list of {self.item.doc()}"


@dataclass(frozen=True)
class MapOf(Type):
    value: Type

    def schema(self) -> dict[str, Any]:
        return {"type": "object", "additionalProperties": self.value.schema()}

    def ts(self) -> str:
        return f"Record<string, {self.value.ts()}>"

    def doc(self) -> str:
        return "object"


@dataclass(frozen=True)
class Ref(Type):
    name: str

    def schema(self) -> dict[str, Any]:
        return {"$ref": f"#/$defs/{self.name}"}

    def ts(self) -> str:
        return f"I{self.name}"

    def doc(self) -> str:
        return f"[{self.name}](#{self.name.lower()})"


@dataclass(frozen=True)
class OneOf(Type):
    options: tuple[Type, ...]

    def schema(self) -> dict[str, Any]:
        return {"anyOf": [o.schema() for o in self.options]}

    def ts(self) -> str:
        return " | ".join(o.ts() for o in self.options)

    def doc(self) -> str:
        return " or ".join(o.doc() for o in self.options)


def nullable(t: Type) -> Type:
    return OneOf((t, NULL))


ID = OneOf((STR, INT))


@dataclass(frozen=True)
class Field:
    name: str
    type: Type
    doc: str = ""
    required: bool = True


@dataclass(frozen=True)
class Shape:
    """An object of the protocol. ``op`` set: a message (``v`` and ``op`` come first);
    ``sender`` (``kernel`` or the client) and ``target`` say where it travels; ``extra``:
    other keys are allowed (receivers ignore them)."""

    name: str
    doc: str
    fields: tuple[Field, ...]
    op: str | None = None
    target: str | None = None
    sender: str = "kernel"
    extra: bool = False
    all_fields: tuple[Field, ...] = field(init=False)

    def __post_init__(self) -> None:
        head: tuple[Field, ...] = ()
        if self.op is not None:
            head = (
                Field("v", INT, "protocol version (absent: 1)", required=False),
                Field("op", Lit(self.op), "the message kind"),
            )
        object.__setattr__(self, "all_fields", head + self.fields)

    def schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "description": self.doc,
            "properties": {f.name: f.type.schema() for f in self.all_fields},
            "required": [f.name for f in self.all_fields if f.required],
            "additionalProperties": self.extra,
        }


# -- enums ----------------------------------------------------------------------------------
FileStatus = Enum("FileStatus", FILE_STATUSES, open=True)
ResolvedStatus = Enum("ResolvedStatus", DECISION_CODES)
EventSource = Enum("EventSource", EVENT_SOURCES, open=True)
ResolvedBy = Enum("ResolvedBy", RESOLVED_BY, open=True)
RequestError = Enum("RequestError", tuple(REQUEST_ERRORS), open=True)  # the UI adds its own
ApprovalMode = Enum("ApprovalMode", approval.MODES)
ApprovalKind = Enum("ApprovalKind", approval.ACTIONS, open=True)
ApprovalOrigin = Enum("ApprovalOrigin", approval.ORIGINS)
ProposalKind = Enum("ProposalKind", ("repair", approval.KIND), open=True)
BulkAction = Enum("BulkAction", approval.BULK_ACTIONS)
ModelError = Enum("ModelError", MODEL_ERRORS, open=True)
SandboxMode = Enum("SandboxMode", sandbox.MODES)
SandboxNetwork = Enum("SandboxNetwork", sandbox.NETWORKS)
SandboxState = Enum("SandboxState", sandbox.STATES, open=True)
ENUMS = (FileStatus, ResolvedStatus, EventSource, ResolvedBy, RequestError, ApprovalMode,
         ApprovalKind, ApprovalOrigin, ProposalKind, BulkAction, ModelError, SandboxMode,
         SandboxNetwork, SandboxState)

# -- shapes ---------------------------------------------------------------------------------
MARK = Shape("Mark", "A character range in FILE.after that a repair changed.", (
    Field("from", INT, "offset into `after` in code points (as Python counts)"),
    Field("to", INT, "end offset; `from == to` marks a point (a deletion)"),
    Field("note", STR, "what the repair did, e.g. \"inserted ')'\"", required=False),
), extra=True)

FILE = Shape("FileChange", "One file's change (`kli.tools.core.changes.file_change`), in "
             "`details.files` of every file-changing tool.", (
    Field("path", STR, "root-relative path"),
    Field("status", FileStatus),
    Field("language", nullable(STR), "language of the path, when known", required=False),
    Field("added", INT, "lines added", required=False),
    Field("removed", INT, "lines removed", required=False),
    Field("before", nullable(STR), "disk text before the call (null: a new file, or too large)",
          required=False),
    Field("after", nullable(STR), "text after it (the candidate for a preview)", required=False),
    Field("too_large", BOOL, "true when the texts were dropped for size", required=False),
    Field("candidate", nullable(STR), "the candidate id of a preview", required=False),
    Field("reason", nullable(STR), "named reason, e.g. `repair_outside_edit`", required=False),
    Field("message", nullable(STR), "human-readable reason", required=False),
    Field("marks", ListOf(Ref("Mark")), "ranges in `after` a repair changed", required=False),
    Field("detected", BOOL, "found by change detection (a watch, or a tree walk) after a `bash` / `ws_shell` / `eval` call "
          "(not reported by a file tool)", required=False),
    Field("change_kind", STR, "of a detected file: `created`, `modified` or `deleted`",
          required=False),
    Field("cell_index", INT, "a cell (`path` is `NB#CELL_ID`): its position in the notebook, "
          "from 1 (where it was, for a deleted cell)", required=False),
), extra=True)

IMAGE = Shape("Image", "An image a result hands a model that takes images (`look`): its bytes as "
              "base64 here (the JSON transport), never in the result's `text`.", (
    Field("mime", STR, "`image/png` or `image/jpeg` (the encoding sent)"),
    Field("width", INT, "pixels sent"),
    Field("height", INT, "pixels sent"),
    Field("label", STR, "what it shows, e.g. `nb.ipynb#ID output [2]`, `fig`"),
    Field("data", STR, "the image, base64"),
    Field("thumbnail", STR, "a small PNG (at most 160 px), base64", required=False),
    Field("thumbnail_mime", STR, "the thumbnail's type", required=False),
))

EVENT_IMAGE = Shape("EventImage", "What a call event says of an image the model was handed "
                    "(`look`): its size and a thumbnail for the panel, never the image.", (
    Field("mime", STR),
    Field("width", INT),
    Field("height", INT),
    Field("bytes", INT, "bytes of the image the model was sent"),
    Field("label", STR, "what it shows"),
    Field("thumbnail", STR, "a `data:` URL of a small PNG (at most 160 px)", required=False),
))

EVENT = Shape("ToolEvent", "One tool call, from any source.", (
    Field("kind", Lit("call")),
    Field("id", STR, "event id (`e17`)"),
    Field("time", NUM, "Unix time in seconds", required=False),
    Field("tool", STR),
    Field("args", MapOf(ANY), "the call's arguments", required=False),
    Field("session", STR, "session id", required=False),
    Field("session_label", STR, required=False),
    Field("source", EventSource, required=False),
    Field("ok", BOOL),
    Field("text", STR, "the result text", required=False),
    Field("details", MapOf(ANY), "the result details; `files`: list of FileChange; `change`: "
          "the id of the recorded change (undo); `detection`: the tree walk's bounds and whether "
          "it was complete", required=False),
    Field("duration_ms", NUM, required=False),
    Field("images", ListOf(Ref("EventImage")), "the images the result handed the model "
          "(`look`)", required=False),
))

HELD_SOURCE = Shape("HeldSource", "What a held shell or eval call runs beyond its arguments "
                    "(`kli.tools.core.approval.source_entry`): Accept runs exactly this, or is "
                    "refused naming `what` when it changed since.", (
    Field("what", STR, "what it is, as the person reads it: `nb.ipynb#ID`, `module m (m.py)`"),
    Field("source", STR, "its text"),
    Field("sha256", STR, "the sha256 (hex) of its bytes"),
    Field("cell", STR, "a cell: its id", required=False),
    Field("type", STR, "a cell: its `cell_type` (only a `code` cell runs)", required=False),
    Field("path", STR, "a module: its file (root-relative, or absolute outside the root)",
          required=False),
))

CANDIDATE = Shape("Candidate", "A pending proposal: a repair preview, or an agent's call held "
                  "for review (approval mode). One queue, one look.", (
    Field("candidate", STR, "its id (`c2`: a repair preview; `p3`: a held call)"),
    Field("kind", ProposalKind, "`repair` or `call`", required=False),
    Field("path", STR, "the (first) file it changes; empty for a command"),
    Field("session", STR, "the session that owns it", required=False),
    Field("session_label", STR, required=False),
    Field("reason", nullable(STR), "why it was not written, e.g. `form_count_changed`",
          required=False),
    Field("message", nullable(STR), required=False),
    Field("file", Ref("FileChange"), "its FILE (status `preview`)", required=False),
    Field("files", ListOf(Ref("FileChange")), "a held file call: every file it would change, "
          "with the exact texts Accept writes", required=False),
    Field("tool", STR, "a held call: the tool", required=False),
    Field("action", ApprovalKind, "a held call: its kind of action", required=False),
    Field("command", nullable(STR), "a held shell or eval call: what Accept runs (its "
          "arguments, then under `Runs exactly:` each of its `sources`)",
          required=False),
    Field("args", MapOf(ANY), "a held call: its arguments", required=False),
    Field("sources", ListOf(Ref("HeldSource")), "a held `run_cells` / `redefine reload`: each "
          "cell or module file it runs, with its sha256 (also shown in `command`)",
          required=False),
    Field("steps", ListOf(STR), "a held file call: what it does besides writing the files' "
          "texts (folders made or removed, moves, deletes, `git mv`), as the person reads it",
          required=False),
    Field("expired", STR, "set once its session closed: `expired — LABEL disconnected`",
          required=False),
    Field("time", NUM, "when it was made (Unix seconds)", required=False),
))

DECISION = Shape("ResolvedDecision", "How a candidate was decided: `details.resolved` of the "
                 "result that decided it (`kli.tools.core.proposal.Decision`).", (
    Field("candidate", STR),
    Field("status", ResolvedStatus, "the decision's code"),
    Field("reason", STR, "`accepted`, `rejected`, `discarded`, or a refusal's error code",
          required=False),
    Field("by", ResolvedBy, "who decided", required=False),
    Field("note", STR, "a Reject's note from the person, for the agent", required=False),
    Field("change", STR, "the recorded change an Accept wrote (undo)", required=False),
))

SESSION = Shape("SessionInfo", "A tool session.", (
    Field("id", STR),
    Field("label", STR, required=False),
))

TOOL_INFO = Shape("ToolInfo", "What the UI knows of a tool (`Tool.info()` of the registry).", (
    Field("name", STR),
    Field("profile", STR),
    Field("main_arg", nullable(STR), "the argument a `%%kli` cell body fills"),
    Field("summary_args", ListOf(STR), "arguments that best say what a call is about, in the "
          "order a one-line summary prefers them"),
))

EDIT_BUNDLE = Shape("EditBundle", f"The MIME bundle `{EDIT_MIME}` of a magic's edit / write "
                    "result.", (
    Field("v", INT, required=False),
    Field("tool", STR),
    Field("ok", BOOL),
    Field("text", STR),
    Field("session", STR),
    Field("files", ListOf(Ref("FileChange"))),
))

CHANGE_FILE = Shape("ChangeFile", "One file of a recorded change (its checkpoint).", (
    Field("path", STR, "root-relative path"),
    Field("existed", BOOL, "false: the change created it"),
    Field("kept", BOOL, "false: its bytes before were not kept (the change cannot be undone)"),
    Field("after_exists", BOOL, "false: the change deleted it"),
    Field("checkpoint", STR, "the checkpoint id (`cp-…`)"),
    Field("added", INT, "lines the change added (absent: a text is not known; a live "
          "notebook's: over the sources of the cells it touched)", required=False),
    Field("removed", INT, "lines the change removed", required=False),
), extra=True)

CHANGE = Shape("ChangeInfo", "One recorded change of the undo timeline (`kli.tools.core.undo`, "
               "the `changes` tool's `details.changes`): every file one call changed.", (
    Field("id", STR, "the change id (`ch-…`), `details.change` of its call event"),
    Field("tool", STR),
    Field("session", STR, "session id"),
    Field("session_label", STR),
    Field("notebook", nullable(STR), "the notebook whose kernel made it (root-relative; null: "
          "made elsewhere, or recorded before notebooks were)", required=False),
    Field("time", NUM, "Unix time in seconds"),
    Field("undoes", nullable(STR), "an undo of one change: that change", required=False),
    Field("undone", ListOf(STR), "an undo (or redo): every change it took back",
          required=False),
    Field("undone_by", nullable(STR), "the undo that took this change back and still stands "
          "(null: the change stands)", required=False),
    Field("files", ListOf(Ref("ChangeFile"))),
), extra=True)

# comm_open data, client -> kernel
AGENT_OPEN = Shape("AgentOpenData", "`data` of the `comm_open` to `kli.agent`.", (
    Field("v", INT, required=False),
    Field("label", STR, "the session's label (default `agent`)", required=False),
), sender="client", extra=True)

UI_OPEN = Shape("UiOpenData", "`data` of the `comm_open` to `kli.ui`.", (
    Field("v", INT, required=False),
    Field("replay", INT, f"how many recent events the hello replays (default {DEFAULT_REPLAY})",
          required=False),
), sender="client", extra=True)

# kernel -> client
AGENT_HELLO = Shape("AgentHelloMsg", "The kernel's answer to a `kli.agent` comm_open.", (
    Field("protocol", INT),
    Field("session", STR, "the comm's tool session"),
    Field("label", STR),
    Field("tools", ListOf(STR), "every registered tool name, sorted"),
    Field("root", STR, "the tools' root (the workspace jail)"),
    Field("cwd", STR, "the kernel process's working directory"),
    Field("notebook", nullable(STR), "the notebook a Jupyter server started the kernel for "
          "(its `JPY_SESSION_NAME`), null for a kernel started otherwise"),
), op="hello", target=AGENT_TARGET)

RESULT = Shape("ResultMsg", "A tool's result (`Workspace.call`), naming the request.", (
    Field("id", ID),
    Field("ok", BOOL),
    Field("text", STR),
    Field("details", MapOf(ANY)),
    Field("images", ListOf(Ref("Image")), "images for a model that takes them (`look`); absent "
          "when there are none", required=False),
), op="result")

SPECS = Shape("SpecsMsg", "The answer to `list`: the registry's function-calling specs.", (
    Field("id", ID),
    Field("specs", ListOf(MapOf(ANY)), "`{name, description, parameters}` in registry order"),
), op="specs", target=AGENT_TARGET)

REACH_MSG = Shape("ReachMsg", "The answer to `reach`; no tool runs.", (
    Field("id", ID),
    Field("approval", MapOf(ApprovalMode), "the mode of each kind of action, as `approval` "
          "messages give them"),
    Field("root", STR, "the workspace root (absolute): what its file tools can change"),
    Field("boxed", BOOL, "true when its shell and eval run in the sandbox, which can write "
          "only the root and a folder of its own; false: they can change any file the "
          "person can"),
), op="reach", target=AGENT_TARGET)

PONG = Shape("PongMsg", "The answer to `ping`; no tool runs.", (
    Field("id", ID),
    Field("status", MapOf(ANY), "what keeps the image busy (docs/live-image.md)", required=False),
), op="pong", target=AGENT_TARGET)

CANCELLED = Shape("CancelMsg", "The answer to `cancel`. The cancelled request still gets its own "
                  "reply: a `bash` / `ws_shell` result with `details.error` `cancelled` once its "
                  "command's process tree is killed, or the result of a call that had finished.", (
    Field("id", ID),
    Field("request", ID, "the request named"),
    Field("found", BOOL, "true when this comm had that request running or queued; false when "
          "it was already answered, or has not reached the kli.agent handler yet (it waits "
          "behind a cell in the main shell's queue: when it arrives it answers `cancelled` "
          "without running)"),
), op="cancel", target=AGENT_TARGET)

ERROR = Shape("ErrorMsg", "A request the kernel cannot serve; no tool ran.", (
    Field("id", nullable(ID), "the request's id, null when it had none"),
    Field("error", RequestError, "the code"),
    Field("text", STR, "what was wrong and how to retry"),
), op="error")

UI_HELLO = Shape("HelloMsg", "The kernel's answer to a `kli.ui` comm_open, and to `replay`.", (
    Field("id", ID, "the `replay` request's id", required=False),
    Field("protocol", INT),
    Field("events", ListOf(Ref("ToolEvent")), "the most recent events, oldest first"),
    Field("pending", ListOf(Ref("Candidate")), "every pending candidate"),
    Field("sessions", ListOf(Ref("SessionInfo"))),
    Field("tools", ListOf(Ref("ToolInfo")), "every registered tool"),
    Field("approval", MapOf(ApprovalMode), "the approval mode of each kind of action",
          required=False),
    Field("approval_origin", ApprovalOrigin, "where the modes come from (as `approval`'s "
          "`origin`)", required=False),
    Field("approval_kept", STR, "the settings file they are kept in (as `approval`'s `kept`)",
          required=False),
    Field("approval_said", STR, "where the modes come from, in words for a person (as "
          "`approval`'s `said`)", required=False),
    Field("root", STR, "the tools' root (absolute): paths in events are relative to it, so the "
          "extension finds the open notebook a `PATH#CELL_ID` names", required=False),
    Field("resolved", ListOf(Ref("ResolvedDecision")), "the proposals decided lately, oldest "
          "first: how each replayed event's proposal ended", required=False),
    Field("sandbox", Ref("Box"), "the box (as the `sandbox` message's `box`)", required=False),
), op="hello", target=UI_TARGET)

EVENT_MSG = Shape("EventMsg", "One tool call, from any source (agent comm, magic, UI, widget).", (
    Field("event", Ref("ToolEvent")),
), op="event", target=UI_TARGET)

RESOLVED = Shape("ResolvedMsg", "A candidate stopped being pending: one per decision.", (
    Field("candidate", STR),
    Field("status", ResolvedStatus, "the decision's code"),
    Field("text", STR, "what the decider was told"),
    Field("by", ResolvedBy, "the source that decided; `kernel` when it discarded it itself"),
    Field("reason", STR, "`accepted`, `rejected`, `discarded` (its session closed, or its "
          "session's bound dropped it) or, for `refused`, the edit's error code"),
    Field("note", STR, "a Reject's note from the person, for the agent", required=False),
    Field("change", STR, "the recorded change an Accept wrote (undo)", required=False),
), op="resolved", target=UI_TARGET)

PROPOSED = Shape("ProposedMsg", "A proposal became pending (a repair preview, or a held call).", (
    Field("candidate", Ref("Candidate")),
), op="proposed", target=UI_TARGET)

EXPIRED = Shape("ExpiredMsg", "A session closed with proposals pending: they stay in the queue, "
                "marked expired, and can still be decided.", (
    Field("candidates", ListOf(STR), "their ids"),
    Field("session", STR),
    Field("session_label", STR),
    Field("text", STR, "`expired — LABEL disconnected`"),
), op="expired", target=UI_TARGET)

APPROVAL = Shape("ApprovalMsg", "The approval modes changed (the panel's switch, `%kli approval`); "
                 "also the reply to an `approval` request.", (
    Field("id", ID, "the `approval` request's id", required=False),
    Field("approval", MapOf(ApprovalMode), "the mode of each kind of action"),
    Field("origin", ApprovalOrigin, "where the modes come from: `default` (no setting), `kept` "
          "(a settings file sets them: a restart starts from them), `kernel` (switched in this "
          "kernel only: a restart starts from the settings files again)", required=False),
    Field("kept", STR, "with origin `kept`: the settings file (absolute path)", required=False),
    Field("said", STR, "where the modes come from, in words for a person (`kept in "
          ".kli/settings.json`, `this kernel only: …`), as `%kli approval` says it",
          required=False),
    Field("problem", STR, "in the reply to a request whose `keep` could not be written: why "
          "(the switch was made, in this kernel only)", required=False),
), op="approval", target=UI_TARGET)

CHANGES = Shape("ChangesMsg", "The reply to a `changes` request: the undo timeline.", (
    Field("id", ID, "the request's id"),
    Field("changes", ListOf(Ref("ChangeInfo")), "newest first"),
    Field("total", INT, "how many changes (of the session) the store has in all"),
    Field("notebook", nullable(STR), "the notebook this kernel was started for (root-relative, "
          "as each change's `notebook`); null: none", required=False),
), op="changes", target=UI_TARGET)

# client -> kernel
CALL = Shape("CallRequest", "Call a tool in the comm's session.", (
    Field("id", ID),
    Field("tool", STR),
    Field("args", nullable(MapOf(ANY)), "the arguments (absent or null: `{}`)", required=False),
    Field("review", MapOf(ListOf(STR)), "a host that reaches several kernels (Jupyter AI's "
          "route): the action kinds (`file`, `shell`, `eval`) held for review whatever this "
          "kernel's mode says, each with the notebooks under review that a call of that kind "
          "here can change (docs/review.md)", required=False),
), op="call", target=AGENT_TARGET, sender="client", extra=True)

LIST = Shape("ListRequest", "List the tools' specs.", (
    Field("id", ID),
    Field("profile", STR, "a profile name or `all` (default `kli`)", required=False),
), op="list", target=AGENT_TARGET, sender="client", extra=True)

PING = Shape("PingRequest", "Is the kernel answering?", (
    Field("id", ID),
), op="ping", target=AGENT_TARGET, sender="client", extra=True)

REACH = Shape("ReachRequest", "What this kernel's agent calls can change, and under which "
              "approval modes (what a host that reaches several kernels needs to keep a "
              "notebook's review for every call that can change it).", (
    Field("id", ID),
), op="reach", target=AGENT_TARGET, sender="client", extra=True)

CANCEL = Shape("CancelRequest", "Stop a request of this comm that is still running or queued: "
               "a running `bash` / `ws_shell` command is killed with everything it started (the "
               "call answers with a `cancelled` error result); a call not yet started answers "
               "`cancelled` without running; a running `eval` (any call on the main thread) is "
               "interrupted alone, answering an `interrupted` error result, and a person's cell "
               "or another call is not stopped. The reply is a `cancel` message.", (
    Field("id", ID),
    Field("request", ID, "the `id` of the request to stop"),
), op="cancel", target=AGENT_TARGET, sender="client", extra=True)

ACCEPT = Shape("AcceptRequest", "Write a pending candidate: `edit` with `accept_repair` in the "
               "candidate's own session (source `ui`); the reply is its `result`.", (
    Field("id", ID),
    Field("candidate", STR),
), op="accept", target=UI_TARGET, sender="client", extra=True)

REJECT = Shape("RejectRequest", "Discard a pending candidate; nothing is written; the reply is "
               "a `result`.", (
    Field("id", ID),
    Field("candidate", STR),
    Field("note", STR, "a short note for the agent (held calls, and repair previews)",
          required=False),
), op="reject", target=UI_TARGET, sender="client", extra=True)

BULK = Shape("BulkRequest", "Accept or reject every pending proposal of one session, of one "
             "file, or all (neither given); the reply is a `result` listing each outcome in "
             "`details.decided`.", (
    Field("id", ID),
    Field("action", BulkAction),
    Field("session", STR, "only this session's", required=False),
    Field("path", STR, "only those that change this file", required=False),
    Field("note", STR, "for a reject: the note each agent receives", required=False),
), op="bulk", target=UI_TARGET, sender="client", extra=True)

SET_APPROVAL = Shape("ApprovalRequest", "Switch approval mode for one kind of action, or all, "
                     "and say whether the choice is kept; the reply is an `approval` message (and every UI gets one).", (
    Field("id", ID),
    Field("mode", ApprovalMode, "absent: the modes stay as they are (a request that only "
          "changes where they are kept)", required=False),
    Field("kind", ApprovalKind, "absent: every kind", required=False),
    Field("keep", BOOL, "true: keep the modes in a settings file (the nearest project "
          "`.kli/settings.json`, else one at the top of the git work tree, else at the root), so "
          "a restart starts from them; false: this kernel only (taken out of the file they were "
          "kept in); absent: where they are now", required=False),
), op="approval", target=UI_TARGET, sender="client", extra=True)

BOX = Shape("Box", "The box (docs/sandbox.md) as the person sees it: the setting, and what this "
            "kernel makes of it.", (
    Field("mode", SandboxMode, "the setting: `on` or `off`"),
    Field("network", SandboxNetwork, "`off` or `all` (named hosts cannot be enforced with "
          "bubblewrap alone); in a sandboxed kernel, its box's"),
    Field("state", SandboxState, "`kernel`: this kernel and all it runs are boxed; `commands`: "
          "shell commands are boxed, an agent's eval refused (the kernel runs outside); "
          "`unavailable`: on but cannot be made (an agent's shell and eval refused); `failed`: "
          "the sandboxed kernel's box could not be made; `off`"),
    Field("said", STR, "the state in words for a person, as `%kli status` says it"),
    Field("reason", STR, "`unavailable` / `failed`: why the box cannot be made",
          required=False),
    Field("problem", STR, "the setting is not valid: why (the box is taken as on)",
          required=False),
    Field("stops", ListOf(STR), "what the box stops, one line each"),
    Field("does_not_stop", ListOf(STR), "what it does not stop, one line each"),
))

SANDBOX = Shape("SandboxMsg", "The box changed (the panel's switch, `%kli sandbox`); also the "
                "reply to a `sandbox` request.", (
    Field("id", ID, "the `sandbox` request's id", required=False),
    Field("box", Ref("Box")),
    Field("problem", STR, "in the reply to a request whose choice could not be kept: why (the "
          "switch was made, in this kernel only)", required=False),
), op="sandbox", target=UI_TARGET)

SET_SANDBOX = Shape("SandboxRequest", "Switch the box, kept in the project's settings as "
                    "approval is; the reply is a `sandbox` message (and every UI gets one).", (
    Field("id", ID),
    Field("mode", SandboxMode, "absent: as it is", required=False),
    Field("network", SandboxNetwork, "absent: as it is", required=False),
    Field("keep", BOOL, "false: this kernel only; absent or true: kept in a settings file",
          required=False),
), op="sandbox", target=UI_TARGET, sender="client", extra=True)

UNDO = Shape("UndoRequest", "Take back a recorded change (`details.change` of a call event), "
             "or everything one session did since a time: the `undo` tool as the person "
             "(docs/review.md); the reply is its `result` (refused, naming the file, when a file "
             "changed since, unless `force`).", (
    Field("id", ID),
    Field("change", STR, "a change id (`ch-…`)", required=False),
    Field("session", STR, "with `since`: whose changes (session id or label)", required=False),
    Field("since", STR, "with `session`: HH:MM today, ISO 8601, or epoch seconds",
          required=False),
    Field("force", BOOL, "undo even though a file changed since (the person confirmed)",
          required=False),
), op="undo", target=UI_TARGET, sender="client", extra=True)

CHANGES_REQ = Shape("ChangesRequest", "The undo timeline: the recorded changes, newest first, "
                    "with their counts and which are undone (what the `changes` tool lists; no "
                    "tool call, no event); the reply is a `changes` message.", (
    Field("id", ID),
    Field("session", STR, "only this session's (id or label)", required=False),
    Field("limit", INT, f"at most this many (default {UI_CHANGES_LIMIT})", required=False),
), op="changes", target=UI_TARGET, sender="client", extra=True)

REPLAY = Shape("ReplayRequest", "Send a new `hello` naming this request.", (
    Field("id", ID),
    Field("limit", INT, f"how many events (default {DEFAULT_REPLAY})", required=False),
), op="replay", target=UI_TARGET, sender="client", extra=True)

# The open model (docs/notebook.md): a notebook open in a JupyterLab tab without
# jupyter-collaboration is read and changed in that tab, through the tab's kli.ui comm.

CELL_EXPECT = Shape("CellExpect", "What a cell an apply touches must still be in the open "
                    "model (else the apply is refused as `stale` and nothing is changed).", (
    Field("cell_type", STR),
    Field("source", STR, "its whole source, as the agent read it"),
))

CELL_UPDATE = Shape("CellUpdate", "A cell changed in place.", (
    Field("id", STR, "the cell's id in the model (before the change)"),
    Field("cell", MapOf(ANY), "the cell as it is to be (nbformat JSON)"),
    Field("keys", ListOf(STR), "the cell's fields that changed (`source`, `outputs`, "
          "`execution_count`, `metadata`, `attachments`, `cell_type`, `id`); a key absent "
          "from `cell` is removed"),
))

NOTEBOOK_PLAN = Shape("NotebookPlan", "The change of one open notebook, cell by cell.", (
    Field("path", STR, "the notebook's path on the server (as `context.path`)"),
    Field("expect", MapOf(Ref("CellExpect")), "by cell id: cells that must still hold what "
          "the agent read (edited, deleted, moved or retyped cells)"),
    Field("update", ListOf(Ref("CellUpdate"))),
    Field("remove", ListOf(STR), "ids of cells deleted or moved (moved ones are placed again)"),
    Field("place", ListOf(MapOf(ANY)), "cells inserted or moved, in the new order; each goes "
          "after the nearest cell before it in `order` that the model has"),
    Field("order", ListOf(STR), "every cell id of the notebook as it is to be"),
    Field("metadata", MapOf(ANY), "the notebook's metadata, when it changed", required=False),
    Field("nbformat_minor", INT, "when it changed", required=False),
))

OPEN_NOTEBOOKS = Shape("OpenNotebooksMsg", "The notebooks open in this browser's tabs (every "
                       "one, sent again whenever one opens, closes or is renamed): the kernel "
                       "reads and changes them in the tab (`model_read`, `model_apply`) when "
                       "the server has no jupyter-collaboration. No reply.", (
    Field("paths", ListOf(STR), "server paths (`context.path`) of the open notebooks, relative "
          "to the root of the server that started the kernel"),
), op="notebooks", target=UI_TARGET, sender="client", extra=True)

MODEL_READ = Shape("ModelReadMsg", "Send the open notebook as the tab has it (unsaved typing "
                   "included); answered by a `model_reply` with `notebook`.", (
    Field("id", STR),
    Field("path", STR),
), op="model_read", target=UI_TARGET)

MODEL_APPLY = Shape("ModelApplyMsg", "Change open notebooks: every `expect` of every plan is "
                    "checked against the tab's model first, then all are applied (one "
                    "transaction per notebook) and each notebook saved through its document "
                    "context; answered by a `model_reply`.", (
    Field("id", STR),
    Field("notebooks", ListOf(Ref("NotebookPlan"))),
), op="model_apply", target=UI_TARGET)

MODEL_REPLY = Shape("ModelReplyMsg", "The tab's answer to `model_read` / `model_apply`.", (
    Field("id", STR, "the request's id"),
    Field("ok", BOOL),
    Field("text", STR, "what happened (for an error: what and which cell)"),
    Field("error", ModelError, "`stale` (a cell changed in the model since it was read), "
          "`not_open` (no tab has the path), `failed`", required=False),
    Field("path", STR, "the notebook an error concerns", required=False),
    Field("cell", STR, "the cell a `stale` error concerns", required=False),
    Field("notebook", MapOf(ANY), "`model_read`: the notebook (nbformat JSON, every cell "
          "with its id)", required=False),
    Field("saved", BOOL, "`model_apply`: whether every notebook was saved", required=False),
), op="model_reply", target=UI_TARGET, sender="client", extra=True)

MODEL_OPS = (OPEN_NOTEBOOKS.op, MODEL_REPLY.op)  # kli.ui ops the open-model store handles

OBJECTS = (MARK, FILE, EVENT, HELD_SOURCE, CANDIDATE, DECISION, SESSION, TOOL_INFO, EDIT_BUNDLE, CHANGE_FILE,
           CHANGE, IMAGE, EVENT_IMAGE, AGENT_OPEN, UI_OPEN, CELL_EXPECT, CELL_UPDATE, NOTEBOOK_PLAN, BOX)
MESSAGES = (AGENT_HELLO, UI_HELLO, RESULT, SPECS, PONG, REACH_MSG, CANCELLED, ERROR, EVENT_MSG,
            RESOLVED, PROPOSED, EXPIRED, APPROVAL, CALL, LIST, PING, REACH, CANCEL, ACCEPT,
            REJECT, REPLAY, BULK,
            SET_APPROVAL, UNDO, CHANGES, CHANGES_REQ, SET_SANDBOX, OPEN_NOTEBOOKS, MODEL_READ,
            MODEL_APPLY, MODEL_REPLY, SANDBOX)
SHAPES = {s.name: s for s in (*OBJECTS, *MESSAGES)}
# What the extension receives on kli.ui, as one union (``KernelMsg`` in TypeScript).
UI_INCOMING = (UI_HELLO, EVENT_MSG, RESOLVED, PROPOSED, EXPIRED, APPROVAL, CHANGES, RESULT,
               ERROR, MODEL_READ, MODEL_APPLY, SANDBOX)

def build(shape: Shape, **fields: Any) -> dict[str, Any]:
    """An object of ``shape`` from ``fields``, which must be the shape's (a misspelt or missing
    field is a bug, raised here rather than sent); a message gets ``v`` and ``op`` first."""
    known = {f.name for f in shape.fields}
    unknown = set(fields) - known
    missing = {f.name for f in shape.fields if f.required} - set(fields)
    if unknown or missing:
        raise ValueError(f"{shape.name}: unknown fields {sorted(unknown)}, missing "
                         f"{sorted(missing)}")
    if shape.op is None:
        return dict(fields)
    return {"v": PROTOCOL_VERSION, "op": shape.op, **fields}


def message(shape: Shape, **fields: Any) -> dict[str, Any]:
    """A message of ``shape`` (``build`` for a shape with an ``op``)."""
    assert shape.op is not None, shape.name
    return build(shape, **fields)


def json_schema() -> dict[str, Any]:
    """Every shape as JSON Schema (``$defs``); the root accepts any message."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "kli kernel protocol",
        "$defs": {name: shape.schema() for name, shape in SHAPES.items()},
        "anyOf": [{"$ref": f"#/$defs/{m.name}"} for m in MESSAGES],
    }


def schema_of(shape: Shape) -> dict[str, Any]:
    """The JSON Schema of one shape, with every shape in ``$defs`` for its references."""
    return {**shape.schema(), "$defs": json_schema()["$defs"]}
