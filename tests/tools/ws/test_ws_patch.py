"""ws_patch: the parser apart, the anchor window, the per-hunk report, all-or-nothing as a
property (a failing patch never changes a byte), telemetry."""

from __future__ import annotations

import difflib
import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kli.tools import Workspace
from kli.tools.ws import patch_parse, ws_patch
from kli.tools.ws.ws_patch import plan_file

NUM = "".join(f"v{i} = {i}\n" for i in range(1, 201))


def hunk_at(line: int, header_line: int | None = None, new: str = "X") -> str:
    """A one-line change of line ``line`` of NUM with one context line each side."""
    h = header_line if header_line is not None else line - 1
    return (
        f"@@ -{h},3 +{h},3 @@\n v{line - 1} = {line - 1}\n-v{line} = {line}\n+v{line} = {new}\n"
        f" v{line + 1} = {line + 1}\n"
    )


# -- parser -----------------------------------------------------------------------------------


def test_parser_recognises_each_form() -> None:
    assert patch_parse.parse("@@ -1,1 +1,1 @@\n-a\n+b\n").format == "unified"
    assert patch_parse.parse("<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n").format == (
        "search_replace"
    )
    assert patch_parse.parse("SEARCH\na\n=======\nREPLACE\nb\n").format == "search_replace_headers"
    assert patch_parse.parse("a\n=======\nb\n").format == "search_replace_bare"
    assert patch_parse.parse(" a\n-b\n+c\n").format == "minus_plus"


def test_parser_strips_prefixes_and_reads_several_files() -> None:
    parsed = patch_parse.parse(
        "diff --git a/x/one.py b/x/one.py\n--- a/x/one.py\n+++ b/x/one.py\n@@ -3,2 +3,2 @@\n a\n-b\n"
        "+c\n--- a/two.py\t2024-01-01 00:00\n+++ b/two.py\t2024-01-01 00:00\n@@ -1 +1 @@\n-d\n+e\n"
    )
    assert [f.path for f in parsed.files] == ["x/one.py", "two.py"]
    first = parsed.files[0].hunks[0]
    assert (first.old_start, first.old_count, first.new_start, first.new_count) == (3, 2, 3, 2)
    assert first.body == [(" ", "a"), ("-", "b"), ("+", "c")]
    assert parsed.files[1].hunks[0].old_count == 1


def test_parser_drops_fences_and_prose_and_reads_forgotten_prefixes() -> None:
    parsed = patch_parse.parse(
        "```diff\n@@ -1,4 +1,4 @@\ndef f():\n-    return 1\n+    return 2\n    pass\n"
        "This changes the return value.\n```\n"
    )
    hunk = parsed.files[0].hunks[0]
    assert hunk.body == [
        (" ", "def f():"),
        ("-", "    return 1"),
        ("+", "    return 2"),
        (" ", "   pass"),
    ]
    assert hunk.alt_body is not None and hunk.alt_body[-1] == (" ", "    pass")
    assert set(parsed.repairs) == {"fence_dropped", "forgotten_prefix", "prose_dropped"}


def test_parser_search_replace_body_is_a_line_diff() -> None:
    parsed = patch_parse.parse("<<<<<<< SEARCH\na\nb\nc\n=======\na\nB\nc\n>>>>>>> REPLACE\n")
    assert parsed.files[0].hunks[0].body == [(" ", "a"), ("-", "b"), ("+", "B"), (" ", "c")]


def test_parser_refuses_what_is_not_a_patch() -> None:
    for text in ("", "just some words\nand more", "<<<<<<< SEARCH\na\n"):
        try:
            patch_parse.parse(text)
        except patch_parse.PatchParseError as exc:
            assert str(exc)
        else:
            raise AssertionError(f"parsed {text!r}")


# -- landing hunks (pure) -----------------------------------------------------------------------


def test_report_names_anchor_range_and_rung() -> None:
    old = [f"v{i} = {i}" for i in range(120, 165)]
    patch = (
        "@@ -120,45 +120,45 @@\n"
        + "".join(f" {ln}\n" for ln in old[:-1])
        + "-v164 = 164\n+v164 = 0\n"
    )
    plan = plan_file(NUM, patch_parse.parse(patch).files[0].hunks)
    assert (
        plan.ok
        and plan.reports[0].line() == "hunk 1 (@@ -120,45 +120,45 @@): anchored@120..164 exact"
    )


