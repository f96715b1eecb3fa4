"""Counting an edit's changed lines stays linear in the file's length and exact for small changes."""

from __future__ import annotations


def test_counting_a_one_line_change_in_a_large_file_is_exact_and_linear() -> None:
    import time

    from kli.tools.core.changes import count_changes

    before = "".join(f"same line {i % 7}\n" for i in range(200_000))  # repeated lines
    after = before.replace("same line 3\n", "changed\n", 1)
    began = time.perf_counter()
    assert count_changes(before, after) == (1, 1)
    assert count_changes(before, before) == (0, 0)
    # Not a timing test: a quadratic count of 200,000 lines would not finish for hours.
    assert time.perf_counter() - began < 60


def test_a_changed_middle_over_the_bound_counts_as_replaced_whole() -> None:
    from kli.tools.core.changes import MAX_DIFF_LINES, count_changes

    n = MAX_DIFF_LINES + 10
    before = "top\n" + "".join(f"a{i}\n" for i in range(n)) + "end\n"
    after = "top\n" + "".join(f"b{i}\n" for i in range(n - 1)) + "end\n"
    assert count_changes(before, after) == (n - 1, n)
    small_before, small_after = "x\na\nb\nc\ny\n", "x\na\nB\nc\nq\ny\n"
    assert count_changes(small_before, small_after) == (2, 1)
