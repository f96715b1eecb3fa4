"""kli-scan, search's native first pass (native/kli-scan, kli.tools.file.firstpass): its records,
its listing standing in for the walk, and the rules for running it. The answers it gives
search and ws_grep are compared with the Python-only path by the differential property tests
in test_search_rg.py, which run once per first pass."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from kli.tools import Workspace
from kli.tools.file import search as search_mod
from kli.tools.file import walk as walk_mod
from kli.tools.file.firstpass import binaries, kli_scan, run, rust_regex

from .test_search_rg import SCAN, _answer, _no_rg, _nul_tree, count_sniffs, needs_scan

pytestmark = needs_scan


def _scan(root: str, pattern: str = "foo", top: str = "",
          name_glob: str | None = None) -> run.Counts:
    ws = Workspace(root)
    translation = rust_regex.translate(pattern, 0)
    assert translation is not None
    running = run.start(ws.jail, translation, top, max_bytes=search_mod.MAX_FILE_BYTES,
                           name_glob=name_glob)
    assert isinstance(running, run.Running) and running.scan
    counts = running.finish(time.monotonic() + 30)
    assert isinstance(counts, run.Counts), counts
    return counts


def test_kli_scan_settles_binary_large_and_text_files_and_lists_the_rest() -> None:
    """A NUL before offset 8192: binary; over the cap: large (neither read whole); text: its
    count of matching lines; a NUL further on: left to the caller (U), as rg's log leaves it;
    symlinks listed, never followed; every entry counted."""
    root = _nul_tree()
    try:
        counts = _scan(root)
        assert counts.program == "kli-scan" and counts.exact_names
        assert counts.verdicts == {"n0.bin": "binary", "n8191.txt": "binary",
                                   "big.txt": "large"}
        assert counts.lines == {"t.txt": 1, "a.txt": 1}
        listing = counts.listing
        assert listing is not None and listing.top == ""
        assert sorted(listing.files) == ["a.txt", "big.txt", "n0.bin", "n8191.txt",
                                         "n8192.txt", "n9000.txt", "t.txt"]
        assert sorted(listing.symlinks) == ["link.txt", "out.txt"]
        assert listing.visited == len(os.listdir(root))
    finally:
        shutil.rmtree(root)


def test_kli_scan_records_keep_names_byte_for_byte() -> None:
    """Names with a newline, a NUL-free control character, a colon and bytes that are not
    UTF-8 come back as os.fsdecode gives them: nothing in a name can forge a record."""
    root = Path(_nul_tree())
    try:
        odd = ["a\nb.txt", "c:d\x01.txt", os.fsdecode(b"e\xff.txt"), "-x.txt"]
        for name in odd:
            (root / name).write_bytes(b"foo\nfoo\n")
        counts = _scan(str(root))
        for name in odd:
            assert counts.lines[name] == 2, name
    finally:
        shutil.rmtree(root)


def test_records_parse_every_kind() -> None:
    out = b"C\0a\nb\x003\0B\0x.bin\x000\0L\0big\x009\0U\0late\x000\0S\0ln\x000\0V\0\x007\0"
    lines, verdicts, listing = kli_scan.parse(out, "")
    assert lines == {"a\nb": 3}
    assert verdicts == {"x.bin": "binary", "big": "large"}
    assert listing == walk_mod.Listing("", ["a\nb", "x.bin", "big", "late"], ["ln"], 7)
    # Cut short (no V record: killed at the deadline): counts, but no listing for the walk.
    assert kli_scan.parse(out[: out.index(b"V\0")], "")[2] is None


def _odd_tree() -> str:
    """Every kind of entry a walk meets: nested folders, a .git folder, a temporary file of
    an interrupted write, symlinks to a file inside, outside, dangling and to a folder, a FIFO."""
    root = Path(_nul_tree())
    (root / "sub" / "deep").mkdir(parents=True)
    (root / "sub" / "deep" / "d.py").write_text("foo\n")
    (root / "sub" / "c.txt").write_text("foo\n")
    (root / "sub" / ".git").mkdir()
    (root / "sub" / ".git" / "config").write_text("foo\n")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("foo\n")
    (root / ".x.txt.1234.kli-tmp").write_text("foo\n")
    (root / "sub" / "up.txt").symlink_to("../t.txt")
    (root / "dangling.txt").symlink_to("nowhere.txt")
    (root / "dirlink").symlink_to("sub")
    os.mkfifo(root / "fifo.txt")
    return str(root)


@pytest.mark.parametrize("pattern", ["**", "**/*.txt", "**/*.py", "sub/**", "sub/**/*.txt",
                                     "**/{a,t}.txt", "**/c*", ".git/**"])
def test_the_listing_gives_the_walks_own_files(pattern: str) -> None:
    root = _odd_tree()
    try:
        ws = Workspace(root)
        top, name = walk_mod.top(ws.jail, pattern)
        counts = _scan(root, top=top, name_glob=name)
        assert counts.listing is not None
        assert walk_mod.whole_folder(ws.jail, pattern) == top
        listed = walk_mod.walk(ws.jail, pattern, listed=counts.listing)
        walked = walk_mod.walk(ws.jail, pattern)
        assert listed.paths == walked.paths
        assert listed.visited == walked.visited and listed.stopped is None
    finally:
        shutil.rmtree(root)


def test_a_listing_never_stands_in_where_the_walk_would_not_visit_the_folder_whole() -> None:
    root = _odd_tree()
    try:
        ws = Workspace(root)
        assert walk_mod.whole_folder(ws.jail, "*.txt") is None  # a depth limit
        assert walk_mod.whole_folder(ws.jail, "{sub,.git}/**") is None  # two folders
        assert walk_mod.whole_folder(ws.jail, "dirlink/**") is None  # through a symlink
        listing = _scan(root).listing
        assert listing is not None
        # Over the entry bound, the walk runs here (and stops at the bound as before).
        bounded = walk_mod.walk(ws.jail, "**", listed=listing, max_entries=3)
        assert bounded.stopped == "entries"
        # A listing of another folder is not taken.
        assert walk_mod.walk(ws.jail, "sub/**", listed=listing).paths == [
            "sub/c.txt", "sub/deep/d.py", "sub/up.txt"]
    finally:
        shutil.rmtree(root)


@pytest.mark.parametrize("tool, args", [
    ("search", {"pattern": "foo", "path": "**"}),
    ("search", {"pattern": "foo", "path": "."}),
    ("ws_grep", {"pattern": "foo"}),
    ("ws_grep", {"pattern": "foo", "glob": "*.txt"}),
])
def test_with_kli_scan_search_neither_walks_nor_sniffs_what_it_settled(
    monkeypatch: pytest.MonkeyPatch, tool: str, args: dict[str, object]
) -> None:
    """The listing stands in for the Python walk (no folder is listed here) and the records'
    verdicts for the sniff (only the files kli-scan left to the caller are looked at); the
    answer is the Python-only path's."""
    root = _odd_tree()
    try:
        with pytest.MonkeyPatch.context() as mp:
            sniffed = count_sniffs(mp, root)

            def no_scandir(path: str) -> None:
                raise AssertionError(f"walked in Python: {path}")

            mp.setattr(walk_mod.os, "scandir", no_scandir)
            fast = _answer(root, tool, args)
        assert fast[5] == "kli-scan"
        assert set(sniffed) <= {"n8192.txt", "n9000.txt", "link.txt", "sub/up.txt"}
        _no_rg(monkeypatch)
        slow = _answer(root, tool, args)
        assert fast[:4] == slow[:4]
    finally:
        shutil.rmtree(root)