def test_window_is_twenty_lines_each_side() -> None:
    assert ws_patch.ANCHOR_WINDOW_LINES == 20
    for off in (-20, 20):
        plan = plan_file(NUM, patch_parse.parse(hunk_at(100, 99 + off)).files[0].hunks)
        assert plan.ok, (off, plan.reports[0].message)
    for off in (-21, 21):
        plan = plan_file(NUM, patch_parse.parse(hunk_at(100, 99 + off)).files[0].hunks)
        assert not plan.ok
        assert "outside that window — fix the @@ line number to -99" in plan.reports[0].message


def test_earlier_hunks_delta_is_carried_forward() -> None:
    # hunk 1 adds 15 lines; hunk 2's header (old numbering) is then 15 off in the new text —
    # plus 15 more of drift it would miss without the delta.
    grow = "@@ -10,1 +10,16 @@\n v10 = 10\n" + "".join(f"+n{i}\n" for i in range(15))
    plan = plan_file(NUM, patch_parse.parse(grow + hunk_at(60, 59 - 15)).files[0].hunks)
    assert plan.ok, [r.message for r in plan.reports]
    assert plan.reports[1].first == 59  # reported in the original file's numbering
    assert "v60 = X\n" in plan.after and plan.after.count("\nn") == 15


def test_pure_insertion_lands_after_line_n_shifted_by_delta() -> None:
    patch = "@@ -5,1 +5,2 @@\n v5 = 5\n+after5\n@@ -8,0 +10,1 @@\n+after8\n"
    plan = plan_file(NUM, patch_parse.parse(patch).files[0].hunks)
    lines = plan.after.split("\n")
    assert lines[5] == "after5" and lines[9] == "after8" and lines[8] == "v8 = 8"


def test_context_is_kept_as_the_file_has_it() -> None:
    text = "def f():\n    if a:   \n        b()\n"
    patch = "@@ -1,3 +1,4 @@\n def f():\n     if a:\n         b()\n+        c()\n"
    plan = plan_file(text, patch_parse.parse(patch).files[0].hunks)
    assert plan.ok and plan.after == "def f():\n    if a:   \n        b()\n        c()\n"
    assert plan.reports[0].rung == "trailing-whitespace-insensitive"


def test_anchored_hunk_keeps_misremembered_context_but_needs_exact_removals() -> None:
    text = "begin\n    alpha = 1\n    beta = 2\n    gamma = 3\n    one = 1\nend\n"
    # a misremembered context line is kept as the file has it
    patch = (
        "@@ -1,6 +1,6 @@\n begin\n     alpha = 1\n     beta = 20\n     gamma = 3\n"
        "-    one = 1\n+    one = 100\n end\n"
    )
    plan = plan_file(text, patch_parse.parse(patch).files[0].hunks)
    assert plan.ok and plan.reports[0].rung == "anchored-first-last-line"
    assert plan.after == text.replace("one = 1\n", "one = 100\n")
    # a misremembered '-' line is not guessed at
    plan = plan_file(
        text, patch_parse.parse(patch.replace("-    one = 1", "-    one = 11")).files[0].hunks
    )
    assert not plan.ok and "'one = 11' is not there" in plan.reports[0].message


def test_removed_line_missing_at_the_anchor_fails_the_hunk() -> None:
    text = "begin\n    alpha = 1\n    beta = 2\n    gamma = 3\n    one = 1\nend\n"
    patch = (
        "@@ -1,6 +1,6 @@\n begin\n     alpha = 1\n     beta = 2\n     gamma = 3\n"
        "-    qqqqqqqqqqqq\n+    ONE\n end\n"
    )
    plan = plan_file(text, patch_parse.parse(patch).files[0].hunks)
    assert not plan.ok and "is not there" in plan.reports[0].message


# -- the tool ---------------------------------------------------------------------------------


