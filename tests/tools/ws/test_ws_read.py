"""ws_read: the window, the gutter, the hard ceiling, the paging footer, recovery messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from kli.tools import Workspace


@pytest.fixture
def bar(root: Path) -> Path:
    p = root / "pkg" / "foo" / "bar.go"
    p.parent.mkdir(parents=True)
    p.write_text("".join(f"line {i}\n" for i in range(1, 481)))
    return p


def test_default_window_is_120_lines_with_gutter(ws: Workspace, bar: Path) -> None:
    r = ws.call("ws_read", {"path": "pkg/foo/bar.go"})
    assert r.ok
    lines = r.text.splitlines()
    assert lines[0] == "     1|line 1"
    assert lines[119] == "   120|line 120"
    assert "   121|" not in r.text


def test_footer_is_the_spec_text_verbatim(ws: Workspace, bar: Path) -> None:
    r = ws.call("ws_read", {"path": "pkg/foo/bar.go"})
    assert r.text.endswith(
        "[showing lines 1–120 of 480 in pkg/foo/bar.go; use offset= to see more]\n"
        'Next page: ws_read {"path":"pkg/foo/bar.go","offset":121,"limit":120}. '
        "To jump straight to a symbol use ws_grep first."
    )


def test_offset_and_limit_page_through(ws: Workspace, bar: Path) -> None:
    r = ws.call("ws_read", {"path": "pkg/foo/bar.go", "offset": 121, "limit": 10})
    assert r.text.splitlines()[0] == "   121|line 121"
    assert "[showing lines 121–130 of 480 in pkg/foo/bar.go; use offset= to see more]" in r.text
    assert '"offset":131,"limit":10' in r.text


def test_last_page_has_no_next_call(ws: Workspace, bar: Path) -> None:
    r = ws.call("ws_read", {"path": "pkg/foo/bar.go", "offset": 400})
    assert r.ok
    assert "   480|line 480" in r.text
    assert "Next page" not in r.text
    assert "[showing lines 400–480 of 480 in pkg/foo/bar.go; end of file" in r.text


def test_whole_small_file_has_no_footer(ws: Workspace, root: Path) -> None:
    (root / "a.py").write_text("x = 1\ny = 2\n")
    r = ws.call("ws_read", {"path": "a.py"})
    assert r.text == "     1|x = 1\n     2|y = 2"


def test_read_window_lines_setting(root: Path, bar: Path) -> None:
    ws = Workspace(str(root), {"read_window_lines": 50})
    r = ws.call("ws_read", {"path": "pkg/foo/bar.go"})
    assert "[showing lines 1–50 of 480" in r.text and '"offset":51,"limit":50' in r.text


def test_hard_ceiling_cuts_the_window_at_a_line_and_footer_stays_exact(root: Path) -> None:
    # 1000 tokens of context → 15 % × 4 chars ≈ 600 characters per read.
    ws = Workspace(str(root), {"context_window_tokens": 2000})
    (root / "wide.txt").write_text("".join(f"{i:04d} " + "w" * 95 + "\n" for i in range(1, 201)))
    r = ws.call("ws_read", {"path": "wide.txt"})
    assert r.ok
    ceiling = int(2000 * 4 * 0.15)
    assert len(r.text) <= ceiling + 400
    shown = [ln for ln in r.text.splitlines() if "|" in ln and ln[:6].strip().isdigit()]
    last = int(shown[-1].split("|")[0])
    assert last < 120
    assert f"[showing lines 1–{last} of 200 in wide.txt; use offset= to see more]" in r.text
    assert f'"offset":{last + 1},"limit":120' in r.text
    assert "read ceiling" in r.text


def test_read_never_exceeds_max_tool_chars_even_with_a_huge_context(root: Path) -> None:
    ws = Workspace(str(root), {"context_window_tokens": 1_000_000})
    (root / "wide.txt").write_text("".join("z" * 200 + "\n" for _ in range(120)))
    r = ws.call("ws_read", {"path": "wide.txt"})
    assert len(r.text) <= 8000
    assert "truncated" not in r.details  # ws_read paged itself; the profile did not cut it


def test_missing_path_points_at_glob_and_list(ws: Workspace, bar: Path) -> None:
    r = ws.call("ws_read", {"path": "bar.go"})
    assert not r.ok and r.details["error"] == "not_found"
    assert "Files with that name: pkg/foo/bar.go" in r.text
    assert 'ws_glob {"pattern":"**/bar.go"}' in r.text and "ws_list" in r.text


def test_directory_points_at_list(ws: Workspace, bar: Path) -> None:
    r = ws.call("ws_read", {"path": "pkg/foo"})
    assert not r.ok and 'ws_list {"path":"pkg/foo"}' in r.text


def test_out_of_range_offset_gives_valid_range(ws: Workspace, bar: Path) -> None:
    r = ws.call("ws_read", {"path": "pkg/foo/bar.go", "offset": 900})
    assert not r.ok
    assert "valid offsets are 1–480" in r.text
    assert '"offset":361' in r.text


def test_empty_and_binary_files(ws: Workspace, root: Path) -> None:
    (root / "e.txt").write_text("")
    (root / "b.bin").write_bytes(b"\x00\x01\x02")
    assert ws.call("ws_read", {"path": "e.txt"}).text == "(e.txt is empty — 0 lines)"
    r = ws.call("ws_read", {"path": "b.bin"})
    assert not r.ok and "binary" in r.text


def test_read_is_recorded_in_the_session(ws: Workspace, root: Path) -> None:
    (root / "a.py").write_text("x = 1\n")
    assert not ws.default_session.has_read(str(root / "a.py"))
    ws.call("ws_read", {"path": "a.py"})
    assert ws.default_session.has_read(str((root / "a.py").resolve()))


def test_paths_are_jailed(ws: Workspace, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("s\n")
    r = ws.call("ws_read", {"path": "../secret.txt"})
    assert not r.ok and "escapes the workspace root" in r.text


def test_crlf_lines_are_shown_without_carriage_returns(ws: Workspace, root: Path) -> None:
    (root / "w.txt").write_bytes(b"a\r\nb\r\n")
    assert ws.call("ws_read", {"path": "w.txt"}).text == "     1|a\n     2|b"


@pytest.mark.parametrize("trailing", ["", "\n"])
def test_line_count_past_the_window_matches_split_lines(ws: Workspace, root: Path, trailing: str) -> None:
    body = "\n".join(f"l{i}" for i in range(1, 301)) + trailing
    (root / "n.txt").write_text(body)
    r = ws.call("ws_read", {"path": "n.txt", "limit": 5})
    assert "[showing lines 1–5 of 300 in n.txt" in r.text
    r = ws.call("ws_read", {"path": "n.txt", "offset": 300})
    assert r.text.startswith("   300|l300")


def test_tiny_result_cap_still_shows_a_window(root: Path) -> None:
    ws = Workspace(str(root), {"max_tool_chars": 300})
    (root / "a.txt").write_text("".join(f"line {i}\n" for i in range(100)))
    r = ws.call("ws_read", {"path": "a.txt"})
    assert r.ok and r.text.startswith("     1|line 0") and len(r.text) <= 300


def test_a_fifo_is_refused_not_waited_on(ws: Workspace, root: Path) -> None:
    import os

    os.mkfifo(root / "pipe")
    r = ws.call("ws_read", {"path": "pipe"})
    assert not r.ok and r.details["error"] == "not_a_file"
