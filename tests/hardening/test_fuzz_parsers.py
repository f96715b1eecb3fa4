"""Property tests on the parsers and the ladder, and on the edit tools that use them: any
input gets a result or a named error (never an internal error), and a rejected edit changes no
byte on disk.

Bounded in CI (hypothesis profile ``ci``); ``KLI_FUZZ_EXAMPLES=100000`` runs them long.
"""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from kli.tools import Workspace
from kli.tools.file import hashline
from kli.tools.file.anchors import line_hash
from kli.tools.ws import ladder, patch_parse, splice

from .conftest import examples

# Text built from the characters that matter to these grammars, plus anything.
_SPECIAL = st.sampled_from(
    ["@@ ", "+", "-", "<", "=", "~", ":", "..", "\n", "\r\n", " ", "\t", "a.txt", "b.py",
     "<<<<<<< SEARCH", "=======", ">>>>>>> REPLACE", "--- a/a.txt", "+++ b/a.txt",
     "@@ -1,2 +1,2 @@", "```", "1", "2", "ab", "c5", "ZZ", "\x00", "é", "\u2028"]
)
_TEXTISH = st.lists(st.one_of(_SPECIAL, st.text(max_size=6)), max_size=40).map("".join)

FILE_LINES = ["def f(x):", "    return x + 1", "", "class A:", "    pass", "# end"]
FILE_TEXT = "\n".join(FILE_LINES) + "\n"


# -- pure parsers ---------------------------------------------------------------------------------

@settings(max_examples=examples(4))
@given(_TEXTISH)
def test_hashline_parse_returns_a_patch_or_a_syntax_error(text: str) -> None:
    try:
        patch = hashline.parse(text)
    except hashline.PatchSyntaxError as exc:
        assert str(exc)
        return
    assert patch.sections


@settings(max_examples=examples(4))
@given(_TEXTISH)
def test_ws_patch_parse_returns_a_patch_or_a_parse_error(text: str) -> None:
    try:
        parsed = patch_parse.parse(text)
    except patch_parse.PatchParseError as exc:
        assert str(exc)
        return
    assert parsed.format


_LINE = st.sampled_from(["a", "b", "  a", "a  ", "", "\ta", "x = 1", "}", "  }"])
_DOC = st.lists(_LINE, max_size=12).map(lambda ls: "\n".join(ls) + ("\n" if ls else ""))


@settings(max_examples=examples(4))
@given(_DOC, st.lists(_LINE, min_size=1, max_size=4).map("\n".join), st.text(max_size=8))
def test_ladder_seek_finds_spans_inside_the_text_and_exact_is_verbatim(
    text: str, old: str, new: str
) -> None:
    match = ladder.seek(text, old)
    for span in match.spans:
        assert 0 <= span.start <= span.end <= len(text)
        assert 1 <= span.first_line <= span.last_line
    if match.rung == ladder.EXACT and not match.whole_lines:
        assert all(text[s.start : s.end] == old for s in match.spans)
    if old.strip() and text.count(old) == 1 and _overlapping(text, old) == 1:
        assert match.rung == ladder.EXACT and match.count == 1
    if match.count == 1:
        try:
            out, n = splice.apply(text, match, new, old=old)
        except splice.DoesNotFit:
            return
        span = match.spans[0]
        assert n == 1
        assert out.startswith(text[: span.start]) and out.endswith(text[span.end :])
        if match.rung == ladder.EXACT and not match.whole_lines:
            assert out == text.replace(old, new, 1)


def _overlapping(text: str, old: str) -> int:
    return sum(text.startswith(old, i) for i in range(len(text)))


# -- the edit tools on real files ----------------------------------------------------------------

def _anchor(n: int) -> str:
    return f"{n}:{line_hash(FILE_LINES[n - 1])}" if 1 <= n <= len(FILE_LINES) else f"{n}:00"


