"""A write keeps what the file is (issue 19): its protection, owner, set-id bits and extended
attributes, for every writing tool of both profiles. The tests run as root, as the kernel may.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kli.tools import Workspace
from kli.tools.core.atomic import write_atomic
from kli.tools.registry import REGISTRY

ORIGINAL = "alpha\nbeta\n"


def _writing_calls(path: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("write", {"path": path, "content": "new\n"}),
        ("edit", {"input": f"@@ {path}\n+\n~new\n"}),
        ("ws_write", {"path": path, "content": "new\n", "allow_shrink": True}),
        ("ws_edit", {"path": path, "old_str": "beta", "new_str": "gamma"}),
        ("ws_patch", {"path": path, "patch": "<<<<<<< SEARCH\nbeta\n=======\ngamma\n>>>>>>> REPLACE\n"}),
        ("ws_delete", {"path": path}),
        ("ws_mv", {"src": path, "dst": "moved.txt"}),
    ]


@pytest.mark.parametrize("mode", [0o444, 0o400, 0o555])
def test_a_read_only_file_is_refused_by_every_writing_tool_saying_how_to_proceed(
    root: Path, mode: int
) -> None:
    target = root / "ro.txt"
    target.write_text(ORIGINAL)
    target.chmod(mode)
    ws = Workspace(str(root))
    ws.call("read", {"path": "ro.txt"})
    ws.call("ws_read", {"path": "ro.txt"})
    for tool, args in _writing_calls("ro.txt"):
        r = ws.call(tool, args)
        assert not r.ok, (tool, r.text)
        assert r.details.get("error") == "read_only", (tool, r.text)
        assert "ro.txt is read-only" in r.text and "chmod u+w ro.txt" in r.text, (tool, r.text)
    assert target.read_text() == ORIGINAL
    assert stat.S_IMODE(target.stat().st_mode) == mode
    assert sorted(p.name for p in root.iterdir()) == ["ro.txt"]
    # Once the person makes it writable, the same call goes through.
    target.chmod(0o644)
    assert ws.call("ws_edit", {"path": "ro.txt", "old_str": "beta", "new_str": "gamma"}).ok


def test_a_file_of_another_owner_that_root_may_write_is_not_read_only(root: Path) -> None:
    """Root is in the "other" class for a file it does not own: any write bit lets it write
    (the way a container's root edits a mounted folder's files), none refuses it."""
    target = root / "theirs.txt"
    target.write_text(ORIGINAL)
    os.chown(target, 65534, 65534)
    target.chmod(0o644)
    ws = Workspace(str(root))
    ws.call("read", {"path": "theirs.txt"})
    assert ws.call("write", {"path": "theirs.txt", "content": "new\n"}).ok
    target.chmod(0o444)
    r = ws.call("write", {"path": "theirs.txt", "content": "newer\n"})
    assert r.details.get("error") == "read_only", r.text


def test_a_symlink_to_a_read_only_file_can_itself_be_moved_and_deleted(root: Path) -> None:
    (root / "ro.txt").write_text(ORIGINAL)
    (root / "ro.txt").chmod(0o444)
    (root / "link").symlink_to("ro.txt")
    ws = Workspace(str(root))
    assert ws.call("ws_mv", {"src": "link", "dst": "link2"}).ok
    assert ws.call("ws_delete", {"path": "link2"}).ok
    assert (root / "ro.txt").read_text() == ORIGINAL


# -- owner, group, set-id bits, extended attributes ---------------------------------------------
OTHER_UID = 65534  # nobody
AS_USER = 1000  # a non-root user for the child-process cases (no such account is needed)


def _edits(path: str) -> list[tuple[str, dict[str, Any]]]:
    return [(tool, args) for tool, args in _writing_calls(path)
            if tool not in ("ws_delete", "ws_mv")]


def _has_user_xattrs(folder: Path) -> bool:
    probe = folder / ".xattr-probe"
    probe.write_text("")
    try:
        os.setxattr(probe, "user.kli_probe", b"1")
        return True
    except OSError:
        return False
    finally:
        probe.unlink()


def test_every_writing_tool_keeps_owner_group_setuid_bit_and_xattrs(root: Path) -> None:
    """The kernel runs as root here: a rewrite of another user's setuid file used to leave a
    setuid file owned by root holding the agent's bytes, and dropped every xattr."""
    xattrs = _has_user_xattrs(root)
    target = root / "tool.sh"
    ws = Workspace(str(root))
    for tool, args in _edits("tool.sh"):
        target.write_text(ORIGINAL)
        os.chown(target, OTHER_UID, OTHER_UID)
        target.chmod(0o4755)
        if xattrs:
            os.setxattr(target, "user.origin", b"download")
        ws.call("read", {"path": "tool.sh"})
        ws.call("ws_read", {"path": "tool.sh"})
        r = ws.call(tool, args)
        assert r.ok, (tool, r.text)
        assert target.read_text() != ORIGINAL, tool
        st = target.stat()
        assert (st.st_uid, st.st_gid) == (OTHER_UID, OTHER_UID), tool
        assert stat.S_IMODE(st.st_mode) == 0o4755, tool
        if xattrs:
            assert os.getxattr(target, "user.origin") == b"download", tool
    if not xattrs:
        pytest.skip("owner and mode checked; the test folder's file system has no user.* xattrs")


