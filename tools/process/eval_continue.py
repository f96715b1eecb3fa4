"""eval_continue — resume a parked evaluation: retry the failed statement and the rest, or use
a value in its place and run the rest (kli profile, gate image/eval). See ``parked`` for
exactly what each action does."""

from __future__ import annotations

import ast
from typing import Any

from kli.tools.core import approval
from kli.tools.core.registry import GATE_EVAL, Call, ImageScope, Tool
from kli.tools.core.result import ToolError, ToolResult
from kli.tools.process import eval as eval_
from kli.tools.process import parked
from kli.tools.process.bash import DEFAULT_TIMEOUT, clamp_timeout
from kli.tools.process.saferepr import saferepr

DESCRIPTION = f"""\
Resume a parked evaluation (one that eval with on_error "interactive" parked). action "retry": \
re-execute the remaining top-level statements of the eval starting at the one that failed, in \
the same namespace — after you fixed the cause (redefined a function, created a file…). action \
"value": do not run the failing top-level statement again; evaluate value (a Python \
expression) and, when that statement was NAME = … bind the result to its names, or when it \
was an expression use the result as its value; then run the statements after it. A new \
exception parks it again under the same id. Parameters: park; action (retry, the default, or \
value); value; \
timeout (default {DEFAULT_TIMEOUT})."""

PARAMETERS = {
    "type": "object",
    "properties": {
        "park": {"type": "string", "description": "The parked evaluation's id, e.g. p1."},
        "action": {"type": "string", "enum": ["retry", "value"],
                   "description": "retry (default): re-run from the failed statement; value: "
                   "use value in its place."},
        "value": {"type": "string", "description": "Python expression (action value)."},
        "timeout": {"type": "integer", "description": f"Seconds; default {DEFAULT_TIMEOUT}."},
    },
    "required": ["park"],
    "additionalProperties": False,
}


def _targets(stmt: ast.stmt) -> list[str] | None:
    """Names a ``NAME = …`` statement binds; [] for an expression statement; None otherwise."""
    if isinstance(stmt, ast.Expr):
        return []
    if isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets):
        return [t.id for t in stmt.targets if isinstance(t, ast.Name)]
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        return [stmt.target.id]
    return None


def _run(call: Call) -> ToolResult:
    p = parked.find(call)
    timeout, clamp_note = clamp_timeout(call.args.get("timeout"))
    action = call.args.get("action") or "retry"
    start = p.index
    notes: list[str] = []
    if action == "value":
        given = call.args.get("value")
        if not given:
            raise ToolError('action "value" needs value, a Python expression whose result '
                            "stands in for the failing statement.", error="bad_arguments")
        stmt = p.statements[p.index] if p.index < len(p.statements) else None
        names = _targets(stmt) if stmt is not None else None
        if names is None:
            kind = type(stmt).__name__ if stmt is not None else "unknown"
            raise ToolError(
                f"the failing statement at line {p.line} is a {kind}, not NAME = … nor an "
                'expression, so no value can stand in for it; use action "retry" after a '
                "fix, or eval_abort.", error="no_value_place", park=p.id)
        try:
            code = compile(_assign_code(given), "<kli-value>", "exec")
        except SyntaxError as exc:
            raise ToolError(f"value must be one Python expression: {exc.msg}. Nothing was run.",
                            error="syntax") from None
        holder: dict[str, Any] = {}
        got = eval_.run_units([(p.line, False, code)], p.namespace, timeout, holder)
        if got.failure is not None or got.stopped is not None:
            return eval_.report(call, got, tool="eval_continue", clamp_note=clamp_note,
                                extra={"park": p.id})
        value = holder.get("value")
        for name in names:
            p.namespace[name] = value
        shown = saferepr(value)
        notes.append(f"line {p.line}: " + (f"bound {', '.join(names)} = {shown}" if names
                                           else f"value {shown} used in place of the statement"))
        start = p.index + 1
    rest = p.units[start:]
    outcome = eval_.run_units(rest, p.namespace, timeout)
    what = (f"retried {p.id} from line {p.line}" if action == "retry"
            else f"continued {p.id} after line {p.line}")
    if outcome.failure is not None and outcome.stopped is None:
        result = parked.park_and_report(call, outcome, p.units, p.namespace, p.module,
                                        p.filename, clamp_note=clamp_note, index_offset=start,
                                        statements=p.statements, park_id=p.id)
        return type(result)(result.ok, f"{what}:\n" + "\n".join([*notes, result.text]),
                            result.details)
    parked.session_parked(call.session).pop(p.id, None)
    result = eval_.report(call, outcome, tool="eval_continue", clamp_note=clamp_note,
                          extra={"park": p.id, "resumed": True})
    if not rest and result.ok:
        notes.append("no statements were left to run.")
    return type(result)(result.ok, f"{what}; it is no longer parked:\n"
                        + "\n".join([*notes, result.text]), result.details)


def _assign_code(expression: str) -> ast.Module:
    """``value = (EXPRESSION)``, refusing anything but one expression."""
    body = ast.parse(expression, mode="eval").body
    tree = ast.Module(body=[ast.Assign(targets=[ast.Name("value", ast.Store())], value=body)],
                      type_ignores=[])
    return ast.fix_missing_locations(tree)


def image_scope(call: Call) -> ImageScope:
    """The parked evaluation's namespace and the statements it would run (and a value), for
    the image's undo record."""
    p = parked.find(call)
    code = [ast.unparse(stmt) for stmt in p.statements[p.index:]]
    return ImageScope([(p.module, p.namespace)], [*code, str(call.args.get("value") or "")])


TOOL = Tool(
    name="eval_continue",
    profile="kli",
    gate=GATE_EVAL,
    description=DESCRIPTION,
    parameters=PARAMETERS,
    run=_run,
    main_arg="park",
    mutates=True,
    action=approval.EVAL,  # runs the rest of the evaluation (and a value's code)
    image_scope=image_scope,
)
