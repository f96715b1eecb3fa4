"""The match ladder as a pure function: each rung, its order, ambiguity, re-indentation, and a
property test against an independent oracle that no ambiguous match is ever applied."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kli.tools.ws import ladder
from kli.tools.ws.closest import closest_span
from kli.tools.ws.ladder import seek
from kli.tools.ws.reindent import reindent_lines
from kli.tools.ws.splice import apply
from kli.tools.ws.textlines import search_lines

SRC = "def f():\n    a = 1\n    b = 2\n\n    return a + b\n"


def test_rungs_in_order_each_with_its_note() -> None:
    assert seek(SRC, "a = 1").rung == ladder.EXACT
    assert seek(SRC, "    a = 1   \n    b = 2  ").rung == ladder.TRAILING_WS
    assert seek(SRC, "a = 1\nb = 2").rung == ladder.INDENTATION
    assert seek(SRC, "    b = 2\n    return a + b").rung == ladder.BLANK_LINES
    m = seek(SRC, "def f():\n    a = 10\n    b = 2\n\n    return a + b")
    assert m.rung == ladder.ANCHORED and m.count == 1
    assert [ladder.NOTES[r] for r in ladder.RUNGS[1:]] == [
        "[matched ignoring trailing whitespace — your old_str had different line endings]",
        "[matched after normalizing indentation — your old_str was indented differently]",
        "[matched ignoring blank lines — your old_str had different blank-line spacing]",
        "[matched on first+last line anchors — the middle of your old_str did not match "
        "exactly; verify the result with ws_read]",
    ]
    assert ladder.NOTES[ladder.EXACT] == ""


def test_a_rung_with_two_candidates_stops_the_walk() -> None:
    text = "x = foo(1)\ny = foo(1)\nfoo(1)\n"
    m = seek(text, "foo(1)")
    # three exact places; the looser line-based rungs would find only line 3 — never tried
    assert (m.rung, m.count) == (ladder.EXACT, 3)
    with pytest.raises(ValueError):
        apply(text, m, "bar(2)")


def test_overlapping_exact_occurrences_are_ambiguous() -> None:
    assert seek("aaa", "aa").count == 2


def test_replace_all_replaces_disjoint_spans_of_the_rung() -> None:
    text = "if x:\n    go()\nif y:\n    go()\n"
    m = seek(text, "go()\n")
    assert m.count == 2
    assert apply(text, m, "stop()\n", replace_all=True) == (
        "if x:\n    stop()\nif y:\n    stop()\n",
        2,
    )


def test_indentation_rung_reapplies_the_files_indentation() -> None:
    text = "class A:\n    def f(self):\n        if ok:\n            run()\n"
    m = seek(text, "if ok:\n    run()")
    assert m.rung == ladder.INDENTATION
    out, n = apply(text, m, "if ok:\n    prepare()\n    run()")
    assert n == 1
    assert (
        out
        == "class A:\n    def f(self):\n        if ok:\n            prepare()\n            run()\n"
    )


def test_over_indented_search_text_is_dedented_in_the_replacement() -> None:
    text = "def f():\n    return 1\n"
    m = seek(text, "        return 1")
    assert m.rung == ladder.INDENTATION
    assert apply(text, m, "        return 2")[0] == "def f():\n    return 2\n"


def test_indentation_rung_maps_another_indent_width_or_tabs_level_by_level() -> None:
    go = "func f() {\n\tif x {\n\t\ty()\n\t}\n}\n"
    old = "    if x {\n        y()\n    }"
    m = seek(go, old)
    assert m.rung == ladder.INDENTATION and m.spans[0].levels == (
        ("    ", "\t"),
        ("        ", "\t\t"),
    )
    new = "    if x {\n        y()\n            z()\n    }"
    assert apply(go, m, new, old=old)[0] == "func f() {\n\tif x {\n\t\ty()\n\t\t\tz()\n\t}\n}\n"
    py = "def f():\n    if a:\n        b()\n    return 1\n"
    m = seek(py, "  if a:\n    b()\n  return 1")
    assert m.rung == ladder.INDENTATION
    out = apply(py, m, "  if a:\n    b()\n    c()\n  return 2")[0]
    assert out == "def f():\n    if a:\n        b()\n        c()\n    return 2\n"


def test_inconsistent_indentation_is_not_an_indentation_match() -> None:
    py = "if a:\n    b()\n    c()\n"
    # b() and c() sit at one level in the file but at two in the search text
    assert seek(py, "if a:\n  b()\n    c()").rung != ladder.INDENTATION


def test_crlf_file_matches_on_rung_two_and_keeps_its_endings() -> None:
    text = "a\r\nb\r\nc\r\n"
    m = seek(text, "a\nb\n")
    assert m.rung == ladder.TRAILING_WS
    assert apply(text, m, "a\nB\n")[0] == "a\r\nB\r\nc\r\n"


def test_blank_line_rung_spans_first_to_last_matched_line() -> None:
    m = seek(SRC, "b = 2\nreturn a + b")
    assert m.rung == ladder.BLANK_LINES
    assert (m.spans[0].first_line, m.spans[0].last_line) == (3, 5)


def test_anchored_rung_needs_a_similar_middle_and_a_close_length() -> None:
    text = "begin\nalpha\nbeta\nend\n"
    assert seek(text, "begin\nalphx\nbeta\nend").rung == ladder.ANCHORED
    assert seek(text, "begin\nzzzzzzzzzz\nqqqqqqqqq\nend").count == 0  # middle too different
    assert seek(text, "begin\nend").count == 0  # no middle: too few lines to anchor on


def test_window_limits_where_a_match_may_start() -> None:
    text = "x\ny\nx\ny\n"
    assert seek(text, ["x", "y"], window=(1, 2)).count == 1
    assert seek(text, ["x", "y"], window=(3, 4)).spans[0].first_line == 3
    assert seek(text, ["x", "y"]).count == 2


def test_empty_search_never_matches() -> None:
    assert seek(SRC, "").count == 0
    assert seek(SRC, "  \n\n").count == 0


def test_closest_span_points_at_the_most_similar_window() -> None:
    near = closest_span(SRC, "    b = 3\n\n    return a - b")
    assert near is not None and (near.first_line, near.last_line) == (3, 5)
    assert near.ratio > 0.8


# -- property: an ambiguous match is never applied --------------------------------------------

LINES = ["a = 1", "b = 2", "", "if x:", "    a = 1", "    b = 2", "  a = 1", "return a"]


def _oracle(text: str, old: str) -> dict[str, int]:
    """Candidates per rung, computed independently of the ladder (rungs 1–3)."""
    flines = [ln for ln in text.split("\n")]
    if flines and flines[-1] == "":
        flines.pop()
    needle = old.split("\n")
    at = [i for i in range(len(text)) if text.startswith(old, i)]

    def mid_indent(i: int) -> bool:
        start = text.rfind("\n", 0, i) + 1
        return i > start and text[start:i].strip() == ""

    # a re-indented line (every occurrence inside indentation) is not an exact match
    exact = 0 if old[:1] == " " and all(mid_indent(i) for i in at) else len(at)
    n = len(needle)

    def dedent(block: list[str]) -> list[str]:
        ind = [len(x) - len(x.lstrip(" ")) for x in block if x.strip()]
        cut = min(ind) if ind else 0
        return [x.rstrip()[cut:] if x.strip() else "" for x in block]

    windows = [flines[i : i + n] for i in range(len(flines) - n + 1)]
    trailing = sum(1 for w in windows if [x.rstrip() for x in w] == [x.rstrip() for x in needle])
    indent = sum(1 for w in windows if dedent(w) == dedent(needle))
    return {ladder.EXACT: exact, ladder.TRAILING_WS: trailing, ladder.INDENTATION: indent}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.sampled_from(LINES), min_size=1, max_size=14),
    st.integers(0, 13),
    st.integers(1, 4),
    st.sampled_from(["none", "trailing", "dedent", "indent"]),
)
def test_no_ambiguous_match_is_ever_applied(
    file_lines: list[str], start: int, length: int, drift: str
) -> None:
    text = "\n".join(file_lines) + "\n"
    start = min(start, len(file_lines) - 1)
    chunk = file_lines[start : start + length]
    if drift == "trailing":
        chunk = [ln + "  " for ln in chunk]
    elif drift == "dedent":
        chunk = [ln.lstrip(" ") for ln in chunk]
    elif drift == "indent":
        chunk = ["    " + ln if ln else ln for ln in chunk]
    old = "\n".join(chunk)
    m = seek(text, old)
    if m.count != 1:
        with pytest.raises(ValueError):
            apply(text, m, "NEW")
        return
    oracle = _oracle(text, old)
    rung = m.rung
    assert rung is not None
    # the rung that decided has exactly one candidate and no tighter rung had any
    for earlier in ladder.RUNGS[: ladder.RUNGS.index(rung)]:
        if earlier in oracle:
            assert oracle[earlier] == 0, (earlier, oracle)
    if rung in (ladder.EXACT, ladder.TRAILING_WS):
        assert oracle[rung] == 1, (rung, oracle)
    if rung == ladder.INDENTATION:
        # the oracle knows only the common-indent reading; level mapping may add the one match
        assert oracle[rung] <= 1, oracle
        span = m.spans[0]
        got = text.split("\n")[span.first_line - 1 : span.last_line]
        assert [ln.strip() for ln in got] == [ln.strip() for ln in search_lines(old)[0]]


def test_a_line_re_emitted_shallower_is_not_an_exact_match_inside_indentation() -> None:
    text = "def f(self):\n        # c\n        return self.x(1)\n\n\nclass U(R):\n    pass\n"
    old = "    return self.x(1)\n\n\nclass U(R):"  # 'return' written at 4, not 8
    m = seek(text, old)
    assert m.rung == ladder.INDENTATION
    new = "    # ins\n    return self.x(1)\n\n\nclass U(R):  # e"
    assert apply(text, m, new, old=old)[0] == text.replace(
        "        return", "        # ins\n        return"
    ).replace("class U(R):", "class U(R):  # e")
    # an occurrence at the start of a line still makes the inner one count: ambiguous
    assert seek("    a\n  a\n", "  a").count == 2


# -- drift that must never land wrong ---------------------------------------------------------

CODE = ["def f():", "    x = 1", "  y(2)", "\tz = 3", "}", "(g a", "   b)", '  "k": 1,', "return x"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.sampled_from([*CODE, "", ""]), min_size=4, max_size=16),
    st.integers(0, 15),
    st.integers(2, 6),
    st.data(),
)
def test_blank_lines_re_emitted_at_the_edges_of_new_str_are_never_doubled(
    file_lines: list[str], start: int, length: int, data: st.DataObject
) -> None:
    """A loose quote: old_str is the region without its edge blank lines, new_str the region in
    full with one line changed. Whatever rung lands it, the result is the intended file."""
    start = min(start, len(file_lines) - 1)
    region = file_lines[start : start + length]
    core = list(region)
    while core and not core[0].strip():
        core.pop(0)
    while core and not core[-1].strip():
        core.pop()
    if len(core) == len(region) or not core:
        return
    text = "\n".join(file_lines) + "\n"
    old = "\n".join(core)
    m = seek(text, old)
    if m.count != 1:
        return
    changed = [i for i, ln in enumerate(region) if ln.strip()]
    k = data.draw(st.sampled_from(changed))
    new_region = list(region)
    new_region[k] += "  # edited"
    expected = "\n".join(file_lines[:start] + new_region + file_lines[start + length :]) + "\n"
    if m.spans[0].first_line != 1 + start + region.index(core[0]):
        return  # landed on a look-alike elsewhere: not this property's concern
    assert apply(text, m, "\n".join(new_region), old=old)[0] == expected


@given(
    st.text(alphabet=" \t", max_size=4),
    st.text(alphabet=" \t", min_size=1, max_size=4),
    st.lists(st.tuples(st.text(alphabet=" \t", max_size=3), st.sampled_from(["a", "b()", "c = 1"])),
             min_size=1, max_size=6),
)
def test_reindent_swaps_the_search_indentation_for_the_files_and_keeps_the_rest(
    written: str, file_indent: str, rest: list[tuple[str, str]]
) -> None:
    """Tabs after spaces stay after them: a line written at ``written + more`` becomes
    ``file_indent + more``, whatever mix of tabs and spaces either side uses."""
    lines = [written + more + body for more, body in rest]
    got = reindent_lines(lines, (written, file_indent))
    assert got == [file_indent + more + body for more, body in rest]


# -- a drifted search text lands where it was read, or is refused ------------------------------

SHAPES = ['"x": 1,', '"y": 2', "a = f(b)", "return a", "}", ""]


@settings(max_examples=int(os.environ.get("KLI_DRIFT_EXAMPLES", "400")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(st.sampled_from(["", "  ", "    ", "      "]), st.sampled_from(SHAPES)),
             min_size=3, max_size=18),
    st.integers(0, 17),
    st.integers(2, 6),
    st.sampled_from(["blank_dropped", "dedent", "indent", "trailing"]),
    st.data(),
)
def test_a_drifted_search_text_lands_where_it_was_read_or_is_refused(
    items: list[tuple[str, str]], start: int, length: int, drift: str, data: st.DataObject
) -> None:
    """Files of repeated lines at several indentations (JSON, nested blocks): the search text
    is a region unique in the file, as the contract asks, with one kind of whitespace drift;
    the replacement is the region with one line changed, with the same drift. Whatever rung
    lands it, the result is the intended file — or nothing is applied. (A look-alike the
    drift makes of the text elsewhere — blank lines dropped, at another indentation — is as
    close as the region itself: ambiguous.)"""
    file_lines = [ind + s if s else "" for ind, s in items]
    start = min(start, len(file_lines) - 1)
    region = file_lines[start : start + length]
    text = "\n".join(file_lines) + "\n"
    if not any(ln.strip() for ln in region) or text.count("\n".join(region)) != 1:
        return
    k = data.draw(st.sampled_from([i for i, ln in enumerate(region) if ln.strip()]))
    new_region = list(region)
    new_region[k] += "  # edited"
    expected = "\n".join(file_lines[:start] + new_region + file_lines[start + length :]) + "\n"
    old, new = list(region), list(new_region)
    if drift == "blank_dropped":
        old = [ln for ln in old if ln.strip()]
    elif drift == "dedent":
        cut = min(len(ln) - len(ln.lstrip()) for ln in region if ln.strip())
        old, new = ([ln[cut:] for ln in block] for block in (old, new))
    elif drift == "indent":
        old, new = ([("    " + ln) if ln else ln for ln in block] for block in (old, new))
    else:
        old = [ln + "  " if ln.strip() else ln for ln in old]
    if "\n".join(old) in text:
        return  # the drift made text the file has verbatim: that text is what was asked for
    m = seek(text, "\n".join(old))
    if m.count != 1:
        return
    try:
        after = apply(text, m, "\n".join(new), old="\n".join(old))[0]
    except ValueError:  # DoesNotFit: an anchored match the change does not fit
        return
    assert after in (expected, text), (m.rung, m.spans)


LISP = ["(defun f (x)", "(let ((y 1))", "(g x y))", ":key 'eql)", "(h y)"]


@settings(max_examples=int(os.environ.get("KLI_DRIFT_EXAMPLES", "400")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(st.sampled_from(["", "  ", "\t", "\t  ", "\t\t", "  \t"]),
                       st.sampled_from([*LISP, "", ""])),
             min_size=4, max_size=18),
    st.integers(0, 17),
    st.integers(3, 7),
    st.booleans(),
    st.data(),
)
def test_blank_lines_old_str_dropped_are_never_written_twice_when_tabs_are_written_as_spaces(
    items: list[tuple[str, str]], start: int, length: int, insert: bool, data: st.DataObject
) -> None:
    """Lisp indented as Emacs does (tabs then spaces, first lines in spaces): old_str is the
    region with its tabs written as spaces and its blank lines dropped, new_str the region
    (tabs as spaces too) with one line changed, or a line inserted right after a blank line.
    Whatever rung lands it (rung 5 for most), the file gets the change in its own bytes and
    keeps each blank line once — or nothing is applied."""
    file_lines = [ind + s if s else "" for ind, s in items]
    start = min(start, len(file_lines) - 1)
    region = file_lines[start : start + length]
    text = "\n".join(file_lines) + "\n"
    if (not region[0].strip() or not region[-1].strip() or all(ln.strip() for ln in region)
            or text.count("\n".join(region)) != 1):
        return
    body = [ln.strip() for ln in region if ln.strip()]
    if len(set(body)) != len(body):
        return  # lines equal but for indentation pair by position only: not this property's
    new_region = list(region)
    if insert:
        gaps = [i for i in range(1, len(region)) if not region[i - 1].strip()
                and region[i].strip()]
        k = data.draw(st.sampled_from(gaps))
        new_region.insert(k, region[k][: len(region[k]) - len(region[k].lstrip())] + "(new)")
    else:
        k = data.draw(st.sampled_from([i for i, ln in enumerate(region) if ln.strip()]))
        new_region[k] += " ; edited"
    expected = "\n".join(file_lines[:start] + new_region + file_lines[start + length :]) + "\n"
    old = "\n".join(ln.expandtabs(8) for ln in region if ln.strip())
    new = "\n".join(ln.expandtabs(8) for ln in new_region)
    if old in text:
        return  # the drift made text the file has verbatim: that text is what was asked for
    m = seek(text, old)
    if m.count != 1 or m.spans[0].first_line != start + 1:
        # Landed on a look-alike elsewhere (lines that equal old_str under a map of
        # indentation levels): not this property's concern.
        return
    try:
        after = apply(text, m, new, old=old)[0]
    except ValueError:  # DoesNotFit: an anchored match the change does not fit
        return
    assert after in (expected, text), (m.rung, m.spans)
