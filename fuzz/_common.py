"""Shared bits of the atheris harnesses (see fuzz/README.md)."""

from __future__ import annotations

import os
import sys
import tempfile

FILE_TEXT = "def f(x):\n    return x + 1\n\nclass A:\n    pass\n# end\n"


def workspace_with_files() -> tuple[object, str, dict[str, bytes]]:
    """A Workspace on a fresh temporary root holding a.py (LF) and b.txt (CRLF), both read
    (read and ws_read), and the snapshot of the root's bytes."""
    from kli.tools import Workspace

    root = tempfile.mkdtemp(prefix="kli-fuzz-")
    with open(os.path.join(root, "a.py"), "w") as fh:
        fh.write(FILE_TEXT)
    with open(os.path.join(root, "b.txt"), "wb") as fh:
        fh.write(FILE_TEXT.replace("\n", "\r\n").encode())
    ws = Workspace(root, settings={"capabilities": ["file/read", "file/write", "file/edit"]})
    for name in ("a.py", "b.txt"):
        ws.call("read", {"path": name})
        ws.call("ws_read", {"path": name})
    return ws, root, snapshot(root)


def snapshot(root: str) -> dict[str, bytes]:
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            p = os.path.join(dirpath, name)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, root)] = fh.read()
    return out


def run(test_one_input: object) -> None:
    import atheris

    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
