"""What a call changed in the live image, recorded so that undo takes it back (issue 33).

The image cannot be written to disk and read back, so a record lives in this process's memory
and is linked to the change id the file checkpoints use (``kli.tools.core.undo`` calls this
module as a *participant*: ``begin`` before a call, ``end`` after it, ``check`` / ``apply`` on
an undo). What a record costs and why (docs/live-image.md, "Undo and the image"):

- **Names, on every call: a shallow map.** Before and after the call, ``{name: object}`` of each
  namespace the call runs in (``Tool.image_scope``: ``__main__``, a module, a class). Names
  created, deleted and rebound are found by identity (``is``). The map holds references only
  while the call runs; a record keeps the old object of a rebound or deleted name (so undo
  puts back *the same object*) and the new one (so undo can tell whether the person rebound
  the name since).
- **Contents, only for what the code may change in place: a copy.** The source the call runs
  is parsed; a name it stores into (``x[k] = …``, ``x.a = …``, ``x += …``, ``del x[k]``),
  calls a method of (``lst.append``), or passes to a call is a *candidate*, and so are the
  globals a function it calls reads (two levels). Each candidate is pickled before the call
  and again after; different bytes mean it was changed in place, and the bytes before are kept
  to put its contents back — in the same object where the type allows (list, dict, set,
  bytearray, deque, an array of the same shape, an object's ``__dict__``: a pandas frame), so
  other references see it. A module or class candidate gets a shallow map of its attributes
  instead (a redefined module attribute, a replaced method).
- **Bounded.** An object larger than ``image_undo_object_mb`` (estimated without copying:
  ``nbytes``, ``memory_usage``, ``len``) is not copied, nor is one that cannot be pickled (a
  socket, a lock, a GPU tensor's device memory); a record says so, and undo names it with the
  cell that made it. All records together hold at most ``image_undo_budget_mb`` (copies plus
  the estimated size of the old objects they keep alive) and ``MAX_RECORDS``; the oldest go
  first, and an undo of an evicted one says its image part is gone.
- **Not a fork.** A copy-on-write ``fork()`` snapshot would copy the whole process cheaply, but
  it lives in another process: restoring from it gives new objects, never *the same objects*
  other references point to, and a kernel's threads, sockets and GPU state do not survive a
  fork. So it does not serve undo.

A name the person rebound or changed after the call (not as the call left it) makes the undo
refuse, naming it (``check``), unless ``force``. An undo's own restore is recorded the same way
(``restore`` returns the record of what it changed), so redo puts the image back as the call
left it.

Nothing here imports Jupyter.
"""

from __future__ import annotations

import ast
import collections
import contextlib
import functools
import hashlib
import itertools
import operator
import os
import pickle
import re
import sys
import threading
import types
import uuid
from collections.abc import Callable, Container, Iterable
from dataclasses import dataclass, field
from typing import Any

from kli.tools.core.participants import Part

MB = 1024 * 1024
OBJECT_MAX_MB = 64  # setting image_undo_object_mb: an object larger is not copied
BUDGET_MB = 512  # setting image_undo_budget_mb: what every record together may hold
MAX_RECORDS = 500  # records kept (oldest dropped first)
EVICTED_KEPT = 10_000  # ids of dropped records remembered (an undo of one says why it is gone)
FOLLOW_DEPTH = 2  # levels of called functions whose globals are candidates too
MAX_CANDIDATES = 200  # candidates per call (the rest are named as not checked)
KIND = "image"  # the checkpoint kind of a change's image part
PROCESS = uuid.uuid4().hex[:12]  # this process: a record is found only in the one that made it