@pytest.fixture
def shared() -> Iterator[Path]:
    """A workspace root a non-root child may use (root's pytest folders are private)."""
    folder = Path(tempfile.mkdtemp(prefix="kli-identity-"))
    folder.chmod(0o777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def as_user(folder: Path, fn: Callable[[], str]) -> str:
    """``fn()`` run in a forked child as uid/gid ``AS_USER`` with ``folder`` as its cwd (the
    interpreter lives under root's home, so a child cannot exec it: it forks); its result, or
    ``ERROR: …`` naming what it raised. The child cannot import what the parent has not (the
    standard library is under root's home too): every tool is imported by then."""
    assert REGISTRY.tools
    for tool in ("ws_mv", "ws_delete", "ws_write"):  # their lazy imports (git, checkpoints)
        Workspace(str(folder)).call(tool, {"path": ".", "src": ".", "dst": "."})
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 0
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(AS_USER)
            os.setuid(AS_USER)
            os.chdir(folder)
            try:
                text = fn()
            except BaseException as exc:
                text = f"ERROR: {type(exc).__name__}: {exc}"
            os.write(write_end, text.encode("utf-8", "replace"))
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(write_end)
    chunks = []
    while chunk := os.read(read_end, 65536):
        chunks.append(chunk)
    os.close(read_end)
    os.waitpid(pid, 0)
    return b"".join(chunks).decode()


def _calls_as_user(folder: Path, path: str) -> str:
    """Every writing tool on ``path``, in a Workspace at ``folder``: one ``tool error: text``
    line per call."""
    def run() -> str:
        ws = Workspace(str(folder))
        lines = []
        for tool, args in _writing_calls(path):
            ws.call("read", {"path": path})
            ws.call("ws_read", {"path": path})
            r = ws.call(tool, args)
            lines.append(f"{tool} {'ok' if r.ok else r.details.get('error')}: {r.text[:300]}")
        return "\n".join(lines)
    return as_user(folder, run)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to set up files of other users")
def test_a_read_only_folder_gives_every_writing_tool_a_clear_error(shared: Path) -> None:
    """Before, ws_edit answered "internal error: PermissionError"."""
    folder = shared / "locked"
    folder.mkdir()
    (folder / "a.txt").write_text(ORIGINAL)
    os.chown(folder, AS_USER, AS_USER)
    os.chown(folder / "a.txt", AS_USER, AS_USER)
    folder.chmod(0o555)
    out = _calls_as_user(shared, "locked/a.txt")
    assert "internal" not in out, out
    assert len(out.splitlines()) == len(_writing_calls("x")), out
    for line in out.splitlines():
        assert " ok:" not in line and "Permission denied" in line, line
    assert (folder / "a.txt").read_text() == ORIGINAL
    assert os.listdir(folder) == ["a.txt"]


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to set up files of other users")
def test_a_file_whose_owner_cannot_be_given_back_is_refused_by_every_editing_tool(
    shared: Path,
) -> None:
    """Not root: a file of another owner, writable by all in a folder the user may write. An
    atomic replace would hand the file to the user; it is refused, naming the owner."""
    target = shared / "theirs.txt"
    target.write_text(ORIGINAL)
    os.chown(target, OTHER_UID, OTHER_UID)
    target.chmod(0o666)

    def run() -> str:
        ws = Workspace(str(shared))
        lines = []
        for tool, args in _edits("theirs.txt"):
            ws.call("read", {"path": "theirs.txt"})
            ws.call("ws_read", {"path": "theirs.txt"})
            r = ws.call(tool, args)
            lines.append(f"{tool} {'ok' if r.ok else r.details.get('error')}: {r.text[:300]}")
        return "\n".join(lines)

    out = as_user(shared, run)
    assert len(out.splitlines()) == len(_edits("x")), out
    for line in out.splitlines():
        assert " ok:" not in line and "internal" not in line, line
        assert "belongs to uid 65534" in line, line
    assert target.read_text() == ORIGINAL
    assert target.stat().st_uid == OTHER_UID
    assert [n for n in os.listdir(shared) if n != ".kli"] == ["theirs.txt"]  # ws_write checkpoints first


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make a file of another group")
def test_a_group_that_cannot_be_given_back_drops_the_set_id_bits(shared: Path) -> None:
    target = shared / "mine.sh"
    target.write_text("old")
    os.chown(target, AS_USER, OTHER_UID)  # the user's file, of a group the user is not in
    target.chmod(0o6775)
    out = as_user(shared, lambda: str(write_atomic("mine.sh", b"new")))
    assert out == "None", out
    st = target.stat()
    assert target.read_text() == "new"
    assert (st.st_uid, st.st_gid) == (AS_USER, AS_USER)
    assert stat.S_IMODE(st.st_mode) == 0o775  # never a set-id file of another group


def test_a_checkpoint_is_not_restored_over_a_read_only_file(root: Path) -> None:
    target = root / "kept.txt"
    target.write_text(ORIGINAL)
    ws = Workspace(str(root))
    ws.call("ws_read", {"path": "kept.txt"})
    r = ws.call("ws_write", {"path": "kept.txt", "content": "second\n", "allow_shrink": True})
    assert r.ok, r.text
    listed = ws.call("ws_checkpoints", {"action": "list"})
    cp = listed.details["checkpoints"][0]["id"]
    target.chmod(0o444)
    r = ws.call("ws_checkpoints", {"action": "restore", "id": cp})
    assert r.details.get("error") == "read_only", r.text
    assert target.read_text() == "second\n"
