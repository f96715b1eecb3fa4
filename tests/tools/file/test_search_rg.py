"""The native first pass of search and ws_grep (kli.tools.file.firstpass: kli-scan, and
rg where kli-scan is not built) gives exactly the answers of the Python-only path: a
differential property test, run for each of the two, over random trees and random patterns of
the documented syntax — including the constructs rg reads differently
(Python's Unicode \\d \\w \\s, (?i) folding, \\b, \\A \\Z, look-arounds, back-references,
possessive repeats, '.' against undecodable bytes, NULs past the binary sniff) — plus the
safety rules of running rg."""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kli.tools import Workspace
from kli.tools.file import search as search_mod
from kli.tools.file.firstpass import binaries, rg, run, rust_regex, sniff
from kli.tools.ws import ws_grep as ws_grep_mod

RG, WHY_NOT = binaries.rg_installed()
SCAN, WHY_NO_SCAN = binaries.scan_built()
# CI installs the ripgrep wheel (pyproject.toml) and builds kli-scan (scripts/test,
# KLI_REQUIRE_NATIVE): there a missing one is a failure, not a skip.
needs_rg = pytest.mark.skipif(
    RG is None and not os.environ.get("CI"), reason=f"rg not available: {WHY_NOT}"
)
needs_scan = pytest.mark.skipif(
    SCAN is None and not os.environ.get("CI"), reason=f"kli-scan not built: {WHY_NO_SCAN}"
)
# The first passes the differential tests run: each one this installation has (in CI, both).
ENGINES = [e for e, there in (("kli-scan", SCAN), ("rg", RG)) if there or os.environ.get("CI")]


def _engine(mp: pytest.MonkeyPatch, engine: str) -> None:
    """Make ``engine`` ("kli-scan" or "rg") the first pass search and ws_grep take."""
    mp.setenv(binaries.ENGINE_ENV, "rg" if engine == "rg" else "")


@pytest.fixture
def rg_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """rg as the first pass, even where kli-scan is built (a test of rg's own output)."""
    _engine(monkeypatch, "rg")


def _no_rg(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(binaries, "locate", lambda jail: (None, "switched off by the test"))


# -- random trees ---------------------------------------------------------------------------

_PIECES = [
    "a", "b", "ab", "ba", "foo", "Foo", "FOO", " ", "\t", "\n", "\n", "\r\n", "_", "1", "42",
    "é", "É", "ı", "İ", "I", "i", "K", "\u212a", "k", "s", "\u017f", "ß", "SS", "\u0663",
    "\u07c0", "\U00011f50", "\u00b2", "\u0301", "\u2028", "\x85", "\x0b", "x.y", "(", ")", "\\",
]
_BYTES = [b"\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xf0\x9f\x98\x80", b"\n\xff\n",
          b"a\xffb"]


@st.composite
def _content(draw: Any) -> bytes:
    parts: list[bytes] = []
    for _ in range(draw(st.integers(0, 30))):
        if draw(st.integers(0, 3)) == 0:
            parts.append(draw(st.sampled_from(_BYTES)))
        else:
            parts.append(draw(st.sampled_from(_PIECES)).encode("utf-8"))
    data = b"".join(parts)
    kind = draw(st.sampled_from(["text", "text", "text", "nul_early", "nul_late", "big"]))
    if kind == "nul_early":
        data = data[:5] + b"\0" + data[5:]
    elif kind == "nul_late":  # past the 8192-byte sniff: text for search, binary for rg
        data = data + b"\n" + b"z" * 9000 + b"\0 foo\n" + data
    elif kind == "big":  # over the (shrunk) size cap
        data = data + b"\nfoo\n" * 40
    return data


_NAMES = ["a.txt", "b.py", "sub/c.txt", "sub/deep/d.py", "e f.txt", "g:h.py", ".hidden",
          "sub/.git/config", "nb.ipynb", "z.md",
          # Names search sniffs while rg runs (sniff.LIKELY_BINARY): their bytes decide.
          "x.pyc", "sub/y.so", "d.DAT", "w.png"]
# Random names too: spaces, colons, non-ASCII, a newline, leading dots and dashes.
_NAME_PART = st.text(
    alphabet=st.sampled_from([*"abAB.-_ :é\u0131\n", "\u212a"]), min_size=1, max_size=6
).filter(lambda n: n not in (".", "..") and not n.endswith(".kli-tmp"))
_RANDOM_NAME = st.builds(
    lambda parts: "/".join(parts), st.lists(_NAME_PART, min_size=1, max_size=3)
)


def _notebook(sources: list[str]) -> bytes:
    cells = [
        {"cell_type": "code", "id": f"c{i}", "metadata": {}, "execution_count": None,
         "outputs": [], "source": src}
        for i, src in enumerate(sources)
    ]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4,
                       "nbformat_minor": 5}).encode()


