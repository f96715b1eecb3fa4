"""ws_write: create; overwrite only after a read; the shrink guard; reserved names; empty
content; .kli/ protection; the post-write syntax check; checkpoints of overwrites."""

from __future__ import annotations

from pathlib import Path

import pytest

from kli.tools import Workspace


def _read(ws: Workspace, path: str) -> None:
    assert ws.call("ws_read", {"path": path}).ok


def test_creates_a_new_file_with_parent_folders(ws: Workspace, root: Path) -> None:
    r = ws.call("ws_write", {"path": "src/new/mod.py", "content": "x = 1\n"})
    assert r.ok, r.text
    assert (root / "src/new/mod.py").read_text() == "x = 1\n"
    assert r.text.startswith("created src/new/mod.py (1 lines")
    change = r.details["files"][0]
    assert change["path"] == "src/new/mod.py" and change["status"] == "written"
    assert change["before"] is None and change["after"] == "x = 1\n"


@pytest.mark.parametrize("key", ["contents", "text", "body"])
def test_body_aliases(ws: Workspace, root: Path, key: str) -> None:
    assert ws.call("ws_write", {"path": "a.txt", key: "hi\n"}).ok
    assert (root / "a.txt").read_text() == "hi\n"


def test_overwrite_without_read_is_refused_with_the_edit_recipe(ws: Workspace, root: Path) -> None:
    (root / "a.py").write_text("x = 1\n")
    r = ws.call("ws_write", {"path": "a.py", "content": "x = 2\n"})
    assert not r.ok and r.details["error"] == "not_read"
    assert r.text.startswith(
        "Write refused — a.py already exists and you have not read it in this session."
    )
    assert 'ws_read {"path":"a.py"}' in r.text
    assert 'ws_edit {"path":"a.py","old_str":' in r.text
    assert (root / "a.py").read_text() == "x = 1\n"


def test_overwrite_after_read_is_allowed_and_checkpointed(ws: Workspace, root: Path) -> None:
    (root / "a.py").write_bytes(b"x = 1\n")
    _read(ws, "a.py")
    r = ws.call("ws_write", {"path": "a.py", "content": "x = 2\n"})
    assert r.ok, r.text
    assert (root / "a.py").read_text() == "x = 2\n"
    cp = r.details["checkpoint"]
    assert cp and cp in r.text
    assert (root / ".kli" / "checkpoints" / cp / "data").read_bytes() == b"x = 1\n"


def test_read_in_another_session_does_not_count(ws: Workspace, root: Path) -> None:
    (root / "a.py").write_text("x = 1\n")
    other = ws.open_session("other")
    ws.call("ws_read", {"path": "a.py"}, session=other)
    assert ws.call("ws_write", {"path": "a.py", "content": "x = 2\n"}).details["error"] == "not_read"


def test_read_before_edit_setting_off_allows_overwrite(root: Path) -> None:
    ws = Workspace(str(root), {"read_before_edit": False})
    (root / "a.py").write_text("x = 1\n")
    assert ws.call("ws_write", {"path": "a.py", "content": "x = 2\n"}).ok


def test_catastrophic_truncation_is_refused_then_allowed(ws: Workspace, root: Path) -> None:
    big = "".join(f"v{i} = {i}\n" for i in range(100))
    (root / "m.py").write_text(big)
    _read(ws, "m.py")
    r = ws.call("ws_write", {"path": "m.py", "content": "v0 = 0\n# ... rest of file unchanged\n"})
    assert not r.ok and r.details["error"] == "shrink"
    assert "m.py has 100 lines (880 bytes) and this write would leave 2 (36 bytes)" in r.text
    assert '"allow_shrink": true' in r.text
    assert "placeholder" in r.text
    assert (root / "m.py").read_text() == big
    r = ws.call("ws_write", {"path": "m.py", "content": "v0 = 0\n", "allow_shrink": True})
    assert r.ok and (root / "m.py").read_text() == "v0 = 0\n"


def test_minified_one_line_file_is_guarded_by_bytes(ws: Workspace, root: Path) -> None:
    big = "var a=" + ",".join(str(i) for i in range(3000)) + ";\n"
    (root / "app.min.js").write_text(big)
    _read(ws, "app.min.js")
    r = ws.call("ws_write", {"path": "app.min.js", "content": "var a=1;\n"})
    assert not r.ok and r.details["error"] == "shrink"
    assert "app.min.js has 1 lines" in r.text
    assert (root / "app.min.js").read_text() == big


def test_moderate_rewrite_is_not_a_truncation(ws: Workspace, root: Path) -> None:
    (root / "m.py").write_text("".join(f"v{i} = {i}\n" for i in range(30)))
    _read(ws, "m.py")
    assert ws.call("ws_write", {"path": "m.py", "content": "".join(f"w{i} = {i}\n" for i in range(20))}).ok


@pytest.mark.parametrize(
    "name", ["nul", "NUL.txt", "con", "Con.py", "prn.md", "aux.c", "com1", "COM9.log", "lpt1",
             "lpt9.txt", "sub/aux/file.txt"]
)
def test_windows_reserved_names_are_refused(ws: Workspace, root: Path, name: str) -> None:
    r = ws.call("ws_write", {"path": name, "content": "x\n"})
    assert not r.ok and r.details["error"] == "reserved_name"
    assert "Windows reserved device name" in r.text
    assert not (root / name).exists()