# Calls that never change their arguments (a name passed to them is not a candidate).
PURE_CALLS = frozenset({
    "len", "print", "repr", "str", "type", "isinstance", "issubclass", "id", "hash", "sum",
    "min", "max", "sorted", "list", "tuple", "set", "frozenset", "dict", "bool", "int", "float",
    "abs", "round", "any", "all", "enumerate", "zip", "range", "format", "hasattr", "getattr",
    "callable", "iter", "reversed", "map", "filter", "vars", "dir", "display",
})
# Methods that only read their object (a call of one does not make its object a candidate).
PURE_METHODS = frozenset({
    "head", "tail", "describe", "info", "copy", "get", "keys", "values", "items", "count",
    "index", "mean", "sum", "min", "max", "std", "var", "median", "nunique", "unique",
    "value_counts", "to_string", "to_dict", "to_list", "tolist", "to_numpy", "startswith",
    "endswith", "format", "join", "split", "strip", "lower", "upper", "groupby", "agg",
    "isna", "notna", "any", "all", "query", "filter", "loc", "iloc", "at", "iat", "sample",
    "equals", "astype", "reshape", "transpose", "dot", "round", "argmax", "argmin", "nbytes",
})
_IPYTHON_CACHE = re.compile(r"^(_+\d*|_i+\d*|_(oh|ih|dh))$")  # IPython's output history names
_IMMUTABLE = (int, float, complex, str, bytes, bool, type(None), tuple, frozenset, range,
              types.FunctionType, types.BuiltinFunctionType, types.MethodType, property,
              staticmethod, classmethod)
_ids = itertools.count(1)


