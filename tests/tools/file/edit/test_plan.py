"""The planner (pure): validation and in-memory application, printed and checked before any
disk write."""

from __future__ import annotations

import pytest

from kli.tools.core.session import FileView
from kli.tools.file.anchors import line_hash
from kli.tools.file.hashline import parse
from kli.tools.file.plan import FilePlan, PlanError, plan_file

TEXT = "".join(f"l{i}\n" for i in range(1, 11))


def a(n: int, line: str | None = None) -> str:
    return f"{n}:{line_hash(line if line is not None else f'l{n}')}"


def plan(
    patch: str, text: str = TEXT, view: FileView | None = None, wide: int | None = None
) -> FilePlan:
    return plan_file("f.txt", text, parse(patch).sections[0].ops, view, wide=wide)


def test_a_plan_is_a_printable_value_with_counts_and_spans() -> None:
    p = plan(f"@@ f\n= {a(2)}..{a(3)}\n~X\n- {a(7)}\n+\n~end\n")
    assert p.after == "l1\nX\nl4\nl5\nl6\nl8\nl9\nl10\nend\n"
    assert (p.added, p.removed) == (2, 3)
    assert p.payload == ((2, 2), (9, 9))
    assert (5, 6) in p.edited  # the lines bordering the deletion of old line 7
    assert "FilePlan(path='f.txt'" in repr(p)
    assert p.map_line(1) == 1 and p.map_line(4) == 3 and p.map_line(8) == 6
    assert p.map_line(2) is None and p.map_line(7) is None


def test_regions_merge_near_changes_and_add_context() -> None:
    p = plan(f"@@ f\n= {a(2)}\n~X\n= {a(4)}\n~Y\n= {a(10)}\n~Z\n")
    assert p.regions() == [(1, 6), (8, 10)]
    assert p.regions(context=0) == [(2, 2), (4, 4), (10, 10)]


def test_only_anchor_lines_are_hashed(monkeypatch: pytest.MonkeyPatch) -> None:
    from kli.tools.file import plan as plan_module

    hashed: list[str] = []
    monkeypatch.setattr(plan_module, "line_hash", lambda s: hashed.append(s) or line_hash(s))
    plan(f"@@ f\n= {a(2)}..{a(5)}\n~X\n")
    assert sorted(hashed) == ["l2", "l5"]


def test_overlap_error_names_both_spans() -> None:
    with pytest.raises(PlanError) as info:
        plan(f"@@ f\n- {a(6)}..{a(8)}\n= {a(2)}..{a(6)}\n~x\n")
    msg = info.value.message
    assert "(lines 2-6, patch line 3)" in msg and "(lines 6-8, patch line 2)" in msg
    assert info.value.kind == "overlap"


def test_identical_ranges_overlap() -> None:
    with pytest.raises(PlanError):
        plan(f"@@ f\n- {a(3)}\n- {a(3)}\n")


@pytest.mark.parametrize(
    ("insert", "inside"),
    [
        ("+ {3}", True),
        ("< {4}", True),
        ("+ {2}", True),
        ("< {2}", False),
        ("+ {4}", False),
        ("+ {1}", False),
        ("< {5}", False),
    ],
)
def test_insert_falls_inside_a_range_only_between_its_lines(insert: str, inside: bool) -> None:
    ins = insert.replace("{" + insert[3] + "}", a(int(insert[3])))
    patch = f"@@ f\n= {a(2)}..{a(4)}\n~R\n{ins}\n~I\n"
    if inside:
        with pytest.raises(PlanError) as info:
            plan(patch)
        assert "falls inside '= 2:" in info.value.message
    else:
        plan(patch)


def test_stale_hash_and_past_end_anchor_are_stale() -> None:
    with pytest.raises(PlanError) as info:
        plan("@@ f\n= 3:00\n~x\n" if line_hash("l3") != "00" else "@@ f\n= 3:01\n~x\n")
    assert info.value.kind == "stale" and info.value.line == 3
    with pytest.raises(PlanError) as info:
        plan("@@ f\n+ 11:aa\n~x\n")
    assert info.value.kind == "stale" and "has only 10 line(s)" in info.value.message


def test_cut_lines_in_the_view_may_not_be_replaced_but_may_anchor_inserts() -> None:
    view = FileView(texts={2: "l2", 3: "l3", 4: "l4"}, cut={3})
    with pytest.raises(PlanError) as info:
        plan(f"@@ f\n- {a(2)}..{a(4)}\n", view=view)
    assert info.value.kind == "cut" and info.value.line == 3
    assert plan(f"@@ f\n+ {a(3)}\n~x\n", view=view).added == 1


def test_a_wide_line_never_shown_counts_as_cut() -> None:
    wide = "w" * 30
    text = f"a\n{wide}\n"
    with pytest.raises(PlanError):
        plan(
            f"@@ f\n= {a(2, wide)}\n~x\n",
            text=text,
            view=FileView(texts={1: "a"}),
            wide=20,
        )
    shown = FileView(texts={1: "a", 2: wide})
    assert plan(f"@@ f\n= {a(2, wide)}\n~x\n", text=text, view=shown, wide=40).after == "a\nx\n"


def test_crlf_is_decided_by_the_first_line_ending() -> None:
    p = plan(f"@@ f\n+ {a(1, 'a' + chr(13))}\n~b\n", text="a\r\nc\n")
    assert p.crlf and p.after == "a\r\nb\r\nc\n"
    p = plan(f"@@ f\n+ {a(1, 'a')}\n~b\n", text="a\nc\r\n")
    assert not p.crlf and p.after == "a\nb\nc\r\n"


def test_crlf_file_without_final_newline_ends_with_crlf() -> None:
    p = plan(f"@@ f\n= {a(1, 'a' + chr(13))}\n~A\n", text="a\r\nz")
    assert p.after == "A\r\nz\r\n"
