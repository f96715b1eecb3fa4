"""Finding a program a tool starts by name (git, node, gofmt, the shell) where the agent cannot
have put it.

An agent that may write files can write ``node_modules/.bin/node`` or ``.venv/bin/git`` in the
workspace; when the kernel's ``PATH`` holds that folder (a person who activated the project's
virtual environment before starting Jupyter) a plain ``shutil.which`` would run the agent's
file. So every lookup leaves out the ``PATH`` entries that lie under the workspace root, and
the relative ones (``.``, ``bin``, and the empty entry, which means the current folder): what
runs is a program the person installed, never one a file tool wrote.
"""

from __future__ import annotations

import os
import shutil


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def trusted_path(root: str | None, path: str | None = None) -> str:
    """``path`` (default: ``$PATH``, else ``os.defpath``) without its relative entries and the
    entries under ``root`` (compared both as written and with symlinks resolved). ``root``
    None: no workspace, only the relative entries go."""
    given = os.environ.get("PATH", os.defpath) if path is None else path
    roots: list[str] = []
    if root is not None:
        roots = [os.path.abspath(root), os.path.realpath(root)]
    kept: list[str] = []
    for entry in given.split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            continue
        forms = (os.path.normpath(entry), os.path.realpath(entry))
        if any(_under(form, r) for form in forms for r in roots):
            continue
        kept.append(entry)
    return os.pathsep.join(kept)


def trusted_which(name: str, root: str | None, *, path: str | None = None) -> str | None:
    """The executable ``name`` resolves to on ``trusted_path(root, path)``, or None.

    A ``name`` with a folder in it (``/bin/zsh``) is taken as given when it is absolute and lies
    outside ``root``; a relative one, or one under ``root``, is None."""
    if os.sep in name or (os.altsep and os.altsep in name):
        if not os.path.isabs(name):
            return None
        forms = (os.path.normpath(name), os.path.realpath(name))
        if root is not None and any(
            _under(form, r) for form in forms for r in (os.path.abspath(root), os.path.realpath(root))
        ):
            return None
        return shutil.which(name)
    return shutil.which(name, path=trusted_path(root, path))
