"""eval — run Python source in the live image (kli profile, gate image/eval).

Rules (spec/kli-tools.txt "eval", read for Python; issue 3), each with its constant:

- The source is parsed and compiled whole first (a syntax error runs nothing and gives line
  and column); then every top-level statement runs in order. The value of every expression
  statement comes back, labelled with its line, except ``None`` (as the Python REPL does, so
  ``print(...)`` does not add a value).
- ``module`` (alias ``package``, kli's name): the module whose namespace the code runs in.
  ``__main__`` (the default) is the namespace the host gives the Workspace — the notebook's
  user namespace in the kernel, a fresh module for the CLI. Another name must already be in
  ``sys.modules`` (it is not imported: ``import NAME`` first); an unknown name is an error.
- Time budget as bash: ``DEFAULT_TIMEOUT`` s, at most ``MAX_TIMEOUT``. On the main thread a
  SIGALRM interval timer raises a private exception in the evaluated code — it interrupts a
  pure Python loop and a blocking ``time.sleep`` alike — and re-raises every
  ``REINTERRUPT`` s if the code swallows it. On another thread (signals reach only the main
  thread) ``PyThreadState_SetAsyncExc`` raises it at the next bytecode: a pure Python loop is
  interrupted, but a blocking C call (``time.sleep``, a socket read) is interrupted only when
  it returns. The result says the image may have been left partially modified.
- KeyboardInterrupt (the kernel's interrupt button) ends the eval with an "interrupted" error.
- Memory: code that grows the process's resident memory by more than ``memguard.SHARE`` of
  the memory available when it started gets a ``MemoryError`` (``memguard``: Linux, caught at
  Python level), so a runaway eval does not get the kernel killed; the error says what may
  still be held.
- What the code prints to ``sys.stdout``/``sys.stderr`` from the evaluating thread is captured
  (``capture``), each stream capped at ``OUTPUT_CAP`` characters counted and dropped as it is
  written; other threads' prints are not captured.
- Values print through ``saferepr`` (100 items, depth 20, cycles finite, long strings cut).
- An exception is an error result: type, message, and the traceback from the evaluated code
  on (the tool's own frames removed; at most ``MAX_TRACEBACK_FRAMES`` frames), after the
  output and values of the statements that completed.
- ``on_error``: ``"unwind"`` (default) is the rule above; ``"interactive"`` parks the failed
  evaluation with its frames instead (``parked``; eval_frame, eval_continue, eval_abort).
- The pieces — ``prepare`` (compile and register), ``run_units`` (run under budget, guard and
  capture) and ``report`` (the result text) — are shared with those tools and ``redefine``.

Nothing here imports Jupyter.
"""

from __future__ import annotations
import __future__

import ast
import contextlib
import itertools
import linecache
import signal
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from types import CodeType, FrameType, TracebackType
from typing import Any

from kli.tools.core import approval, imports
from kli.tools.core.registry import GATE_EVAL, Call, ImageScope, Tool
from kli.tools.core.result import ToolError, ToolResult
from kli.tools.process import memguard
from kli.tools.process.bash import CAPTURE_TAIL, DEFAULT_TIMEOUT, MAX_TIMEOUT, clamp_timeout
from kli.tools.process.capture import capture_thread_output
from kli.tools.process.present import stream_section
from kli.tools.process.runner import BoundedText
from kli.tools.process.saferepr import saferepr

OUTPUT_CAP = 1_048_576  # characters per stream (1 MiB)
DEFAULT_MODULE = "__main__"
FILENAME_PREFIX = "<kli-eval"  # each eval's code is "<kli-eval-N>"
MAX_TRACEBACK_FRAMES = 30
REINTERRUPT = 1.0  # seconds between repeated interrupts of code that swallows the first

DESCRIPTION = f"""\
Evaluate Python source in the live image (the running kernel): every top-level statement runs \
in order; the value of each expression statement comes back, labelled by line (None values \
are omitted), with what the code printed to stdout and stderr. Definitions persist for later \
calls. Parameters: code; module (default __main__, the notebook's namespace; another name \
must already be imported); timeout in seconds (default {DEFAULT_TIMEOUT}, at most \
{MAX_TIMEOUT}). Code past the timeout is interrupted and may have left the image partially \
modified. Printed output keeps at most 1 MiB per stream; values print bounded (100 items, \
depth 20, long strings cut). An exception is an error result with its traceback; fix the code \
and call again. Code that grows the kernel's memory past its allowance (75% of the memory \
available) is stopped with MemoryError: work in smaller pieces.
With on_error "interactive" an exception does not unwind the evaluation's state: it is parked \
(id p1, p2…) with its frames and their locals, listed in the result; evaluate expressions in a \
frame with eval_frame, then eval_continue (retry the failed statement and the rest, or use a \
value in its place) or eval_abort. At most 3 parked evaluations per session, each kept 15 \
minutes."""

