"""The image recorder on real objects, without a kernel: each kind of change a call makes in a
namespace is recorded and put back (the same objects, contents in place), what cannot be kept
is named, and a name changed after the call is reported instead of overwritten."""

from __future__ import annotations

import socket
import types
from typing import Any

import pytest

from kli.tools.image import record

BIG = 10 * record.MB


def run(ns: dict[str, Any], code: str, object_max: int = BIG) -> record.Record:
    """``code`` run in ``ns`` as a recorded call."""
    token = record.begin([record.Place("__main__", ns)], [code], object_max)
    exec(code, ns)
    return record.end(token)


def test_candidates_say_store_call_and_load() -> None:
    found = record.candidates_of("a.append(1)\nb['k'] = 2\nc += [3]\nprint(len(d))\ne.head()\nf(g)\n"
                                 "del h[0]\nx = y + 1")
    assert found["a"] == "call" and found["b"] == "store" and found["c"] == "store"
    assert found["d"] == "load" and found["h"] == "store" and found["g"] == "call"
    assert found["y"] == "load" and "e" not in {n for n, how in found.items() if how != "load"}


def test_a_list_appended_to_is_put_back_in_place_and_other_references_see_it() -> None:
    ns: dict[str, Any] = {"items": [1, 2]}
    other = ns["items"]
    rec = run(ns, "items.append(3)")
    assert rec.summary()["mutated"] == ["items"]
    assert record.problems(rec) == []
    record.restore(rec)
    assert ns["items"] is other and other == [1, 2]


def test_a_dict_changed_through_a_function_that_reads_the_global_is_put_back() -> None:
    ns: dict[str, Any] = {}
    exec("config = {'a': 1}\ndef bump():\n    config['a'] += 1\n", ns)
    rec = run(ns, "bump()")
    assert rec.summary()["mutated"] == ["config"]
    record.restore(rec)
    assert ns["config"] == {"a": 1}


def test_a_rebound_name_gets_the_same_old_object_back_and_a_created_one_is_removed() -> None:
    old = [1]
    ns: dict[str, Any] = {"x": old, "gone": "kept"}
    rec = run(ns, "x = [2]\ny = 5\ndel gone")
    s = rec.summary()
    assert s["rebound"] == ["x"] and s["created"] == ["y"] and s["deleted"] == ["gone"]
    record.restore(rec)
    assert ns["x"] is old and "y" not in ns and ns["gone"] == "kept"


def test_a_module_attribute_redefined_is_put_back() -> None:
    mod = types.ModuleType("mymod")
    exec("def add(a, b):\n    return a + b\n", vars(mod))
    original = mod.add
    ns: dict[str, Any] = {"mymod": mod}
    rec = run(ns, "mymod.add = lambda a, b: a - b\nmymod.extra = 1")
    assert set(rec.summary()["rebound"]) == {"mymod.add"}
    assert rec.summary()["created"] == ["mymod.extra"]
    record.restore(rec)
    assert mod.add is original and mod.add(2, 3) == 5 and not hasattr(mod, "extra")


def test_a_method_replaced_on_a_class_is_put_back() -> None:
    ns: dict[str, Any] = {}
    exec("class Box:\n    def size(self):\n        return 1\n", ns)
    original = ns["Box"].__dict__["size"]
    rec = run(ns, "Box.size = lambda self: 2")
    record.restore(rec)
    assert ns["Box"].__dict__["size"] is original and ns["Box"]().size() == 1


def test_a_dataframe_changed_in_place_gets_its_old_contents_in_the_same_object() -> None:
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"a": [1, 2, 3]})
    ns: dict[str, Any] = {"df": df}
    rec = run(ns, "df['b'] = df['a'] * 2\ndf.loc[0, 'a'] = 99")
    assert rec.summary()["mutated"] == ["df"]
    record.restore(rec)
    assert ns["df"] is df and list(df.columns) == ["a"] and df["a"].tolist() == [1, 2, 3]


def test_a_numpy_array_changed_in_place_is_put_back_in_place() -> None:
    np = pytest.importorskip("numpy")
    arr = np.arange(5)
    ns: dict[str, Any] = {"arr": arr}
    rec = run(ns, "arr[0] = 100\narr *= 2")
    record.restore(rec)
    assert ns["arr"] is arr and arr.tolist() == [0, 1, 2, 3, 4]


def test_an_object_too_large_to_copy_is_named_with_the_reason() -> None:
    ns: dict[str, Any] = {"blob": bytearray(2 * record.MB)}
    rec = run(ns, "blob[0] = 1", object_max=record.MB)
    assert not rec.mutated
    assert rec.notes and rec.notes[0].startswith("blob was changed in place and is too large to restore")
    assert "blob" in " ".join(record.restore(rec))


def test_an_object_that_cannot_be_copied_is_named() -> None:
    sock = socket.socket()
    try:
        ns: dict[str, Any] = {"sock": sock}
        rec = run(ns, "sock.setblocking(False)")
        assert rec.notes and "sock may have been changed in place" in rec.notes[0]
        assert "cannot be copied" in rec.notes[0]
    finally:
        sock.close()


def test_an_old_value_too_large_to_keep_is_named_and_not_held() -> None:
    ns: dict[str, Any] = {"big": bytearray(2 * record.MB)}
    rec = run(ns, "big = None", object_max=record.MB)
    assert not rec.names and "big was rebound" in rec.notes[0]


def test_a_name_the_person_rebound_or_changed_after_the_call_is_a_problem() -> None:
    ns: dict[str, Any] = {"x": 1, "items": [1]}
    rec = run(ns, "x = 2\nitems.append(2)")
    ns["x"] = 3
    ns["items"].append(9)
    assert [phrase for _key, phrase in record.problems(rec)] == ["x was rebound", "items was changed"]
    record.restore(rec)  # forced: the old values anyway
    assert ns["x"] == 1 and ns["items"] == [1]


def test_a_call_that_only_reads_records_nothing() -> None:
    ns: dict[str, Any] = {"data": list(range(10)), "n": 3}
    rec = run(ns, "print(len(data), n)\nsorted(data)")
    assert rec.empty()


def test_records_stay_within_the_budget_oldest_first() -> None:
    store = record.Records()
    for i in range(3):
        r = record.Record(notes=[f"n{i}"], held=400)
        store.add(f"ch-{i}", r, budget=1000)
    assert list(store.by_change) == ["ch-1", "ch-2"] and list(store.evicted) == ["ch-0"]


def test_the_ids_of_dropped_records_are_bounded_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(record, "EVICTED_KEPT", 3)
    store = record.Records()
    for i in range(8):
        store.add(f"ch-{i}", record.Record(held=400), budget=500)
    assert list(store.by_change) == ["ch-7"]
    assert list(store.evicted) == ["ch-4", "ch-5", "ch-6"]  # the newest dropped, no more


def test_an_object_whose_size_was_underestimated_stops_its_copy_at_the_bound() -> None:
    deep = types.SimpleNamespace(inner=[[[[bytearray(2 * record.MB)]]]])  # deeper than estimated
    ns: dict[str, Any] = {"deep": deep}
    assert record.estimate(deep) < record.MB
    rec = run(ns, "deep.flag = 1", object_max=record.MB)
    assert not rec.mutated and "deep was changed in place and is too large to restore" in rec.notes[0]