@st.composite
def _tree(draw: Any) -> dict[str, bytes]:
    names = draw(st.lists(st.one_of(st.sampled_from(_NAMES), _RANDOM_NAME), min_size=1,
                          max_size=8, unique=True))
    # A file and a folder cannot share a name: keep the first of any clash.
    kept: list[str] = []
    for n in names:
        if not any(k.startswith(n + "/") or n.startswith(k + "/") for k in kept):
            kept.append(n)
    files = {n: draw(_content()) for n in kept}
    if "nb.ipynb" in files and draw(st.booleans()):  # a real notebook: searched as cells
        pieces = st.sampled_from(["foo", "a", "é", " ", "\n", "ı", "b", "\\"])
        files["nb.ipynb"] = _notebook(draw(st.lists(
            st.lists(pieces, max_size=8).map("".join), min_size=1, max_size=3)))
    return files


def _make(files: dict[str, bytes]) -> str:
    root = tempfile.mkdtemp(prefix="kli-rg-")
    for rel, data in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(data)
    os.symlink("a.txt", os.path.join(root, "link.txt"))  # inside: searched (if a.txt exists)
    os.symlink("/etc/hostname", os.path.join(root, "out.txt"))  # outside: never searched
    return root


# -- random patterns ------------------------------------------------------------------------

_ATOMS = [
    "a", "b", "foo", "Foo", "é", "ı", "K", "ß", "s", "\u0663", "1", "_", " ", ".", ".*", "a+",
    "b*", "a?", "a{2}", "a{1,3}", r"\d", r"\D", r"\w", r"\W", r"\s", r"\S", r"\b", r"\B", "^",
    "$", r"\A", r"\Z", "[a-c]", "[^a]", "[^\\w]", r"[\d_]", "[éK]", "(?i:foo)", "(?i:ı)",
    "(?=a)", "(?!b)", "(?<=a)", "(?<!b)", "(a)\\1", "a*+", "(?>a+)", "(a)?(?(1)b|c)", "|",
    "(?:a|b)", r"\.", r"\(", r"\\", r"\n", "\\x85", "\u212a", r"[^\n]", r"\s+$",
    # Spelled differently (or not at all) in rg's syntax: octal and named escapes, {,n},
    # POSIX-looking classes, a class's backspace, comments, verbose mode's spaces, \Z.
    "a{,2}", "a{2,}", "[[:alpha:]]", "[a-]", "[]a]", r"\x41", r"\u00e9", r"\101", r"\0",
    r"\N{LATIN SMALL LETTER E WITH ACUTE}", "[\\b]", r"\v", r"\f", "(?#c)", "# c", "a b",
    "(?P<n>a)(?P=n)", "\x00", r"\Z", "(?u)", r"[\s\S]", r"\$",
]
_PREFIX = st.sampled_from(["", "", "", "(?i)", "(?a)", "(?ai)", "(?s)", "(?x)"])
# Short patterns, the constructs rg reads differently drawn as often as all the rest.
_TRICKY = [".", "[^a]", r"\W", r"\D", r"\S", r"\b", r"\A", r"\Z", "(?<=a)", r"(a)\1", "a*+",
           "(?i:ı)", "(?i:K)", r"\d", r"\w", r"\s", "$", "^"]
_PATTERN = st.builds(
    lambda p, atoms: p + "".join(atoms),
    _PREFIX,
    st.lists(st.one_of(st.sampled_from(_TRICKY), st.sampled_from(_ATOMS)), min_size=1,
             max_size=4),
)
# Several patterns per tree: each example tries many patterns on one random tree.
_PATTERNS = st.lists(_PATTERN.filter(lambda p: _valid(p)), min_size=6, max_size=6, unique=True)


