"""Tools never import the workspace's files (issue 23, rule 1).

The workspace root is on the kernel's ``sys.path`` (IPython adds ``''``, the kernel's folder),
so the person's cells can import their modules. A tool that
imports a module lazily by name (the TypeScript check's ``tree_sitter``, a standard module
imported inside a function) would find a file of that name in the root before the installed
one — and an agent that can write files could make the kernel run its Python, under any gate,
even in a call held for review.

While a thread runs a tool (``guarded``, entered by ``Workspace._call``), this thread's imports:

- resolve through every finder but never to a file under the root: ``sys.path`` entries (and a
  package's ``__path__`` entries) that are relative (``''``, ``'.'``) or lie under the root are
  left out, so the installed module is found instead; a module that exists only under the root
  is refused (``Refused``, a ``ModuleNotFoundError``, naming the file);
- refuse a module already imported whose file lies under the root (the person imported their
  own ``tree_sitter.py`` in a cell): the tool does not use it. Modules loaded before the guard
  was installed (``install``, by the first Workspace: at the kernel's start, before any cell)
  and the modules of kli itself are the host's own code and are kept (the root may be kli's
  source tree: a tool may use what the kernel loaded from it, never load more from there).

Folders of the interpreter itself inside the root (a project's ``.venv/``) are trusted: the jail
treats them as control state (``jail.interpreter_folders``), so no tool writes there.

Code the person or the agent runs through a tool — eval, eval_frame, eval_continue, run_cells'
cells, redefine — is not the tool's import: ``lifted`` turns the guard off exactly around it
(an eval's imports are the eval's business). Other threads, the person's cells among them,
import as usual: the guard is per thread.
"""

from __future__ import annotations

import builtins
import contextlib
import importlib.machinery
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from types import ModuleType
from typing import Any, TypeVar

from kli.tools.core.jail import interpreter_folders

T = TypeVar("T")


class _State(threading.local):
    root: str | None = None  # the workspace root this thread's imports avoid (None: off)


# A class default, not getattr(..., None): a missing attribute costs an exception per import.
_state = _State()
_install_lock = threading.Lock()
_original_import: Callable[..., Any] | None = None
# (name, file) of every module loaded before the first install: the host's own code
_kept_modules: frozenset[tuple[str, str | None]] = frozenset()
# The host's own package (``kli``): its modules in sys.modules are its code, wherever they were
# loaded from (the root may be its source tree); a tool still never loads a new one from there.
_HOST = __name__.split(".")[0]


class Refused(ModuleNotFoundError):
    """A tool's import that would have used a file under the workspace root: for the tool, no
    such module (code that catches ImportError or ModuleNotFoundError for an optional module
    goes on without it)."""


def active_root() -> str | None:
    """The root this thread's imports avoid now (None when the guard is off)."""
    return _state.root


@contextlib.contextmanager
def guarded(root: str) -> Iterator[None]:
    """This thread's imports avoid files under ``root`` (a real path) until the block ends."""
    install()
    before = active_root()
    _state.root = root
    try:
        yield
    finally:
        _state.root = before


@contextlib.contextmanager
def lifted() -> Iterator[None]:
    """This thread imports as usual until the block ends: around code a person or an agent
    asked to run (an eval's imports are the eval's business)."""
    before = active_root()
    _state.root = None
    try:
        yield
    finally:
        _state.root = before


def carried(fn: Callable[[], T]) -> Callable[[], T]:
    """``fn`` with this thread's guard, for a tool that hands work to another thread."""
    root = active_root()
    if root is None:
        return fn

    def run() -> T:
        with guarded(root):
            return fn()

    return run


def install() -> None:
    """Put the finder first on ``sys.meta_path`` and the check of imported modules into
    ``builtins.__import__`` — once; the finder is moved back to the front when something was
    put before it since."""
    global _original_import, _kept_modules
    if sys.meta_path and sys.meta_path[0] is _Finder and _original_import is not None:
        return
    with _install_lock:
        if _original_import is None:
            _kept_modules = frozenset(
                (name, _origin(m)) for name, m in list(sys.modules.items())
                if isinstance(m, ModuleType))
            _original_import = builtins.__import__
            builtins.__import__ = _import  # type: ignore[assignment]  # same call, looser types
        if not sys.meta_path or sys.meta_path[0] is not _Finder:
            with contextlib.suppress(ValueError):
                sys.meta_path.remove(_Finder)
            sys.meta_path.insert(0, _Finder)


# -- where a file lies ---------------------------------------------------------------------------


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder + os.sep)


def _forbidden(path: str, root: str) -> bool:
    """True when ``path`` (a file or a search folder) is relative or lies under ``root``
    outside the interpreter's own folders."""
    if not os.path.isabs(path):
        return True
    real = os.path.realpath(path)
    if not _under(real, root):
        return False
    return not any(_under(real, f) and f != root for f in interpreter_folders())


