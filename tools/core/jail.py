"""The path jail: every file tool resolves its paths here.

Paths are relative to the workspace root; absolute paths inside the root are accepted. ``..``
escapes and symlinks that resolve outside the root are refused.

Control state is refused to every writing tool, wherever a settings lookup could read it — a
privilege boundary, not a heuristic: an agent that could write a ``settings.json`` that some
kernel reads could grant itself every capability. Refused for writing, moving and deleting:

- any path with a control folder name in it, at any depth (``.kli``, and the names that are
  ``.kli`` on other file systems: see ``settings.is_control_name``) — except the root's own
  ``.kli/scratch/``, where the tools write their captures;
- any path with a ``.git`` component, at any depth and in the same spellings (``is_git_name``):
  the repository's control state — its ``config`` names programs git runs (``core.fsmonitor``,
  hooks, filters), and a ``.git`` *file* points git at another repository. ``.gitignore``,
  ``.gitattributes`` and ``.github/`` are ordinary files;
- the user's settings folder (``$XDG_CONFIG_HOME/kli``) and its ancestors, when they lie
  inside the root (a kernel rooted at the home folder);
- moving a folder that holds a control folder;
- the interpreter's own folders (``interpreter_folders``: its prefix, standard library and
  site-packages — a virtual environment at ``.venv/``), and their ancestors, when they lie inside
  the root: the kernel imports code from there, so a tool that could change a file there could
  make the kernel run it (``kli.tools.core.imports`` trusts these folders for that reason).

A file whose mode makes it read-only for this process is refused too (``read_only``), with how
to proceed: the person can make it writable.
"""

from __future__ import annotations

import errno
import functools
import os
import site
import stat
import sys
import sysconfig
from dataclasses import dataclass

from kli.tools.core.result import ToolError
from kli.tools.core.settings import CONTROL_DIR, is_control_name, is_name_of, user_settings_path
from kli.tools.core.textfile import lone_surrogate

SCRATCH_DIR = os.path.join(CONTROL_DIR, "scratch")
# Linux's limits (bytes): longer names fail in the OS with ENAMETOOLONG, deep in a tool.
NAME_MAX = 255
PATH_MAX = 4096
# Moving a folder walks it for control folders; past this many entries the move is refused.
MOVE_WALK_LIMIT = 100_000
GIT_DIR = ".git"


def is_git_name(name: str) -> bool:
    """True when ``name`` is ``.git`` on some file system (any case, trailing dots or spaces,
    a stream suffix, ignored code points, ``GIT~1``): the repository's control state."""
    return is_name_of(name, GIT_DIR)


def _git_component(rel_parts: list[str]) -> str | None:
    """The root-relative path up to the first ``.git`` component of ``rel_parts`` (None when
    there is none)."""
    for i, part in enumerate(rel_parts):
        if is_git_name(part):
            return "/".join(rel_parts[: i + 1])
    return None


def interpreter_folders() -> tuple[str, ...]:
    """Where this interpreter's code lives, as real paths: its prefixes (a virtual
    environment's folder, the base installation), its standard library, site-packages and
    scripts folders, and the user's site-packages. A workspace root that holds one of them (a
    project's ``.venv/``) holds code the kernel imports, so tools treat it as control state."""
    return _interpreter_folders(sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix)


@functools.lru_cache(maxsize=4)
def _interpreter_folders(*prefixes: str) -> tuple[str, ...]:
    found = {os.path.realpath(p) for p in prefixes if p}
    names = ("stdlib", "platstdlib", "purelib", "platlib", "scripts")
    found |= {os.path.realpath(p) for name, p in sysconfig.get_paths().items() if name in names}
    found |= {os.path.realpath(p) for p in site.getsitepackages()}
    if site.ENABLE_USER_SITE:
        found.add(os.path.realpath(site.getusersitepackages()))
    return tuple(sorted(found))