def _valid(pattern: str) -> bool:
    try:
        re.compile(pattern, re.MULTILINE)
    except (re.error, OverflowError, ValueError):  # ValueError: (?a) with (?u)
        return False
    return True


def _views(ws: Workspace) -> dict[str, Any]:
    return {
        os.path.relpath(k, ws.jail.root): (dict(v.texts), set(v.cut), v.base)
        for k, v in ws.default_session.views.items()
    }


def _answer(root: str, tool: str, args: dict[str, Any]) -> tuple[Any, ...]:
    ws = Workspace(root)
    r = ws.call(tool, args)
    details = {k: v for k, v in r.details.items() if not k.startswith("engine")}
    return (r.ok, r.text, details, _views(ws), r.details.get("engine"),
            r.details.get("engine_pass"))


@needs_rg
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(files=_tree(), patterns=_PATTERNS,
       path=st.sampled_from(["**", ".", "sub", "**/*.py", "**/*.txt", "*", "sub/**"]),
       context=st.sampled_from([0, 0, 1]), sniff_first=st.booleans(),
       engine=st.sampled_from(ENGINES))
def test_search_with_rg_gives_the_python_answer(
    files: dict[str, bytes], patterns: list[str], path: str, context: int, sniff_first: bool,
    engine: str,
) -> None:
    """Same text (rows, anchors, bounds, skip notes), same details, same recorded views."""
    root = _make(files)
    mp = pytest.MonkeyPatch()
    try:
        _engine(mp, engine)
        mp.setattr(search_mod, "MAX_FILE_BYTES", 200)  # so "big" files are over the cap
        mp.setattr(search_mod, "MAX_FILES", 3)  # so the file bound is reached often
        mp.setattr(search_mod, "MAX_MATCH_LINES", 5)
        if sniff_first:  # rg "still running" while the walk ends: the likely-binary names
            mp.setattr(run.Running, "done", lambda self: False)  # are sniffed meanwhile
        for pattern in patterns:
            args = {"pattern": pattern, "path": path, "context": context}
            fast = _answer(root, "search", args)
            with pytest.MonkeyPatch.context() as off:
                _no_rg(off)
                slow = _answer(root, "search", args)
            assert slow[4] in ("python", None)  # None: an error result (no such folder)
            assert fast[:4] == slow[:4], (pattern, fast[4])
            assert fast[5] in (engine, None), (pattern, fast[5])  # None: not used (details)
    finally:
        mp.undo()
        shutil.rmtree(root)


@needs_rg
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(files=_tree(), patterns=_PATTERNS, ignore_case=st.booleans(),
       glob=st.sampled_from([None, "*.py", "sub/**"]), engine=st.sampled_from(ENGINES))
def test_ws_grep_with_rg_gives_the_python_answer(
    files: dict[str, bytes], patterns: list[str], ignore_case: bool, glob: str | None,
    engine: str,
) -> None:
    root = _make(files)
    mp = pytest.MonkeyPatch()
    try:
        _engine(mp, engine)
        mp.setattr(ws_grep_mod, "MAX_FILE_BYTES", 200)
        mp.setattr(ws_grep_mod, "GREP_MAX_HITS", 4)
        # Wait for rg before the first file, so its counts are what decides here.
        mp.setattr(run.Running, "done", lambda self: self.proc.wait() is not None)
        for pattern in patterns:
            args: dict[str, Any] = {"pattern": pattern, "ignore_case": ignore_case}
            if glob:
                args["glob"] = glob
            fast = _answer(root, "ws_grep", args)
            with pytest.MonkeyPatch.context() as off:
                _no_rg(off)
                slow = _answer(root, "ws_grep", args)
            assert fast[:4] == slow[:4], (pattern, fast[4])
            assert fast[5] in (engine, None), (pattern, fast[5])
    finally:
        mp.undo()
        shutil.rmtree(root)


