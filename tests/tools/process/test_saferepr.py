"""saferepr: the bounded printing of eval's values."""

from __future__ import annotations

import collections
from typing import Any

import pytest

from kli.tools.process.saferepr import MAX_DEPTH, MAX_ITEMS, MAX_STRING, MAX_TOTAL, saferepr


def test_limits_are_the_spec_numbers() -> None:
    assert (MAX_ITEMS, MAX_DEPTH) == (100, 20)


@pytest.mark.parametrize(
    "value",
    [1, 2.5, None, True, "s", b"b", (1,), (), [], {}, set(), {1}, frozenset(), frozenset({2}),
     [1, [2, (3, {"k": "v"})]], collections.deque([1]),
     collections.Counter("aab")],
)  # fmt: skip
def test_small_values_print_like_repr(value: Any) -> None:
    assert saferepr(value) == repr(value)


def test_collections_show_at_most_100_items() -> None:
    assert saferepr(list(range(150))) == repr(list(range(100)))[:-1] + ", ...(50 more)]"
    d = saferepr({i: i for i in range(300)})
    assert "99: 99, ...(200 more)}" in d and "100: 100" not in d
    assert saferepr(set(range(101))).endswith("...(1 more)}")


def test_nesting_deeper_than_20_is_elided() -> None:
    value: list[Any] = []
    node = value
    for _ in range(40):
        node.append([])
        node = node[0]
    assert saferepr(value) == "[" * 20 + "[...]" + "]" * 20


def test_cycles_print_finitely() -> None:
    a: list[Any] = [1]
    a.append(a)
    d: dict[str, Any] = {}
    d["self"] = [d]
    assert saferepr(a) == "[1, <cycle list>]"
    assert saferepr(d) == "{'self': [<cycle dict>]}"


def test_shared_but_not_cyclic_references_print_in_full() -> None:
    shared = [1, 2]
    assert saferepr([shared, shared]) == "[[1, 2], [1, 2]]"


def test_huge_string_is_cut_with_its_length() -> None:
    text = saferepr("q" * 1_000_000)
    assert text == repr("q" * MAX_STRING) + "... (1000000 characters in all)"
    assert saferepr(b"\x00" * 5000).endswith("... (5000 bytes in all)")


def test_total_size_is_bounded() -> None:
    wide = [[list(range(100))] * 100] * 100
    text = saferepr(wide)
    assert len(text) <= MAX_TOTAL + 60 and text.endswith(f"(value cut at {MAX_TOTAL} characters)")


def test_failing_repr_is_reported_not_raised() -> None:
    class Broken:
        def __repr__(self) -> str:
            raise RuntimeError("no repr")

    assert saferepr([Broken()]) == "[<repr of Broken failed: RuntimeError: no repr>]"


def test_huge_int_prints_its_size() -> None:
    assert saferepr(10**10000) == f"<int of {(10**10000).bit_length()} bits>"


def test_namedtuple_and_defaultdict() -> None:
    point = collections.namedtuple("point", "x y")
    assert saferepr(point(1, [2])) == "point(x=1, y=[2])"
    assert (
        saferepr(collections.defaultdict(list, a=[1])) == "defaultdict(<class 'list'>, {'a': [1]})"
    )


def test_ordered_dict_prints_in_the_dict_form() -> None:
    assert saferepr(collections.OrderedDict(a=1)) == "OrderedDict({'a': 1})"


def test_subclass_with_its_own_repr_uses_it() -> None:
    class Tagged(list[int]):
        def __repr__(self) -> str:
            return "Tagged!"

    assert saferepr(Tagged([1])) == "Tagged!"