def test_failed_hunk_report_and_nothing_written(ws: Workspace, root: Path) -> None:
    (root / "n.py").write_text(NUM)
    bad = "@@ -150,3 +150,3 @@\n v149 = 149\n-v150 = 999\n+v150 = 0\n v151 = 151\n"
    r = ws.call("ws_patch", {"path": "n.py", "patch": hunk_at(20) + bad + hunk_at(180)})
    assert not r.ok and r.details["error"] == "hunk_failed"
    lines = r.text.splitlines()
    assert lines[0].startswith("ws_patch refused — 1 of 3 hunk(s) did not apply")
    assert lines[1].endswith("anchored@19..21 exact")
    assert "hunk 2 (@@ -150,3 +150,3 @@): FAILED" in lines[2]
    assert lines[3].endswith("anchored@179..181 exact")
    assert (root / "n.py").read_text() == NUM
    assert [h["applied"] for h in r.details["hunks"]] == [True, False, True]


def test_path_from_headers_and_telemetry(ws: Workspace, root: Path) -> None:
    (root / "n.py").write_text(NUM)
    r = ws.call("ws_patch", {"diff": "```\n--- a/n.py\n+++ b/n.py\n" + hunk_at(50, 45) + "```\n"})
    assert r.ok, r.text
    t = ws.default_session.telemetry
    assert t["ws_patch.format.unified"] == 1 and t["ws_patch.hunk.exact"] == 1
    assert t["ws_patch.repair.fence_dropped"] == 1 and t["ws_patch.repair.off_anchor"] == 1
    assert r.details["files"][0]["status"] == "written"


def test_refusals_name_the_fix(ws: Workspace, root: Path) -> None:
    (root / "n.py").write_text(NUM)
    r = ws.call("ws_patch", {"patch": hunk_at(50)})
    assert not r.ok and "pass path" in r.text
    r = ws.call("ws_patch", {"patch": "--- a/n.py\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-v1 = 1\n"})
    assert not r.ok and "ws_delete" in r.text
    r = ws.call("ws_patch", {"path": "n.py", "patch": "nothing here"})
    assert not r.ok and "<<<<<<< SEARCH" in r.text
    r = ws.call("ws_patch", {"path": "n.py", "patch": "@@ -1,0 +1,1 @@\n+x\n", "hunk": "ignored"})
    assert r.ok  # canonical key wins over the alias
    assert (root / "n.py").read_text() == "v1 = 1\nx\n" + NUM[len("v1 = 1\n") :]


def test_multi_file_patch_is_all_or_nothing_across_files(ws: Workspace, root: Path) -> None:
    (root / "a.txt").write_text("one\ntwo\n")
    (root / "b.py").write_text("x = 1\n")
    patch = (
        "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n"
        "--- a/b.py\n+++ b/b.py\n@@ -1,1 +1,1 @@\n-x = 1\n+x = (1\n"
    )
    r = ws.call("ws_patch", {"patch": patch})
    assert not r.ok and r.text.startswith("EDIT REVERTED — b.py")
    assert "No file of the patch was written." in r.text
    assert (root / "a.txt").read_text() == "one\ntwo\n" and (root / "b.py").read_text() == "x = 1\n"
    statuses = {c["path"]: c["status"] for c in r.details["files"]}
    assert statuses == {"a.txt": "rejected", "b.py": "reverted"}


# -- property: a failing ws_patch never changes a byte --------------------------------------------

WORDS = ["alpha", "beta", "gamma", "    delta", "", "omega  ", "\tzeta"]


@st.composite
def patches(draw: st.DrawFn) -> tuple[str, str]:
    lines = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=30))
    text = "\n".join(lines) + ("\n" if draw(st.booleans()) else "")
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        start = draw(st.integers(0, len(lines) - 1))
        size = draw(st.integers(1, 4))
        chunk = lines[start : start + size]
        body = []
        for ln in chunk:
            kind = draw(st.sampled_from([" ", " ", "-", "corrupt", "forget"]))
            if kind == "corrupt":
                body.append("-" + ln + "X")
            elif kind == "forget":
                body.append(ln)
            else:
                body.append(kind + ln)
        body.append("+" + draw(st.sampled_from(["new", "    newer", ""])))
        offset = draw(st.integers(-25, 25))
        parts.append(
            f"@@ -{max(start + 1 + offset, 0)},{len(chunk)} +1,1 @@\n" + "\n".join(body) + "\n"
        )
    return text, "".join(parts)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(patches())