# Cases where rg's own reading of the pattern differs from Python's: each must still agree.
_KNOWN = [
    (b"\xff\n", "."),
    (b"a\xffb\nab\n", "a.b"),
    (b"a\xffb\n", "a[^x]b"),
    (b"a\xffb\n", r"a\Wb"),
    ("\u0131\n".encode(), "(?i)i"),
    ("\u017f\n".encode(), "(?i)s"),
    ("\u212a\n".encode(), "(?i)k"),
    ("\u00df\n".encode(), "(?i)SS"),
    ("\U00011f50\n".encode(), r"\d"),
    ("a\u0301b\n".encode(), r"a\wb"),
    ("x\u00b2\n".encode(), r"x\d"),
    ("caf\u00e9\n".encode(), r"\bcaf\b"),
    ("x\u0085y\n".encode(), r"x\sy"),
    (b"foo\nfoo\n", r"foo\Z"),
    (b"foo\nbar\n", r"\Abar"),
    (b"ab\r\nab\n", "ab$"),
    (b"a\nb\n", "(?<=a\n)b"),
    (b"aa\nab\n", r"(a)\1"),
    (b"aaa\n", "a*+a"),
    (b"z" * 9000 + b"\0 foo\nfoo\n", "foo"),
    (b"foo\0\nfoo\n", "foo"),
    ("a\u2028b\n".encode(), "^b"),
    (b"\xef\xbb\xbffoo\n", "^foo"),
    (b"\xff\xfef\x00o\x00o\x00\n\x00", "foo"),
]


@needs_rg
@pytest.mark.parametrize(("data", "pattern"), _KNOWN)
def test_constructs_rg_reads_differently_give_the_python_answer(
    data: bytes, pattern: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _make({"f.txt": data, "g.txt": data + b"\n" + data})
    try:
        fast = _answer(root, "search", {"pattern": pattern, "path": "**"})
        grep_fast = _answer(root, "ws_grep", {"pattern": pattern})
        _no_rg(monkeypatch)
        slow = _answer(root, "search", {"pattern": pattern, "path": "**"})
        grep_slow = _answer(root, "ws_grep", {"pattern": pattern})
    finally:
        shutil.rmtree(root)
    assert fast[4] in ("rg", "rg+python")
    assert fast[:4] == slow[:4]
    assert grep_fast[:4] == grep_slow[:4]


# -- the translation ------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("pattern", "exact"),
    [
        ("def __init__", True),
        (r"class \w+Error\(", True),
        (r"^\s*import\s+os$", True),
        ("(?i)foo", True),
        (r"\d+", True),
        ("foo.*bar", False),  # '.' also matches an undecodable byte in Python
        (r"\bfoo\b", False),  # Python's word characters are not rg's
        (r"foo\Z", False),
        ("(?<=a)b", False),
        (r"(a)\1", False),
        ("[^a]", False),
    ],
)
def test_translation_says_whether_rg_counts_are_exact(pattern: str, exact: bool) -> None:
    t = rust_regex.translate(pattern, re.MULTILINE)
    assert t is not None and t.exact is exact
    assert bool(t.why) is not exact


def test_translation_writes_the_matchers_own_tables_out() -> None:
    """Sets are the tools' matcher's (regex, VERSION0) own, written out as code points."""
    d = rust_regex.translate(r"\d", 0)
    assert d is not None and r"\x{660}-\x{669}" in d.pattern  # Arabic-Indic digits
    assert "B2" not in d.pattern  # superscript two is no decimal digit
    # (?i)i: regex folds it with İ (U+0130), not with the dotless ı (U+0131) as re does.
    i = rust_regex.translate("(?i)i", 0)
    assert i is not None and "130" in i.pattern and "131" not in i.pattern
    k = rust_regex.translate("(?i)k", 0)
    assert k is not None and "212A" in k.pattern  # the Kelvin sign


def test_translation_declines_a_newline_or_surrogate() -> None:
    assert rust_regex.translate(r"a\nb", re.MULTILINE) is None
    assert rust_regex.translate("\udcff", re.MULTILINE) is None


# -- running rg safely ----------------------------------------------------------------------

@needs_rg
def test_search_uses_rg_and_says_so_in_details(ws: Workspace, root: Path) -> None:
    (root / "a.py").write_text("def foo():\n    pass\n")
    r = ws.call("search", {"pattern": "def foo", "path": "**"})
    assert r.details["engine"] == "rg" and r.details["files_matched"] == 1
    r = ws.call("search", {"pattern": r"\bfoo\b", "path": "**"})
    assert r.details["engine"] == "rg+python"
    assert "Python matched" in r.details["engine_note"]
    r = ws.call("search", {"pattern": "foo", "path": "a.py"})
    assert r.details["engine"] == "python"


