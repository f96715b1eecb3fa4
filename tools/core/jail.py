"""The path jail: every file tool resolves its paths here.

Paths are relative to the workspace root; absolute paths inside the root are accepted. ``..``
escapes and symlinks that resolve outside the root are refused, and nothing is written under
``.kli/`` except ``.kli/scratch/`` — a privilege boundary, not a heuristic: an agent that could
rewrite ``.kli/settings.json`` could grant itself every capability.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass

from kli.tools.core.result import ToolError
from kli.tools.core.settings import CONTROL_DIR

SCRATCH_DIR = os.path.join(CONTROL_DIR, "scratch")
# Linux's limits (bytes): longer names fail in the OS with ENAMETOOLONG, deep in a tool.
NAME_MAX = 255
PATH_MAX = 4096


@dataclass(frozen=True)
class Resolved:
    """A path inside the jail: ``real`` is absolute with symlinks resolved, ``rel`` is the
    root-relative form shown to the model (POSIX separators)."""

    real: str
    rel: str


class Jail:
    def __init__(self, root: str) -> None:
        self.root = os.path.realpath(root)

    def _inside(self, real: str) -> bool:
        return real == self.root or real.startswith(self.root + os.sep)

    def rel(self, real: str) -> str:
        rel = os.path.relpath(real, self.root)
        return "." if rel == "." else rel.replace(os.sep, "/")

    def resolve(self, path: str, *, write: bool = False) -> Resolved:
        """Resolve ``path`` or raise ``ToolError`` naming the rule it broke.

        With ``write=True`` the control directory rule applies as well.
        """
        if not isinstance(path, str) or path.strip() == "":
            raise ToolError("path is empty; give a path relative to the workspace root.")
        if "\x00" in path:
            raise ToolError("path contains a NUL character; give a plain relative path.")
        joined = path if os.path.isabs(path) else os.path.join(self.root, path)
        lexical = os.path.normpath(joined)
        self._check_length(path, lexical)
        if not self._inside(lexical):
            if os.path.isabs(path):
                raise ToolError(
                    f"path {path!r} is outside the workspace root {self.root}; "
                    "use a path relative to the root."
                )
            raise ToolError(
                f"path {path!r} escapes the workspace root with '..'; "
                "paths are jailed to the root — use a path inside it."
            )
        real = os.path.realpath(lexical)
        if not self._inside(real):
            raise ToolError(
                f"path {path!r} resolves through a symlink to {real}, outside the workspace "
                "root; symlinks may not lead out of the root."
            )
        resolved = Resolved(real=real, rel=self.rel(real))
        if write:
            self.check_writable(resolved, shown=path)
        return resolved

    @staticmethod
    def _check_length(path: str, lexical: str) -> None:
        encoded = os.fsencode(lexical)
        longest = max((len(part) for part in encoded.split(b"/")), default=0)
        if longest > NAME_MAX or len(encoded) > PATH_MAX:
            raise ToolError(
                f"path is too long ({len(encoded)} bytes; its longest name has {longest}): the "
                f"file system allows {NAME_MAX} bytes per name and {PATH_MAX} per path. Use a "
                "shorter path.",
                error="path_too_long",
            )

    def check_opened(self, fd: int, shown: str) -> None:
        """Raise ``OSError`` when the file open on ``fd`` lies outside the root: a symlink was
        swapped into its path after ``resolve`` checked it (time of check to time of use).
        Tools open files through ``textfile.open_regular(real, jail)``, which calls this.
        Where ``/proc`` is missing (macOS) the check is skipped (docs/reliability.md)."""
        try:
            actual = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            return
        if not self._inside(actual):
            raise OSError(
                errno.ESTALE,
                f"{shown} changed while it was being opened (it now leads to {actual}, outside "
                "the workspace root); nothing was read. Check the path and retry",
            )

    def is_control(self, real: str) -> bool:
        """True for paths under ``.kli/`` other than ``.kli/scratch/``.

        Names are compared case-insensitively: on a case-insensitive file system (macOS,
        Windows) ``.KLI/settings.json`` *is* the control file, so every case is refused."""
        if not (real.startswith(self.root + os.sep) and real != self.root):
            return False
        parts = real[len(self.root) + 1 :].split(os.sep)
        if parts[0].casefold() != CONTROL_DIR:
            return False
        return not (len(parts) >= 2 and parts[1].casefold() == "scratch")

    def check_writable(self, resolved: Resolved, *, shown: str | None = None) -> None:
        if self.is_control(resolved.real):
            # The first line is slmcode-aci's wording (with .kli/ for .slmcode/).
            raise ToolError(
                f"write refused — {shown or resolved.rel} is harness control state, not project "
                f"source. Everything that is under {CONTROL_DIR}/ (settings.json, hooks.json, "
                "pending/, checkpoints/) configures the harness itself and is never edited by "
                f"tools.\nIf you need scratch space, write under {SCRATCH_DIR}/ instead.",
                error="control_dir",
            )

    def scratch_dir(self) -> str:
        """The scratch folder (created on demand) where tools may leave full captures."""
        path = os.path.join(self.root, SCRATCH_DIR)
        os.makedirs(path, exist_ok=True)
        return path