def test_a_failing_patch_never_changes_a_byte(case: tuple[str, str]) -> None:
    text, patch = case
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "f.txt")
        with open(path, "w", newline="") as fh:
            fh.write(text)
        ws = Workspace(tmp)
        before = os.stat(path).st_mtime_ns
        r = ws.call("ws_patch", {"path": "f.txt", "patch": patch})
        with open(path, newline="") as fh:
            now = fh.read()
        if not r.ok:
            assert now == text
            assert os.stat(path).st_mtime_ns == before
            assert sorted(os.listdir(tmp)) == ["f.txt"]
        else:
            assert all(h["applied"] for h in r.details["hunks"])


def test_drifted_edge_context_is_trimmed_like_gnu_fuzz(ws: Workspace, root: Path) -> None:
    (root / "n.py").write_text(NUM)
    patch = "@@ -99,3 +99,3 @@\n v99 = 990\n-v100 = 100\n+v100 = X\n v101 = 101\n"
    r = ws.call("ws_patch", {"path": "n.py", "patch": patch})
    assert r.ok, r.text
    assert "hunk 1 (@@ -99,3 +99,3 @@): anchored@100..101 exact, fuzz 1" in r.text
    assert r.text.endswith(ws_patch.FUZZ_NOTE)
    assert (root / "n.py").read_text() == NUM.replace("v100 = 100\n", "v100 = X\n")
    assert ws.default_session.telemetry["ws_patch.repair.fuzz"] == 1
    # a removed line is never trimmed away
    bad = "@@ -99,3 +99,3 @@\n v99 = 99\n-v100 = 1000\n+v100 = Y\n v101 = 101\n"
    assert not ws.call("ws_patch", {"path": "n.py", "patch": bad}).ok


DIFFISH = [
    "@@ -1,3 +1,3 @@",
    "@@ -0,0 +1 @@",
    "@@ @@",
    "--- a/f.txt",
    "+++ b/f.txt",
    "+++ /dev/null",
    "--- /dev/null",
    " alpha",
    "-beta",
    "+gamma",
    "",
    "prose here",
    "<<<<<<< SEARCH",
    "=======",
    ">>>>>>> REPLACE",
    "SEARCH",
    "REPLACE",
    "```diff",
    "```",
    "\\ No newline at end of file",
    "     3|    delta",
    "-     4|beta",
]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(DIFFISH), min_size=1, max_size=14))
def test_any_patch_text_gets_an_answer_never_an_internal_error(lines: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "f.txt").write_text("alpha\nbeta\n    delta\nbeta\n")
        r = Workspace(tmp).call("ws_patch", {"path": "f.txt", "patch": "\n".join(lines)})
        assert r.details.get("error") != "internal", r.details.get("traceback")
        assert r.text


def test_anchored_hunk_indents_added_lines_by_their_neighbours() -> None:
    # the model halved every indent; the hanging indents (13 and 16) do not map uniformly
    text = "    keys = ('if',\n             'do',\n             'for')\n    other = 1\n"
    patch = (
        "@@ -1,4 +1,5 @@\n  keys = ('if',\n+      # note\n       'do',\n-      'for')\n"
        "+      'for', 'x')\n  other = 1\n"
    )
    plan = plan_file(text, patch_parse.parse(patch).files[0].hunks)
    assert plan.ok, plan.reports[0].message
    assert plan.after == (
        "    keys = ('if',\n             # note\n             'do',\n             'for', 'x')\n"
        "    other = 1\n"
    )


def test_added_line_between_lines_the_drift_made_alike_is_refused() -> None:
    text = "x = (a,\n        b,\n         c)\ny = 1\n"
    # 8 and 9 spaces both written as 4: which one does the new line follow?
    patch = "@@ -1,4 +1,5 @@\n x = (a,\n     b,\n+    z,\n     c)\n y = 1\n"
    plan = plan_file(text, patch_parse.parse(patch).files[0].hunks)
    assert (
        not plan.ok and "indentation of its added line 'z,' is unclear" in plan.reports[0].message
    )


