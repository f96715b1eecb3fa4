"""The balance scanners and the repair decision as plain values (no disk)."""

from __future__ import annotations

import pytest

from kli.tools.file.repair import decide as d
from kli.tools.file.repair import lisp, python
from kli.tools.file.repair.common import apply_fixes


@pytest.mark.parametrize(
    "text",
    [
        '(a "str ) with \\" quote")',
        '(a #\\( #\\) #\\; #\\" #\\\\ b)',
        "(a ; comment )\n b)",
        "(a #| block ) #| nested ( |# still |# b)",
        "(a |sym ) with \\| bar| b)",
        "(a b\\) c)",
        "(a '(b c) `(d ,e) #(1 2))",
    ],
)
def test_lisp_reader_syntax_is_balanced(text: str) -> None:
    result = lisp.scan(text)
    assert result.balanced, result
    assert result.forms == 1


def test_lisp_counts_top_level_forms_and_reports_problems() -> None:
    assert lisp.scan("(a)\n(b (c))\n; (d)\n(e)").forms == 3
    assert lisp.scan("(a))").stray == (3,)
    assert [o.offset for o in lisp.scan("(a (b)\n(c").unclosed] == [0, 7]
    assert lisp.scan('(a "open').unterminated == (3, "string")
    assert lisp.scan("(a #| open").unterminated == (3, "#| block comment")
    assert lisp.parse_error("(a))") == "unmatched ')' at line 1, column 4"


@pytest.mark.parametrize(
    "text",
    [
        "s = \"\"\" ( [ { \"\"\"\nt = '''\n)\n'''\n",
        "s = 'a ) \\' ('\n",
        "x = (1,  # ) comment\n     2)\n",
        'x = f"{a}({{" + f"{b:>{w}}"\n',
        "x = rb'[' + Rb\"(\" + u'{'\n",
        'x = f"{d["k"]}"\n',  # Python 3.12 nested quotes
        "self_ = 1; x = [self_]\n",
    ],
)
def test_python_strings_and_comments_hold_no_delimiters(text: str) -> None:
    result = python.scan(text)
    assert result.balanced, result


def test_python_problems_are_found() -> None:
    assert python.scan("x = (1\n").unclosed[0].offset == 4
    assert python.scan("x = 1)\n").stray == (5,)
    early = python.scan("f(a[1)\n").early
    assert [(at, o.char) for at, o in early] == [(5, "[")]
    assert python.scan("x = 'abc\ny = 2\n").unterminated == (4, "string")
    assert python.scan('x = """abc\n').unterminated == (4, "string")
    assert python.scan('x = f"{a\n').unterminated is not None


def test_python_repair_closes_a_bracket_where_indentation_says() -> None:
    text = "x = foo(1,\n        2\ny = 3\n"
    fixes = python.fixes(text, python.scan(text))
    assert fixes is not None
    out, marks, lines = apply_fixes(text, fixes)
    assert out == "x = foo(1,\n        2)\ny = 3\n"
    assert lines == {2} and out[marks[0]["from"] : marks[0]["to"]] == ")"


def test_repair_goes_before_a_trailing_comment() -> None:
    text = "(defun f ()\n  (g) ; call g\n(defun h ())\n"
    out, marks, _ = apply_fixes(text, lisp.fixes(text, lisp.scan(text)) or [])
    assert out == "(defun f ()\n  (g)) ; call g\n(defun h ())\n"
    assert marks[0]["line"] == 2 and marks[0]["column"] == 6


def test_nested_unclosed_openers_close_innermost_first() -> None:
    text = "x = [foo(1,\n         2\ny = 1\n"
    out, _, _ = apply_fixes(text, python.fixes(text, python.scan(text)) or [])
    assert out == "x = [foo(1,\n         2)]\ny = 1\n"


def test_decision_reasons_are_named_values() -> None:
    orig = "(a)\n(b)\n"
    assert d.decide(lisp, orig, "(a)\n(c)\n", {2}).reason == "balanced"
    local = d.decide(lisp, orig, "(a)\n(c\n", {2})
    assert (local.action, local.reason, local.text) == (
        "write",
        "repaired_local_stable",
        "(a)\n(c)\n",
    )
    outside = d.decide(lisp, "(a\n  b)\n", "(a (x\n  b)\n", {1})
    assert (outside.action, outside.reason) == ("preview", "repair_outside_edit")
    assert d.decide(lisp, orig, "(a)\n(c\n", {2}, "reject").reason == "policy_reject"
    preview = d.decide(lisp, orig, "(a)\n(c\n", {2}, "preview")
    assert (preview.reason, preview.classification) == ("policy_preview", "repaired_local_stable")
    assert d.decide(lisp, orig, '(a)\n(c "x\n', {2}).reason == "unrepairable"
    assert d.decide(None, "", "((", set()).action == "write"
    with pytest.raises(ValueError):
        d.decide(lisp, orig, orig, set(), "maybe")


def test_language_is_chosen_by_extension() -> None:
    for ext in (".lisp", ".asd", ".cl", ".lsp", ".LISP"):
        assert d.language_for("x" + ext) is lisp
    assert d.language_for("x.py") is python
    assert d.language_for("x.pyi") is None and d.language_for("x.txt") is None


def test_python_bracket_open_on_a_header_closes_before_the_colon() -> None:
    orig = "def f(x):\n    return x\n"
    decision = d.decide(python, orig, "def f(x:\n    return x\n", {1})
    assert decision.reason == "repaired_local_stable"
    assert decision.text == orig