_ANCHOR = st.one_of(st.integers(0, 8).map(_anchor), st.sampled_from(["1:zz", "x", "", "3:C5"]))
_OP = st.one_of(
    st.builds(lambda a: f"+ {a}", _ANCHOR), st.just("+"), st.builds(lambda a: f"< {a}", _ANCHOR),
    st.just("<"), st.builds(lambda a, b: f"- {a}..{b}", _ANCHOR, _ANCHOR),
    st.builds(lambda a, b: f"= {a}..{b}", _ANCHOR, _ANCHOR), st.builds(lambda a: f"= {a}", _ANCHOR),
    st.builds(lambda t: "~" + t, st.text(max_size=10).map(lambda t: t.replace("\n", ""))),
    _TEXTISH,
)
_SECTION_PATH = st.sampled_from(["a.py", "a.txt", "b.txt", "missing.py", "../x.py", ".kli/s.json"])
_NOISY_PATCH = st.lists(
    st.tuples(_SECTION_PATH, st.lists(_OP, max_size=5)), min_size=0, max_size=3
).map(lambda secs: "".join(f"@@ {p}\n" + "".join(o + "\n" for o in ops) for p, ops in secs))
# Mostly well-formed: real anchors (sometimes stale), payload lines, one or two files (a.txt
# LF, b.txt CRLF, a.py LF and parse-checked).
def _good_anchor(crlf: bool) -> st.SearchStrategy[str]:
    end = "\r" if crlf else ""
    real = st.integers(1, 6).map(lambda n: f"{n}:{line_hash(FILE_LINES[n - 1] + end)}")
    return st.one_of(real, real, st.integers(1, 6).map(lambda n: f"{n}:00"))


_PAYLOAD = st.lists(st.sampled_from(["~x = 1", "~", "~    pass", "~def g(:", "~)", "~text"]),
                    min_size=1, max_size=3).map("\n".join)


def _good_ops(crlf: bool) -> st.SearchStrategy[list[str]]:
    a = _good_anchor(crlf)
    op = st.one_of(
        st.builds(lambda x, p: f"+ {x}\n{p}", a, _PAYLOAD),
        st.builds(lambda p: f"+\n{p}", _PAYLOAD),
        st.builds(lambda x, p: f"< {x}\n{p}", a, _PAYLOAD),
        st.builds(lambda x, y: f"- {x}..{y}", a, a),
        st.builds(lambda x, p: f"= {x}\n{p}", a, _PAYLOAD),
        st.builds(lambda x: f"= {x}", a),
    )
    return st.lists(op, min_size=1, max_size=3)


_GOOD_SECTION = st.one_of(
    _good_ops(False).map(lambda ops: "@@ a.txt\n" + "".join(o + "\n" for o in ops)),
    _good_ops(True).map(lambda ops: "@@ b.txt\n" + "".join(o + "\n" for o in ops)),
    _good_ops(False).map(lambda ops: "@@ a.py\n" + "".join(o + "\n" for o in ops)),
)
_GOOD_PATCH = st.lists(_GOOD_SECTION, min_size=1, max_size=2).map("".join)
_HASHLINE_PATCH = st.one_of(_GOOD_PATCH, _NOISY_PATCH)


def _tree(root: Path) -> dict[str, bytes]:
    (root / "a.py").write_text(FILE_TEXT)
    (root / "a.txt").write_text(FILE_TEXT)
    (root / "b.txt").write_bytes(FILE_TEXT.replace("\n", "\r\n").encode())
    (root / ".kli").mkdir(exist_ok=True)
    (root / ".kli" / "s.json").write_text("{}\n")
    return _disk(root)


def _disk(root: Path) -> dict[str, bytes]:
    out = {}
    for dirpath, _dirs, files in os.walk(root.parent):
        for name in files:
            p = os.path.join(dirpath, name)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, root.parent)] = fh.read()
    return out