def test_hunks_out_of_order_still_find_their_lines() -> None:
    # the later hunk first: it adds 30 lines that must not shift the earlier hunk's anchor
    grow = "@@ -150,1 +150,31 @@\n v150 = 150\n" + "".join(f"+n{i}\n" for i in range(30))
    early = "@@ -120,0 +121,1 @@\n+after120\n" + hunk_at(100)
    plan = plan_file(NUM, patch_parse.parse(grow + early).files[0].hunks)
    assert plan.ok, [r.message for r in plan.reports]
    lines = plan.after.split("\n")
    assert lines[120] == "after120" and lines[119] == "v120 = 120"
    assert lines[99] == "v100 = X"
    assert [r.first for r in plan.reports] == [150, 120, 99]


def test_added_lines_standing_in_for_a_removal_stay_before_an_unshown_blank() -> None:
    text = "    a = 1\n    b = 2\n\n    c = 3\n"
    # blank line dropped from the hunk; the '+' run replaces b (its 2nd line resembles b)
    patch = "@@ -1,4 +1,5 @@\n     a = 1\n-    b = 2\n+    # note\n+    b = 20\n     c = 3\n"
    plan = plan_file(text, patch_parse.parse(patch).files[0].hunks)
    assert plan.ok, plan.reports[0].message
    assert plan.after == "    a = 1\n    # note\n    b = 20\n\n    c = 3\n"
    # an insertion after the replacement, at the indentation of both sides of the gap: refused
    patch = "@@ -1,4 +1,5 @@\n     a = 1\n-    b = 2\n+    b = 20\n+    # note\n     c = 3\n"
    plan = plan_file(text, patch_parse.parse(patch).files[0].hunks)
    assert not plan.ok and "could go before or after lines 3–3" in plan.reports[0].message


# -- forgotten context prefixes never land wrong ------------------------------------------------

ALIGNED = [
    "(defun f (x)",
    "  (let ((y 1))",
    "    (g x",
    "       y)))",
    "  const a = 1;",
    "  if (a) {",
    "    b();",
    "  }",
    '  "k": [',
    '    "v"',
    "  ],",
    "key:",
    "  - item",
    "      aligned",
    "",
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.sampled_from(ALIGNED), min_size=6, max_size=24),
    st.integers(0, 23),
    st.integers(0, 2),
    st.lists(st.sampled_from(ALIGNED[:-1]), min_size=1, max_size=3),
    st.lists(st.booleans(), min_size=12, max_size=12),
)
def test_context_lines_that_forgot_their_leading_space_land_exactly_or_are_refused(
    file_lines: list[str], at: int, removed: int, added: list[str], forgot: list[bool]
) -> None:
    """Two-space code and forms aligned under a paren; a unified diff whose context lines lose
    their ' ' prefix on any subset: the patch's result is the intended file, or nothing."""
    at = min(at, len(file_lines) - 1)
    text = "\n".join(file_lines) + "\n"
    new_lines = file_lines[:at] + [a + " # new" for a in added] + file_lines[at + removed :]
    expected = "\n".join(new_lines) + "\n"
    diff = difflib.unified_diff(text.splitlines(True), expected.splitlines(True), "a/f", "b/f", n=2)
    out, k = [], 0
    for line in "".join(diff).split("\n"):
        if line.startswith(" "):
            if forgot[k % len(forgot)]:
                line = line[1:]
            k += 1
        out.append(line)
    parsed = patch_parse.parse("\n".join(out))
    if len(parsed.files) != 1:
        return
    plan = plan_file(text, parsed.files[0].hunks)
    if plan.ok:
        assert plan.after == expected


# -- halved two-space code lands exactly or is refused ----------------------------------------

TS_SHAPES = ["get x() {", "return this.x;", "}", " * A doc line.", "private y = 1;", "if (a) {", ""]


