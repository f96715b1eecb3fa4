"""The one guarded loader (``textfile.read_text`` / ``open_regular``) and every tool that loads a
file through it: a FIFO, a socket, a device file or a directory at the path is an error result,
returned promptly — never a call that blocks the kernel's main thread.

Each call runs in a thread with a join timeout, so a hang fails its test instead of the suite."""

from __future__ import annotations

import os
import socket
import stat
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kli.tools import Workspace
from kli.tools.core import textfile
from kli.tools.core.jail import Jail
from kli.tools.core.result import ToolResult
from kli.tools.file.anchors import line_hash

PROMPT = 10.0  # seconds: far above any real call here; only a blocked open gets near it


def prompt(fn: Callable[[], Any]) -> Any:
    """``fn()`` run in a daemon thread; fails the test when it has not returned in time."""
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["value"] = fn()
        except BaseException as exc:  # handed to the test thread
            out["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(PROMPT)
    if thread.is_alive():
        pytest.fail(f"the call did not return within {PROMPT}s (blocked on the path)")
    if "error" in out:
        raise out["error"]
    return out["value"]


@pytest.fixture
def sockets() -> Iterator[list[socket.socket]]:
    held: list[socket.socket] = []
    yield held
    for s in held:
        s.close()


def make(kind: str, path: Path, sockets: list[socket.socket], monkeypatch: pytest.MonkeyPatch) -> None:
    """Put a ``kind`` of non-regular file at ``path`` (which must not exist)."""
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        monkeypatch.chdir(path.parent)  # a relative bind: AF_UNIX paths are capped at 108 bytes
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(path.name)
        sockets.append(s)
    elif kind == "device":
        if os.geteuid() != 0:
            pytest.skip("creating a device file needs root (os.mknod); /dev/null itself lies "
                        "outside the jail, so a symlink to it is refused before any open")
        os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # the null device
    elif kind == "directory":
        path.mkdir()
    else:
        raise AssertionError(kind)


KINDS = ["fifo", "socket", "device", "directory"]

# tool -> the call on t.txt (a one-line file "a\n" read in this session before it is swapped)
CALLS: dict[str, dict[str, Any]] = {
    "read": {"path": "t.txt"},
    "edit": {"input": f"@@ t.txt\n= 1:{line_hash('a')}\n~b\n"},
    "write": {"path": "t.txt", "content": "b\n"},
    "search": {"pattern": "a", "path": "t.txt"},
    "ws_read": {"path": "t.txt"},
    "ws_edit": {"path": "t.txt", "old_str": "a", "new_str": "b"},
    "ws_write": {"path": "t.txt", "content": "b\n"},
    "ws_patch": {"patch": "--- a/t.txt\n+++ b/t.txt\n@@ -1 +1 @@\n-a\n+b\n"},
}


# search and ws_grep take a directory as the folder to search: not a load of the path.
CASES = [(t, k) for t in CALLS for k in KINDS if not (t == "search" and k == "directory")]


@pytest.mark.parametrize(("tool", "kind"), CASES)
def test_a_non_regular_file_at_the_path_is_an_error_result_returned_promptly(
    tool: str,
    kind: str,
    ws: Workspace,
    root: Path,
    sockets: list[socket.socket],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    target = root / "t.txt"
    target.write_text("a\n")
    assert ws.call("ws_read" if tool.startswith("ws_") else "read", {"path": "t.txt"}).ok
    target.unlink()
    make(kind, target, sockets, monkeypatch)
    before = os.lstat(target).st_mode
    r: ToolResult = prompt(lambda: ws.call(tool, CALLS[tool]))
    assert not r.ok, r.text
    assert r.text.startswith(("read ", "edit ", "write ", "ws_", "Write ", "search")), r.text
    assert stat.S_IFMT(os.lstat(target).st_mode) == stat.S_IFMT(before)  # left as it was


def test_ws_grep_skips_a_fifo_named_as_its_path_promptly(ws: Workspace, root: Path) -> None:
    os.mkfifo(root / "pipe")
    r: ToolResult = prompt(lambda: ws.call("ws_grep", {"pattern": "a", "path": "pipe"}))
    assert "pipe:" not in r.text


@pytest.mark.parametrize("kind", ["fifo", "socket", "device"])
def test_the_loader_gives_not_regular_naming_the_kind(
    kind: str, root: Path, sockets: list[socket.socket], monkeypatch: pytest.MonkeyPatch
) -> None:
    make(kind, root / "x", sockets, monkeypatch)
    with pytest.raises(textfile.NotRegular) as info:
        prompt(lambda: textfile.read_text(str(root / "x"), Jail(str(root))))
    assert info.value.kind == {"fifo": "a pipe", "socket": "a socket", "device": "a device"}[kind]


def test_the_loader_gives_is_directory_too_large_and_not_text(root: Path) -> None:
    (root / "d").mkdir()
    (root / "big").write_bytes(b"x" * 101)
    (root / "bin").write_bytes(b"ab\x00cd")
    with pytest.raises(textfile.IsDirectory):
        textfile.read_text(str(root / "d"))
    with pytest.raises(textfile.TooLarge) as info:
        textfile.read_text(str(root / "big"), limit=100)
    assert (info.value.size, info.value.limit) == (101, 100)
    assert textfile.read_text(str(root / "big"), limit=101).size == 101
    with pytest.raises(textfile.NotText):
        textfile.read_text(str(root / "bin"))
    assert isinstance(textfile.NotText(), OSError)  # callers that only know OSError still refuse


def test_a_fifo_swapped_in_after_the_stat_never_blocks_the_open(root: Path) -> None:
    """The race the pre-open stat cannot close: the path turns into a FIFO between the stat and
    the open. The open is O_NONBLOCK and the descriptor is fstat-checked, so every load either
    reads the file or refuses it — none waits for a writer."""
    path = root / "t.txt"
    path.write_text("a\n")
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            tmp = root / "t.fifo"
            os.mkfifo(tmp)
            os.replace(tmp, path)
            (root / "t.new").write_text("a\n")
            os.replace(root / "t.new", path)

    swapper = threading.Thread(target=swap, daemon=True)
    swapper.start()
    outcomes: set[str] = set()

    def loads() -> None:
        for _ in range(2000):
            try:
                textfile.read_text(str(path), Jail(str(root)))
                outcomes.add("text")
            except textfile.NotRegular:
                outcomes.add("not_regular")
            except FileNotFoundError:
                outcomes.add("missing")

    try:
        prompt(loads)
    finally:
        stop.set()
        swapper.join(PROMPT)
    assert outcomes <= {"text", "not_regular", "missing"} and outcomes


def test_write_many_refuses_a_pipe_among_its_targets_promptly_and_leaves_no_temp_file(
    root: Path,
) -> None:
    from kli.tools.core.atomic import write_many

    (root / "a.txt").write_text("a\n")
    os.mkfifo(root / "b.txt")
    with pytest.raises(OSError):
        prompt(lambda: write_many([(str(root / "a.txt"), b"A\n"), (str(root / "b.txt"), b"B\n")]))
    assert (root / "a.txt").read_text() == "a\n"
    assert stat.S_ISFIFO(os.lstat(root / "b.txt").st_mode)
    assert sorted(p.name for p in root.iterdir()) == ["a.txt", "b.txt"]