@pytest.mark.parametrize("name", ["console.py", "nullable.txt", "auxiliary.c", "com10", "lpt.txt"])
def test_names_that_only_look_reserved_are_fine(ws: Workspace, name: str) -> None:
    assert ws.call("ws_write", {"path": name, "content": "x\n"}).ok


def test_empty_content_on_new_file_is_refused_verbatim(ws: Workspace, root: Path) -> None:
    r = ws.call("ws_write", {"path": "pkg/new.go", "content": ""})
    assert not r.ok
    assert r.text.startswith(
        "Write refused — content is empty, so this would create pkg/new.go as a 0-byte file."
    )
    assert "accepted body keys: content, contents, text, body" in r.text
    assert not (root / "pkg/new.go").exists()


def test_empty_content_names_unrecognized_keys(ws: Workspace) -> None:
    r = ws.call("ws_write", {"path": "a.txt", "file_text": "hello", "mode": "w"})
    assert not r.ok
    assert "Write refused — content is empty, so this would create a.txt as a 0-byte file." in r.text
    assert "Unrecognized key(s) in your call: 'file_text', 'mode'." in r.text
    assert r.details["unknown_keys"] == ["file_text", "mode"]


def test_emptying_an_existing_file_needs_allow_shrink(ws: Workspace, root: Path) -> None:
    (root / "a.txt").write_text("keep\n")
    _read(ws, "a.txt")
    r = ws.call("ws_write", {"path": "a.txt", "content": ""})
    assert not r.ok and '"allow_shrink": true' in r.text
    assert (root / "a.txt").read_text() == "keep\n"
    assert ws.call("ws_write", {"path": "a.txt", "content": "", "allow_shrink": True}).ok
    assert (root / "a.txt").read_text() == ""


def test_control_dir_is_refused_with_spec_wording(ws: Workspace, root: Path) -> None:
    r = ws.call("ws_write", {"path": ".kli/hooks.json", "content": "{}\n"})
    assert not r.ok
    assert r.text.startswith(
        "write refused — .kli/hooks.json is harness control state, not project source."
    )
    assert "If you need scratch space, write under .kli/scratch/ instead." in r.text
    assert not (root / ".kli/hooks.json").exists()
    assert ws.call("ws_write", {"path": ".kli/scratch/notes.md", "content": "n\n"}).ok


def test_syntax_break_of_a_parsing_file_is_reverted(ws: Workspace, root: Path) -> None:
    (root / "a.py").write_text("x = 1\n")
    _read(ws, "a.py")
    r = ws.call("ws_write", {"path": "a.py", "content": "x = (\n"})
    assert not r.ok and r.details["error"] == "syntax_reverted"
    assert "a.py parsed correctly before your change and does NOT parse after it" in r.text
    assert (root / "a.py").read_text() == "x = 1\n"
    # disable_syntax_check lets it through.
    r = ws.call("ws_write", {"path": "a.py", "content": "x = (\n", "disable_syntax_check": True})
    assert r.ok and (root / "a.py").read_text() == "x = (\n"


def test_new_broken_file_is_written_with_the_error_in_band(ws: Workspace, root: Path) -> None:
    r = ws.call("ws_write", {"path": "c.json", "content": '{"a": }\n'})
    assert r.ok
    assert "[syntax: c.json does not parse (json.load)" in r.text
    assert (root / "c.json").exists()


def test_identical_content_is_reported_unchanged(ws: Workspace, root: Path) -> None:
    (root / "a.txt").write_text("same\n")
    _read(ws, "a.txt")
    r = ws.call("ws_write", {"path": "a.txt", "content": "same\n"})
    assert r.ok and "unchanged" in r.text


def test_write_then_write_again_needs_no_reread(ws: Workspace, root: Path) -> None:
    assert ws.call("ws_write", {"path": "a.txt", "content": "one\n"}).ok
    assert ws.call("ws_write", {"path": "a.txt", "content": "two\n"}).ok
    assert (root / "a.txt").read_text() == "two\n"


def test_unknown_keys_are_reported_on_success(ws: Workspace) -> None:
    r = ws.call("ws_write", {"path": "a.txt", "content": "x\n", "overwrite": True})
    assert r.ok and "[ignored unrecognized key(s): 'overwrite']" in r.text


def test_a_copy_of_a_read_file_points_at_ws_mv(ws: Workspace, root: Path) -> None:
    (root / "old_name.py").write_text("def f():\n    return 1\n")
    _read(ws, "old_name.py")
    r = ws.call("ws_write", {"path": "new_name.py", "content": "def f():\n    return 1\n"})
    assert r.ok
    assert "this is exactly the content of old_name.py, which still exists" in r.text
    assert 'ws_mv {"src":"old_name.py","dst":"new_name.py"}' in r.text
    other = ws.call("ws_write", {"path": "other.py", "content": "x = 2\n"})
    assert "ws_mv" not in other.text


def test_a_fifo_is_refused_not_opened(ws: Workspace, root: Path) -> None:
    import os

    os.mkfifo(root / "pipe")
    r = ws.call("ws_write", {"path": "pipe", "content": "x\n"})
    assert not r.ok and r.details["error"] == "not_a_file"