# -- what a call reads and writes ------------------------------------------------------------
def _root(node: ast.AST) -> str | None:
    """The name at the root of ``a.b[c].d``; None when it is not a plain name."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


CACHED_SOURCE = 4096  # characters: a shorter source's candidates are kept (``_candidates``)


def candidates_of(source: str) -> dict[str, str]:
    """The names ``source`` may change in place, each with how: ``store`` (it stores into,
    deletes from or augments the object: certain) or ``call`` (it calls a method of it, or
    passes it to a call: possible); and ``load`` for every other name it reads (followed into
    functions, never copied). A source that does not parse gives {}. The answer depends on the
    text alone, so a short source's is kept (an agent repeats its small calls: a parse saved
    on each)."""
    if len(source) <= CACHED_SOURCE:
        return dict(_candidates(source))
    return _parse_candidates(source)


@functools.lru_cache(maxsize=256)
def _candidates(source: str) -> tuple[tuple[str, str], ...]:
    return tuple(_parse_candidates(source).items())


def _parse_candidates(source: str) -> dict[str, str]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    found: dict[str, str] = {}
    rank = {"load": 0, "call": 1, "store": 2}

    def note(name: str | None, how: str) -> None:
        if name is not None and rank[how] > rank.get(found.get(name, ""), -1):
            found[name] = how

    for node in ast.walk(tree):
        if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            note(_root(node), "store")
        elif isinstance(node, ast.AugAssign):
            note(_root(node.target), "store")
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr not in PURE_METHODS:
                note(_root(func.value), "call")
            pure = isinstance(func, ast.Name) and func.id in PURE_CALLS
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                note(_root(arg), "load" if pure else "call")
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            note(node.id, "load")
    return found


def _code_names(code: types.CodeType, depth: int = 0) -> set[str]:
    names = set(code.co_names)
    if depth < 4:
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                names |= _code_names(const, depth + 1)
    return names


def _followed(found: dict[str, str], namespace: dict[str, Any]) -> dict[str, str]:
    """``found`` plus the globals of ``namespace`` that the functions it reads read, up to
    ``FOLLOW_DEPTH`` levels (a call of ``add_item()`` that appends to a global list)."""
    out = dict(found)
    frontier = list(found)
    for _level in range(FOLLOW_DEPTH):
        nxt: list[str] = []
        for name in frontier:
            fn = namespace.get(name)
            if isinstance(fn, types.FunctionType) and fn.__globals__ is namespace:
                for inner in _code_names(fn.__code__):
                    if inner in namespace and inner not in out:
                        out[inner] = "call"
                        nxt.append(inner)
        frontier = nxt
    return out


# -- sizes and copies ------------------------------------------------------------------------
def estimate(obj: Any, depth: int = 0) -> int:
    """Bytes ``obj`` holds, estimated without copying it: arrays and frames by their data,
    containers by their items (the first 1,000, scaled), anything else shallowly."""
    try:
        module = type(obj).__module__.split(".")[0]
        if module in ("numpy", "torch", "cupy", "jax", "xarray", "dask") and hasattr(obj, "nbytes"):
            return int(obj.nbytes)
        if module == "pandas" and hasattr(obj, "memory_usage"):
            usage = obj.memory_usage(deep=False)
            return int(usage.sum() if hasattr(usage, "sum") else usage)
        if module == "polars" and hasattr(obj, "estimated_size"):
            return int(obj.estimated_size())
        size = sys.getsizeof(obj)
        if depth < 3 and isinstance(obj, (list, tuple, set, frozenset, dict, collections.deque)):
            items = list(itertools.islice(obj.items() if isinstance(obj, dict) else obj, 1000))
            sub = sum(estimate(i, depth + 1) for i in items)
            if len(items) and len(obj) > len(items):
                sub = sub * len(obj) // len(items)
            size += sub
        elif depth < 3 and hasattr(obj, "__dict__") and not isinstance(obj, (type, types.ModuleType)):
            size += estimate(vars(obj), depth + 1)
        return size
    except Exception:
        return 0


class TooLarge(Exception):
    """A pickle grew past the bound it was given: stopped there, not finished."""


class _Bounded:
    """A file for ``pickle.Pickler`` that refuses to grow past ``limit`` bytes, so an object
    whose size was underestimated (a large array deep inside) stops the copy early."""

    def __init__(self, limit: int) -> None:
        self.parts: list[bytes] = []
        self.size = 0
        self.limit = limit

    def write(self, data: bytes) -> int:
        self.size += len(data)
        if self.size > self.limit:
            raise TooLarge(self.size)
        self.parts.append(bytes(data))
        return len(data)


def _pickle(obj: Any, limit: int | None = None) -> bytes:
    if limit is None:
        return pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    out = _Bounded(limit)
    pickle.Pickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    return b"".join(out.parts)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _put_back(live: Any, old: Any) -> bool:
    """Put ``old``'s contents into ``live`` (the same object); False when its type does not
    allow it (then the caller rebinds the name to ``old``)."""
    if type(live) is not type(old):
        return False
    try:
        if isinstance(live, list):
            live[:] = old
        elif isinstance(live, dict):
            live.clear()
            live.update(old)
        elif isinstance(live, set):
            live.clear()
            live.update(old)
        elif isinstance(live, bytearray):
            live[:] = old
        elif isinstance(live, collections.deque):
            live.clear()
            live.extend(old)
        elif type(live).__module__.split(".")[0] == "numpy" and hasattr(live, "shape"):
            if live.shape != old.shape or live.dtype != old.dtype or not live.flags.writeable:
                return False
            live[...] = old
            return True
        elif not hasattr(live, "__dict__"):
            return False
        if hasattr(live, "__dict__") and not isinstance(live, (type, types.ModuleType)):
            state = vars(old)
            vars(live).clear()
            vars(live).update(state)
        return True
    except Exception:
        return False


# -- a namespace or an object's attributes ---------------------------------------------------
@dataclass
class Place:
    """Where names live: a namespace dict, or an object (module, class) whose attributes are
    its names. ``prefix`` is how a name here is shown (``""`` for ``__main__``, ``mod.``)."""

    label: str
    target: Any
    prefix: str = ""
    hidden: Container[str] = ()

    def names(self) -> dict[str, Any]:
        """Every name here and its object: a copy of the mapping (C speed, whatever it holds);
        which of them are the user's is asked only of the names that changed (``shown``)."""
        return dict(self.target) if isinstance(self.target, dict) else _attrs(self.target)

    def shown(self, name: Any) -> bool:
        """Whether ``name`` is the user's: not a dunder, not the host's (IPython's ``In``,
        ``Out``…), not IPython's output history (``_``, ``_3``, ``_i3``)."""
        return isinstance(name, str) and not (name.startswith("__") and name.endswith("__")) \
            and name not in self.hidden and not _IPYTHON_CACHE.match(name)

    def get(self, name: str, default: Any) -> Any:
        if isinstance(self.target, dict):
            return self.target.get(name, default)
        return _attrs(self.target).get(name, default)

    def set(self, name: str, value: Any) -> None:
        if isinstance(self.target, dict):
            self.target[name] = value
        else:
            setattr(self.target, name, value)

    def delete(self, name: str) -> None:
        if isinstance(self.target, dict):
            self.target.pop(name, None)
        else:
            with contextlib.suppress(AttributeError):
                delattr(self.target, name)


