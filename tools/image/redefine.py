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
import inspect
import os
import sys
import types
from typing import Any

from kli.tools.core import approval
from kli.tools.core.registry import GATE_EVAL, Call, Tool
from kli.tools.core.result import ToolError, ToolResult
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
    holder = {"module": module, "importlib": importlib}
    code = compile("importlib.reload(module)", f"<kli-reload {name}>", "exec")
    outcome = eval_.run_units([(1, False, code)], holder, timeout)
    if outcome.failure is None and outcome.stopped is None and real:
        stale.forget(call.ws, real)
    return f"module {name} (reloaded from {path})", outcome


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
)
