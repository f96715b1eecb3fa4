"""redefine — redefine a function, a method or a whole module in the live image, then run code
(kli profile, gate image/eval; kli's recompile-rerun).

One of:
- ``definition`` alone: Python source (``def``/``class``/assignments) run in ``module``
  (default ``__main__``) like ``eval``; the prior values of the names its top-level statements
  bind are snapshotted first.
- ``definition`` with ``target`` (a dotted name such as ``mymod.Cls.method`` or
  ``mymod.func``): the source must define exactly that name (``def method…``); it runs with the
  globals of the module that owns the target and the result replaces the attribute on its owner
  (a class, a module). A static or class method stays one.
- ``reload``: a module name; the module is re-executed from its (edited) file with
  ``importlib.reload`` — the same module object, so ``mod.f`` sees the new code, while objects
  taken earlier (``from mod import f``, instances' bound methods) keep the old code.

Then ``code`` is evaluated as by ``eval`` (values, output, traceback). The result gives the
prior definition of everything replaced: its source when Python has it (a function or class
from a file, a cell or an eval), else its bounded repr, else "(not defined before)"; for a
reload, the file's text before this workspace's first edit of it since it was imported (kept by
``stale``), when an edit tool made that change. Nothing is rolled back: when ``code`` fails,
the NEW definition stays in place and the result says so; restore by calling redefine with
the prior source.
"""

from __future__ import annotations

import ast
import importlib
import importlib.abc
import importlib.util
import inspect
import os
import sys
import types
from typing import Any

from kli.tools.core import approval
from kli.tools.core.registry import GATE_EVAL, Call, ImageScope, Tool
from kli.tools.core.result import ToolError, ToolResult
from kli.tools.core.textfile import read_bytes
from kli.tools.image import stale
from kli.tools.image.names import resolve
from kli.tools.process import eval as eval_
from kli.tools.process.bash import DEFAULT_TIMEOUT, MAX_TIMEOUT, clamp_timeout
from kli.tools.process.saferepr import saferepr

PRIOR_CHARS = 20_000  # characters of prior source shown per name

DESCRIPTION = f"""\
Redefine in the live image, then run code, in one call. Give definition (Python source: def, \
class, assignments — run in module, default __main__) and optionally target (a dotted name like \
mymod.Cls.method: the definition must define that one name and replaces it on its class or \
module); or give reload (a module name: re-run its edited file with importlib.reload). Then \
code is evaluated as by eval. The result returns the prior definition (source where Python has \
it) so it can be restored by calling redefine with it. Nothing is rolled back: if code fails, \
the new definition stays in place. Objects taken earlier (from mod import f) keep the old code. \
Parameters: definition, target, reload, code, module, timeout (default {DEFAULT_TIMEOUT}, at \
most {MAX_TIMEOUT})."""

PARAMETERS = {
    "type": "object",
    "properties": {
        "definition": {"type": "string", "description": "New Python source (def/class/…)."},
        "target": {"type": "string", "description": "Dotted name the definition replaces."},
        "reload": {"type": "string", "description": "Module to re-import from its file."},
        "code": {"type": "string", "description": "Code evaluated after redefining."},
        "module": {"type": "string", "description": "Namespace for definition and code; "
                   "default __main__."},
        "timeout": {"type": "integer", "description": f"Seconds; default {DEFAULT_TIMEOUT}."},
    },
    "required": ["code"],
    "additionalProperties": False,
}


def prior_of(value: Any) -> str:
    """The source of ``value`` when Python has it, else its bounded repr."""
    target = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
    try:
        target = inspect.unwrap(target)
    except ValueError:
        pass
    if isinstance(target, (types.FunctionType, type, types.MethodType)):
        try:
            text = inspect.getsource(target)
            return text if len(text) <= PRIOR_CHARS else text[:PRIOR_CHARS] + "\n# … cut"
        except (OSError, TypeError):
            pass
    return f"# no source; the prior value was: {saferepr(value)}"


