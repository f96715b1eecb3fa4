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
    from kli.tools.core.changes import MAX_CHANGED_LINES, count_changes

    n = MAX_CHANGED_LINES  # every line of the middle changed: more changes than the bound
    before = "top\n" + "".join(f"a{i}\n" for i in range(n)) + "end\n"
    after = "top\n" + "".join(f"b{i}\n" for i in range(n - 1)) + "end\n"
    assert count_changes(before, after) == (n - 1, n)


def test_changes_spread_over_a_large_file_are_counted_exactly() -> None:
    from kli.tools.core.changes import count_changes

    lines = [f"line {i}" for i in range(60_000)]
    edited = list(lines)
    for i in range(0, 60_000, 1000):  # a replace_all: one line in every thousand
        edited[i] = f"renamed {i}"
    del edited[30_500]
    edited.insert(45_000, "inserted")
    before, after = "\n".join(lines) + "\n", "\n".join(edited) + "\n"
    assert count_changes(before, after) == (61, 61)


def _lcs(a: list[str], b: list[str]) -> int:
    row = [0] * (len(b) + 1)
    for x in a:
        prev = 0
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], prev + 1 if x == y else max(row[j], row[j - 1])
    return row[-1]


def test_counts_are_the_fewest_insertions_and_deletions() -> None:
    import random

    from kli.tools.core.changes import count_changes

    rng = random.Random(18)
    for _ in range(500):
        a = [rng.choice("abcde") for _ in range(rng.randint(0, 14))]
        b = [rng.choice("abcde") for _ in range(rng.randint(0, 14))]
        added, removed = count_changes("".join(x + "\n" for x in a), "".join(x + "\n" for x in b))
        common = _lcs(a, b)  # an independent oracle: the longest common subsequence
        assert (added, removed) == (len(b) - common, len(a) - common), (a, b)
