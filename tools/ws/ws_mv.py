"""ws_mv — rename or move a file or folder inside the project.

Uses ``git mv`` when the root is inside a git work tree and the source is tracked (so history
follows the file), otherwise ``os.rename`` (``shutil.move`` across devices). Held for review
(``approval``), nothing moves and no folder is made: the missing folders of dst, the rename
and the ``git mv`` (with the index entries it would move, ``index_entries``) are recorded ops
that the person's Accept performs, after checking that the files and those index entries are
still as proposed. Both ends are
jailed and neither may be under ``.kli/``. An existing target is never overwritten: the
refusal says to pick another name or ws_delete the target first (ws_delete is checkpointed, so
that path can be undone). A session's read of the source carries over to the target.
"""

from __future__ import annotations

import errno
import os
import shutil
from dataclasses import dataclass

from kli.tools.core import approval, atomic
from kli.tools.core.atomic import permission_hint
from kli.tools.core.changes import file_change
from kli.tools.core.registry import GATE_WRITE, Call, Tool
from kli.tools.core.result import ToolError, ToolResult
from kli.tools.ws.common import compact_json, reserved_device_name, reserved_name_error
from kli.tools.ws.gitcmd import in_work_tree, is_tracked, run_git
from kli.tools.ws.ws_read import missing_message

DESCRIPTION = """Rename or move a file or folder: ws_mv {"src": "old/path.py", "dst": "new/path.py"}.
This is THE way to rename — do not rewrite a file under a new name and leave the old one.
Uses `git mv` when the project is a git repository and the file is tracked, otherwise a plain
rename. Missing parent folders of dst are created. An existing dst is never overwritten
(ws_delete it first, or choose another name). Paths are relative to the project root."""


def _run(call: Call) -> ToolResult:
    jail = call.ws.jail
    src_arg, dst_arg = call.args["src"], call.args["dst"]
    # The source is resolved lexically for symlinks: moving a link moves the link itself.
    src = jail.resolve(src_arg)
    src_lex = os.path.normpath(os.path.join(jail.root, src_arg))
    link = os.path.islink(src_lex)
    # A link is moved itself: what it leads to is not checked (read-only or not).
    jail.resolve(src_arg, write=True, read_only_ok=link)
    dst = jail.resolve(dst_arg, write=True)
    if link:
        # The link itself, in its folder as the jail resolves it now (checked again at the
        # rename, so a symlink swapped into the folder's path afterwards is refused).
        parent = jail.resolve(os.path.dirname(src_lex), write=True)
        src_path = src_lex = os.path.join(parent.real, os.path.basename(src_lex))
    else:
        src_path = src.real
    src_rel = jail.rel(src_path) if src_path == src_lex else src.rel
    if not os.path.lexists(src_path):
        raise ToolError(missing_message(call, src.rel, "ws_mv"), error="not_found")
    bad = reserved_device_name(dst.rel)
    if bad is not None:
        raise reserved_name_error("ws_mv", dst.rel, bad)
    dst_real = dst.real
    if os.path.isdir(dst_real) and not os.path.isdir(src_path):
        raise ToolError(
            f"ws_mv refused — {dst.rel} is an existing folder. Give the full new path of the "
            f"file, e.g. {compact_json({'src': src_rel, 'dst': dst.rel + '/' + os.path.basename(src_rel)})}.",
            error="target_exists",
        )
    if os.path.lexists(dst_real):
        raise ToolError(
            f"ws_mv refused — {dst.rel} already exists and ws_mv never overwrites. Choose another "
            f"dst, or if {dst.rel} should go: ws_delete {compact_json({'path': dst.rel})} "
            "(checkpointed) and repeat this ws_mv.",
            error="target_exists",
        )
    if src_path == dst_real:
        raise ToolError(f"ws_mv: src and dst are the same path ({src_rel}); nothing to do.")
    if os.path.isdir(src_path) and (dst_real + os.sep).startswith(src_path + os.sep):
        raise ToolError(f"ws_mv refused — cannot move folder {src_rel} into itself ({dst.rel}).")
    jail.check_movable(src_path, shown=src_rel)
    with call.ws.writing([src_path, dst_real], tool="ws_mv", rel=src_rel):
        dst_folder = os.path.dirname(dst_real)
        blocker = _not_a_folder(dst_folder)
        try:
            if blocker is not None:
                raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), blocker)
            atomic.makedirs(dst_folder)  # held for review: recorded, made on Accept
        except OSError as exc:  # a file where a folder of dst should be, a name too long…
            raise ToolError(
                f"ws_mv: cannot create the folder for {dst.rel} ({exc.strerror}: "
                f"{jail.rel(exc.filename) if exc.filename else dst.rel} is not a folder?). "
                "Nothing was moved; choose a dst whose parent is a folder (ws_list shows them).",
                error="bad_destination",
            ) from None
        how = "rename"
        root = call.ws.root
        if in_work_tree(root) and is_tracked(root, src_rel):
            step = GitMove(root, src_path, dst_real, src_rel, dst.rel,
                           index_entries(root, [src_rel, dst.rel]))
            if not atomic.capture_op(approval.STEP, step):  # held for review: on Accept
                step.take()
            how = "git mv"
        else:
            try:
                # Through the checked folders, never over a dst created meanwhile.
                atomic.rename(src_path, dst_real, replace=False)
            except atomic.Stale as exc:
                raise ToolError(exc.refusal("ws_mv", dst.rel), error="target_exists") from None
            except OSError as first:
                if first.errno != errno.EXDEV:
                    raise ToolError(
                        f"ws_mv: cannot move {src_rel} to {dst.rel} ({first.strerror})."
                        f"{permission_hint(first)}",
                        error="move_failed",
                    ) from None
                try:
                    shutil.move(src_path, dst_real)
                except OSError as exc:
                    raise ToolError(
                        f"ws_mv: cannot move {src_rel} to {dst.rel} ({exc.strerror})."
                    ) from None
    # What the session read of the source it now knows under the new name.
    moved_views = [
        (k, v)
        for k, v in call.session.views.items()
        if k == src.real or k.startswith(src.real + os.sep)
    ]
    for old, view in moved_views:
        call.session.forget(old)
        call.session.record_view(dst_real + old[len(src.real) :], view)
    call.session.telemetry["ws_mv"] += 1
    return ToolResult.success(
        f"moved {src_rel} → {dst.rel} ({how})",
        src=src_rel,
        dst=dst.rel,
        method=how,
        files=[file_change(dst.rel, None, None, "moved", added=0, removed=0, from_path=src_rel)],
    )


