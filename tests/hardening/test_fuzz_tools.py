"""Every registered tool, called with random arguments, returns a result (never an internal
error, never an exception out of ``Workspace.call``), and nothing changes outside the root or
under ``.kli/`` (other than the scratch and checkpoint folders the tools own).

Process tools are fuzzed with their gates denied (``capabilities`` grants only the file gates):
the call must come back ``denied`` and run nothing. The search regex path gets random regular
expressions: a result or a ``bad_regex`` error, within the time bound.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kli.tools import Workspace
from kli.tools.core.registry import GATE_EVAL, GATE_EXEC
from kli.tools.file import walk as walk_mod
from kli.tools.registry import REGISTRY
from kli.tools.ws import ws_grep

from .conftest import examples

FILE_GATES = ["file/read", "file/write", "file/edit"]
SAFE = {"capabilities": FILE_GATES}
_PATHS = st.sampled_from(["a.py", "sub/b.txt", ".", "sub", "**/*.py", "*", "new.txt", "../x",
                          "/etc/passwd", ".kli/settings.json", ".kli/scratch/s.txt", "", "a.py/x",
                          "sub/../a.py", "\x00", "nope/none.txt"])
_JSONISH = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12), st.floats(allow_nan=True),
              st.text(max_size=20), _PATHS),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=6,
)


def _value_for(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    kind = schema.get("type")
    if "enum" in schema:
        return st.one_of(st.sampled_from(schema["enum"]), _JSONISH)
    if kind == "string":
        return st.one_of(_PATHS, st.text(max_size=40), _JSONISH)
    if kind == "integer":
        return st.one_of(st.integers(-5, 3000), st.integers(), _JSONISH)
    if kind == "boolean":
        return st.one_of(st.booleans(), _JSONISH)
    if kind == "array":
        return st.one_of(st.lists(st.one_of(st.text(max_size=10),
                                             st.dictionaries(st.text(max_size=5), _JSONISH, max_size=3)),
                                  max_size=4), _JSONISH)
    return _JSONISH


@st.composite
def _args(draw: st.DrawFn, name: str) -> Any:
    tool = REGISTRY.tools[name]
    props: dict[str, Any] = tool.parameters.get("properties", {})
    if draw(st.integers(0, 9)) == 0:
        return draw(_JSONISH)  # not even an object
    args: dict[str, Any] = {}
    for key, schema in props.items():
        if draw(st.booleans()):
            args[key] = draw(_value_for(schema))
    for alias in tool.aliases:
        if draw(st.integers(0, 5)) == 0:
            args[alias] = draw(_value_for({"type": "string"}))
    if draw(st.integers(0, 5)) == 0:
        args[draw(st.text(max_size=8))] = draw(_JSONISH)
    return args


def _snapshot(top: Path) -> dict[str, bytes]:
    out = {}
    for dirpath, dirnames, files in os.walk(top):
        dirnames[:] = [d for d in dirnames if d not in ("checkpoints", "scratch")]
        for name in files:
            p = os.path.join(dirpath, name)
            if os.path.islink(p):
                continue
            with open(p, "rb") as fh:
                out[os.path.relpath(p, top)] = fh.read()
    return out


def _make_tree(base: Path) -> Path:
    root = base / "root"
    (root / "sub").mkdir(parents=True)
    (root / ".kli").mkdir()
    (root / ".kli" / "settings.json").write_text(json.dumps({"capabilities": FILE_GATES}) + "\n")
    (root / "a.py").write_text("def f():\n    return 1\n")
    (root / "sub" / "b.txt").write_text("hello\nworld\n")
    (base / "outside.txt").write_text("outside\n")
    return root


TOOL_NAMES = sorted(REGISTRY.tools)


@pytest.mark.parametrize("name", TOOL_NAMES)
def test_random_arguments_get_a_result_and_touch_nothing_outside(
    tmp_path_factory: pytest.TempPathFactory, name: str
) -> None:
    base = tmp_path_factory.mktemp("fz")
    root = _make_tree(base)
    ws = Workspace(str(root), settings=SAFE)
    ws.call("read", {"path": "a.py"})
    ws.call("ws_read", {"path": "a.py"})
    outside_before = (base / "outside.txt").read_bytes()
    control_before = _snapshot(root / ".kli")
    tool = REGISTRY.tools[name]

    @settings(max_examples=examples(0.5))
    @given(_args(name))
    def run(args: Any) -> None:
        r = ws.call(name, args)
        assert isinstance(r.text, str)
        assert r.details.get("error") != "internal", (args, r.text, r.details.get("traceback"))
        if tool.gate in (GATE_EXEC, GATE_EVAL):
            assert not r.ok
            assert r.details.get("error") in ("denied", "bad_arguments"), r.text
        assert (base / "outside.txt").read_bytes() == outside_before
        assert _snapshot(root / ".kli") == control_before
        assert sorted(os.listdir(base)) == ["outside.txt", "root"]

    run()


_REGEX_ATOMS = st.sampled_from(
    ["a", "b", ".", "\\", "(", ")", "[", "]", "{", "}", "*", "+", "?", "|", "^", "$", "\\d",
     "\\w", "\\s", "\\b", "(?i)", "(?=", "(?!", "(?<=", "(?P<n>", "(?P=n)", "\\1", "{2,}",
     "{,3}", "[^", "-", "\\Z", "\\A", "(?:", "é", "\\p{L}", "(?x)", "#", "\n"]
)
_REGEX = st.lists(_REGEX_ATOMS, max_size=14).map("".join)


@settings(max_examples=examples(3))
@given(_REGEX, st.booleans())
def test_random_regexes_get_a_result_or_a_bad_regex_error_in_time(
    tmp_path_factory: pytest.TempPathFactory, pattern: str, glob: bool
) -> None:
    root = _make_tree(tmp_path_factory.mktemp("rx"))
    (root / "long.txt").write_text("a" * 3000 + "\n" + "ab" * 500 + "\n")
    ws = Workspace(str(root))
    old = walk_mod.MAX_SECONDS, ws_grep.MAX_SECONDS
    walk_mod.MAX_SECONDS = ws_grep.MAX_SECONDS = 0.5
    try:
        started = time.monotonic()
        r = ws.call("search", {"pattern": pattern, "path": "**/*" if glob else "long.txt"})
        g = ws.call("ws_grep", {"pattern": pattern})
        elapsed = time.monotonic() - started
    finally:
        walk_mod.MAX_SECONDS, ws_grep.MAX_SECONDS = old
    assert r.details.get("error") in (None, "bad_regex"), r.text
    assert r.ok or r.details["error"] == "bad_regex"
    assert g.details.get("error") is None or (pattern == "" and g.details["error"] == "bad_arguments"), g.text
    assert elapsed < 30, (pattern, elapsed)


def test_ws_mv_into_a_path_under_a_file_is_a_clear_error(root: Path) -> None:
    """Found by the long fuzz run: os.makedirs raised FileExistsError (an internal error)."""
    (root / "a.py").write_text("x\n")
    (root / "b.py").write_text("y\n")
    r = Workspace(str(root)).call("ws_mv", {"src": "b.py", "dst": "a.py/x"})
    assert not r.ok and r.details["error"] == "bad_destination", r.text
    assert "Nothing was moved" in r.text and "a.py" in r.text
    assert (root / "b.py").read_text() == "y\n" and (root / "a.py").read_text() == "x\n"


# -- values JSON cannot carry (the Python API) ------------------------------------------------
class _Broken:
    """An object every dunder of which raises: repr, str, eq, hash, bool, len, iter, format."""

    def _boom(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("broken object")

    __repr__ = __str__ = __eq__ = __ne__ = __lt__ = __gt__ = __le__ = __ge__ = _boom
    __hash__ = __bool__ = __len__ = __iter__ = __format__ = __index__ = __int__ = _boom  # type: ignore[assignment]


class _BrokenStr(str):
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("broken str")

    __hash__ = str.__hash__

    def __repr__(self) -> str:
        raise RuntimeError("broken str")


class _BrokenInt(int):
    def __repr__(self) -> str:
        raise RuntimeError("broken int")

    def __lt__(self, other: object) -> bool:
        raise RuntimeError("broken int")


def _deep_list(depth: int) -> list[Any]:
    out: list[Any] = []
    for _ in range(depth):
        out = [out]
    return out


_DEEP = _deep_list(100_000)
_DEEP_DICT: dict[str, Any] = {}
for _ in range(100_000):
    _DEEP_DICT = {"k": _DEEP_DICT}
# Drawn by index, so that hypothesis never has to print one of them.
_WEIRD: list[Any] = [
    10**5000, -(10**5000), 2**63, _DEEP, _DEEP_DICT, _Broken(), _BrokenStr("a.py"),
    _BrokenInt(3), "x\ud800", "\udfff", "a.py\ud83d", ["\ud800"], [_Broken()], {"k": _Broken()},
    [_BrokenStr("a")], float("nan"), float("inf"), 1e308, b"bytes", {1, 2}, (1, 2), object(),
    type, Ellipsis, bytearray(b"x"), 1j,
]
_WEIRD_KEYS: list[Any] = [1, None, (1, 2), _BrokenStr("k"), "x\ud800"]


@st.composite
def _weird_recipe(draw: st.DrawFn, name: str) -> Any:
    """Which weird value goes where: plain data for hypothesis to print, made into the
    arguments by ``_cook``."""
    tool = REGISTRY.tools[name]
    props: dict[str, Any] = tool.parameters.get("properties", {})
    if draw(st.integers(0, 9)) == 0:
        return ("whole", draw(st.integers(0, len(_WEIRD) - 1)))
    recipe: list[tuple[str, Any, Any]] = []
    for key, schema in props.items():
        choice = draw(st.integers(0, 2))
        if choice == 0:
            recipe.append(("weird", key, draw(st.integers(0, len(_WEIRD) - 1))))
        elif choice == 1:
            recipe.append(("plain", key, draw(_value_for(schema))))
    if draw(st.integers(0, 4)) == 0:
        recipe.append(("key", draw(st.integers(0, len(_WEIRD_KEYS) - 1)),
                       draw(st.integers(0, len(_WEIRD) - 1))))
    return ("args", recipe)


def _cook(recipe: Any) -> Any:
    if recipe[0] == "whole":
        return _WEIRD[recipe[1]]
    args: dict[Any, Any] = {}
    for kind, key, value in recipe[1]:
        if kind == "weird":
            args[key] = _WEIRD[value]
        elif kind == "plain":
            args[key] = value
        else:
            args[_WEIRD_KEYS[key]] = _WEIRD[value]
    return args


@pytest.mark.parametrize(
    ("extra", "fine"),
    [
        ({_BrokenStr("k"): 10**5000}, False),
        ({_BrokenStr("k"): "plain"}, True),
        ({"k": _Broken()}, False),
        ({"k": {1, 2}}, False),
    ],
)
def test_an_extra_argument_ws_write_accepts_obeys_the_rules_every_argument_obeys(
    root: Path, extra: dict[Any, Any], fine: bool
) -> None:
    """Found by CI's fuzz run: ws_write keeps extra arguments (its schema allows them), and a
    str-subclass key whose ``__eq__`` raises reached the profile's call key as it was (an
    internal error). Extras are made plain and checked like named arguments."""
    ws = Workspace(str(root), settings=SAFE)
    args: dict[Any, Any] = {"path": "new.py", "content": "x = 1\n", **extra}
    r = ws.call("ws_write", args)
    assert r.details.get("error") != "internal", r.details.get("traceback")
    if fine:
        assert r.ok, r.text
        assert (root / "new.py").read_text() == "x = 1\n"
    else:
        assert r.details["error"] == "bad_arguments" and "'k'" in r.text, r.text
        assert not (root / "new.py").exists()


@pytest.mark.parametrize("name", TOOL_NAMES)
def test_values_json_cannot_carry_never_make_call_raise(
    tmp_path_factory: pytest.TempPathFactory, name: str
) -> None:
    """Through the Python API anything can be passed: an int of 5,000 digits, a list nested
    100,000 deep, an object whose ``__repr__`` raises. ``call`` returns a result — an error
    naming the argument, never an internal error — and never raises."""
    base = tmp_path_factory.mktemp("weird")
    root = _make_tree(base)
    ws = Workspace(str(root), settings=SAFE)
    events: list[dict[str, Any]] = []
    ws.add_listener(events.append)
    ws.call("read", {"path": "a.py"})
    ws.call("ws_read", {"path": "a.py"})
    control_before = _snapshot(root / ".kli")

    @settings(max_examples=examples(0.5))
    @given(_weird_recipe(name))
    def run(recipe: Any) -> None:
        r = ws.call(name, _cook(recipe))
        assert isinstance(r.text, str)
        assert r.details.get("error") != "internal", (r.text, r.details.get("traceback"))
        assert _snapshot(root / ".kli") == control_before
        assert events[-1]["tool"] == name

    run()
    assert not ws.call(_Broken(), {}).ok  # type: ignore[arg-type]
    assert not ws.call(name, _Broken()).ok  # type: ignore[arg-type]