def startup_folders() -> tuple[str, ...]:
    """The user's folders whose files decide what runs when a kernel or a Jupyter server
    starts, as real paths: IPython's (profiles, ``startup/*.py``: ``$IPYTHONDIR`` or
    ``~/.ipython``), Jupyter's configuration (``*_config.py``: ``$JUPYTER_CONFIG_DIR`` or
    ``~/.jupyter``) and Jupyter's data folder (kernelspecs, whose ``argv`` is the program a
    kernel start runs: ``$JUPYTER_DATA_DIR`` or ``~/.local/share/jupyter``). Read from the
    environment as Jupyter reads it, without importing Jupyter (``kli.tools`` does not)."""
    home = os.path.expanduser("~")
    data_home = os.environ.get("XDG_DATA_HOME") or os.path.join(home, ".local", "share")
    folders = (
        os.environ.get("IPYTHONDIR") or os.path.join(home, ".ipython"),
        os.environ.get("JUPYTER_CONFIG_DIR") or os.path.join(home, ".jupyter"),
        os.environ.get("JUPYTER_DATA_DIR") or os.path.join(data_home, "jupyter"),
    )
    return tuple(os.path.realpath(f) for f in folders)


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
        if real.startswith(self.root + "/") and os.sep == "/":
            # The common case, without relpath's normalising (it showed in search profiles:
            # the guarded open names every file it checks): a plain path below the root.
            tail = real[len(self.root) + 1 :]
            parts = tail.split("/")
            if "" not in parts and "." not in parts and ".." not in parts:
                return tail
        rel = os.path.relpath(real, self.root)
        return "." if rel == "." else rel.replace(os.sep, "/")

    def resolve(self, path: str, *, write: bool = False, read_only_ok: bool = False) -> Resolved:
        """Resolve ``path`` or raise ``ToolError`` naming the rule it broke.

        With ``write=True`` the control state rules apply as well, and the read-only rule
        unless ``read_only_ok`` (a symlink that is moved or deleted itself).
        """
        if not isinstance(path, str) or path.strip() == "":
            raise ToolError("path is empty; give a path relative to the workspace root.")
        if "\x00" in path:
            raise ToolError("path contains a NUL character; give a plain relative path.")
        at = lone_surrogate(path)
        if at is not None:
            raise ToolError(
                f"path holds a lone surrogate (U+{ord(path[at]):04X} at index {at}), which no file "
                "name can hold; give the path as plain text (a JSON string of real characters).",
                error="bad_path",
            )
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
            # The path as given counts too: ``sub/.kli`` may be a symlink to a plain folder.
            if real != lexical and self.is_control(lexical):
                self.check_writable(Resolved(real=lexical, rel=self.rel(lexical)), shown=path)
            self.check_writable(resolved, shown=path, read_only_ok=read_only_ok)
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
        """True for a path with a control folder name (``settings.is_control_name``) in it, at
        any depth below the root, other than the root's own ``.kli/scratch/`` and what is under
        it (unless that holds a control name again).

        A ``.git`` component at any depth (``is_git_name``) is control state too: the
        repository's.

        Names are compared as other file systems would: on a case-insensitive one (macOS,
        Windows) ``.KLI/settings.json`` *is* the control file, so every case is refused."""
        if not (real.startswith(self.root + os.sep) and real != self.root):
            return False
        parts = real[len(self.root) + 1 :].split(os.sep)
        if _git_component(parts) is not None:
            return True
        hits = [i for i, part in enumerate(parts) if is_control_name(part)]
        if not hits:
            return False
        scratch = (
            hits == [0]
            and len(parts) >= 2
            and parts[1].rstrip(". ").casefold() == "scratch"
        )
        return not scratch

    def user_control(self, real: str) -> str | None:
        """The user's settings folder when ``real`` is it, lies in it, or is one of its folders
        inside the root (None otherwise): writing there could change what every kernel reads."""
        folder = os.path.realpath(os.path.dirname(user_settings_path()))
        if not self._inside(folder) or real == self.root:
            return None
        if self._inside_of(real, folder) or self._inside_of(folder, real):
            return folder
        return None

    def startup_control(self, real: str) -> str | None:
        """The startup folder (``startup_folders``) inside the root that ``real`` is, lies in,
        or holds (None otherwise): a kernel rooted at the home folder must not let a tool plant
        code that the next kernel or server start runs."""
        return self._control_folder(real, startup_folders())

    def interpreter_control(self, real: str) -> str | None:
        """The interpreter folder (``interpreter_folders``) inside the root that ``real`` is,
        lies in, or holds (None otherwise). A folder that is the root itself (a virtual
        environment made at the root) is not one: its library folders are."""
        return self._control_folder(real, interpreter_folders())

    def _control_folder(self, real: str, folders: tuple[str, ...]) -> str | None:
        """The first of ``folders`` below the root that ``real`` is, lies in, or holds."""
        if real == self.root:
            return None
        for folder in folders:
            if folder == self.root or not self._inside(folder):
                continue
            if self._inside_of(real, folder) or self._inside_of(folder, real):
                return folder
        return None

    @staticmethod
    def _inside_of(path: str, folder: str) -> bool:
        return path == folder or path.startswith(folder + os.sep)

    def check_writable(
        self, resolved: Resolved, *, shown: str | None = None, read_only_ok: bool = False
    ) -> None:
        """Raise ``ToolError`` when a tool may not write, move or delete ``resolved``: control
        state (``control_dir``) or a file that is read-only for this process (``read_only``)."""
        parts = resolved.real[len(self.root) + 1 :].split(os.sep)
        git = _git_component(parts) if resolved.real.startswith(self.root + os.sep) else None
        if git is not None:
            raise ToolError(
                f"write refused — {shown or resolved.rel} is the git repository's control state "
                f"({git}), not project source: what is under {GIT_DIR}/ (config, HEAD, refs/, "
                f"hooks/) decides what git runs and what it shows, and a {GIT_DIR} file points "
                "git at another repository. Tools never write, move or delete it — in every "
                f"folder, and in every spelling ({GIT_DIR} in any case, with trailing dots or "
                "spaces), whether or not a repository is there.\nUse git through its tools "
                "(git_status, git_diff; ws_mv moves tracked files with git mv), or ask the person "
                "to make the repository change.",
                error="control_dir",
            )
        if self.is_control(resolved.real):
            # The first line is slmcode-aci's wording (with .kli/ for .slmcode/).
            raise ToolError(
                f"write refused — {shown or resolved.rel} is harness control state, not project "
                f"source. Everything that is under {CONTROL_DIR}/ (settings.json, hooks.json, "
                "pending/, checkpoints/) configures the harness itself and is never edited by "
                f"tools — in every folder, and in every spelling ({CONTROL_DIR} in any case, "
                f"with trailing dots or spaces).\nIf you need scratch space, write under "
                f"{SCRATCH_DIR}/ instead.",
                error="control_dir",
            )
        folder = self.user_control(resolved.real)
        if folder is not None:
            raise ToolError(
                f"write refused — {shown or resolved.rel} is (or holds) the user's kli settings "
                f"folder {self.rel(folder)}, which every kernel reads; tools never write, move "
                "or delete it. Choose another path.",
                error="control_dir",
            )
        folder = self.startup_control(resolved.real)
        if folder is not None:
            raise ToolError(
                f"write refused — {shown or resolved.rel} is (or holds) {self.rel(folder)}, "
                "where IPython and Jupyter read what they run at every kernel or server start "
                "(profiles and startup scripts, configuration, kernelspecs); tools never write, "
                "move or delete it. Ask the person to make that change, or choose another path.",
                error="control_dir",
            )
        folder = self.interpreter_control(resolved.real)
        if folder is not None:
            raise ToolError(
                f"write refused — {shown or resolved.rel} is (or holds) {self.rel(folder)}, part "
                "of the Python installation this kernel runs from (its environment, standard "
                "library or site-packages); the kernel imports code from there, so tools never "
                "write, move or delete it. Install or change packages with pip (through bash, "
                "where a person allows shell commands), or choose another path.",
                error="control_dir",
            )
        if not read_only_ok:
            self.check_not_read_only(resolved, shown=shown)

    @staticmethod
    def read_only(real: str) -> os.stat_result | None:
        """The file's status when ``real`` is a regular file this process should not replace
        (None otherwise): its mode gives no write permission to the class the process is in —
        owner, group or other. Root passes every permission check (``os.access`` says yes), so
        for root the mode bits decide: the owner's write bit when root owns the file, any write
        bit otherwise. Others also get ``os.access`` (ACLs, read-only mounts)."""
        try:
            st = os.stat(real)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        uid = os.geteuid()
        if uid == 0:
            writable = st.st_mode & (stat.S_IWUSR if st.st_uid == 0 else 0o222)
        elif st.st_uid == uid:
            writable = st.st_mode & stat.S_IWUSR
        elif st.st_gid == os.getegid() or st.st_gid in os.getgroups():
            writable = st.st_mode & stat.S_IWGRP
        else:
            writable = st.st_mode & stat.S_IWOTH
        if uid != 0 and writable:
            writable = os.access(real, os.W_OK)
        return None if writable else st

    def check_not_read_only(self, resolved: Resolved, *, shown: str | None = None) -> None:
        st = self.read_only(resolved.real)
        if st is None:
            return
        name = shown or resolved.rel
        mode = stat.S_IMODE(st.st_mode)
        raise ToolError(
            f"{name} is read-only (mode {mode:04o}, owner uid {st.st_uid}): tools do not change, "
            f"move or delete a read-only file. If it should change, the person can make it "
            f"writable (chmod u+w {resolved.rel}) and then retry; otherwise leave it as it is.",
            error="read_only",
            path=resolved.rel,
            mode=f"{mode:04o}",
        )

    def check_movable(self, real: str, *, shown: str) -> None:
        """Raise ``ToolError`` when the folder ``real`` holds a control folder (moving it would
        move control state) — or is too big to tell."""
        if not os.path.isdir(real) or os.path.islink(real):
            return
        seen = 0
        for dirpath, dirnames, filenames in os.walk(real):
            seen += len(dirnames) + len(filenames)
            for name in dirnames + filenames:
                if is_control_name(name) or is_git_name(name):
                    found = self.rel(os.path.join(dirpath, name))
                    whose = (
                        "a git repository's control state"
                        if is_git_name(name)
                        else "harness control state"
                    )
                    raise ToolError(
                        f"move refused — {shown} holds {found}, {whose}; tools never move "
                        "control state. Move the files you mean one by one.",
                        error="control_dir",
                    )
            if seen > MOVE_WALK_LIMIT:
                raise ToolError(
                    f"move refused — {shown} holds more than {MOVE_WALK_LIMIT} entries, too many "
                    "to check for control folders; move a smaller folder.",
                    error="too_large",
                )

    def scratch_dir(self) -> str:
        """The scratch folder (created on demand) where tools may leave full captures."""
        path = os.path.join(self.root, SCRATCH_DIR)
        os.makedirs(path, exist_ok=True)
        return path