def _attrs(obj: Any) -> dict[str, Any]:
    try:
        return dict(vars(obj))
    except TypeError:
        return {}


_MISSING = object()


@dataclass
class Copy:
    """A candidate's contents before the call (``blob``), or why they were not kept."""

    place: Place
    name: str
    obj: Any
    how: str
    blob: bytes | None = None
    why: str | None = None  # not copied: too large, cannot be pickled
    size: int = 0


@dataclass
class Token:
    """What ``begin`` took: each place's names before, and the candidates' copies."""

    places: list[tuple[Place, dict[str, Any]]]
    copies: list[Copy]
    notes: list[str]
    object_max: int
    cell_of: Any = None  # name -> the notebook cell that binds it (for the notes), lazily


@dataclass
class Record:
    """What one call changed in the image. ``names``: (place, name, before, after), each
    ``_MISSING`` when unbound; ``mutated``: (place, name, object, blob before, digest after);
    ``notes``: what could not be kept, for the person."""

    names: list[tuple[Place, str, Any, Any]] = field(default_factory=list)
    mutated: list[tuple[Place, str, Any, bytes, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    held: int = 0  # bytes this record keeps alive (estimated)
    change: str | None = None

    def empty(self) -> bool:
        return not (self.names or self.mutated or self.notes)

    def summary(self) -> dict[str, Any]:
        """The record as JSON, for the change's checkpoint (the timeline shows it)."""
        def shown(p: Place, n: str) -> str:
            return f"{p.prefix}{n}"
        out: dict[str, Any] = {
            "created": [shown(p, n) for p, n, b, _a in self.names if b is _MISSING],
            "deleted": [shown(p, n) for p, n, _b, a in self.names if a is _MISSING],
            "rebound": [shown(p, n) for p, n, b, a in self.names
                        if b is not _MISSING and a is not _MISSING],
            "mutated": [shown(p, n) for p, n, *_ in self.mutated],
            "not_kept": list(self.notes),
            "process": PROCESS, "pid": os.getpid(), "held_bytes": self.held,
        }
        return out

    def text(self, s: dict[str, Any] | None = None) -> str:
        """One line: what the call changed in the image, then what cannot be taken back
        (``s``: the ``summary`` already made)."""
        s = s or self.summary()
        parts = [f"{w} {', '.join(s[k][:8])}{' …' if len(s[k]) > 8 else ''}"
                 for k, w in (("created", "created"), ("rebound", "rebound"),
                              ("deleted", "deleted"), ("mutated", "changed in place"))
                 if s[k]]
        text = "; ".join(parts)
        if self.notes:
            text += ("; " if text else "") + "; ".join(self.notes[:3]) + (
                " …" if len(self.notes) > 3 else "")
        return text


# -- recording -------------------------------------------------------------------------------
def begin(places: Iterable[Place], code: Iterable[str], object_max: int,
          extra: dict[str, str] | None = None) -> Token:
    """Before a call: each place's names, and a copy of each candidate of ``code`` (or of
    ``extra``: name -> how, for an undo's own restore)."""
    taken = [(p, p.names()) for p in places]
    wanted: dict[str, str] = dict(extra or {})
    for source in code:
        for name, how in candidates_of(source).items():
            if name not in wanted or how == "store":
                wanted[name] = how
    copies: list[Copy] = []
    notes: list[str] = []
    seen: set[int] = set()
    more: list[tuple[Place, dict[str, Any]]] = []
    for place, before in taken:
        names = _followed(wanted, place.target) if isinstance(place.target, dict) else dict(wanted)
        for name, how in names.items():
            obj = before.get(name, _MISSING)
            if obj is _MISSING or id(obj) in seen or not place.shown(name):
                continue
            if isinstance(obj, (types.ModuleType, type)):
                if how != "load":  # its attributes, by a shallow map
                    seen.add(id(obj))
                    sub = Place(f"{place.label}:{name}", obj, _dotted(place, name, obj))
                    more.append((sub, sub.names()))
                continue
            if how == "load" or isinstance(obj, _IMMUTABLE):
                continue
            if len(copies) >= MAX_CANDIDATES:
                notes.append(f"{place.prefix}{name}: not checked for changes in place (the call "
                             f"reads more than {MAX_CANDIDATES} objects)")
                continue
            seen.add(id(obj))
            copies.append(_copy(place, name, obj, how, object_max))
    return Token(taken + more, copies, notes, object_max)


def _dotted(place: Place, name: str, obj: Any) -> str:
    if isinstance(obj, types.ModuleType):
        return f"{obj.__name__}."
    return f"{place.prefix}{name}."


def _copy(place: Place, name: str, obj: Any, how: str, object_max: int) -> Copy:
    size = estimate(obj)
    if size > object_max:
        return Copy(place, name, obj, how, why=f"is too large to restore ({_mb(size)}; an undo "
                    f"copies objects up to {_mb(object_max)})", size=size)
    try:
        blob = _pickle(obj, object_max)
    except TooLarge:
        return Copy(place, name, obj, how, why=f"is too large to restore (over {_mb(object_max)}, "
                    "the most an undo copies)", size=object_max)
    except Exception as exc:
        return Copy(place, name, obj, how, why=f"cannot be copied ({type(exc).__name__}: "
                    f"{_short(exc)})", size=size)
    return Copy(place, name, obj, how, blob=blob, size=len(blob))


def _changed_names_py(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """The names bound, rebound (another object, by identity) or deleted from ``before`` to
    ``after``: those of ``after`` in its order, then the deleted ones in ``before``'s order.
    Any hashable keys; an exception from a key's ``__eq__`` propagates. The pure form of
    ``_namediff.changed``; the common case — the same names in the same order — runs at C speed
    (``compress`` over ``is_not`` of the two value lists), whatever the namespace holds."""
    keys = tuple(after)
    if tuple(before) == keys:  # an identity check per key at C speed: the same strings
        return list(itertools.compress(keys, map(operator.is_not, before.values(), after.values())))
    after = dict(after)  # walked in Python below: a live namespace another thread may bind in
    return [k for k, v in after.items() if before.get(k, _MISSING) is not v] + \
        [k for k in before if k not in after]


def _native_diff() -> Callable[[dict[str, Any], dict[str, Any]], list[str]] | None:
    """``_namediff.changed`` (tools/image/_namediff.c), or None where it was not built:
    setup.py's extension is optional, so an installation without a C compiler still works."""
    try:
        from kli.tools.image._namediff import changed
    except ImportError:
        return None
    return changed


# ``changed_names(before, after)``: what ``_changed_names_py`` says, from the compiled diff when
# it is built (it walks the two dicts' entry tables: no refcount is written and no value object
# read, which inside a kernel is most of the pure version's cost), else from the pure one.
_NATIVE = _native_diff()
NATIVE_DIFF = _NATIVE is not None  # which one is in use (tests, bench/bench_image_undo.py)
changed_names = _NATIVE or _changed_names_py


def end(token: Token, cell_of: Any = None) -> Record:
    """After the call: what it changed (``Record``; empty when nothing). ``cell_of(name)``
    names the cell that binds a name, for the note on an object not kept."""
    record = Record(notes=list(token.notes))
    for place, before in token.places:
        # A namespace is diffed as it is, not copied again: a copy takes and drops a reference
        # to each of its objects, cache misses in a kernel's large image, and the diff reads
        # only its table (no Python code runs meanwhile that could change it).
        after = place.target if isinstance(place.target, dict) else place.names()
        for name in changed_names(before, after):
            if not place.shown(name):
                continue
            b, a = before.get(name, _MISSING), place.get(name, _MISSING)
            size = estimate(b) if b is not _MISSING else 0
            if size > token.object_max:  # keeping it would hold it alive: said, not kept
                what = "deleted" if a is _MISSING else "rebound (it keeps the call's value)"
                record.notes.append(f"{place.prefix}{name} was {what} and its old value is too "
                                    f"large to keep ({_mb(size)})" + _rerun(cell_of, name))
                continue
            record.names.append((place, name, b, a))
            record.held += size
    for c in token.copies:
        now = c.place.get(c.name, _MISSING)
        if now is not c.obj:
            continue  # rebound or deleted: the old object itself is kept by ``names``
        if c.blob is None:
            if c.how == "store":
                record.notes.append(f"{c.place.prefix}{c.name} was changed in place and "
                                    f"{c.why}" + _rerun(cell_of, c.name))
            else:
                record.notes.append(f"{c.place.prefix}{c.name} may have been changed in place "
                                    f"(the call used it) and {c.why}" + _rerun(cell_of, c.name))
            continue
        try:
            blob_after = _pickle(c.obj)
        except Exception as exc:
            record.notes.append(f"{c.place.prefix}{c.name} cannot be compared after the call "
                                f"({type(exc).__name__}: {_short(exc)})")
            continue
        if blob_after != c.blob:
            record.mutated.append((c.place, c.name, c.obj, c.blob, _digest(blob_after)))
            record.held += len(c.blob)
    return record


def _rerun(cell_of: Any, name: str) -> str:
    if cell_of is None:
        return ""
    try:
        cell = cell_of(name)
    except Exception:
        cell = None
    return f": re-run cell {cell}" if cell else ": re-run the code that made it"


def _mb(size: int) -> str:
    return f"{size / MB:,.1f} MB" if size < 1024 * MB else f"{size / 1024 / MB:,.1f} GB"


def _short(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:
        text = ""
    return text[:120]


# -- undo ------------------------------------------------------------------------------------
Key = tuple[int, str]  # (id of the place's target, name): one name of one place


def problems(record: Record, skip: Container[Key] = ()) -> list[tuple[Key, str]]:
    """What is no longer as the call left it (a person rebound or changed it since), one
    phrase per name (names in ``skip`` left out: a newer change of them is checked instead);
    [] when the undo may go ahead."""
    out: list[tuple[Key, str]] = []
    for place, name, _b, a in record.names:
        key = (id(place.target), name)
        now = place.get(name, _MISSING)
        if key not in skip and now is not a:
            what = ("is bound again" if a is _MISSING else
                    "was deleted" if now is _MISSING else "was rebound")
            out.append((key, f"{place.prefix}{name} {what}"))
    for place, name, obj, _blob, digest in record.mutated:
        key = (id(place.target), name)
        if key in skip:
            continue
        now = place.get(name, _MISSING)
        if now is not obj:
            out.append((key, f"{place.prefix}{name} was "
                        f"{'deleted' if now is _MISSING else 'rebound'}"))
            continue
        try:
            same = _digest(_pickle(obj)) == digest
        except Exception:
            same = False
        if not same:
            out.append((key, f"{place.prefix}{name} was changed"))
    return out


def keys(record: Record) -> set[Key]:
    return {(id(p.target), n) for p, n, *_ in record.names} | \
        {(id(p.target), n) for p, n, *_ in record.mutated}


def restore(record: Record) -> list[str]:
    """Put back what ``record`` changed: rebound and deleted names get their old objects,
    created ones are removed, mutated objects get their old contents (in place where the type
    allows). Returns notes for the person (what could not be put back, or only as a copy)."""
    notes: list[str] = []
    for place, name, obj, blob, _digest_after in reversed(record.mutated):
        try:
            old = pickle.loads(blob)
        except Exception as exc:
            notes.append(f"{place.prefix}{name} could not be put back ({type(exc).__name__}: "
                         f"{_short(exc)})")
            continue
        live = place.get(name, _MISSING)
        target = live if live is not _MISSING else obj
        if not _put_back(target, old):
            place.set(name, old)
            notes.append(f"{place.prefix}{name} was put back as a copy (a {type(obj).__name__} "
                         "cannot be changed in place): other references still see the changed "
                         "object")
    for place, name, before, _after in reversed(record.names):
        if before is _MISSING:
            place.delete(name)
        else:
            place.set(name, before)
    return notes + [n for n in record.notes if "not checked" not in n]


# -- the records of this process ---------------------------------------------------------------
class Records:
    """Records by change id, oldest first, within ``budget`` bytes and ``MAX_RECORDS``."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.by_change: collections.OrderedDict[str, Record] = collections.OrderedDict()
        # Changes whose record was dropped for the bounds (an undo of one says so), the newest
        # EVICTED_KEPT of them: the ids themselves are bounded too.
        self.evicted: collections.OrderedDict[str, None] = collections.OrderedDict()
        self.total = 0  # bytes the records hold (kept current by ``add``)

    def add(self, change: str, record: Record, budget: int) -> None:
        with self.lock:
            record.change = change
            self.by_change[change] = record
            self.total += record.held
            while len(self.by_change) > 1 and (
                    len(self.by_change) > MAX_RECORDS or self.total > budget):
                old, dropped = self.by_change.popitem(last=False)
                self.total -= dropped.held
                self.evicted[old] = None
                if len(self.evicted) > EVICTED_KEPT:
                    self.evicted.popitem(last=False)

    def get(self, change: str) -> Record | None:
        with self.lock:
            return self.by_change.get(change)

    def held(self) -> int:
        return self.total


RECORDS = Records()


# -- the participant: how core's recording and undo reach the image ---------------------------
def _setting(settings: dict[str, Any], name: str, default: float) -> float:
    value = settings.get(name, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        return default
    return float(value)


def _cell_finder(ws: Any) -> Any:
    """``cell_of(name)``: the id of the last code cell of the host's notebook that binds
    ``name`` at its top level (what to re-run to make it again); None when none is known."""
    found: dict[str, str | None] = {}
    cells: list[tuple[str, str]] | None = None

    def load() -> list[tuple[str, str]]:
        notebook = getattr(ws, "notebook", None)
        if not notebook:
            return []
        loaded = ws.notebooks.load(ws.jail.resolve(notebook).real)
        out = []
        for cell in loaded.data.get("cells") or []:
            if cell.get("cell_type") == "code":
                src = cell.get("source")
                out.append((str(cell.get("id") or ""), "".join(src) if isinstance(src, list) else str(src or "")))
        return out

    def cell_of(name: str) -> str | None:
        nonlocal cells
        if name in found:
            return found[name]
        if cells is None:
            try:
                cells = load()
            except Exception:
                cells = []
        hit = None
        for cid, source in cells:
            if cid and name in source and name in _top_bound(source):
                hit = cid
        found[name] = hit
        return hit

    return cell_of


def _top_bound(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    out: set[str] = set()
    for stmt in tree.body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                out.add(node.id)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(stmt.name)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            out |= {(a.asname or a.name).split(".")[0] for a in stmt.names}
    return out


class ImageParticipant:
    """The live image as a participant in recorded changes (``kli.tools.core.participants``):
    a call of a tool with an ``image_scope`` is recorded (setting ``image_undo``, default
    true); an undo takes its record back with the change's files."""

    kind = KIND

    def __init__(self, records: Records | None = None) -> None:
        self.records = records or RECORDS
        self.object_max = OBJECT_MAX_MB * MB
        self.budget = BUDGET_MB * MB

    def begin(self, call: Any, settings: dict[str, Any]) -> Token | None:
        scope_of = getattr(call.tool, "image_scope", None)
        if scope_of is None or settings.get("image_undo", True) is False:
            return None
        self.object_max = int(_setting(settings, "image_undo_object_mb", OBJECT_MAX_MB) * MB)
        self.budget = int(_setting(settings, "image_undo_budget_mb", BUDGET_MB) * MB)
        try:
            scope = scope_of(call)
        except Exception:  # the tool itself refuses (an unknown module, a missing park)
            return None
        main = call.ws.namespace
        places = [Place(label, target, "" if target is main else f"{label}.",
                        call.ws.hidden_names() if target is main else ())
                  for label, target in scope.places]
        token = begin(places, scope.code, self.object_max)
        token.cell_of = _cell_finder(call.ws)
        return token

    def end(self, call: Any, token: Token, settings: dict[str, Any]) -> Any:
        rec = end(token, token.cell_of)
        return None if rec.empty() else self._part(rec, "live image")

    def _part(self, rec: Record, who: str) -> Any:
        s = rec.summary()  # once: the path, the checkpoint and the line all read it
        named = [*s["created"], *s["rebound"], *s["deleted"], *s["mutated"]]
        path = "image: " + (", ".join(named[:6]) + (" …" if len(named) > 6 else "") if named
                            else "not kept")
        budget = self.budget
        # The call's text (what the model reads) gets a line only for what undo could not take
        # back: names and contents are in ``details.image``, the change id in ``details.change``.
        line = f"{who}: {rec.text(s)}" if rec.notes else ""
        return Part(KIND, path, s, line,
                    lambda change: self.records.add(change, rec, budget))

    def check(self, call: Any, cps: list[Any], force: bool) -> tuple[list[str], Any]:
        recs: list[Record] = []
        notes: list[str] = []
        seen: set[Key] = set()
        found: list[str] = []
        for cp in cps:  # newest first: a name's newest change is what must be in the image
            rec = self.records.get(cp.change or "")
            if rec is None:
                part = cp.part or {}
                why = ("its record was dropped to stay within the memory bound "
                       f"(image_undo_budget_mb, {self.budget // MB} MB)"
                       if cp.change in self.records.evicted else
                       "it was recorded by another kernel process (this one restarted since, or "
                       "it is another notebook's)" if part.get("process") != PROCESS else
                       "its record is not kept")
                notes.append(f"the live image part of change {cp.change} ({cp.path}): {why}")
                continue
            found += [phrase for _key, phrase in problems(rec, seen)]
            seen |= keys(rec)
            recs.append(rec)
        return found, (recs, notes)

    def apply(self, call: Any, plan: Any) -> tuple[Any, list[str]]:
        recs, notes = plan
        if not recs:
            return None, list(notes)
        places: dict[int, Place] = {}
        copies: list[Copy] = []
        for rec in recs:
            for place, *_ in [*rec.names, *rec.mutated]:
                places.setdefault(id(place.target), place)
            for place, name, obj, _blob, _digest in rec.mutated:
                copies.append(_copy(place, name, obj, "store", self.object_max))
        token = Token([(p, p.names()) for p in places.values()], copies, [], self.object_max)
        out = list(notes)
        for rec in recs:  # newest first
            out += restore(rec)
        back = end(token)
        return (None if back.empty() else self._part(back, "live image, by the undo")), out


PARTICIPANT = ImageParticipant()