def _halved(line: str) -> str:
    body = line.lstrip(" ")
    return " " * ((len(line) - len(body)) // 2) + body


@settings(max_examples=int(os.environ.get("KLI_DRIFT_EXAMPLES", "300")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(st.integers(0, 3), st.sampled_from(TS_SHAPES)), min_size=5, max_size=20),
    st.integers(0, 19),
    st.integers(1, 4),
    st.data(),
)
def test_a_two_space_hunk_with_every_indent_halved_lands_exactly_or_is_refused(
    items: list[tuple[int, str]], start: int, length: int, data: st.DataObject
) -> None:
    """Two-space code with doc-comment lines one column in (TypeScript), a diff of one edited
    and one inserted line re-emitted at half the indentation (2 → 1, 4 → 2, 3 → 1): the levels
    no longer map one to one, whichever rung lands it, so every added line must take the
    indentation a line written like it has in the file — or the hunk is refused."""
    lines, depth = [], 0
    for want, shape in items:
        depth = min(want, depth + 1)
        lines.append("  " * depth + shape if shape else "")
    start = min(start, len(lines) - 1)
    region = lines[start : start + length]
    nonblank = [i for i, ln in enumerate(region) if ln.strip()]
    if not nonblank:
        return
    k = data.draw(st.sampled_from(nonblank))
    j = data.draw(st.sampled_from(nonblank))
    new_region = list(region)
    new_region[k] += "  // edited"
    lead = region[j][: len(region[j]) - len(region[j].lstrip())]
    new_region.insert(j, lead + "// inserted")
    text = "\n".join(lines) + "\n"
    expected = "\n".join(lines[:start] + new_region + lines[start + length :]) + "\n"
    diff = "".join(difflib.unified_diff(text.splitlines(True), expected.splitlines(True),
                                        "a/f.ts", "b/f.ts", n=3))
    halved = "\n".join(ln[0] + _halved(ln[1:]) if ln.startswith((" ", "-", "+"))
                       and not ln.startswith(("---", "+++")) else ln for ln in diff.split("\n"))
    written = [ln[1:] for ln in halved.split("\n")[3:] if ln.startswith((" ", "-"))]
    while written and not written[-1].strip():
        written.pop()
    if any(lines[i : i + len(written)] == written for i in range(len(lines))):
        return  # halving made the hunk text the file has verbatim: that text is what it names
    plan = plan_file(text, patch_parse.parse(halved).files[0].hunks)
    if plan.ok:
        assert plan.after == expected, [r.message for r in plan.reports]


# -- list items that begin with '-' or '+': a forgotten prefix makes them read as a change ----

ITEM_WORDS = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "theta", "iota"]
ITEM_SHAPES = ["- {}", "+ {}", "-{}", "  - {}", "", "{}"]


@settings(max_examples=int(os.environ.get("KLI_DRIFT_EXAMPLES", "300")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(st.sampled_from(ITEM_SHAPES), st.sampled_from(ITEM_WORDS)),
             min_size=6, max_size=16),
    st.integers(1, 15),
    st.lists(st.booleans(), min_size=7, max_size=7),
    st.integers(-1, 6),
)
def test_list_items_whose_context_prefix_was_forgotten_land_exactly_or_are_refused(
    items: list[tuple[str, str]], at: int, forgot: list[bool], misremembered: int
) -> None:
    """Markdown / YAML lists: context lines that begin with '-' or '+' lose their ' ' prefix
    (then they read as a removed or an added line), on any subset, and at most one copied line
    has a letter wrong too: the patch's result is the intended file, or nothing (before, an
    added copy of a '+ item' line without its '+' landed, and a look-alike was removed)."""
    lines = [shape.format(word) for shape, word in items]
    at = min(at, len(lines) - 1)
    text = "\n".join(lines) + "\n"
    expected = "\n".join([*lines[:at], "- new item", *lines[at:]]) + "\n"
    start = max(0, at - 3)
    body = []
    for k, line in enumerate(lines[start:at + 3]):
        if start + k == at:
            body.append("+- new item")
        dropped = line[:1] in "-+" and forgot[k % len(forgot)]
        body.append(line if dropped else " " + line)
    if at >= len(lines[:at + 3]) + start:
        body.append("+- new item")
    if 0 <= misremembered < len(body) and body[misremembered] != "+- new item" \
            and body[misremembered].strip():
        body[misremembered] += "x"
    old = sum(1 for b in body if b != "+- new item")
    patch = f"--- a/f.md\n+++ b/f.md\n@@ -{start + 1},{old} +{start + 1},{old + 1} @@\n"
    parsed = patch_parse.parse(patch + "\n".join(body) + "\n")
    if len(parsed.files) != 1:
        return
    plan = plan_file(text, parsed.files[0].hunks)
    if plan.ok:
        assert plan.after == expected
