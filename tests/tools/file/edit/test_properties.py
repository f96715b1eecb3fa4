"""Property tests: a random valid patch applied equals an independent reference application;
a rejected patch never changes a byte; line hashes are stable."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from kli.tools import Workspace
from kli.tools.core.changes import count_changes
from kli.tools.core.textfile import split_lines
from kli.tools.file.anchors import line_hash
from kli.tools.file.hashline import parse
from kli.tools.file.plan import PlanError, plan_file

LINES = st.lists(st.sampled_from(["a", "b", "", "  x = 1", "(f)", "é", "\tz"]), max_size=12)
PAYLOAD = st.lists(
    st.text(st.characters(blacklist_characters="\n\r", blacklist_categories=("Cs",)), max_size=6),
    min_size=1,
    max_size=3,
)


@dataclass(frozen=True)
class RefOp:
    kind: str  # after, before, append, prepend, delete, replace
    a: int = 0
    b: int = 0
    payload: tuple[str, ...] = ()


def fnv_reference(line: str) -> str:
    """The DESIGN.md hash, written out independently of kli.tools.file.anchors."""
    h = 2166136261
    for ch in line:
        data = ord(ch).to_bytes(max(1, (ord(ch).bit_length() + 7) // 8), "little")
        for byte in data:
            h = ((h ^ byte) * 16777619) % (1 << 32)
    return format((h ^ (h >> 8) ^ (h >> 16) ^ (h >> 24)) & 0xFF, "02x")


def reference(lines: list[str], ops: list[RefOp]) -> str:
    """Apply ops gap by gap: inserts at gap g (patch order), then line g+1 or its range."""
    n = len(lines)
    gaps: dict[int, list[str]] = {}
    ranges = {}
    for op in ops:
        if op.kind in ("delete", "replace"):
            ranges.update({line: op for line in range(op.a, op.b + 1)})
            continue
        gap = {"after": op.a, "before": op.a - 1, "append": n, "prepend": 0}[op.kind]
        gaps.setdefault(gap, []).extend(op.payload)
    out: list[str] = []
    for g in range(n + 1):
        out += gaps.get(g, [])
        if g < n:
            r = ranges.get(g + 1)
            if r is None:
                out.append(lines[g])
            elif r.a == g + 1:
                out += r.payload
    return "".join(x + "\n" for x in out)


def valid(ops: list[RefOp], op: RefOp) -> bool:
    spans = [(o.a, o.b) for o in ops if o.kind in ("delete", "replace")]
    if op.kind in ("delete", "replace"):
        if any(not (op.b < a or op.a > b) for a, b in spans):
            return False
        gaps = [o.a if o.kind == "after" else o.a - 1 for o in ops if o.kind in ("after", "before")]
        return not any(op.a <= g < op.b for g in gaps)
    if op.kind in ("after", "before"):
        g = op.a if op.kind == "after" else op.a - 1
        return not any(a <= g < b for a, b in spans)
    return True


@st.composite
def patches(draw: st.DrawFn) -> tuple[list[str], list[RefOp]]:
    lines = draw(LINES)
    n = len(lines)
    kinds = ["append", "prepend"] + (["after", "before", "delete", "replace"] if n else [])
    ops: list[RefOp] = []
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(kinds))
        a = draw(st.integers(1, n)) if n and kind not in ("append", "prepend") else 0
        b = draw(st.integers(a, n)) if kind in ("delete", "replace") else a
        payload = () if kind == "delete" else tuple(draw(PAYLOAD))
        if kind == "replace" and draw(st.booleans()):
            payload = ()
        op = RefOp(kind, a, b, payload)
        if valid(ops, op):
            ops.append(op)
    return lines, draw(st.permutations(ops))


def render(path: str, lines: list[str], ops: list[RefOp]) -> str:
    def anc(k: int) -> str:
        return f"{k}:{line_hash(lines[k - 1])}"

    out = [f"@@ {path}"]
    for op in ops:
        if op.kind in ("append", "prepend"):
            head = "+" if op.kind == "append" else "<"
        elif op.kind in ("after", "before"):
            head = ("+ " if op.kind == "after" else "< ") + anc(op.a)
        else:
            head = ("- " if op.kind == "delete" else "= ") + f"{anc(op.a)}..{anc(op.b)}"
        out.append(head)
        out += ["~" + p for p in op.payload]
    return "\n".join(out) + "\n"


@settings(max_examples=300, deadline=None)
@given(patches())
def test_random_valid_patch_equals_reference_application(
    case: tuple[list[str], list[RefOp]],
) -> None:
    lines, ops = case
    text = "".join(x + "\n" for x in lines)
    plan = plan_file("f.txt", text, parse(render("f.txt", lines, ops)).sections[0].ops)
    assert plan.after == reference(lines, ops)
    # The counts are the lines that differ (each replaced run counted alone): never more than
    # the ranges the patch replaced, never fewer than the whole-text count, the same growth.
    written = sum(len(o.payload) for o in ops)
    replaced = sum(o.b - o.a + 1 for o in ops if o.kind in ("delete", "replace"))
    least = count_changes(text, plan.after)
    assert least[0] <= plan.added <= written and least[1] <= plan.removed <= replaced
    assert plan.added - plan.removed == written - replaced
    if len(ops) == 1:
        assert (plan.added, plan.removed) == least


@settings(max_examples=200, deadline=None)
@given(patches())
def test_kept_lines_keep_their_hashes_at_their_new_numbers(
    case: tuple[list[str], list[RefOp]],
) -> None:
    lines, ops = case
    text = "".join(x + "\n" for x in lines)
    plan = plan_file("f.txt", text, parse(render("f.txt", lines, ops)).sections[0].ops)
    new = split_lines(plan.after)
    for old in range(1, len(lines) + 1):
        moved = plan.map_line(old)
        if moved is not None:
            assert line_hash(new[moved - 1]) == line_hash(lines[old - 1])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(patches(), patches(), st.sampled_from(["stale", "overlap", "past_end"]), st.data())
def test_a_rejected_patch_never_changes_a_byte(
    first: tuple[list[str], list[RefOp]],
    second: tuple[list[str], list[RefOp]],
    fault: str,
    data: st.DataObject,
) -> None:
    lines_b, ops_b = second
    anchored = [o for o in ops_b if o.kind not in ("append", "prepend")]
    assume(anchored or fault == "past_end")
    assume(lines_b or fault != "overlap")
    patch_b = render("b.txt", lines_b, ops_b)
    if fault == "stale":
        op = data.draw(st.sampled_from(anchored))
        good = f"{op.a}:{line_hash(lines_b[op.a - 1])}"
        bad = f"{op.a}:{(int(good.split(':')[1], 16) ^ 1):02x}"
        patch_b = patch_b.replace(good, bad, 1)
    elif fault == "overlap":
        k = data.draw(st.integers(1, len(lines_b)))
        patch_b += f"- {k}:{line_hash(lines_b[k - 1])}\n" * 2
    else:
        patch_b += f"+ {len(lines_b) + 1}:00\n~x\n"
    with tempfile.TemporaryDirectory() as root:
        files = {
            "a.txt": "".join(x + "\n" for x in first[0]),
            "b.txt": "".join(x + "\n" for x in lines_b),
        }
        for name, text in files.items():
            with open(os.path.join(root, name), "w", newline="") as fh:
                fh.write(text)
        ws = Workspace(root)
        for name in files:
            assert ws.call("read", {"path": name}).ok
        patch = render("a.txt", first[0], first[1]) + patch_b
        result = ws.call("edit", {"input": patch})
        assert not result.ok, (patch, result.text)
        for name, text in files.items():
            with open(os.path.join(root, name), "rb") as fh:
                assert fh.read() == text.encode()


def test_hash_fixtures() -> None:
    assert line_hash("") == "c5"
    assert line_hash("(defun hello ())") == "21"


@given(st.text(st.characters(blacklist_categories=("Cs",)), max_size=40))
def test_hash_matches_an_independent_reference_and_is_stable(line: str) -> None:
    hh = line_hash(line)
    assert hh == fnv_reference(line) == line_hash(line)
    assert len(hh) == 2 and int(hh, 16) >= 0


def test_cr_is_part_of_the_hashed_text() -> None:
    assert line_hash("a\r") == fnv_reference("a\r") != line_hash("a")


def test_plan_rejects_the_overlapping_example_the_property_uses() -> None:
    try:
        plan_file(
            "f",
            "a\nb\n",
            parse(f"@@ f\n- 1:{line_hash('a')}\n- 1:{line_hash('a')}\n").sections[0].ops,
        )
    except PlanError as exc:
        assert exc.kind == "overlap"
    else:
        raise AssertionError("overlap accepted")


# -- repair invariants -------------------------------------------------------------------------
LISP_TOKENS = ["(", ")", "a", ' "s)"', " ;c(", " #\\(", " |x)|", "  ", "(f x)", "#|(|#"]
PY_TOKENS = ["(", ")", "[", "]", "x", " + ", "'('", " # )", "f(1)", "    ", "{", "}", ","]


BASES = {
    "lisp": ["(defun f (x)", "  (g x))", "", "(defun h () 1)"],
    "python": ["def f(x):", "    return g(x,", "             1)", "", "y = [1, 2]"],
}


@st.composite
def unbalancing_edits(draw: st.DrawFn, lang: str) -> tuple[str, str, str, set[int]]:
    """A random ``=`` edit of a balanced file with delimiter-heavy payload lines: (language,
    original, patched, edited lines)."""
    base = BASES[lang]
    tokens = LISP_TOKENS if lang == "lisp" else PY_TOKENS
    a = draw(st.integers(1, len(base)))
    b = draw(st.integers(a, len(base)))
    line = st.lists(st.sampled_from(tokens), max_size=6).map("".join)
    payload = draw(st.lists(line, min_size=1, max_size=3))
    original = "".join(x + "\n" for x in base)
    patch = f"@@ f\n= {a}:{line_hash(base[a - 1])}..{b}:{line_hash(base[b - 1])}\n"
    patch += "".join(f"~{p}\n" for p in payload)
    plan = plan_file("f", original, parse(patch).sections[0].ops)
    return lang, original, plan.after, plan.edited_lines


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["lisp", "python"]).flatmap(unbalancing_edits),
    st.sampled_from(["safe", "preview"]),
)
def test_whatever_edit_writes_or_previews_balances(
    case: tuple[str, str, str, set[int]], policy: str
) -> None:
    from kli.tools.file.repair import decide as d
    from kli.tools.file.repair import lisp, python

    lang, original, patched, edited = case
    module = lisp if lang == "lisp" else python
    decision = d.decide(module, original, patched, edited, policy)
    if decision.action in ("write", "preview") and decision.reason != "original_unparsed":
        assert module.parse_error(decision.text) is None, decision
    if decision.reason == "repaired_local_stable":
        assert set(decision.changed_lines) <= edited
        assert module.form_count(decision.text) == module.form_count(original)
    if decision.action == "reject":
        assert decision.reason in ("unrepairable", "policy_reject")
    if decision.repaired:
        # A repair only adds or removes delimiters: the other characters are untouched.
        strip = str.maketrans("", "", "()[]{}")
        assert decision.text.translate(strip) == patched.translate(strip)