def _bound_names(source: str) -> list[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []  # eval.prepare reports it
    names: list[str] = []
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(stmt.name)
        elif isinstance(stmt, ast.Assign):
            names += [t.id for t in stmt.targets if isinstance(t, ast.Name)]
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            names.append(stmt.target.id)
    return list(dict.fromkeys(names))


def _run(call: Call) -> ToolResult:
    definition = call.args.get("definition")
    target = call.args.get("target")
    reload_name = call.args.get("reload")
    timeout, clamp_note = clamp_timeout(call.args.get("timeout"))
    if bool(definition) == bool(reload_name):
        raise ToolError("give either definition (optionally with target) or reload, not both "
                        "and not neither. Nothing was run.", error="definition_or_reload")
    if target and reload_name:
        raise ToolError("target goes with definition, not reload. Nothing was run.",
                        error="definition_or_reload")
    module_name, namespace = eval_._namespace(call)
    prior: dict[str, str] = {}
    what: str
    if reload_name:
        what, define = _reload(call, reload_name, prior, timeout)
    elif target:
        what, define = _redefine_target(call, target, definition or "", prior, timeout)
    else:
        for name in _bound_names(definition or ""):
            prior[name] = prior_of(namespace[name]) if name in namespace \
                else "(not defined before)"
        _fn, units = eval_.prepare(call, definition or "")
        define = eval_.run_units(units, namespace, timeout)
        what = ", ".join(prior) or "the definition"
    if define.failure is not None or define.stopped is not None:
        result = eval_.report(call, define, tool="redefine", clamp_note=clamp_note,
                              extra={"stage": "definition", "prior": prior})
        return ToolResult(False, "the definition failed; code was not run. Whatever the "
                          "definition bound before failing stays bound.\n" + result.text
                          + _prior_text(prior), result.details)
    _fn, units = eval_.prepare(call, call.args["code"])
    outcome = eval_.run_units(units, namespace, timeout)
    result = eval_.report(call, outcome, tool="redefine", clamp_note=clamp_note,
                          extra={"module": module_name, "redefined": what, "prior": prior,
                                 "stage": "code"})
    if result.ok:
        head = f"redefined {what}; code ran with the new definition:"
    else:
        head = (f"redefined {what}; the re-run FAILED with the new definition in place (it was "
                "not rolled back — restore the prior definition below with redefine if you "
                "need it):")
    return ToolResult(result.ok, head + "\n" + result.text + _prior_text(prior), result.details)


def _prior_text(prior: dict[str, str]) -> str:
    if not prior:
        return ""
    return "\nprior definition:\n" + "\n".join(
        f"--- {name}\n{text.rstrip()}" for name, text in prior.items())


def _redefine_target(call: Call, target: str, definition: str, prior: dict[str, str],
                     timeout: float) -> tuple[str, eval_.Outcome]:
    found = resolve(call, target)
    owner, attr = found.owner, found.attr
    if owner is None:
        raise ToolError(f"{target} is a module; use reload to re-import a module.",
                        error="bad_target")
    names = _bound_names(definition)
    if names != [attr]:
        raise ToolError(f"the definition must define exactly {attr!r} (it defines "
                        f"{', '.join(names) or 'nothing'}). Nothing was run.",
                        error="bad_definition")
    if isinstance(owner, dict):
        raw, globals_ = owner.get(attr), owner
    else:
        raw = owner.__dict__.get(attr) if isinstance(owner, type) else getattr(owner, attr)
        if isinstance(owner, types.ModuleType):
            globals_ = vars(owner)
        else:
            module = sys.modules.get(getattr(owner, "__module__", "") or "")
            globals_ = vars(module) if module is not None else call.ws.namespace
    prior[target] = prior_of(raw)
    _fn, units = eval_.prepare(call, definition)
    scratch: dict[str, Any] = {}
    outcome = eval_.run_units(units, globals_, timeout, scratch)
    if outcome.failure is None and outcome.stopped is None:
        new = scratch[attr]
        if isinstance(raw, staticmethod) and not isinstance(new, staticmethod):
            new = staticmethod(new)
        elif isinstance(raw, classmethod) and not isinstance(new, classmethod):
            new = classmethod(new)
        if isinstance(new, types.FunctionType) and isinstance(owner, type):
            new.__qualname__ = f"{owner.__qualname__}.{attr}"
        if isinstance(owner, dict):
            owner[attr] = new
        else:
            setattr(owner, attr, new)
    return target, outcome


def _module_file(call: Call, name: str) -> tuple[str, str] | None:
    """The file module ``name`` of the image was loaded from (real path, as shown), if any."""
    module = call.ws.modules().get(name)
    path = getattr(module, "__file__", None) if isinstance(module, types.ModuleType) else None
    if not isinstance(path, str):
        return None
    real = os.path.realpath(path)
    inside = real.startswith(call.ws.jail.root + os.sep)
    shown = call.ws.jail.rel(real) if inside else real
    return real, shown


def review_sources(call: Call) -> list[dict[str, Any]]:
    """What a held ``redefine`` with ``reload`` would run beyond its arguments (the registry
    entry's ``sources``): the module's file, its text and sha256. Empty for a definition (its
    source is the argument) and for a module not imported now (the Accept then finds it is)."""
    name = call.args.get("reload")
    found = _module_file(call, name) if isinstance(name, str) and name else None
    if found is None:
        return []
    real, shown = found
    try:
        data = read_bytes(real)
    except OSError as exc:
        raise ToolError(f"redefine: the file of module {name} ({shown}) cannot be read "
                        f"({exc.strerror or exc}). Nothing was run.", error="io") from None
    return [approval.source_entry(f"module {name} ({shown})", data, path=shown)]


class _ApprovedSource(importlib.abc.SourceLoader):
    """Loads one module from the bytes a person approved (a held reload's Accept): the file's
    text as it was read and hashed, never a cached ``.pyc`` nor a later change of the file."""

    def __init__(self, path: str, data: bytes) -> None:
        self.path = path
        self.data = data

    def get_filename(self, fullname: str) -> str:
        return self.path

    def get_data(self, path: str) -> bytes:
        if path != self.path:
            raise OSError(f"only {self.path} is approved")
        return self.data


def _approved_reload(call: Call, module: types.ModuleType, real: str,
                     entry: dict[str, Any]) -> Any:
    """``importlib.reload`` of ``module`` that runs exactly the approved bytes of its file:
    read once, their sha256 checked against the approved one (else a refusal naming the file,
    nothing imported), executed with a loader that reads nothing else."""
    try:
        data = read_bytes(real)
    except OSError:
        data = None
    if data is None or approval.digest(data) != entry.get("sha256"):
        raise ToolError(
            f"redefine stopped: {entry.get('what')} changed since the person accepted the "
            "reload, so it was not imported (Accept runs only the source it showed). Propose "
            "the reload again if it is still wanted.", error=approval.STALE)
    if not real.endswith(".py"):  # compiled: its bytes were checked, the import machinery runs it
        return lambda: importlib.reload(module)
    name = module.__name__
    old = getattr(module, "__spec__", None)
    places = getattr(old, "submodule_search_locations", None)
    spec = importlib.util.spec_from_file_location(name, real, loader=_ApprovedSource(real, data),
                                                  submodule_search_locations=places)
    if spec is None or spec.loader is None:
        return lambda: importlib.reload(module)
    loader = spec.loader

    def run() -> None:
        module.__spec__, module.__loader__ = spec, loader
        try:
            loader.exec_module(module)
        finally:  # the module looks as a reload leaves it: its file's own loader
            plain = importlib.util.spec_from_file_location(
                name, real, submodule_search_locations=places)
            if plain is not None:
                module.__spec__, module.__loader__ = plain, plain.loader
            sys.modules[name] = module

    return run


def _reload(call: Call, name: str, prior: dict[str, str],
            timeout: float) -> tuple[str, eval_.Outcome]:
    module = call.ws.modules().get(name)
    if not isinstance(module, types.ModuleType):
        raise ToolError(f"no module {name!r} is imported in this image; import it with eval "
                        f"first ('import {name}'). Nothing was run.", error="unknown_module")
    path = getattr(module, "__file__", None)
    real = os.path.realpath(path) if isinstance(path, str) else None
    before = stale.prior_text(call.ws, real) if real else None
    prior[name] = before if before is not None else (
        f"# the file's text before the edit was not kept (it was changed outside this "
        f"workspace's edit tools, or not changed); it was loaded from {path}")
    shown = approval.approved(call)  # the Accept of a held reload: exactly the bytes shown
    if shown:
        holder: dict[str, Any] = {"reload": _approved_reload(call, module, real or "", shown[0])}
        code = compile("reload()", f"<kli-reload {name}>", "exec")
    else:
        holder = {"module": module, "importlib": importlib}
        code = compile("importlib.reload(module)", f"<kli-reload {name}>", "exec")
    outcome = eval_.run_units([(1, False, code)], holder, timeout)
    if outcome.failure is None and outcome.stopped is None and real:
        stale.forget(call.ws, real)
    return f"module {name} (reloaded from {path})", outcome


def image_scope(call: Call) -> ImageScope:
    """Where a ``redefine`` changes the image — its module's namespace, the owner of
    ``target`` (a class, a module), the namespace of a reloaded module — and the code it runs,
    for the image's undo record."""
    module_name, namespace = eval_._namespace(call)
    places: list[tuple[str, Any]] = [(module_name, namespace)]
    target, reload_name = call.args.get("target"), call.args.get("reload")
    if target:
        owner = resolve(call, target).owner
        if owner is not None and owner is not namespace:
            label = target.rsplit(".", 1)[0]
            places.append((label, owner if not isinstance(owner, types.ModuleType) else vars(owner)))
    if reload_name:
        module = call.ws.modules().get(reload_name)
        if isinstance(module, types.ModuleType) and vars(module) is not namespace:
            places.append((reload_name, vars(module)))
    return ImageScope(places, [call.args.get("definition") or "", call.args.get("code") or ""])


TOOL = Tool(
    name="redefine",
    profile="kli",
    gate=GATE_EVAL,
    description=DESCRIPTION,
    parameters=PARAMETERS,
    run=_run,
    main_arg="code",
    mutates=True,
    action=approval.EVAL,
    sources=review_sources,
    image_scope=image_scope,
)
