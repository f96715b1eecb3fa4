"""The live image's name diff (``kli.tools.image.record.changed_names``): the compiled one
(``tools/image/_namediff.c``) names exactly what the pure one names, in the same order — a
differential property test over random namespaces changed in place or rebuilt in another order
— and both raise, never crash, on keys whose ``__eq__`` or ``__hash__`` raises or mutates the
namespace. Where ``KLI_REQUIRE_NATIVE`` is set (CI) the compiled one must be the one in use."""

from __future__ import annotations

import collections
import copy
import os
import sys
import types
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kli.tools.image import record

try:
    from kli.tools.image import _namediff
except ImportError as exc:  # built without a C compiler: only the pure diff is tested
    _namediff = None  # type: ignore[assignment]
    WHY_NOT = f"{type(exc).__name__}: {exc}"
else:
    WHY_NOT = ""

Diff = Callable[[dict[Any, Any], dict[Any, Any]], list[Any]]
DIFFS: list[Any] = [pytest.param(record._changed_names_py, id="pure"), pytest.param(
    _namediff.changed if _namediff else None, id="compiled",
    marks=pytest.mark.skipif(_namediff is None, reason=f"not built: {WHY_NOT}"))]
needs_native = pytest.mark.skipif(_namediff is None, reason=f"_namediff not built: {WHY_NOT}")


class Thing:
    """A key or value hashed and compared by identity."""


SHARED = [Thing() for _ in range(4)]
KEYS = st.one_of(
    st.text(max_size=4), st.integers(-3, 300), st.floats(), st.booleans(), st.none(),
    st.tuples(st.integers(0, 2), st.text(max_size=1)), st.frozensets(st.integers(0, 3), max_size=2),
    st.sampled_from(SHARED))
VALUES = st.one_of(st.integers(-3, 300), st.lists(st.integers(0, 3), max_size=2),
                   st.sampled_from(SHARED), st.text(max_size=2))


def _equal_copy(key: Any) -> Any:
    """An equal key, another object where the type makes one (a rebuilt string or int)."""
    if isinstance(key, str):
        return "".join(list(key))
    if isinstance(key, int) and not isinstance(key, bool):
        return int(str(key))
    return key


@needs_native
@given(st.data())
def test_the_compiled_diff_names_what_the_pure_one_names_in_the_same_order(data: st.DataObject) -> None:
    ns = data.draw(st.dictionaries(KEYS, VALUES, max_size=25), label="namespace")
    for key in data.draw(st.lists(st.sampled_from(list(ns)), max_size=3) if ns else st.just([])):
        ns.pop(key, None)  # holes in the entry table, skipped by the walk
    before = dict(ns)
    for key in list(ns):
        fate = data.draw(st.sampled_from(["keep"] * 4 + ["equal copy", "other", "delete",
                                                         "equal key"]), label=repr(key))
        if fate == "equal copy":  # two equal lists are two objects: changed
            ns[key] = copy.copy(ns[key])
        elif fate == "other":
            ns[key] = data.draw(VALUES)
        elif fate == "delete":
            del ns[key]
        elif fate == "equal key":  # the same name, as another (equal) object, bound last
            value = ns.pop(key)
            ns[_equal_copy(key)] = value
    ns.update(data.draw(st.dictionaries(KEYS, VALUES, max_size=4), label="added"))
    if data.draw(st.booleans(), label="rebuilt in another order"):
        ns = dict(data.draw(st.permutations(list(ns.items()))))
    after = dict(ns)

    pure = record._changed_names_py(before, after)
    compiled = _namediff.changed(before, after)
    assert [id(k) for k in compiled] == [id(k) for k in pure], (compiled, pure)
    # What the diff promises, said once more by the plainest code: the keys whose object is not
    # the same one, those of ``after`` in its order, then the deleted in ``before``'s order.
    missing = object()
    assert pure == [k for k in after if before.get(k, missing) is not after[k]] + \
        [k for k in before if k not in after]


@pytest.mark.parametrize("diff", DIFFS)
def test_a_rebound_new_and_deleted_name_come_in_the_order_of_after_then_before(diff: Diff) -> None:
    before = {"a": 1, "b": [2], "c": 3, "e": 5}
    after = {"c": 3, "b": [2], "d": 4, "e": 5}
    assert diff(before, after) == ["b", "d", "a"]
    assert diff(before, dict(before)) == []
    assert diff({}, {}) == [] and diff({}, {"x": 1}) == ["x"] and diff({"x": 1}, {}) == ["x"]


@pytest.mark.parametrize("diff", DIFFS)
def test_a_namespace_of_2000_names_gives_what_changed_wherever_it_is(diff: Diff) -> None:
    ns: dict[str, Any] = {f"name_{i}": [i] if i % 3 == 0 else i for i in range(2000)}
    before = dict(ns)
    del ns["name_700"]  # a hole in the middle: the walk goes on past it
    ns["name_1200"] = [1200]
    ns["name_10"] = ns.pop("name_10")  # the same object, moved to the end: not changed
    ns["fresh"] = 1
    assert diff(before, dict(ns)) == ["name_1200", "fresh", "name_700"]
    assert diff(dict(ns), before) == ["name_700", "name_1200", "fresh"]


