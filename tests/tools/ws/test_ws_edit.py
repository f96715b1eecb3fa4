"""ws_edit through Workspace.call: the spec's messages verbatim, details, telemetry, guards."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kli.tools import Workspace
from kli.tools.core.result import ToolResult
from kli.tools.core.textfile import break_at, with_breaks
from kli.tools.ws import gutter, ws_edit

TWICE = "def a():\n    total = 0\n    return total\n\n\ndef b():\n    total = 0\n    return total\n"


def edit(ws: Workspace, **args: object) -> ToolResult:
    return ws.call("ws_edit", dict(args))


def test_success_names_path_and_count(ws: Workspace, root: Path) -> None:
    (root / "pkg" / "foo").mkdir(parents=True)
    (root / "pkg/foo/bar.txt").write_text("hello world\n")
    r = edit(ws, path="pkg/foo/bar.txt", old_str="world", new_str="there")
    assert r.ok and r.text == "edited pkg/foo/bar.txt (1 replacement(s))"
    assert (root / "pkg/foo/bar.txt").read_text() == "hello there\n"
    change = r.details["files"][0]
    assert (change["status"], change["before"], change["after"]) == (
        "written",
        "hello world\n",
        "hello there\n",
    )
    assert r.details["rung"] == "exact" and r.details["spans"] == [[1, 1]]


def test_read_first_is_not_required(ws: Workspace, root: Path) -> None:
    # old_str matching the file is proof enough; the session never read it
    (root / "a.txt").write_text("x\n")
    assert not ws.default_session.has_read(str(root / "a.txt"))
    assert edit(ws, path="a.txt", old_str="x", new_str="y").ok


def test_no_op_message_verbatim(ws: Workspace, root: Path) -> None:
    (root / "a.txt").write_text("x\n")
    r = edit(ws, path="a.txt", old_str="x", new_str="x")
    assert not r.ok
    assert r.text == "No-op edit refused — old_str and new_str are identical."
    assert r.details["files"][0]["status"] == "rejected"


def test_exact_duplicates_message_follows_the_spec(ws: Workspace, root: Path) -> None:
    (root / "t.py").write_text(TWICE)
    r = edit(ws, path="t.py", old_str="    total = 0\n", new_str="    total = 1\n")
    assert not r.ok and r.details["error"] == "ambiguous_exact"
    assert r.text.startswith("old_str found 2 times")
    assert r.text.index(
        "pass replace_all:true, or include more surrounding context"
    ) < r.text.index("Do NOT use ws_write.")
    assert r.text.endswith("Do NOT use ws_write.")
    assert (root / "t.py").read_text() == TWICE


def test_ladder_ambiguity_names_count_and_strategy(ws: Workspace, root: Path) -> None:
    (root / "t.py").write_text(TWICE)
    r = edit(ws, path="t.py", old_str="total = 0\nreturn total", new_str="total = 1\nreturn total")
    assert not r.ok
    assert r.text.startswith("Ambiguous edit refused — the search text matches 2 places")
    assert "indentation-normalized match." in r.text
    r = edit(
        ws,
        path="t.py",
        old_str="total = 0\nreturn total",
        new_str="total = 1\nreturn total",
        replace_all=True,
    )
    assert r.ok
    assert r.text == (
        "edited t.py (2 replacement(s)) [matched after normalizing indentation — your old_str was "
        "indented differently]"
    )
    assert (root / "t.py").read_text() == TWICE.replace("total = 0", "total = 1")


def test_empty_old_str_names_the_three_intents(ws: Workspace, root: Path) -> None:
    (root / "a.txt").write_text("x\n")
    for old in ("", "   ", "\n\t\n"):
        r = edit(ws, path="a.txt", old_str=old, new_str="y")
        assert not r.ok and r.details["error"] == "empty_old_str"
        assert "create a new file → ws_write" in r.text
        assert "last 2–3 lines" in r.text
        assert "repeat them in new_str" in r.text
    assert (root / "a.txt").read_text() == "x\n"


def test_gutter_on_every_line_is_stripped_with_the_spec_note(ws: Workspace, root: Path) -> None:
    (root / "a.py").write_text("def f():\n    return 1\n\n\nx = 2\n")
    r = edit(
        ws,
        path="a.py",
        old_str="     1|def f():\n     2|    return 1\n     3|",
        new_str="     1|def f():\n     2|    return 3\n     3|",
    )
    assert r.ok, r.text
    assert r.text.endswith("[stripped ws_read line numbers from old_str — do not include them]")
    assert (root / "a.py").read_text() == "def f():\n    return 3\n\n\nx = 2\n"
    assert ws.default_session.telemetry["ws_edit.gutter_stripped"] == 1


def test_literal_text_that_looks_like_a_gutter_is_not_stripped(ws: Workspace, root: Path) -> None:
    (root / "t.md").write_text("   1|one\n   2|two\n")
    r = edit(ws, path="t.md", old_str="   1|one", new_str="   1|uno")
    assert r.ok and "stripped" not in r.text
    assert (root / "t.md").read_text() == "   1|uno\n   2|two\n"


def test_partial_gutter_is_refused_by_name_with_example(ws: Workspace, root: Path) -> None:
    (root / "a.py").write_text("def f():\n    return 1\n")
    r = edit(
        ws, path="a.py", old_str="     1|def f():\n    return 1", new_str="def f():\n    return 2"
    )
    assert not r.ok and r.details["error"] == "partial_gutter"
    assert "partial ws_read line-number gutter" in r.text
    assert "before: '     1|def f():'" in r.text and "after:  'def f():'" in r.text


def test_not_found_shows_the_closest_span_with_line_numbers(ws: Workspace, root: Path) -> None:
    body = "".join(f"value_{i} = compute({i})\n" for i in range(1, 30))
    (root / "v.py").write_text(body)
    r = edit(ws, path="v.py", old_str="value_17 = compute(71)\nvalue_18 = compute(18)", new_str="x")
    assert not r.ok and r.details["error"] == "not_found"
    assert "The closest span is lines 17–18" in r.text
    assert "    17|value_17 = compute(17)" in r.text
    assert 'ws_read {"path":"v.py","offset":17,"limit":2}' in r.text


def test_over_edit_guard_threshold(ws: Workspace, root: Path) -> None:
    lines = [f"n{i} = {i}\n" for i in range(ws_edit.OVER_EDIT_MIN_LINES)]
    (root / "big.py").write_text("".join(lines))
    covering = int(len(lines) * ws_edit.OVER_EDIT_FRACTION)
    r = edit(ws, path="big.py", old_str="".join(lines[:covering]), new_str="pass\n")
    assert not r.ok and r.details["error"] == "over_edit_guard"
    assert "over_edit_guard" in r.text and "ws_patch" in r.text
    r = edit(ws, path="big.py", old_str="".join(lines[: covering - 1]), new_str="pass\n")
    assert r.ok, r.text
    # a short file may be replaced whole
    (root / "small.py").write_text("a = 1\nb = 2\n")
    assert edit(ws, path="small.py", old_str="a = 1\nb = 2\n", new_str="c = 3\n").ok


def test_aliases_and_canonical_key_wins(ws: Workspace, root: Path) -> None:
    (root / "a.txt").write_text("one two\n")
    assert edit(ws, path="a.txt", old="one", new="1").ok
    assert edit(ws, path="a.txt", old_string="two", new_string="2").ok
    assert (root / "a.txt").read_text() == "1 2\n"
    assert edit(ws, path="a.txt", old_str="1", search="nothing", new_str="I", replace="x").ok
    assert (root / "a.txt").read_text() == "I 2\n"


def test_syntax_revert_leaves_file_and_reports_reverted(ws: Workspace, root: Path) -> None:
    (root / "m.py").write_text("def f():\n    return 1\n")
    r = edit(ws, path="m.py", old_str="return 1", new_str="return (1")
    assert not r.ok and r.details["error"] == "syntax_reverted"
    assert r.text.startswith(
        "EDIT REVERTED — m.py parsed correctly before your change and does NOT parse after it "
        "(python compile):"
    )
    assert r.details["files"][0]["status"] == "reverted"
    assert (root / "m.py").read_text() == "def f():\n    return 1\n"
    r = edit(ws, path="m.py", old_str="return 1", new_str="return (1", disable_syntax_check=True)
    assert r.ok and (root / "m.py").read_text() == "def f():\n    return (1\n"


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_javascript_edit_checked_by_node(ws: Workspace, root: Path) -> None:
    (root / "a.js").write_text("function f() {\n  return 1;\n}\n")
    r = edit(ws, path="a.js", old_str="return 1;", new_str="return [1;")
    assert not r.ok and "(node --check)" in r.text
    assert edit(ws, path="a.js", old_str="return 1;", new_str="return [1];").ok


def test_typescript_edit_checked_by_tree_sitter(ws: Workspace, root: Path) -> None:
    pytest.importorskip("tree_sitter_typescript")
    (root / "a.ts").write_text("export function f(a: number): number {\n  return a;\n}\n")
    r = edit(ws, path="a.ts", old_str="return a;", new_str="return (a;")
    assert not r.ok and "(tree-sitter typescript)" in r.text
    assert (root / "a.ts").read_text().count("return a;") == 1


def test_telemetry_counts_rungs_per_session(ws: Workspace, root: Path) -> None:
    (root / "a.py").write_text("def f():\n    a = 1\n    b = 2\n")
    other = ws.open_session("other")
    assert edit(ws, path="a.py", old_str="a = 1", new_str="a = 3").ok
    assert ws.call(
        "ws_edit", {"path": "a.py", "old_str": "a = 3\nb = 2", "new_str": "a = 4\nb = 2"}, other
    ).ok
    r = edit(ws, path="a.py", old_str="    b = 2   ", new_str="    b = 5")
    assert r.ok and r.details["telemetry"] == [
        "ws_edit.calls",
        "ws_edit.rung.trailing-whitespace-insensitive",
        "syntax.ok",
    ]
    edit(ws, path="a.py", old_str="zzz", new_str="y")
    mine = ws.default_session.telemetry
    assert mine["ws_edit.rung.exact"] == 1
    assert mine["ws_edit.rung.trailing-whitespace-insensitive"] == 1
    assert mine["ws_edit.refused.not_found"] == 1
    assert mine["ws_edit.calls"] == 3
    assert "ws_edit.rung.indentation-normalized" not in mine
    assert other.telemetry["ws_edit.rung.indentation-normalized"] == 1


def test_path_errors_point_at_recovery_tools(ws: Workspace, root: Path) -> None:
    (root / "d").mkdir()
    (root / "bin.dat").write_bytes(b"\x00\x01abc")
    assert "ws_list" in edit(ws, path="d", old_str="a", new_str="b").text
    assert "ws_glob" in edit(ws, path="missing.py", old_str="a", new_str="b").text
    assert "binary" in edit(ws, path="bin.dat", old_str="abc", new_str="b").text
    (root / ".kli").mkdir()
    (root / ".kli/settings.json").write_text("{}")
    r = edit(ws, path=".kli/settings.json", old_str="{}", new_str='{"capabilities": []}')
    assert not r.ok and (root / ".kli/settings.json").read_text() == "{}"


def test_anchored_rung_keeps_lines_the_edit_did_not_change_as_the_file_has_them(
    ws: Workspace, root: Path
) -> None:
    text = "def f():\n    alpha = 1\n    beta = 2\n    gamma = 3\n    return alpha\n"
    (root / "f.py").write_text(text)
    # the model misremembers beta's value in old_str AND new_str; only gamma is meant to change
    r = edit(
        ws,
        path="f.py",
        old_str="def f():\n    alpha = 1\n    beta = 20\n    gamma = 3\n    return alpha",
        new_str="def f():\n    alpha = 1\n    beta = 20\n    gamma = 30\n    return alpha",
    )
    assert r.ok and r.details["rung"] == "anchored-first-last-line"
    assert (root / "f.py").read_text() == text.replace("gamma = 3\n", "gamma = 30\n")


def test_search_output_anchors_are_stripped_too(ws: Workspace, root: Path) -> None:
    (root / "a.py").write_text("x = 1\ny = 2\n")
    r = edit(ws, path="a.py", old_str="*1:ab|x = 1\n 2:cd|y = 2", new_str="x = 1\ny = 3")
    assert r.ok and r.text.endswith(
        "[stripped read LINE:HH| anchors from old_str — do not include them]"
    )
    assert (root / "a.py").read_text() == "x = 1\ny = 3\n"


def test_blank_line_rung_replaces_edge_blank_lines_new_str_re_emits(
    ws: Workspace, root: Path
) -> None:
    (root / "a.py").write_text("a = 1\n\nb = 2\n\n\nc = 3\n")
    # old_str dropped the blank lines; new_str keeps the one between and one after b
    r = edit(ws, path="a.py", old_str="a = 1\nb = 2", new_str="a = 1\n\nb = 20\n")
    assert r.ok and r.details["rung"] == "blank-line-insensitive"
    assert (root / "a.py").read_text() == "a = 1\n\nb = 20\n\n\nc = 3\n"


SOURCE_LINES = ["x = 1", "y = 2", "", "if x:", "    x = 1", "    y = 2", "return x"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.sampled_from(SOURCE_LINES), min_size=2, max_size=12),
    st.integers(0, 11),
    st.integers(1, 3),
    st.booleans(),
)
def test_repeated_search_text_is_never_applied_without_replace_all(
    lines: list[str], start: int, size: int, dedent: bool
) -> None:
    text = "\n".join(lines) + "\n"
    start = min(start, len(lines) - 1)
    old = "\n".join(ln.strip() if dedent else ln for ln in lines[start : start + size])
    at = [i for i in range(len(text)) if text.startswith(old, i)]
    # occurrences that all start inside indentation are a re-indented line, not exact ones
    mid = [
        i
        for i in at
        if i > 0 and text[text.rfind("\n", 0, i) + 1 : i].strip(" ") == "" and text[i - 1] != "\n"
    ]
    occurrences = 0 if old[:1] == " " and len(mid) == len(at) else len(at)
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "f.py").write_text(text)
        ws = Workspace(tmp)
        r = ws.call(
            "ws_edit",
            {"path": "f.py", "old_str": old, "new_str": "NEW", "disable_syntax_check": True},
        )
        if occurrences >= 2 or (r.ok is False and r.details.get("error") == "ambiguous"):
            assert not r.ok and Path(tmp, "f.py").read_text() == text
        if r.ok:
            assert len(r.details["spans"]) == 1 and r.details["replacements"] == 1
            assert occurrences <= 1


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.text(alphabet="ab 1|:\n\r\t", max_size=60),
    st.text(alphabet="ab 1|:\n\r\t", max_size=20),
    st.text(alphabet="ab 1|:\n\r\t", max_size=20),
    st.booleans(),
)
def test_any_edit_gets_an_answer_and_a_refusal_changes_nothing(
    text: str, old: str, new: str, replace_all: bool
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "f.txt")
        path.write_bytes(text.encode())
        r = Workspace(tmp).call(
            "ws_edit", {"path": "f.txt", "old_str": old, "new_str": new, "replace_all": replace_all}
        )
        assert r.details.get("error") != "internal", r.details.get("traceback")
        if not r.ok:
            assert path.read_bytes() == text.encode()
        elif r.details["rung"] == "exact" and not replace_all and new.strip("\r\n") == new:
            # (a new_str with blank lines at its edges may meet the file's own there, which
            # are then not doubled: test_blank_lines_re_emitted_... in test_ladder.py)
            if "ws_edit.gutter_stripped" in r.details["telemetry"]:
                # what was searched for is old_str without its pasted NN| gutter
                old, new = gutter.scan(old).stripped, gutter.strip_marked(new)
            # an exact unique match replaces exactly that text; a line break new_str adds
            # inside a line is that line's break (textfile.with_breaks)
            assert text.count(old) == 1
            new = with_breaks(new, break_at(text, text.index(old) + len(old)))
            assert path.read_bytes() == text.replace(old, new).encode()


def test_refusal_after_stripping_keeps_the_gutter_note(ws: Workspace, root: Path) -> None:
    (root / "a.py").write_text("x = 1\n")
    r = edit(ws, path="a.py", old_str="     1|x = 9", new_str="     1|x = 2")
    assert not r.ok and r.details["error"] == "not_found"
    assert r.text.endswith("[stripped ws_read line numbers from old_str — do not include them]")
    assert r.details["telemetry"] == [
        "ws_edit.calls",
        "ws_edit.gutter_stripped",
        "ws_edit.refused.not_found",
    ]
    r = edit(ws, path="a.py", old_str="     1|", new_str="x")
    assert not r.ok and r.details["error"] == "empty_old_str"
