"""The eval tool: Python in the live image, every rule of issue 3 (spec "eval" read for Python)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import types
from pathlib import Path
from typing import Any

import pytest

from kli.tools import ToolResult, Workspace
from kli.tools.process import eval as eval_tool


def _eval(ws: Workspace, code: str, **args: Any) -> ToolResult:
    return ws.call("eval", {"code": code, **args})


# -- statements and values -------------------------------------------------------------------
def test_every_expression_value_comes_back_labelled_in_order(ws: Workspace) -> None:
    r = _eval(ws, "1 + 1\nx = 20\nx * 2\n'text'")
    assert r.ok
    assert [(v["line"], v["repr"]) for v in r.details["values"]] == [
        (1, "2"),
        (3, "40"),
        (4, "'text'"),
    ]
    assert "values:\n[line 1] 2\n[line 3] 40\n[line 4] 'text'" in r.text


def test_none_values_are_not_listed(ws: Workspace) -> None:
    r = _eval(ws, "print('hi')\nNone\n3")
    assert [v["repr"] for v in r.details["values"]] == ["3"]


def test_statements_run_in_order_and_definitions_persist(ws: Workspace) -> None:
    assert _eval(ws, "log = []\nlog.append(1)\nlog.append(2)").ok
    assert _eval(ws, "def twice(v):\n    return 2 * v\n").ok
    r = _eval(ws, "log.append(3)\ntwice(len(log))")
    assert r.details["values"][-1]["repr"] == "6"
    assert ws.namespace["log"] == [1, 2, 3]


def test_nothing_printed_and_no_value_says_so(ws: Workspace) -> None:
    r = _eval(ws, "y = 1")
    assert r.ok and "no value" in r.text


def test_printed_output_comes_back_labelled(ws: Workspace) -> None:
    r = _eval(ws, "import sys\nprint('to out')\nprint('to err', file=sys.stderr)\n7")
    assert r.ok
    assert "stdout:\nto out" in r.text and "stderr:\nto err" in r.text
    assert "[line 4] 7" in r.text


def test_form_alias_is_accepted(ws: Workspace) -> None:
    r = ws.call("eval", {"form": "6 * 7"})
    assert r.ok and r.details["values"][0]["repr"] == "42"


# -- module / package ------------------------------------------------------------------------
def test_default_module_is_the_namespace_the_host_gives(root: Path) -> None:
    namespace: dict[str, Any] = {"from_host": 5}
    ws = Workspace(str(root), namespace=namespace)
    r = _eval(ws, "new_name = from_host + 1\nnew_name")
    assert r.details["values"][0]["repr"] == "6"
    assert namespace["new_name"] == 6
    assert r.details["module"] == "__main__"


def test_cli_namespace_is_a_fresh_module_not_the_real_main(ws: Workspace) -> None:
    _eval(ws, "kli_marker_value = 1")
    assert "kli_marker_value" not in vars(sys.modules["__main__"])
    assert _eval(ws, "__name__").details["values"][0]["repr"] == "'__main__'"


def test_module_names_an_imported_module(ws: Workspace) -> None:
    mod = types.ModuleType("kli_test_target_mod")
    sys.modules[mod.__name__] = mod
    try:
        r = _eval(ws, "hidden = 41\nhidden + 1", module="kli_test_target_mod")
        assert r.ok and r.details["values"][0]["repr"] == "42"
        assert mod.hidden == 41
        assert "hidden" not in ws.namespace
    finally:
        del sys.modules[mod.__name__]


def test_package_is_an_alias_of_module(ws: Workspace) -> None:
    r = ws.call("eval", {"code": "__name__", "package": "os"})
    assert r.ok and r.details["values"][0]["repr"] == "'os'"


def test_unknown_module_is_an_error_and_is_not_imported(ws: Workspace) -> None:
    r = _eval(ws, "ran = True", module="json.tool")
    if "json.tool" in sys.modules:
        pytest.skip("json.tool already imported in this process")
    assert not r.ok and r.details["error"] == "unknown_module"
    assert "import json.tool" in r.text
    assert "json.tool" not in sys.modules
    assert "ran" not in ws.namespace


# -- exceptions and syntax errors ----------------------------------------------------------------
def test_exception_is_an_error_with_type_message_and_user_traceback(ws: Workspace) -> None:
    r = _eval(ws, "def inner():\n    return 1 / 0\n\nprint('before')\ninner()\nprint('after')")
    assert not r.ok
    assert r.details["error"] == "exception" and r.details["exception"] == "ZeroDivisionError"
    assert r.details["message"] == "division by zero" and r.details["line"] == 5
    assert "ZeroDivisionError: division by zero" in r.text
    assert "line 2, in inner\n    return 1 / 0" in r.text
    assert "before" in r.text and "after" not in r.text
    # frames of the tool itself are not shown
    assert "eval.py" not in r.text and "kli/tools" not in r.text
    assert r.text.count('File "') == 2


def test_traceback_into_library_code_keeps_its_frames(ws: Workspace) -> None:
    r = _eval(ws, "import json\njson.loads('{bad')")
    assert not r.ok and r.details["exception"] == "JSONDecodeError"
    assert "<kli-eval-" in r.text and "json" in r.text


def test_function_from_an_earlier_eval_shows_its_source_later(ws: Workspace) -> None:
    _eval(ws, "def boom():\n    raise ValueError('late')\n")
    r = _eval(ws, "boom()")
    assert "raise ValueError('late')" in r.text
    src = _eval(ws, "import inspect\ninspect.getsource(boom)")
    assert "def boom" in src.details["values"][0]["repr"]


def test_values_before_an_exception_are_kept(ws: Workspace) -> None:
    r = _eval(ws, "10\nraise KeyError('k')")
    assert not r.ok and "[line 1] 10" in r.text and "KeyError" in r.text


def test_syntax_error_gives_line_and_column_and_runs_nothing(ws: Workspace) -> None:
    r = _eval(ws, "ran_first = True\nx = (1,\ny = ]")
    assert not r.ok and r.details["error"] == "syntax"
    assert r.details["line"] == 3 and r.details["column"] == 5
    assert r.text.startswith("SyntaxError: ")
    assert "at line 3, column 5" in r.text
    assert "ran_first" not in ws.namespace


def test_compile_error_in_a_later_statement_runs_nothing(ws: Workspace) -> None:
    r = _eval(ws, "ran_first = True\nreturn 5")
    assert not r.ok and r.details["error"] == "syntax" and r.details["line"] == 2
    assert "ran_first" not in ws.namespace


def test_system_exit_does_not_end_the_host(ws: Workspace) -> None:
    r = _eval(ws, "raise SystemExit(3)")
    assert not r.ok and r.details["exception"] == "SystemExit"


# -- time budget ---------------------------------------------------------------------------------
@pytest.mark.serial  # asserts a wall-clock time
def test_pure_python_loop_is_interrupted(ws: Workspace) -> None:
    started = time.monotonic()
    r = _eval(ws, "done_before = 1\nwhile True:\n    pass", timeout=1)
    assert time.monotonic() - started < 4
    assert not r.ok and r.details["error"] == "timeout" and r.details["line"] == 2
    assert "timed out after 1 s" in r.text
    assert "may have left image state partially modified" in r.text
    assert ws.namespace["done_before"] == 1


@pytest.mark.serial  # asserts a wall-clock time
def test_blocking_sleep_is_interrupted(ws: Workspace) -> None:
    started = time.monotonic()
    r = _eval(ws, "import time\ntime.sleep(100)", timeout=1)
    assert time.monotonic() - started < 4
    assert not r.ok and r.details["error"] == "timeout"
    assert "partially modified" in r.text


@pytest.mark.serial  # asserts a wall-clock time
def test_code_that_swallows_the_first_interrupt_is_interrupted_again(ws: Workspace) -> None:
    code = "import time\ntry:\n    time.sleep(30)\nexcept BaseException:\n    pass\ntime.sleep(30)"
    started = time.monotonic()
    r = _eval(ws, code, timeout=1)
    assert time.monotonic() - started < 6
    assert r.details["error"] == "timeout" and r.details["line"] == 6


def test_a_slow_repr_is_inside_the_budget(ws: Workspace) -> None:
    code = "class Slow:\n    def __repr__(self):\n        while True: pass\nSlow()"
    r = _eval(ws, code, timeout=1)
    assert r.details["error"] == "timeout"


def test_previous_alarm_handler_and_timer_are_restored(ws: Workspace) -> None:
    fired: list[int] = []

    def handler(signum: int, frame: Any) -> None:
        fired.append(signum)

    old = signal.signal(signal.SIGALRM, handler)
    old_timer = signal.setitimer(signal.ITIMER_REAL, 0)
    try:
        signal.setitimer(signal.ITIMER_REAL, 5.0)
        assert _eval(ws, "1").ok
        assert signal.getsignal(signal.SIGALRM) is handler
        delay, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 3.0 < delay <= 5.0
        assert fired == []
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        if old_timer[0] > 0:
            signal.setitimer(signal.ITIMER_REAL, *old_timer)


def test_no_interrupt_lands_after_the_eval_finishes(ws: Workspace) -> None:
    # A deadline that would fire right after the code ends must not leak into the host.
    for _ in range(20):
        assert _eval(ws, "import time\ntime.sleep(0.001)", timeout=1).ok
    time.sleep(1.2)


def _in_thread(ws: Workspace, code: str, timeout: int) -> ToolResult:
    box: list[ToolResult] = []
    worker = threading.Thread(target=lambda: box.append(_eval(ws, code, timeout=timeout)))
    worker.start()
    worker.join(30)
    assert not worker.is_alive()
    return box[0]


@pytest.mark.serial  # asserts a wall-clock time
def test_loop_on_another_thread_is_interrupted(ws: Workspace) -> None:
    started = time.monotonic()
    r = _in_thread(ws, "n = 0\nwhile True:\n    n += 1", timeout=1)
    assert time.monotonic() - started < 4
    assert r.details["error"] == "timeout" and "partially modified" in r.text


@pytest.mark.serial  # asserts a wall-clock time
def test_blocking_call_on_another_thread_is_interrupted_when_it_returns(ws: Workspace) -> None:
    # The documented limit: PyThreadState_SetAsyncExc cannot break a blocking C call.
    started = time.monotonic()
    r = _in_thread(ws, "import time\ntime.sleep(2)\nafter_sleep = True", timeout=1)
    elapsed = time.monotonic() - started
    assert 1.9 < elapsed < 5
    assert r.details["error"] == "timeout"
    assert "after_sleep" not in ws.namespace


def test_keyboard_interrupt_ends_eval_with_an_interrupted_error(ws: Workspace) -> None:
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        r = _eval(ws, "import time\ntime.sleep(5)", timeout=10)
    finally:
        timer.cancel()
    assert not r.ok and r.details["error"] == "interrupted"
    assert "interrupted (KeyboardInterrupt)" in r.text and "partially modified" in r.text
    assert _eval(ws, "'host still alive'").ok


@pytest.mark.parametrize("bad", [0, -1])
def test_non_positive_timeout_is_an_error(ws: Workspace, bad: int) -> None:
    r = _eval(ws, "ran = 1", timeout=bad)
    assert not r.ok and "positive" in r.text and "ran" not in ws.namespace


def test_timeout_default_and_clamp(ws: Workspace) -> None:
    assert _eval(ws, "1").details["timeout"] == 30
    r = _eval(ws, "1", timeout=10_000)
    assert r.details["timeout"] == 300 and "clamped" in r.text


# -- output capture --------------------------------------------------------------------------------
def test_output_past_one_mib_is_counted_and_dropped(ws: Workspace) -> None:
    r = _eval(ws, "for i in range(3000):\n    print('x' * 999)\nprint('the end')")
    assert r.ok
    total = 3000 * 1000 + len("the end\n")
    assert r.details["stdout_total"] == total
    assert r.details["stdout_dropped"] == total - eval_tool.OUTPUT_CAP
    assert "the end" in r.text and "passed the 1048576-character cap" in r.text
    assert r.details["stdout_file"].startswith(".kli/scratch/eval-")


def test_other_threads_prints_do_not_leak_into_the_result(
    ws: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    stop = threading.Event()

    def chatter() -> None:
        while not stop.is_set():
            print("LEAKED-LINE")
            time.sleep(0.001)

    other = threading.Thread(target=chatter)
    other.start()
    try:
        r = _eval(
            ws, "import time\nfor i in range(50):\n    print('mine', i)\n    time.sleep(0.002)"
        )
    finally:
        stop.set()
        other.join()
    assert r.ok and "mine 49" in r.text
    assert "LEAKED" not in r.text
    assert "LEAKED-LINE" in capsys.readouterr().out  # it went to the original stream


def test_streams_are_restored_after_eval(ws: Workspace) -> None:
    before = (sys.stdout, sys.stderr)
    _eval(ws, "print('x')")
    _eval(ws, "raise ValueError")
    assert (sys.stdout, sys.stderr) == before


# -- bounded values --------------------------------------------------------------------------------
def test_printed_values_are_bounded(ws: Workspace) -> None:
    r = _eval(ws, "list(range(1000))\nc = [1]\nc.append(c)\nc\n'z' * 100000")
    first, cyclic, text = (v["repr"] for v in r.details["values"])
    assert first.endswith(", 99, ...(900 more)]")
    assert cyclic == "[1, <cycle list>]"
    assert text.endswith("... (100000 characters in all)") and len(text) < 3000


# -- host independence -------------------------------------------------------------------------------
def test_importing_the_process_tools_imports_nothing_from_jupyter() -> None:
    code = (
        "import sys, kli.tools.process.eval, kli.tools.process.bash\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in "
        "('ipykernel', 'IPython', 'jupyter_client', 'comm', 'traitlets', 'zmq')]\n"
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_gate_image_eval_denies_when_not_granted(root: Path) -> None:
    ws = Workspace(str(root), settings={"capabilities": ["process/exec"]})
    r = _eval(ws, "ran = 1")
    assert not r.ok and r.details["error"] == "denied" and r.details["gate"] == "image/eval"
    assert "ran" not in ws.namespace


def test_future_import_applies_to_every_statement(ws: Workspace) -> None:
    code = "from __future__ import annotations\ndef f(x: NotDefinedAnywhere) -> None: ...\nf.__annotations__"
    r = _eval(ws, code)
    assert r.ok, r.text
    assert "'NotDefinedAnywhere'" in r.details["values"][0]["repr"]


def test_input_sees_end_of_file_and_host_stdin_is_untouched(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    host_stdin = io.StringIO('{"id": 2, "tool": "read"}\n')
    monkeypatch.setattr(sys, "stdin", host_stdin)
    r = _eval(ws, "input('answer? ')")
    assert not r.ok and r.details["exception"] == "EOFError"
    assert sys.stdin is host_stdin
    assert host_stdin.readline() == '{"id": 2, "tool": "read"}\n'
