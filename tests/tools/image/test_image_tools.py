"""image_summary, inspect, trace / untrace / trace_read, redefine and the stale-module note,
on a Workspace whose image is this process (numpy and pandas are in the test extra)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kli.tools import Workspace
from kli.tools.file.anchors import line_hash
from kli.tools.image import tracing


@pytest.fixture
def image(root: Path) -> Iterator[Workspace]:
    (root / "kli_helpers_t15.py").write_text(
        "def add(a, b):\n    '''Add two things.\n\n    More.'''\n    return a + b\n\n"
        "class K:\n    def m(self, x):\n        return x * 2\n\n"
        "    @staticmethod\n    def s(y):\n        return -y\n")
    sys.path.insert(0, str(root))
    ws = Workspace(str(root))
    r = ws.call("eval", {"code": "import numpy as np, pandas as pd, kli_helpers_t15 as h\n"
                         "arr = np.arange(12.0).reshape(3, 4)\n"
                         "df = pd.DataFrame({'a': [1, 2, 3], 'b': ['x', 'y', 'z']})\n"
                         "xs = [1, 2, 3]\nn = 5\ndef f(q, r=2):\n    return q + r\n"})
    assert r.ok, r.text
    yield ws
    ws.close()
    sys.path.remove(str(root))
    sys.modules.pop("kli_helpers_t15", None)


def test_summary_lists_names_with_type_shape_dtype_len_and_hides_modules_and_private(
        image: Workspace) -> None:
    image.call("eval", {"code": "_private = 1"})
    r = image.call("image_summary", {})
    assert r.ok
    rows = {line.split()[0]: line for line in r.text.splitlines()[1:]}
    assert "shape 3×4" in rows["arr"] and "dtype float64" in rows["arr"] and "96 B data" \
        in rows["arr"]
    assert "pandas" in rows["df"] and "shape 3×2" in rows["df"] and "int64×1" in rows["df"]
    assert "len 3" in rows["xs"] and "= 5" in rows["n"] and "f(q, r=2)" in rows["f"]
    assert "_private" not in r.text
    assert "modules: h, np, pd" in r.text
    assert [n["name"] for n in r.details["names"]] == ["arr", "df", "f", "n", "xs"]


def test_summary_honours_the_hosts_hidden_names(root: Path) -> None:
    ws = Workspace(str(root), namespace={"In": [], "mine": 1}, hidden_names=lambda: {"In"})
    r = ws.call("image_summary", {})
    assert "mine" in r.text and "In" not in r.text


def test_inspect_a_dataframe_gives_shape_columns_and_a_bounded_repr(image: Workspace) -> None:
    r = image.call("inspect", {"name": "df"})
    assert r.ok, r.text
    assert "shape: 3 × 2" in r.text and "columns (2): a int64, b" in r.text
    assert r.details["shape"] == [3, 2]
    assert "attributes" not in r.text  # arrays and frames show columns, not 200 methods


def test_inspect_an_array_gives_shape_dtype_and_size(image: Workspace) -> None:
    r = image.call("inspect", {"name": "arr"})
    assert "dtype: float64" in r.text and "size: 96 B (data)" in r.text
    assert "array([[ 0.," in r.text


def test_inspect_a_function_under_the_root_shows_anchored_source_ready_for_edit(
        image: Workspace) -> None:
    r = image.call("inspect", {"name": "h.add"})
    assert "signature: add(a, b)" in r.text and "Add two things." in r.text
    assert f"1:{line_hash('def add(a, b):')}|def add(a, b):" in r.text
    assert r.details["source_lines"] == [1, 5]
    hh = line_hash("    return a + b")
    edit = image.call("edit", {"input": f"@@ kli_helpers_t15.py\n= 5:{hh}..5:{hh}\n"
                               "~    return a - b\n"})
    assert edit.ok, edit.text  # no read needed: inspect recorded the anchors
    assert "live module kli_helpers_t15" in edit.text and "is stale" in edit.text
    assert edit.details["stale_modules"] == [{"module": "kli_helpers_t15",
                                              "path": "kli_helpers_t15.py"}]


def test_inspect_a_class_lists_its_attributes_without_running_properties(
        image: Workspace) -> None:
    r = image.call("inspect", {"name": "h.K"})
    assert "m (method)" in r.text and "s (staticmethod)" in r.text


def test_inspect_an_unknown_name_says_how_to_look(image: Workspace) -> None:
    r = image.call("inspect", {"name": "nothing_here.x"})
    assert not r.ok and "image_summary" in r.text
    r = image.call("inspect", {"name": "h.nope"})
    assert not r.ok and "has no attribute 'nope'" in r.text


def test_trace_records_calls_returns_and_exceptions_then_untrace_restores(
        image: Workspace) -> None:
    for name in ("h.add", "h.K.m", "h.K.s", "f"):
        assert image.call("trace", {"function": name}).ok
    image.call("eval", {"code": "h.add(1, 2); h.K().m(3); h.K.s(4); f(1)\n"
                        "try:\n    h.add(1, 'a')\nexcept TypeError:\n    pass"})
    r = image.call("trace_read", {})
    calls = r.details["calls"]
    assert [c["function"] for c in calls] == ["h.add", "h.K.m", "h.K.s", "f", "h.add"]
    assert calls[0]["args"] == ["1", "2"] and calls[0]["returned"] == "3"
    assert calls[2]["returned"] == "-4"  # a static method stays static
    assert calls[4]["raised"].startswith("TypeError")
    again = image.call("trace", {"function": "h.add"})
    assert not again.ok and "already traced" in again.text
    assert image.call("untrace", {"function": "h.add"}).ok
    check = image.call("eval", {"code": "hasattr(h.add, '__kli_traced__'), h.K.s(1)"})
    assert "(False, -1)" in check.text
    assert not image.call("untrace", {"function": "h.add"}).ok


def test_an_agents_trace_under_eval_review_is_held_and_wraps_nothing_until_accepted(
        image: Workspace) -> None:
    from kli.tools.core import approval

    image.set_setting("approval", {"eval": "review"})
    agent = image.open_session("agent")
    held = image.call("trace", {"function": "f"}, agent, source="agent")
    assert held.ok and held.details["status"] == "pending", held.text
    probe = {"code": "hasattr(f, '__kli_traced__')"}
    assert "False" in image.call("eval", probe).text  # the image is as it was
    assert approval.accept_any(image, held.details["proposal"], "ui").ok
    assert "True" in image.call("eval", probe).text
    assert image.call("untrace", {"function": "f"}, agent, source="agent").ok  # not held


def test_a_sessions_traces_end_with_it(image: Workspace) -> None:
    s = image.open_session("tracer")
    image.call("trace", {"function": "f"}, s)
    image.close_session(s.id)
    assert "False" in image.call("eval", {"code": "hasattr(f, '__kli_traced__')"}).text


def test_the_trace_ring_is_bounded_and_counts_what_it_evicted(image: Workspace) -> None:
    image.call("trace", {"function": "f"})
    image.call("eval", {"code": f"for i in range({tracing.TRACE_RING + 5}):\n    f(i)"})
    r = image.call("trace_read", {"clear": True})
    assert len(r.details["calls"]) == tracing.TRACE_RING and r.details["evicted"] == 5
    assert "5 older calls were dropped" in r.text
    assert image.call("trace_read", {}).details["calls"] == []


def test_redefine_returns_the_prior_source_and_it_restores(image: Workspace) -> None:
    r = image.call("redefine", {"definition": "def f(q, r=2):\n    return q * 100\n",
                                "code": "f(1)"})
    assert r.ok and "[line 1] 100" in r.text
    prior = r.details["prior"]["f"]
    assert prior == "def f(q, r=2):\n    return q + r\n"
    back = image.call("redefine", {"definition": prior, "code": "f(1)"})
    assert back.ok and "[line 1] 3" in back.text


def test_redefine_says_when_the_rerun_failed_with_the_new_definition_in_place(
        image: Workspace) -> None:
    r = image.call("redefine", {"definition": "def f(q, r=2):\n    return q / 0\n",
                                "code": "f(1)"})
    assert not r.ok and "FAILED with the new definition in place" in r.text
    assert "ZeroDivisionError" in r.text and "return q + r" in r.text


def test_redefine_a_method_by_target(image: Workspace) -> None:
    r = image.call("redefine", {"target": "h.K.m", "definition":
                                "def m(self, x):\n    return x * 3\n", "code": "h.K().m(2)"})
    assert r.ok and "[line 1] 6" in r.text
    assert "return x * 2" in r.details["prior"]["h.K.m"]
    wrong = image.call("redefine", {"target": "h.K.m", "definition": "def other(): pass",
                                    "code": "1"})
    assert not wrong.ok and "must define exactly 'm'" in wrong.text


def test_redefine_reload_takes_the_edited_file_and_returns_its_text_before_the_edit(
        image: Workspace) -> None:
    image.call("read", {"path": "kli_helpers_t15.py"})
    hh = line_hash("    return a + b")
    assert image.call("edit", {"input": f"@@ kli_helpers_t15.py\n= 5:{hh}..5:{hh}\n"
                               "~    return a - b\n"}).ok
    r = image.call("redefine", {"reload": "kli_helpers_t15", "code": "h.add(5, 2)"})
    assert r.ok and "[line 1] 3" in r.text, r.text
    assert "return a + b" in r.details["prior"]["kli_helpers_t15"]


def test_redefine_needs_definition_or_reload(image: Workspace) -> None:
    r = image.call("redefine", {"code": "1"})
    assert not r.ok and "either definition" in r.text


def test_ws_write_of_an_imported_file_says_the_module_is_stale(image: Workspace) -> None:
    text = (Path(image.root) / "kli_helpers_t15.py").read_text()
    image.call("ws_read", {"path": "kli_helpers_t15.py"})
    r = image.call("ws_write", {"path": "kli_helpers_t15.py", "content": text + "\nX = 1\n"})
    assert r.ok, r.text
    assert r.details["stale_modules"] == [{"module": "kli_helpers_t15",
                                           "path": "kli_helpers_t15.py"}]


def test_the_hosts_module_hook_decides_what_is_stale(root: Path) -> None:
    (root / "m.py").write_text("a = 1\n")
    fake = type(sys)("fake_mod")
    fake.__file__ = str(root / "m.py")
    ws = Workspace(str(root), modules=lambda: {"fake_mod": fake})
    assert "live module fake_mod" in ws.call("write", {"path": "m.py", "content": "a = 2\n"}).text
    alone = Workspace(str(root), modules=lambda: {})
    assert "stale" not in alone.call("write", {"path": "m.py", "content": "a = 3\n"}).text


def test_every_tool_says_whether_it_touches_the_image() -> None:
    from kli.tools.core.registry import Tool
    from kli.tools.registry import REGISTRY

    waits = {n for n, t in REGISTRY.tools.items() if t.touches_image}
    assert {"eval", "eval_frame", "eval_continue", "eval_abort", "redefine", "inspect",
            "image_summary", "look", "trace", "untrace", "run_cells"} == waits
    assert Tool("x", "kli", None, "", {}, lambda call: None).touches_image  # type: ignore[arg-type,return-value]


def test_untrace_leaves_a_definition_made_after_trace_alone(image: Workspace) -> None:
    image.call("trace", {"function": "f"})
    image.call("eval", {"code": "def f(q, r=2):\n    return 'new'\n"})
    r = image.call("untrace", {"function": "f"})
    assert r.ok and r.details["restored"] is False and "left in place" in r.text
    assert "'new'" in image.call("eval", {"code": "f(1)"}).text
    assert image.call("trace", {"function": "f"}).ok  # the stale trace does not block a new one


def test_inspect_of_code_outside_the_root_shows_its_source_as_text(image: Workspace) -> None:
    r = image.call("inspect", {"name": "f"})  # defined by an eval: <kli-eval-N>
    assert "shown as text, not anchors" in r.text and "return q + r" in r.text


def test_the_stale_lookup_takes_each_real_path_once_and_still_sees_a_module_imported_later(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os
    import types

    from kli.tools.image import stale

    modules: dict[str, object] = {}
    for i in range(200):
        mod = types.ModuleType(f"cached_{i}")
        mod.__file__ = str(root / f"cached_{i}.py")
        modules[mod.__name__] = mod
    ws = Workspace(str(root), modules=lambda: dict(modules))
    real = os.path.realpath(root / "late.py")
    assert stale.modules_from(ws, real) == []  # the cache is built
    calls: list[str] = []
    realpath = os.path.realpath
    monkeypatch.setattr(stale.os.path, "realpath",
                        lambda p: calls.append(p) or realpath(p))
    late = types.ModuleType("late_mod")
    late.__file__ = str(root / "late.py")
    modules["late_mod"] = late
    assert stale.modules_from(ws, real) == ["late_mod"]
    assert calls == [late.__file__]  # only the new module's path was resolved
    assert stale.modules_from(ws, real) == ["late_mod"] and len(calls) == 1