def _not_a_folder(path: str) -> str | None:
    """The nearest existing ancestor of ``path`` (itself included) when it is not a folder (a
    file where a folder of dst should be); None when every existing part is a folder."""
    while not os.path.lexists(path):
        up = os.path.dirname(path)
        if up == path:
            return None
        path = up
    return None if os.path.isdir(path) else path


def index_entries(root: str, rels: list[str]) -> str:
    """What git's index holds for ``rels`` (``git ls-files --stage``: mode, object, stage and
    path of each entry, a folder's entries below it): a held git mv's Accept compares it with
    what the index held when the move was proposed."""
    return run_git(root, ["ls-files", "--stage", "-z", "--", *rels]).stdout


@dataclass(frozen=True)
class GitMove:
    """A ``git mv`` (the file or folder moves, and its index entries with it): taken at once
    for a call that is not held; for a held one it is the proposal's ``approval.HeldStep``,
    taken on the person's Accept once the files and the index entries (``entries``, what the
    index held when it was proposed) are as the proposal showed them."""

    root: str
    src_real: str
    dst_real: str
    src_rel: str
    dst_rel: str
    entries: str

    def paths(self) -> list[str]:
        return [self.src_real, self.dst_real]

    def shown(self) -> str:
        return f"git mv {self.src_rel} {self.dst_rel} (the file and its entry in git's index)"

    def refusal(self, proposal_id: str) -> str | None:
        if index_entries(self.root, [self.src_rel, self.dst_rel]) == self.entries:
            return None
        moved = self.src_rel
        return (f"Accept refused: git's index entry for {moved} changed since proposal "
                f"{proposal_id} was made (staged, moved or removed), so git mv would move "
                f"something else than was shown. Nothing was changed. Reject it, and ask the "
                f"agent to move {moved} again.")

    def take(self) -> None:
        """``ToolError`` when git refuses (nothing moved)."""
        out = run_git(self.root, ["mv", "--", self.src_rel, self.dst_rel])
        if out.code != 0:
            raise ToolError(
                f"ws_mv: git mv {self.src_rel} {self.dst_rel} failed: {out.stderr.strip()}. "
                "Nothing was moved; check the paths with git_status and retry.",
                error="git_failed",
            )


TOOL = Tool(
    name="ws_mv",
    profile="slmcode",
    gate=GATE_WRITE,
    description=DESCRIPTION,
    parameters={
        "type": "object",
        "properties": {
            "src": {"type": "string", "description": "Existing path to move."},
            "dst": {"type": "string", "description": "New path (must not exist yet)."},
        },
        "required": ["src", "dst"],
        "additionalProperties": False,
    },
    run=_run,
    aliases={
        "from": "src",
        "source": "src",
        "old_path": "src",
        "path": "src",
        "to": "dst",
        "dest": "dst",
        "destination": "dst",
        "new_path": "dst",
        "target": "dst",
    },
    mutates=True,
    touches_image=False,
    action=approval.FILE,
)
