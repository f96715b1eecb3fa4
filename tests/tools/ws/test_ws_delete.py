"""ws_delete and the checkpoint store: exact bytes kept, restore gives them back."""

from __future__ import annotations

import os
from pathlib import Path

from kli.tools import Workspace
from kli.tools.ws import checkpoints


def test_delete_keeps_a_checkpoint_and_restore_gives_exact_bytes(ws: Workspace, root: Path) -> None:
    data = b"\xff\xfe binary-ish \x00 bytes\r\nand text\n"
    (root / "f.dat").write_bytes(data)
    os.chmod(root / "f.dat", 0o751)
    r = ws.call("ws_delete", {"path": "f.dat"})
    assert r.ok, r.text
    assert not (root / "f.dat").exists()
    cp = r.details["checkpoint"]
    assert f'ws_checkpoints {{"action":"restore","id":"{cp}"}}' in r.text
    assert r.details["files"][0]["status"] == "deleted"
    listed = ws.call("ws_checkpoints", {"action": "list"})
    assert cp in listed.text and "f.dat" in listed.text
    restored = ws.call("ws_checkpoints", {"action": "restore", "id": cp})
    assert restored.ok, restored.text
    assert (root / "f.dat").read_bytes() == data
    assert (os.stat(root / "f.dat").st_mode & 0o777) == 0o751


def test_checkpoint_metadata_is_stored(ws: Workspace, root: Path) -> None:
    (root / "a.txt").write_text("abc\n")
    cp_id = ws.call("ws_delete", {"path": "a.txt"}).details["checkpoint"]
    cp = checkpoints.get(str(root.resolve()), cp_id)
    assert cp.path == "a.txt" and cp.reason == "delete" and cp.tool == "ws_delete"
    assert cp.size == 4 and len(cp.sha256) == 64
    assert (root / ".kli/checkpoints" / cp_id / "meta.json").is_file()


def test_checkpoints_off_means_irreversible(root: Path) -> None:
    ws = Workspace(str(root), {"file_checkpoints": False})
    (root / "a.txt").write_text("a\n")
    r = ws.call("ws_delete", {"path": "a.txt"})
    assert r.ok and "cannot be undone" in r.text and r.details["checkpoint"] is None
    assert not (root / ".kli/checkpoints").exists()


def test_restore_over_a_changed_file_checkpoints_it_first(ws: Workspace, root: Path) -> None:
    (root / "a.txt").write_text("v1\n")
    ws.call("ws_read", {"path": "a.txt"})
    first = ws.call("ws_write", {"path": "a.txt", "content": "v2\n"}).details["checkpoint"]
    r = ws.call("ws_checkpoints", {"action": "restore", "id": first})
    assert r.ok and (root / "a.txt").read_text() == "v1\n"
    second = r.details["replaced_checkpoint"]
    assert second
    assert ws.call("ws_checkpoints", {"action": "restore", "id": second}).ok
    assert (root / "a.txt").read_text() == "v2\n"


def test_restore_to_another_path_and_unknown_id(ws: Workspace, root: Path) -> None:
    (root / "a.txt").write_text("a\n")
    cp = ws.call("ws_delete", {"path": "a.txt"}).details["checkpoint"]
    assert ws.call("ws_checkpoints", {"action": "restore", "id": cp, "path": "b.txt"}).ok
    assert (root / "b.txt").read_text() == "a\n"
    r = ws.call("ws_checkpoints", {"action": "restore", "id": "cp-nope"})
    assert not r.ok and 'ws_checkpoints {"action":"list"}' in r.text


def test_damaged_checkpoint_is_not_restored(ws: Workspace, root: Path) -> None:
    (root / "a.txt").write_text("a\n")
    cp = ws.call("ws_delete", {"path": "a.txt"}).details["checkpoint"]
    (root / ".kli/checkpoints" / cp / "data").write_bytes(b"tampered")
    r = ws.call("ws_checkpoints", {"action": "restore", "id": cp})
    assert not r.ok and "damaged" in r.text and not (root / "a.txt").exists()