@needs_rg
def test_ignore_and_config_files_in_the_root_change_nothing(
    ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (root / ".gitignore").write_text("*.py\n")
    (root / ".ignore").write_text("*.py\n")
    (root / ".rgignore").write_text("*.py\n")
    (root / "rgrc").write_text("--max-count=0\n")
    monkeypatch.setenv("RIPGREP_CONFIG_PATH", str(root / "rgrc"))
    (root / "a.py").write_text("needle\n")
    r = ws.call("search", {"pattern": "needle", "path": "**"})
    assert r.details["engine"] == "rg" and r.details["files_matched"] == 1


@needs_rg
def test_an_rg_on_path_or_under_the_root_is_never_run(
    ws: Workspace, root: Path, rg_only: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = root / "bin" / "rg"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho pwned > \"$0.ran\"\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(fake.parent))
    (root / "a.py").write_text("needle\n")
    r = ws.call("search", {"pattern": "needle", "path": "**"})
    assert r.details["engine"] == "rg" and not (root / "bin" / "rg.ran").exists()
    assert RG is not None and not RG.startswith(str(root))
    # An rg that resolves under the workspace root is refused (an agent can write there) ...
    planted = root / "tools" / "rg"
    planted.parent.mkdir()
    planted.write_bytes(Path(RG).read_bytes())
    monkeypatch.setattr(binaries, "rg_installed", lambda: (str(planted), ""))
    path, why = binaries.locate(ws.jail)
    assert path is None and "under the workspace root" in why
    monkeypatch.undo()
    _engine(monkeypatch, "rg")  # undone with the rest
    # ... but not the one in the kernel's own environment inside the root (a project's .venv),
    # which is control state no tool writes: the same trust the tools' imports give it.
    inside = Workspace(os.path.dirname(os.path.dirname(RG)))
    assert binaries.locate(inside.jail)[0] == RG
    assert inside.jail.interpreter_control(RG) is not None


def test_without_rg_the_search_runs_in_python_and_says_why(
    ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _no_rg(monkeypatch)
    (root / "a.py").write_text("needle\n")
    r = ws.call("search", {"pattern": "needle", "path": "**"})
    assert r.details["engine"] == "python"
    assert r.details["engine_note"] == "switched off by the test"
    assert r.details["files_matched"] == 1


def test_the_environment_switch_forces_the_python_path_and_says_so(
    ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(binaries.OFF_ENV, "1")
    (root / "a.py").write_text("needle\n")
    r = ws.call("search", {"pattern": "needle", "path": "**"})
    assert r.details["engine"] == "python" and r.details["files_matched"] == 1
    assert r.details["engine_note"] == f"rg switched off ({binaries.OFF_ENV} is set)"
    g = ws.call("ws_grep", {"pattern": "needle"})
    assert g.details["engine"] == "python" and binaries.OFF_ENV in g.details["engine_note"]
    monkeypatch.setenv(binaries.OFF_ENV, "0")  # "0" leaves rg on
    assert binaries.locate(ws.jail)[1] != f"rg switched off ({binaries.OFF_ENV} is set)"


@needs_rg
@pytest.mark.parametrize("pattern", [r"a\nb", "\udcff"])
def test_a_pattern_rg_cannot_read_the_same_is_searched_in_python_and_says_so(
    ws: Workspace, root: Path, pattern: str
) -> None:
    """A newline inside the pattern, or a surrogate standing for an undecodable byte: no
    translation for rg, so today's path runs, with the same answer, and the details say why."""
    (root / "a.py").write_bytes(b"a\nb\n\xff\n")
    r = ws.call("search", {"pattern": pattern, "path": "**"})
    assert r.details["engine"] == "python"
    assert r.details["engine_note"] == "the pattern uses a construct rg cannot read the same way"
    assert r.details["searched"] == 1
    g = ws.call("ws_grep", {"pattern": pattern})
    assert g.details["engine"] == "python"
    assert g.details["engine_note"] == r.details["engine_note"]  # one driver, one set of words


@needs_rg
def test_a_pattern_rg_refuses_is_searched_in_python_and_says_so(
    ws: Workspace, root: Path, rg_only: None
) -> None:
    """A NUL in the pattern: rg, skipping binary files, refuses to look for one."""
    (root / "a.py").write_text("a\n")
    r = ws.call("search", {"pattern": "a\x00", "path": "**"})
    assert r.ok and r.details["engine"] == "python"
    assert r.details["engine_note"].startswith("rg refused the pattern")


def test_rg_counts_parse_paths_with_newlines_and_colons() -> None:
    out = b"./a\nb.txt\x003\n./c:d\x000\n"
    assert rg.parse_counts(out, "") == {"a\nb.txt": 3, "c:d": 0}
    assert rg.parse_counts(b"sub/x\x001\n", "sub") == {"sub/x": 1}


@needs_rg
def test_a_walk_cut_short_by_its_bound_is_searched_without_rg(
    ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kli.tools.file import walk as walk_mod

    monkeypatch.setattr(walk_mod, "MAX_ENTRIES", 3)
    for i in range(6):
        (root / f"f{i}.txt").write_text("needle\n")
    r = ws.call("search", {"pattern": "needle", "path": "**"})
    assert r.details["engine"] == "python" and r.details["stopped"] == "entries"
    assert "walk stopped" in r.details["engine_note"]
    g = ws.call("ws_grep", {"pattern": "needle"})
    assert g.details["engine"] == "python" and "walk stopped" in g.details["engine_note"]


@needs_rg
@pytest.mark.parametrize("data", [b"", b"foo\n"])
def test_ws_grep_line_by_line_patterns_see_the_same_lines_with_rg(
    data: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A \\A or \\Z pattern is matched line by line over text.split("\\n"), which gives an empty
    file one empty line and a final newline one more: rg sees neither, so its count of 0 must
    not rule such a file out when the pattern matches an empty line (found by the property
    test: ``\\A`` over an empty file)."""
    monkeypatch.setattr(run.Running, "done", lambda self: self.proc.wait() is not None)
    root = _make({"a.txt": data})
    try:
        fast = _answer(root, "ws_grep", {"pattern": r"\A"})
        _no_rg(monkeypatch)
        slow = _answer(root, "ws_grep", {"pattern": r"\A"})
    finally:
        shutil.rmtree(root)
    assert fast[4] == "rg+python"
    assert fast[:4] == slow[:4]


def test_the_translation_tables_cost_little_memory() -> None:
    """Every code point is scanned once to write a set out for rg: built from a million
    one-character strings, that made a first \\d search peak at ~120 MB (the bound is 150 MB
    for the whole search; bench_file's memory row caught it)."""
    import tracemalloc

    tracemalloc.start()
    try:
        chars = rust_regex._all_chars.__wrapped__()
        _size, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sum(map(len, chars)) == 0x110000 - 0x800 - 1  # no surrogates, no newline
    assert peak < 30 * 2**20, peak


def count_sniffs(mp: pytest.MonkeyPatch, root: str) -> list[str]:
    """The root-relative files ``sniff.sniff`` looks at from now on (through ``mp``)."""
    sniffed: list[str] = []
    real_sniff = sniff.sniff

    def counting(real: str, cap: int) -> str | None:
        sniffed.append(os.path.relpath(real, root))
        return real_sniff(real, cap)

    mp.setattr(sniff, "sniff", counting)
    return sniffed


def _nul_tree(extra: dict[str, bytes] | None = None) -> str:
    """Files whose first NUL lies just before, at and past the 8 KiB sniff, one over 2 MiB,
    a text file, each holding "foo" before the NUL."""
    files = {f"n{at}.txt": b"foo\n" + b"z" * (at - 4) + b"\0 foo\n" for at in (8191, 8192, 9000)}
    files["n0.bin"] = b"\0foo\n"
    files["big.txt"] = b"foo\n" * (3 * 1024 * 1024 // 4)
    files["t.txt"] = files["a.txt"] = b"foo\n"  # a.txt: link.txt's target (_make)
    files.update(extra or {})
    return _make(files)


@needs_rg
def test_rg_log_says_which_files_it_left_out_as_binary_or_too_large(rg_only: None) -> None:
    """rg's --debug log gives a verdict for a NUL before offset 8192 and a file over the cap;
    a NUL further on is no verdict (search reads such a file as text)."""
    root = _nul_tree()
    try:
        ws = Workspace(root)
        translation = rust_regex.translate("foo", 0)
        assert translation is not None
        running = run.start(ws.jail, translation, "", max_bytes=search_mod.MAX_FILE_BYTES)
        assert isinstance(running, run.Running)
        counts = running.finish(time.monotonic() + 30)
        assert isinstance(counts, run.Counts)
        assert counts.verdicts == {"n0.bin": "binary", "n8191.txt": "binary",
                                   "big.txt": "large"}
        assert counts.lines == {"t.txt": 1, "a.txt": 1}  # rg follows no symlink
    finally:
        shutil.rmtree(root)


@needs_rg
def test_search_takes_binary_and_size_verdicts_from_rg_and_sniffs_only_the_rest(
    monkeypatch: pytest.MonkeyPatch, rg_only: None,
) -> None:
    root = _nul_tree()
    try:
        sniffed = count_sniffs(monkeypatch, root)
        fast = _answer(root, "search", {"pattern": "foo", "path": "**"})
        # Not settled by rg's log: the late NULs (text here), the symlinks rg does not follow.
        assert sorted(sniffed) == ["link.txt", "n8192.txt", "n9000.txt"]
        with pytest.MonkeyPatch.context() as off:
            _no_rg(off)
            slow = _answer(root, "search", {"pattern": "foo", "path": "**"})
        assert fast[4] == "rg" and fast[:4] == slow[:4]
        assert fast[2]["skipped_binary"] == 2 and fast[2]["skipped_too_large"] == 1
        assert fast[2]["files_matched"] == 5  # t, a, link, n8192, n9000
    finally:
        shutil.rmtree(root)


@needs_rg
@pytest.mark.parametrize("engine", ENGINES)
def test_a_file_name_that_could_forge_a_line_of_rgs_log_turns_the_log_off(
    monkeypatch: pytest.MonkeyPatch, engine: str,
) -> None:
    """A binary file named to print, in rg's log, a line calling n9000.txt (text for search:
    its NUL is past the sniff) binary: with a newline in a name under the folder, the log is
    not read, every file rg left out is sniffed, and the answer stays the Python one.
    kli-scan's records name files by their exact bytes: the same name forges nothing there."""
    _engine(monkeypatch, engine)
    forger = "q\nrg: DEBUG|grep_printer::summary|x.rs:1: ignoring ./n9000.txt"
    root = _nul_tree({forger: b"ab\0c"})
    try:
        monkeypatch.setattr(run.Running, "done", lambda self: self.proc.wait() is not None)
        for tool, args in (("search", {"pattern": "foo", "path": "**"}),
                           ("ws_grep", {"pattern": "foo", "glob": "n*.txt"})):
            fast = _answer(root, tool, args)
            with pytest.MonkeyPatch.context() as off:
                _no_rg(off)
                slow = _answer(root, tool, args)
            assert fast[:4] == slow[:4]
            assert "n9000.txt" in fast[1]
    finally:
        shutil.rmtree(root)


def test_rg_log_verdicts_parse_names_that_look_like_rgs_own_words() -> None:
    log = (
        "rg: DEBUG|rg::flags::hiargs|crates/core/flags/hiargs.rs:174: using 2 thread(s)\n"
        "rg: DEBUG|grep_printer::summary|crates/printer/src/summary.rs:698: ignoring "
        "./x: found binary data at offset 5: found binary data at offset 3\n"
        "rg: DEBUG|ignore::walk|crates/ignore/src/walk.rs:1786: ignoring ./y: 7 bytes: "
        "3000000 bytes\n"
        "rg: DEBUG|grep_printer::summary|crates/printer/src/summary.rs:698: ignoring "
        "./late: found binary data at offset 8192\n"
        "rg: DEBUG|grep_printer::summary|crates/printer/src/summary.rs:698: ignoring "
        "./\ufffd.bin: found binary data at offset 0\n"
        "rg: DEBUG|ignore::walk|crates/ignore/src/walk.rs:1799: ignoring ./z: 9 bytes: "
        "Ignore(IgnoreMatch(Override(Glob(UnmatchedIgnore))))\n"
    )
    assert rg.parse_verdicts(log.split("\n"), "", 2 * 1024 * 1024) == {
        "x: found binary data at offset 5": "binary", "y: 7 bytes": "large"}
    assert rg.parse_verdicts(log.replace("./", "sub/").split("\n"), "sub", 2 * 1024 * 1024) == {
        "sub/x: found binary data at offset 5": "binary", "sub/y: 7 bytes": "large"}
