"""The live-image tools in a real kernel through jupyter_client: a parked eval inspected in two
frames then aborted (cells keep running meanwhile), redefine-and-rerun restoring the prior
definition, inspection of a pandas DataFrame and a numpy array defined in cells, a trace read
while the traced cell runs, and the stale-module note after an edit."""

from __future__ import annotations

import time
from typing import Any

import pytest

from kli.tools.file.anchors import line_hash

pytestmark = pytest.mark.kernel


def test_a_parked_eval_is_inspected_in_two_frames_then_aborted(kernel: Any) -> None:
    agent, _ = kernel.open_comm("kli.agent", {"label": "parker"})
    kernel.execute("def ratio(a, b):\n    scale = 10\n    return scale * a / b\n")
    r = kernel.call(agent, "eval", {"code": "num = 3\nden = 0\nout = ratio(num, den)\nout",
                                    "on_error": "interactive"})
    assert not r["ok"] and r["details"]["parked"], r["text"]
    pid = r["details"]["park"]
    assert "[1] ratio" in r["text"] and "locals: a = 3; b = 0; scale = 10" in r["text"]
    # the parked evaluation blocks nothing: a cell runs meanwhile
    reply, _ = kernel.execute("cell_ran = 1")
    assert reply["status"] == "ok"
    inner = kernel.call(agent, "eval_frame", {"park": pid, "frame": 1, "code": "scale * a, b"})
    assert inner["ok"] and "(30, 0)" in inner["text"], inner["text"]
    outer = kernel.call(agent, "eval_frame", {"park": pid, "frame": 0,
                                              "code": "num, den, cell_ran"})
    assert outer["ok"] and "(3, 0, 1)" in outer["text"], outer["text"]
    aborted = kernel.call(agent, "eval_abort", {"park": pid})
    assert aborted["ok"] and "aborted " + pid in aborted["text"]
    gone = kernel.call(agent, "eval_frame", {"park": pid, "code": "1"})
    assert not gone["ok"] and gone["details"]["error"] == "unknown_park"
    assert "NameError" in kernel.call(agent, "eval", {"code": "out"})["text"]


def test_redefine_and_rerun_then_restore_the_prior_definition(kernel: Any) -> None:
    agent, _ = kernel.open_comm("kli.agent", {"label": "redefiner"})
    kernel.execute("def greet(name):\n    return 'hello ' + name\n")
    new = kernel.call(agent, "redefine", {
        "definition": "def greet(name):\n    return 'HELLO ' + name.upper()\n",
        "code": "greet('ann')"})
    assert new["ok"] and "'HELLO ANN'" in new["text"], new["text"]
    prior = new["details"]["prior"]["greet"]
    assert prior == "def greet(name):\n    return 'hello ' + name\n"
    # a cell sees the new definition: the image is one
    _, outputs = kernel.execute("print(greet('bo'))")
    assert any("HELLO BO" in o["content"].get("text", "") for o in outputs)
    back = kernel.call(agent, "redefine", {"definition": prior, "code": "greet('ann')"})
    assert back["ok"] and "'hello ann'" in back["text"]
    failed = kernel.call(agent, "redefine", {"definition": "def greet(name):\n    return 1 / 0\n",
                                             "code": "greet('x')"})
    assert not failed["ok"] and "FAILED with the new definition in place" in failed["text"]


def test_inspect_a_dataframe_and_a_numpy_array_made_in_cells(kernel: Any) -> None:
    agent, _ = kernel.open_comm("kli.agent", {"label": "inspector"})
    reply, _ = kernel.execute("import numpy as np, pandas as pd\n"
                              "grid = np.ones((4, 5), dtype=np.int32)\n"
                              "table = pd.DataFrame({'city': ['a', 'b'], 'pop': [1.5, 2.5]})")
    assert reply["status"] == "ok"
    summary = kernel.call(agent, "image_summary", {})
    assert summary["ok"], summary["text"]
    rows = {line.split()[0]: line for line in summary["text"].splitlines()[1:]}
    assert "shape 4×5" in rows["grid"] and "dtype int32" in rows["grid"] and "80 B" in rows["grid"]
    assert "shape 2×2" in rows["table"]
    assert "In" not in rows and "get_ipython" not in rows and "exit" not in rows
    frame = kernel.call(agent, "inspect", {"name": "table"})
    assert "columns (2): city" in frame["text"] and "pop float64" in frame["text"]
    array = kernel.call(agent, "inspect", {"name": "grid"})
    assert "shape: 4 × 5" in array["text"] and "dtype: int32" in array["text"]


@pytest.mark.serial  # asserts a wall-clock time
def test_trace_read_is_answered_while_the_traced_cell_runs(kernel: Any) -> None:
    agent, _ = kernel.open_comm("kli.agent", {"label": "tracer"})
    kernel.execute("def step(i):\n    return i * i\n")
    assert kernel.call(agent, "trace", {"function": "step"})["ok"]
    start = len(kernel.seen)
    cell = kernel.kc.execute("import time\nfor i in range(3):\n    step(i)\ntime.sleep(3)")
    kernel.wait_for(lambda m: m["parent_header"].get("msg_id") == cell
                    and m["msg_type"] == "status"
                    and m["content"]["execution_state"] == "busy", since=start)
    time.sleep(0.5)
    began = time.monotonic()
    read = kernel.call(agent, "trace_read", {})
    assert time.monotonic() - began < 2.0, "trace_read waited for the cell"
    assert [c["args"] for c in read["details"]["calls"]] == [["0"], ["1"], ["2"]]
    kernel.wait_for(lambda m: m["parent_header"].get("msg_id") == cell
                    and m["msg_type"] == "status"
                    and m["content"]["execution_state"] == "idle", since=start)
    assert kernel.call(agent, "untrace", {"function": "step"})["ok"]


def test_an_edit_of_an_imported_file_says_the_live_module_is_stale(kernel: Any) -> None:
    agent, _ = kernel.open_comm("kli.agent", {"label": "stale"})
    (kernel.root / "stalemod.py").write_text("def v():\n    return 1\n")
    kernel.execute("import sys, os\nsys.path.insert(0, os.getcwd())\nimport stalemod")
    kernel.call(agent, "read", {"path": "stalemod.py"})
    hh = line_hash("    return 1")
    edit = kernel.call(agent, "edit", {"input": f"@@ stalemod.py\n= 2:{hh}..2:{hh}\n"
                                       "~    return 2\n"})
    assert edit["ok"] and "live module stalemod (imported from stalemod.py) is stale" \
        in edit["text"], edit["text"]
    reloaded = kernel.call(agent, "redefine", {"reload": "stalemod", "code": "stalemod.v()"})
    assert reloaded["ok"] and "[line 1] 2" in reloaded["text"]
    assert "return 1" in reloaded["details"]["prior"]["stalemod"]