PARAMETERS = {
    "type": "object",
    "properties": {
        "code": {"type": "string", "description": "Python source; all statements run in order."},
        "module": {
            "type": "string",
            "description": "Module whose namespace the code runs in; default __main__.",
        },
        "timeout": {
            "type": "integer",
            "description": f"Seconds; default {DEFAULT_TIMEOUT}, clamped to {MAX_TIMEOUT}.",
        },
        "on_error": {
            "type": "string",
            "enum": ["unwind", "interactive"],
            "description": "unwind (default): an exception ends the eval with its traceback. "
            "interactive: the failed evaluation is parked with its frames for eval_frame, "
            "eval_continue and eval_abort.",
        },
    },
    "required": ["code"],
    "additionalProperties": False,
}

_eval_ids = itertools.count(1)


class Deadline(BaseException):
    """Raised inside the evaluated code when its time is up (caught where it is raised: here and
    in the notebook runner, kli.kernel.notebook.runner, which shares the budget)."""


# -- deadlines -------------------------------------------------------------------------------
class Budget:
    """Raises ``Deadline`` in the evaluating thread once ``seconds`` have passed."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.active = False
        self.fired = False
        self.lock = threading.Lock()

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        # SIGALRM needs the main thread, and a Python-level previous handler we can put back
        # (getsignal is None when one was installed from C).
        on_main = threading.current_thread() is threading.main_thread()
        use_alarm = on_main and signal.getsignal(signal.SIGALRM) is not None
        guard = self._alarm() if use_alarm else self._async_exc()
        with guard:
            yield

    @contextlib.contextmanager
    def _alarm(self) -> Iterator[None]:
        previous_handler: Any = None

        def handler(signum: int, frame: FrameType | None) -> None:
            if self.active:
                self.fired = True
                raise Deadline
            if callable(previous_handler):  # the caller's alarm, landing in our set-up
                previous_handler(signum, frame)

        started = time.monotonic()
        previous_handler = signal.signal(signal.SIGALRM, handler)
        previous_timer = signal.setitimer(signal.ITIMER_REAL, self.seconds, REINTERRUPT)
        self.active = True
        try:
            yield
        finally:
            # Nested so that an alarm landing in this block cannot skip the disarming.
            try:
                self.active = False
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, previous_handler)
            delay, interval = previous_timer
            if delay > 0:  # re-arm the caller's timer with what is left of it
                left = delay - (time.monotonic() - started)
                signal.setitimer(signal.ITIMER_REAL, max(left, 0.001), interval)

    @contextlib.contextmanager
    def _async_exc(self) -> Iterator[None]:
        ident = threading.get_ident()
        done = threading.Event()

        def watchdog() -> None:
            if done.wait(self.seconds):
                return
            while True:
                with self.lock:
                    if not self.active or done.is_set():
                        return
                    self.fired = True
                    memguard.raise_in_thread(ident, Deadline)
                if done.wait(REINTERRUPT):
                    return

        watcher = threading.Thread(target=watchdog, name="kli-eval-deadline", daemon=True)
        self.active = True
        watcher.start()
        try:
            yield
        finally:
            # Nested so that an interrupt landing in this block cannot skip the clean-up.
            try:
                with self.lock:
                    self.active = False
            finally:
                try:
                    done.set()
                    watcher.join()
                finally:
                    self.active = False
                    # drop an interrupt raised but not yet delivered
                    memguard.clear_in_thread(ident)


# -- compiling -------------------------------------------------------------------------------
def _syntax_error(exc: SyntaxError, filename: str) -> ToolError:
    line = exc.lineno or 0
    column = exc.offset or 0
    shown = ""
    if exc.text:
        text = exc.text.rstrip("\n")
        shown = f"\n    {text}\n    {' ' * max(column - 1, 0)}^"
    return ToolError(
        f"SyntaxError: {exc.msg} at line {line}, column {column}{shown}\n"
        "Nothing was run; fix the code and call eval again.",
        error="syntax",
        line=line,
        column=column,
        exception="SyntaxError",
    )


def _compile(code: str, filename: str) -> list[tuple[int, bool, CodeType]]:
    """Each top-level statement as (line, is_expression, code object); raises ToolError."""
    try:
        tree = ast.parse(code, filename=filename, mode="exec")
        # Statements are compiled one by one; a ``from __future__ import`` at the top must
        # still apply to all of them.
        flags = 0
        for stmt in tree.body:
            if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
                for alias in stmt.names:
                    feature = getattr(__future__, alias.name, None)
                    flags |= getattr(feature, "compiler_flag", 0)
        units: list[tuple[int, bool, CodeType]] = []
        for stmt in tree.body:
            if isinstance(stmt, ast.Expr):
                expr = ast.Expression(body=stmt.value)
                unit = compile(expr, filename, "eval", flags=flags, dont_inherit=True)
                units.append((stmt.lineno, True, unit))
            else:
                module = ast.Module(body=[stmt], type_ignores=[])
                unit = compile(module, filename, "exec", flags=flags, dont_inherit=True)
                units.append((stmt.lineno, False, unit))
    except SyntaxError as exc:
        raise _syntax_error(exc, filename) from None
    except (ValueError, OverflowError, RecursionError, MemoryError) as exc:
        raise ToolError(
            f"cannot compile the code: {type(exc).__name__}: {exc}. Nothing was run.",
            error="syntax",
        ) from None
    return units


def _register_source(filename: str, code: str) -> None:
    """Let tracebacks and ``inspect.getsource`` show the evaluated lines, now and later."""
    lines = code.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    linecache.cache[filename] = (len(code), None, lines, filename)


# -- namespaces ------------------------------------------------------------------------------
def _namespace(call: Call) -> tuple[str, dict[str, Any]]:
    name = call.args.get("module") or DEFAULT_MODULE
    if name == DEFAULT_MODULE:
        return name, call.ws.namespace
    module = sys.modules.get(name)
    if module is None:
        raise ToolError(
            f"unknown module {name!r}: it is not imported in this image. Import it first "
            f"(eval 'import {name}'), or omit module to run in __main__. Nothing was run.",
            error="unknown_module",
            module=name,
        )
    return name, vars(module)


# -- tracebacks ------------------------------------------------------------------------------
def _user_traceback(exc: BaseException) -> str:
    """The traceback from the first frame of evaluated code on."""
    tb: TracebackType | None = exc.__traceback__
    while tb is not None and not tb.tb_frame.f_code.co_filename.startswith(FILENAME_PREFIX):
        tb = tb.tb_next
    te = traceback.TracebackException(
        type(exc), exc, tb, limit=-MAX_TRACEBACK_FRAMES, capture_locals=False
    )
    return "".join(te.format()).rstrip("\n")


def _message(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:
        return f"<str() of {type(exc).__name__} failed>"


# -- running units ---------------------------------------------------------------------------
Unit = tuple[int, bool, CodeType]  # (line, is_expression, code object)


@dataclass
class Outcome:
    """What running a list of units did. ``failed_index`` is the index (in the units given) of
    the unit that raised, stopped or was interrupted; None when all completed."""

    values: list[dict[str, Any]]
    failure: BaseException | None
    stopped: str | None  # "timeout" | "interrupted" | "memory"
    at_line: int | None
    failed_index: int | None
    duration: float
    out: BoundedText
    err: BoundedText
    memory: memguard.Guard | None
    timeout: float


def run_units(units: list[Unit], namespace: dict[str, Any], timeout: float,
              local_ns: dict[str, Any] | None = None) -> Outcome:
    """Run ``units`` in order in ``namespace`` (``local_ns`` as locals when given) under the
    time budget and the memory guard, capturing this thread's output; never raises for what
    the code does."""
    values: list[dict[str, Any]] = []
    failure: BaseException | None = None
    stopped: str | None = None
    at_line: int | None = None
    failed_index: int | None = None
    started = time.monotonic()
    budget = Budget(timeout)
    memory: memguard.Guard | None = None
    with capture_thread_output(OUTPUT_CAP, CAPTURE_TAIL) as (out, err):
        try:
            # The code is the eval's: its imports are its own business (imports.lifted).
            with budget.running(), memguard.guarded() as memory, imports.lifted():
                for index, (line, is_expr, unit) in enumerate(units):
                    at_line, failed_index = line, index
                    if is_expr:
                        value = eval(unit, namespace, local_ns)
                        if value is not None:
                            # repr inside the budget: a __repr__ that never ends is interrupted
                            values.append({"line": line, "repr": saferepr(value)})
                    else:
                        exec(unit, namespace, local_ns)
                at_line = failed_index = None
        except Deadline:
            stopped = "timeout"
        except KeyboardInterrupt:
            stopped = "interrupted"
        except MemoryError as exc:
            failure = exc
            if memory is not None and memory.fired:
                stopped = "memory"
        except BaseException as exc:
            failure = exc
    return Outcome(values, failure, stopped, at_line, failed_index,
                   time.monotonic() - started, out, err, memory, timeout)


def report(call: Call, outcome: Outcome, *, tool: str = "eval", clamp_note: str | None = None,
           failure_text: str | None = None, extra: dict[str, Any] | None = None,
           after_values: list[str] | None = None) -> ToolResult:
    """The result of an ``Outcome`` as ``eval`` shows it. ``failure_text`` replaces the
    standard paragraph about an exception (a parked evaluation lists its frames instead);
    ``after_values`` are paragraphs shown after the values and output."""
    out, err, memory, timeout = outcome.out, outcome.err, outcome.memory, outcome.timeout
    at_line, stopped, failure = outcome.at_line, outcome.stopped, outcome.failure
    out_text, out_facts = stream_section(
        "stdout", out.head, out.tail, out.total, jail=call.ws.jail, tool=tool, cap=OUTPUT_CAP
    )
    err_text, err_facts = stream_section(
        "stderr", err.head, err.tail, err.total, jail=call.ws.jail, tool=tool, cap=OUTPUT_CAP
    )
    parts: list[str] = []
    if stopped == "timeout":
        parts.append(
            f"timed out after {timeout:g} s: evaluation was interrupted at line {at_line}. The "
            "interrupted code may have left image state partially modified (statements before "
            "it completed). Retry with a larger timeout (at most "
            f"{MAX_TIMEOUT} s) or make the code faster."
        )
    elif stopped == "memory":
        assert memory is not None
        parts.append(
            f"stopped with MemoryError at line {at_line}: the evaluation grew the kernel's "
            f"memory by more than {_mb(memory.allowance)} ({memory.reason}), the limit that "
            "keeps the out-of-memory killer away from the kernel. What it allocated may still "
            "be held by variables it assigned: "
            "del them (or restart the kernel) to free it. Retry with less data, in chunks, or "
            "free memory first; a notebook cell run by a person has no such limit."
        )
    elif stopped == "interrupted":
        parts.append(
            f"interrupted (KeyboardInterrupt) at line {at_line}. The interrupted code may have "
            "left image state partially modified (statements before it completed)."
        )
    elif failure is not None:
        parts.append(failure_text or (
            f"{type(failure).__name__} raised by the statement at line {at_line}:\n"
            f"{_user_traceback(failure)}\n"
            "Statements before it completed; the rest did not run. Fix the code and call again."
        ))
    if outcome.values:
        parts.append("values:\n" + "\n".join(
            f"[line {v['line']}] {v['repr']}" for v in outcome.values))
    if out.total:
        parts.append(out_text)
    if err.total:
        parts.append(err_text)
    parts += after_values or []
    if not parts:
        parts.append("done: no value (None values are not shown) and nothing printed.")
    if clamp_note:
        parts.append(f"[{clamp_note}]")
    if memory is not None and memory.note:
        parts.append(f"[{memory.note}]")
    details: dict[str, Any] = {
        "values": outcome.values,
        "duration": round(outcome.duration, 6),
        "timeout": timeout,
        **(extra or {}),
        **out_facts,
        **err_facts,
    }
    text = "\n".join(parts)
    if memory is not None and memory.active:
        details["memory_allowance"] = memory.allowance
    if stopped is not None:
        return ToolResult.error(text, error=stopped, line=at_line, **details)
    if failure is not None:
        return ToolResult.error(
            text,
            error="exception",
            exception=type(failure).__name__,
            message=_message(failure),
            line=at_line,
            **details,
        )
    return ToolResult.success(text, **details)


def prepare(call: Call, code: str) -> tuple[str, list[Unit]]:
    """A fresh filename for ``code`` and its compiled units (registered for tracebacks and
    ``inspect.getsource``); raises ToolError for a syntax error."""
    filename = f"{FILENAME_PREFIX}-{next(_eval_ids)}>"
    units = _compile(code, filename)
    _register_source(filename, code)
    return filename, units


# -- the tool --------------------------------------------------------------------------------
def _mb(size: int) -> str:
    return f"{size / memguard.MB:,.0f} MB"


def _run(call: Call) -> ToolResult:
    code: str = call.args["code"]
    timeout, clamp_note = clamp_timeout(call.args.get("timeout"))
    module_name, namespace = _namespace(call)
    on_error = call.args.get("on_error") or "unwind"
    filename, units = prepare(call, code)
    outcome = run_units(units, namespace, timeout)
    extra = {"module": module_name, "filename": filename}
    if on_error == "interactive" and outcome.failure is not None and outcome.stopped is None:
        from kli.tools.process import parked

        return parked.park_and_report(call, outcome, units, namespace, module_name, filename,
                                      clamp_note=clamp_note)
    return report(call, outcome, clamp_note=clamp_note, extra=extra)


def image_scope(call: Call) -> ImageScope:
    """Where an ``eval`` runs (its module's namespace) and what (its code), for the image's
    undo record; raises ToolError for an unknown module, as the call itself does."""
    name, namespace = _namespace(call)
    return ImageScope([(name, namespace)], [call.args.get("code") or ""])


TOOL = Tool(
    name="eval",
    profile="kli",
    gate=GATE_EVAL,
    description=DESCRIPTION,
    parameters=PARAMETERS,
    run=_run,
    main_arg="code",
    aliases={"package": "module", "form": "code"},
    mutates=True,
    action=approval.EVAL,
    detects_changes=True,
    image_scope=image_scope,
)
