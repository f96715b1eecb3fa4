"""The one "did you mean" guess: a swapped pair of letters is the nearest slip."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kli.tools.core.suggest import close_names, typo_distance

words = st.text(alphabet="abcde_", max_size=8)


def test_a_swapped_pair_suggests_the_word_it_came_from_first() -> None:
    assert close_names("raed", ["redo", "read", "write"])[0] == "read"
    assert close_names("wirte", ["write", "ws_write", "wait"])[0] == "write"


def test_nothing_close_suggests_nothing() -> None:
    assert close_names("zzzz", ["read", "edit"]) == []


def test_a_swap_of_neighbours_is_one_edit() -> None:
    assert typo_distance("raed", "read") == 1
    assert typo_distance("raed", "redo") == 2


@given(words, words)
def test_the_distance_is_symmetric_and_zero_only_for_equal_words(a: str, b: str) -> None:
    assert typo_distance(a, b) == typo_distance(b, a)
    assert (typo_distance(a, b) == 0) == (a == b)
    assert typo_distance(a, b) <= max(len(a), len(b))