def _refusal(name: str, place: str, root: str) -> Refused:
    rel = os.path.relpath(os.path.realpath(place), root) if os.path.isabs(place) else place
    return Refused(
        f"import of {name!r} refused: it would load {rel} from the workspace, and a tool never "
        "runs the workspace's files as its own code (code that eval, run_cells or redefine "
        f"runs imports as usual). Install the package into the kernel's environment if a tool "
        f"needs it, or rename {rel} if it is not meant to stand in for it.",
        name=name,
        path=place,
    )


# -- the finder -----------------------------------------------------------------------------------


class _Finder:
    """First on ``sys.meta_path``; does nothing on a thread outside a tool call. Inside one, it
    asks the other finders itself — PathFinder over the search path without the root's entries
    — and gives the first spec that loads nothing from under the root. A module found only
    under the root is refused; one found nowhere is left to the usual "No module named"."""

    @classmethod
    def find_spec(cls, name: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        root = active_root()
        if root is None:
            return None
        search = [e for e in (sys.path if path is None else path) if isinstance(e, str)]
        kept = [entry for entry in search if not _forbidden(entry, root)]
        refused: str | None = None
        for finder in list(sys.meta_path):
            find = getattr(finder, "find_spec", None)
            if finder is cls or find is None:
                continue
            if finder is importlib.machinery.PathFinder:
                spec = find(name, kept, target)
            else:  # builtin, frozen, an editable install's finder, …
                spec = find(name, path, target)
                bad = [p for p in _spec_places(spec) if _forbidden(p, root)] if spec else []
                if bad:
                    refused = refused or bad[0]
                    continue
            if spec is not None:
                return spec
        if refused is None and len(kept) < len(search):
            shadow = importlib.machinery.PathFinder.find_spec(name, search, target)
            if shadow is not None:
                refused = next(iter(_spec_places(shadow)), name)
        if refused is not None:
            raise _refusal(name, refused, root)
        return None  # found nowhere: the other finders will say so as usual


def _spec_places(spec: importlib.machinery.ModuleSpec) -> list[str]:
    """The absolute files and folders a spec would load from."""
    places: list[str] = []
    if spec.has_location and isinstance(spec.origin, str):
        places.append(spec.origin)
    if spec.submodule_search_locations is not None:
        places.extend(p for p in spec.submodule_search_locations if isinstance(p, str))
    return [p for p in places if os.path.isabs(p)]


# -- modules already imported ---------------------------------------------------------------------


def _import(name: str, globals: Any = None, locals: Any = None, fromlist: Sequence[str] = (),
            level: int = 0) -> Any:
    assert _original_import is not None
    module = _original_import(name, globals, locals, fromlist, level)
    root = _state.root
    if root is not None and level == 0:
        _check_imported(name, module, fromlist or (), root)
    return module


def _check_imported(name: str, module: Any, fromlist: Sequence[str], root: str) -> None:
    """Raise ``Refused`` when the import of ``name`` (and ``fromlist``) gave a module that was
    loaded from under the root after the guard was installed."""
    if "." in name:
        parts = name.split(".")
        used = [sys.modules.get(".".join(parts[:i])) for i in range(1, len(parts) + 1)]
    else:
        used = [module]
    if fromlist:
        target = sys.modules.get(name, module)
        used.extend(getattr(target, item, None) for item in fromlist if item != "*")
    for mod in used:
        if isinstance(mod, ModuleType):
            place = _verdict(mod, root)
            if place is not None:
                raise _refusal(mod.__name__, place, root)


# (id(module), root) -> (module, the file under the root it came from, or None): an imported
# module's file does not change, and a tool imports the same modules again and again.
_verdicts: dict[tuple[int, str], tuple[ModuleType, str | None]] = {}
MAX_VERDICTS = 50_000


def _verdict(mod: ModuleType, root: str) -> str | None:
    key = (id(mod), root)
    hit = _verdicts.get(key)
    if hit is not None and hit[0] is mod:
        return hit[1]
    name = mod.__name__
    own = name == _HOST or name.startswith(_HOST + ".")
    place = None if own or (name, _origin(mod)) in _kept_modules else _loaded_from(mod, root)
    if len(_verdicts) >= MAX_VERDICTS:
        _verdicts.clear()
    _verdicts[key] = (mod, place)
    return place


def _origin(mod: ModuleType) -> str | None:
    """The absolute file ``mod`` was loaded from (None: built in, frozen, a namespace)."""
    spec = getattr(mod, "__spec__", None)
    origin = spec.origin if spec is not None and spec.has_location else getattr(mod, "__file__", None)
    return origin if isinstance(origin, str) and os.path.isabs(origin) else None


def _loaded_from(mod: ModuleType, root: str) -> str | None:
    """The file under ``root`` that ``mod`` was loaded from (a namespace package: its first
    folder, when all of them are under the root); None when it is not the workspace's."""
    origin = _origin(mod)
    if origin is not None:
        return origin if _forbidden(origin, root) else None
    places = [p for p in getattr(mod, "__path__", None) or () if isinstance(p, str)]
    if places and all(_forbidden(p, root) for p in places):
        return places[0]
    return None