@pytest.mark.parametrize("diff", DIFFS)
def test_equal_but_not_identical_values_count_as_changed(diff: Diff) -> None:
    before = {"x": [1, 2], "y": {"k": 1}}
    assert diff(before, {"x": [1, 2], "y": before["y"]}) == ["x"]


@pytest.mark.parametrize("diff", DIFFS)
def test_dict_subclasses_are_diffed_like_dicts(diff: Diff) -> None:
    before = collections.OrderedDict(a=1, b=2)
    assert diff(before, collections.defaultdict(int, b=3, c=4)) == ["b", "c", "a"]


class RaisingKey:
    """Equal hashes, so a lookup compares with ``__eq__``: which raises."""

    def __hash__(self) -> int:
        return 1

    def __eq__(self, other: object) -> bool:
        raise ValueError("no comparing me")


@pytest.mark.parametrize("diff", DIFFS)
@pytest.mark.parametrize("shape", ["first", "after same names", "reordered"])
def test_a_key_whose_eq_raises_raises_its_exception(diff: Diff, shape: str) -> None:
    one, two = RaisingKey(), RaisingKey()
    before: dict[Any, Any] = {one: 1}
    after: dict[Any, Any] = {two: 1}
    if shape == "after same names":
        before, after = {"a": 1, **before}, {"a": 1, **after}
    elif shape == "reordered":
        before, after = {"a": 1, **before, "b": 2}, {"b": 2, "a": 1, **after}
    with pytest.raises(ValueError, match="no comparing me"):
        diff(before, after)


class HashOnce:
    """Hashable once (into the dict), then its ``__hash__`` raises."""

    def __init__(self) -> None:
        self.hashed = False

    def __hash__(self) -> int:
        if self.hashed:
            raise TypeError("hashed once already")
        self.hashed = True
        return 7


@pytest.mark.parametrize("diff", DIFFS)
def test_a_key_whose_hash_raises_on_a_lookup_raises_its_exception(diff: Diff) -> None:
    key = HashOnce()
    before = {key: 1, "a": 2}
    after = {"a": 2, "b": 3}  # a lookup of ``key`` in ``after`` hashes it again
    with pytest.raises(TypeError, match="hashed once already"):
        diff(before, after)


@needs_native
def test_a_key_whose_eq_changes_the_namespace_raises_and_does_not_crash() -> None:
    after: dict[Any, Any] = {}

    class Shrinking:
        def __hash__(self) -> int:
            return 1

        def __eq__(self, other: object) -> bool:
            after.clear()  # the entries the walk holds are freed
            return False

    before: dict[Any, Any] = {Shrinking(): [1], "x": [2]}
    after.update({Shrinking(): [1], "x": [2]})
    with pytest.raises(RuntimeError, match="changed size during iteration"):
        _namediff.changed(before, after)


@needs_native
@pytest.mark.parametrize("args", [([], {}), ({}, None), (types.MappingProxyType({}), {}),
                                  ({}, {}, {}), ({},)], ids=["list", "None", "mappingproxy",
                                                             "three", "one"])
def test_anything_but_two_dicts_is_a_type_error(args: tuple[Any, ...]) -> None:
    with pytest.raises(TypeError):
        _namediff.changed(*args)


@needs_native
def test_the_compiled_diff_keeps_no_reference_it_takes() -> None:
    key, value = "a_name_of_its_own", ["value"]
    before = {key: value, "gone": 1, RaisingKey(): 0}
    refs = sys.getrefcount(key), sys.getrefcount(value)
    for _ in range(1000):
        assert _namediff.changed(before, {key: ["other"], "new": 2}) == [key, "new", "gone",
                                                                         *list(before)[2:]]
        with pytest.raises(ValueError):
            _namediff.changed(before, {"new": 2, key: value, RaisingKey(): 0})
    assert (sys.getrefcount(key), sys.getrefcount(value)) == refs


@pytest.mark.skipif(not os.environ.get("KLI_REQUIRE_NATIVE"),
                    reason="KLI_REQUIRE_NATIVE not set: the pure diff is allowed")
def test_the_compiled_diff_is_in_use_where_native_is_required() -> None:
    assert record.NATIVE_DIFF, f"the C extension kli.tools.image._namediff is missing: {WHY_NOT}"
    assert _namediff is not None and record.changed_names is _namediff.changed


def test_changed_names_is_the_compiled_diff_exactly_when_it_is_built() -> None:
    assert record.NATIVE_DIFF is (_namediff is not None)
    assert record.changed_names is (_namediff.changed if _namediff else record._changed_names_py)