def test_store_prunes_to_checkpoint_keep(root: Path) -> None:
    ws = Workspace(str(root), {"checkpoint_keep": 3})
    for i in range(5):
        (root / f"f{i}.txt").write_text(f"{i}\n")
        assert ws.call("ws_delete", {"path": f"f{i}.txt"}).ok
    kept = checkpoints.list_all(str(root.resolve()))  # the delete's and the undo timeline's
    assert len(kept) == 3 and {c.path for c in kept} <= {"f4.txt", "f3.txt"}


def test_checkpoints_stay_out_of_git_status(ws: Workspace, root: Path) -> None:
    (root / "a.txt").write_text("a\n")
    ws.call("ws_delete", {"path": "a.txt"})
    assert (root / ".kli/checkpoints/.gitignore").read_text() == "*\n"


def test_folder_with_contents_is_refused_empty_folder_deleted(ws: Workspace, root: Path) -> None:
    (root / "d").mkdir()
    (root / "d/x.txt").write_text("x\n")
    r = ws.call("ws_delete", {"path": "d"})
    assert not r.ok and r.details["error"] == "not_empty" and (root / "d/x.txt").exists()
    (root / "e").mkdir()
    assert ws.call("ws_delete", {"path": "e"}).ok and not (root / "e").exists()


def test_symlink_is_deleted_not_its_target(ws: Workspace, root: Path) -> None:
    (root / "target.txt").write_text("t\n")
    os.symlink("target.txt", root / "link.txt")
    r = ws.call("ws_delete", {"path": "link.txt"})
    assert r.ok, r.text
    assert not os.path.lexists(root / "link.txt") and (root / "target.txt").read_text() == "t\n"
    assert ws.call("ws_checkpoints", {"action": "restore", "id": r.details["checkpoint"]}).ok
    assert os.readlink(root / "link.txt") == "target.txt"


def test_missing_control_and_jail(ws: Workspace, root: Path) -> None:
    r = ws.call("ws_delete", {"path": "nope.txt"})
    assert not r.ok and "no such file" in r.text
    (root / ".kli").mkdir()
    (root / ".kli/settings.json").write_text("{}")
    r = ws.call("ws_delete", {"path": ".kli/settings.json"})
    assert not r.ok and "harness control state" in r.text
    assert (root / ".kli/settings.json").exists()
    assert not ws.call("ws_delete", {"path": "../x"}).ok


def test_list_when_empty(ws: Workspace) -> None:
    r = ws.call("ws_checkpoints", {})
    assert r.ok and r.text.startswith("(no checkpoints")


def test_id_without_action_means_restore(ws: Workspace, root: Path) -> None:
    (root / "a.txt").write_text("a\n")
    cp = ws.call("ws_delete", {"path": "a.txt"}).details["checkpoint"]
    assert ws.call("ws_checkpoints", {"id": cp}).ok
    assert (root / "a.txt").read_text() == "a\n"


def test_a_fifo_is_deleted_without_reading_it(ws: Workspace, root: Path) -> None:
    os.mkfifo(root / "pipe")
    r = ws.call("ws_delete", {"path": "pipe"})
    assert r.ok and r.details["checkpoint"] is None and not os.path.lexists(root / "pipe")
    assert "not a regular file, so no checkpoint was kept" in r.text


def test_restore_onto_a_folder_is_refused_with_another_path(ws: Workspace, root: Path) -> None:
    (root / "a.txt").write_text("a\n")
    cp = ws.call("ws_delete", {"path": "a.txt"}).details["checkpoint"]
    (root / "a.txt").mkdir()
    r = ws.call("ws_checkpoints", {"action": "restore", "id": cp})
    assert not r.ok and '"path":"a.txt.restored"' in r.text