@settings(max_examples=examples(2))
@given(_HASHLINE_PATCH, st.sampled_from(["safe", "preview", "reject"]))
def test_edit_with_random_patches_rejected_changes_no_byte(
    tmp_path_factory: object, patch: str, repair: str
) -> None:
    root = Path(tmp_path_factory.mktemp("e")) / "root"  # type: ignore[attr-defined]
    root.mkdir()
    before = _tree(root)
    ws = Workspace(str(root))
    for name in ("a.py", "a.txt", "b.txt"):
        ws.call("read", {"path": name})
    r = ws.call("edit", {"input": patch, "repair": repair})
    assert r.details.get("error") != "internal", r.text
    after = _disk(root)
    if not r.ok:
        assert after == before, r.text
    else:
        # an applied edit is also checkpointed for undo, under the control folder
        changed = {k for k in after if after[k] != before.get(k)
                   and not k.startswith("root/.kli/checkpoints/")}
        assert changed <= {"root/a.py", "root/a.txt", "root/b.txt"}, changed
        for change in r.details.get("files", []):
            if change["status"] == "written" and change["after"] is not None:
                assert after["root/" + change["path"]].decode() == change["after"]


_UNIFIED = st.builds(
    lambda path, start, body: f"--- a/{path}\n+++ b/{path}\n@@ -{start},2 +{start},2 @@\n" + body,
    _SECTION_PATH, st.integers(0, 9),
    st.lists(st.one_of(st.sampled_from([f" {ln}" for ln in FILE_LINES] + [f"-{ln}" for ln in FILE_LINES]),
                       st.builds(lambda t: "+" + t, st.text(max_size=8).map(lambda t: t.replace("\n", ""))),
                       _TEXTISH), max_size=6).map(lambda ls: "".join(x + "\n" for x in ls)),
)
_SR = st.builds(
    lambda old, new: f"<<<<<<< SEARCH\n{old}\n=======\n{new}\n>>>>>>> REPLACE\n",
    st.one_of(st.sampled_from(FILE_LINES), _TEXTISH), _TEXTISH,
)


@settings(max_examples=examples(2))
@given(st.one_of(_UNIFIED, _SR, _TEXTISH), st.one_of(st.none(), _SECTION_PATH))
def test_ws_patch_with_random_patches_rejected_changes_no_byte(
    tmp_path_factory: object, patch: str, path: str | None
) -> None:
    root = Path(tmp_path_factory.mktemp("p")) / "root"  # type: ignore[attr-defined]
    root.mkdir()
    before = _tree(root)
    ws = Workspace(str(root))
    for name in ("a.py", "a.txt", "b.txt"):
        ws.call("ws_read", {"path": name})
    args = {"patch": patch}
    if path is not None:
        args["path"] = path
    r = ws.call("ws_patch", args)
    assert r.details.get("error") != "internal", r.text
    after = _disk(root)
    if not r.ok:
        assert after == before, r.text
    else:
        changed = {k for k in after if after[k] != before.get(k)}
        assert not any(k.startswith(("root/.kli/", "outside")) and not k.startswith("root/.kli/checkpoints")
                       and not k.startswith("root/.kli/scratch") for k in changed), changed


@settings(max_examples=examples(2))
@given(_DOC, st.lists(_LINE, min_size=1, max_size=4).map("\n".join), st.text(max_size=8),
       st.booleans())
def test_ws_edit_rejected_changes_no_byte(tmp_path_factory: object, text: str, old: str,
                                          new: str, replace_all: bool) -> None:
    root = Path(tmp_path_factory.mktemp("w")) / "root"  # type: ignore[attr-defined]
    root.mkdir()
    (root / "f.txt").write_text(text)
    ws = Workspace(str(root))
    ws.call("ws_read", {"path": "f.txt"})
    r = ws.call("ws_edit", {"path": "f.txt", "old_str": old, "new_str": new,
                            "replace_all": replace_all})
    assert r.details.get("error") != "internal", r.text
    if not r.ok:
        assert (root / "f.txt").read_bytes() == text.encode()