def test_a_kli_scan_under_the_workspace_root_is_never_run(
    ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert SCAN is not None
    planted = root / "native" / "kli-scan"
    planted.parent.mkdir()
    planted.write_bytes(Path(SCAN).read_bytes())
    planted.chmod(0o755)
    monkeypatch.setattr(binaries, "scan_built", lambda: (str(planted), ""))
    path, _why = binaries.locate(ws.jail)
    assert path != str(planted)  # rg, or nothing: never the planted binary
    (root / "a.py").write_text("needle\n")
    r = ws.call("search", {"pattern": "needle", "path": "**"})
    assert r.details["engine_pass"] != "kli-scan" and r.details["files_matched"] == 1


def test_the_engine_switch_takes_rg_where_kli_scan_is_built(
    ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (root / "a.py").write_text("needle\n")
    assert ws.call("search", {"pattern": "needle", "path": "**"}).details["engine_pass"] == (
        "kli-scan")
    monkeypatch.setenv(binaries.ENGINE_ENV, "rg")
    r = ws.call("search", {"pattern": "needle", "path": "**"})
    assert r.details["engine_pass"] == "rg" and r.details["files_matched"] == 1
    assert r.details["engine_note"] == f"kli-scan passed by ({binaries.ENGINE_ENV}=rg)"
    # ws_grep waits for rg here (else its first files are searched before rg ends).
    monkeypatch.setattr(run.Running, "done", lambda self: self.proc.wait() is not None)
    g = ws.call("ws_grep", {"pattern": "needle"})
    assert g.details["engine_pass"] == "rg" and "kli-scan passed by" in g.details["engine_note"]


def test_a_pattern_kli_scan_refuses_is_searched_in_python_and_says_so(
    ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A translation the engine will not compile (here: a repetition over its size limit,
    forced through the translator) leaves the search to Python, with the reason."""
    (root / "a.py").write_text("aaa\n")
    real = rust_regex.translate
    monkeypatch.setattr(search_mod, "translate", lambda p, f: rust_regex.Translation(
        "a{1000}{1000}{1000}", True, "") if p == "a" else real(p, f))
    r = ws.call("search", {"pattern": "a", "path": "**"})
    assert r.ok and r.details["engine"] == "python" and r.details["files_matched"] == 1
    assert r.details["engine_note"].startswith("kli-scan refused the pattern")


def test_kli_scan_stops_past_the_walks_entry_bound_and_the_walk_takes_over(
    ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tree larger than the walk's entry bound is not read whole first: kli-scan quits soon
    after the bound, the walk runs here and stops at it, and the search says so."""
    for i in range(400):
        (root / f"f{i:03}.txt").write_text("needle\n")
    monkeypatch.setattr(walk_mod, "MAX_ENTRIES", 10)
    counts = _scan(str(root))
    assert counts.listing is not None and counts.listing.visited > 10
    assert len(counts.lines) < 200  # quit early (two walker threads may each finish a few)
    r = ws.call("search", {"pattern": "needle", "path": "**"})
    assert r.details["stopped"] == "entries" and r.details["files_matched"] == 10
    assert "walk stopped" in r.details["engine_note"]
    monkeypatch.setattr(walk_mod, "MAX_ENTRIES", 400)  # exactly the bound: the listing serves
    counts = _scan(str(root))
    assert counts.listing is not None and counts.listing.visited == 400
    assert walk_mod.walk(ws.jail, "**", listed=counts.listing).stopped is None
