"""kli's notebook edits side by side with a peer, datalayer's jupyter-mcp-server, on the same
scripted tasks in the same live document (issue 17): edits applied, stale edits refused or
applied blind, a person's concurrent typing kept or lost, and cell indices drifting.

    PYTHONPATH=... .venv/bin/python bench/bench_peer_notebook.py [--repeat 10] \\
        [--peer-python /work/venv-peer/bin/python] [--json out.json]

One Jupyter server with jupyter-collaboration (the server of tests/notebook_live/conftest.py)
holds two notebooks, each open in its collaborative room: ``kli.ipynb``, whose kli kernel the
server started (the kernel edits the room's Y document), and ``peer.ipynb``. Both agents are
driven the same way, through their MCP servers over stdio by the MCP SDK's client: ``kli mcp
--server-url`` (tools ``read`` and ``edit``) and jupyter-mcp-server from its own virtualenv
(``--peer-python``; tools ``use_notebook``, ``read_cell``, ``edit_cell_source``,
``overwrite_cell_source``). "The person" is a scripted Y-document client of each room
(jupyter-nbmodel-client on pycrdt, as the live-notebook tests use), not a human and not a
browser: it resets the notebook before each task, changes a cell, inserts a cell, and types
character by character.

The peer is not a dependency of kli-kernel and nothing in CI installs it: install it apart,
    python3.11 -m venv /work/venv-peer && /work/venv-peer/bin/pip install jupyter-mcp-server
The script exits with status 2 and says so when ``--peer-python`` cannot import it.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DEFAULT_PEER_PYTHON = "/work/venv-peer/bin/python"
THINK = 0.5  # seconds between the person's change and the agent's edit (the agent "thinks")
SETTLE = 0.4  # seconds to let a refused (or lost) edit show that nothing arrives
SEEN = 5.0  # seconds within which an applied edit must be in the person's document
TYPE_EVERY = 0.01  # seconds between two typed characters (100 characters a second)

IDS = ["c0", "c1", "c2", "c3"]
BASE = {
    "c0": "import math\nr = 2",
    "c1": "x = 10\ny = 20",
    "c2": "a = 1\nb = 2\nc = a + b\nprint(c)\nc",  # the cell every task edits: line 3
    "c3": "total = 0",  # the cell the person types into in task "typing, other cell"
}
TARGET, TARGET_INDEX, TARGET_LINE = "c2", 2, 3
OLD_LINE = "c = a + b"
PERSON_SAME_LINE = "c = a * b  # the person's"
PERSON_OTHER_LINE = "a = 100  # the person's"
TYPED = "\nprint(total)  # typed by the person"

TASKS = ["edit", "stale_same_line", "stale_other_line", "typing_other_cell",
         "typing_same_cell", "drift"]
TASK_TITLES = {
    "edit": "edit one line of a cell",
    "stale_same_line": "stale: the person changed that line after the read",
    "stale_other_line": "stale: the person changed another line of the cell after the read",
    "typing_other_cell": "the person types into another cell during the edit",
    "typing_same_cell": "the person types at the end of the same cell during the edit",
    "drift": "the person inserted a cell above after the read",
}


# ---------------------------------------------------------------------------------------------
# The person: a scripted Y client of the room


class Person:
    """The live-notebook tests' person (tests/notebook_live/conftest.py), with the few edits a
    person makes in an editor: replace a line, insert a cell, type one character."""

    def __init__(self, server: Any, name: str) -> None:
        from tests.notebook_live.conftest import Person as YClient

        self.y = YClient(server, name)
        self.doc = self.y.client._doc

    def sources(self) -> dict[str, str]:
        doc = self.doc
        return dict(self.y._on_loop(lambda: [(str(c["id"]), str(c["source"]))
                                             for c in doc.ycells]))

    def ids(self) -> list[str]:
        doc = self.doc
        return list(self.y._on_loop(lambda: [str(c["id"]) for c in doc.ycells]))

    def reset(self) -> None:
        """Back to the four cells of BASE (one transaction)."""
        doc = self.doc

        def go() -> None:
            with doc.ydoc.transaction():
                for i in reversed(range(len(doc.ycells))):
                    if str(doc.ycells[i]["id"]) not in BASE:
                        del doc.ycells[i]
                for c in doc.ycells:
                    text = c["source"]
                    if str(text) != BASE[str(c["id"])]:
                        text.clear()
                        text.insert(0, BASE[str(c["id"])])

        self.y._on_loop(go)

    def replace_line(self, cell_id: str, line_no: int, new: str) -> None:
        """Select line ``line_no`` (1-based) of a cell and type ``new`` over it."""
        doc = self.doc

        def go() -> None:
            text = next(c["source"] for c in doc.ycells if str(c["id"]) == cell_id)
            lines = str(text).split("\n")
            start = sum(len(x) + 1 for x in lines[:line_no - 1])
            with doc.ydoc.transaction():
                del text[start:start + len(lines[line_no - 1])]
                text.insert(start, new)

        self.y._on_loop(go)

    def insert_cell(self, index: int, cell_id: str, source: str) -> None:
        doc = self.doc

        def go() -> None:
            doc.ycells.insert(index, doc.create_ycell({
                "cell_type": "code", "id": cell_id, "source": source, "metadata": {},
                "outputs": [], "execution_count": None}))

        self.y._on_loop(go)

    def type_char(self, cell_id: str, ch: str) -> None:
        """One keystroke at the end of a cell."""
        doc = self.doc

        def go() -> None:
            text = next(c["source"] for c in doc.ycells if str(c["id"]) == cell_id)
            text.insert(len(str(text)), ch)

        self.y._on_loop(go)

    def wait_for(self, check: Any, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not check(self.sources()):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.002)
        return True

    def close(self) -> None:
        self.y.close()


class Typist(threading.Thread):
    """Types ``TYPED`` at the end of a cell, one character every TYPE_EVERY seconds."""

    def __init__(self, person: Person, cell_id: str) -> None:
        super().__init__(daemon=True)
        self.person, self.cell_id, self.started_typing = person, cell_id, threading.Event()

    def run(self) -> None:
        for n, ch in enumerate(TYPED):
            self.person.type_char(self.cell_id, ch)
            if n == 4:
                self.started_typing.set()
            time.sleep(TYPE_EVERY)


# ---------------------------------------------------------------------------------------------
# The agents: each tool behind the same three steps (read the cell, edit one line of it)


def _text(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


class KliAgent:
    """``kli mcp`` over stdio: ``read path=NB#ID``, then ``edit`` with the read's anchor."""

    name = "kli `edit` (PATH#CELL_ID, hashline anchors)"
    by_index = False

    def __init__(self, client: Any, notebook: str) -> None:
        self.client, self.nb = client, notebook

    async def read(self, index: int, cell_id: str) -> tuple[str, dict[int, str]]:
        r = await self.client.call_tool("read", {"path": f"{self.nb}#{cell_id}"})
        assert not r.is_error, _text(r)
        rows = [m for m in (re.match(r"^(\d+):([0-9a-f]{2})\|(.*)$", line)
                            for line in _text(r).splitlines()) if m]
        anchors = {int(m.group(1)): m.group(2) for m in rows}
        return "\n".join(m.group(3) for m in rows), anchors

    async def edit(self, index: int, cell_id: str, read: tuple[str, dict[int, str]],
                   line_no: int, new: str) -> tuple[bool, str]:
        patch = f"@@ {self.nb}#{cell_id}\n= {line_no}:{read[1][line_no]}\n~{new}\n"
        r = await self.client.call_tool("edit", {"input": patch})
        return not r.is_error, _text(r)


class PeerAgent:
    """jupyter-mcp-server over stdio, with the notebook activated by ``use_notebook``:
    ``read_cell``, then ``edit_cell_source`` (find and replace of the old line) or
    ``overwrite_cell_source`` (the read source with the line replaced), by ``cell_id`` or by
    ``cell_index``."""

    def __init__(self, client: Any, tool: str, by_index: bool) -> None:
        self.client, self.tool, self.by_index = client, tool, by_index
        how = "cell_index" if by_index else "cell_id"
        self.name = f"jupyter-mcp-server `{tool}` ({how})"

    def _where(self, index: int, cell_id: str) -> dict[str, Any]:
        return {"cell_index": index} if self.by_index else {"cell_id": cell_id}

    async def read(self, index: int, cell_id: str) -> tuple[str, dict[int, str]]:
        r = await self.client.call_tool("read_cell", {**self._where(index, cell_id),
                                                      "include_outputs": False})
        assert not r.is_error, _text(r)
        return str(r.structured_content["result"][1]), {}

    async def edit(self, index: int, cell_id: str, read: tuple[str, dict[int, str]],
                   line_no: int, new: str) -> tuple[bool, str]:
        lines = read[0].split("\n")
        if self.tool == "edit_cell_source":
            args = {"old_string": lines[line_no - 1], "new_string": new}
        else:
            lines[line_no - 1] = new
            args = {"cell_source": "\n".join(lines)}
        r = await self.client.call_tool(self.tool, {**self._where(index, cell_id), **args})
        return not r.is_error, _text(r)


# ---------------------------------------------------------------------------------------------
# The tasks


@dataclass
class Outcome:
    task: str
    tool_ok: bool
    result: str  # applied / refused / blind / merged / wrong_cell / lost
    typed_lost: int | None = None  # characters of TYPED missing from the person's cell
    ms: float | None = None  # call to text in the person's document (applied edits)
    call_ms: float | None = None
    message: str = ""
    cells: dict[str, str] | None = None  # the person's document afterwards


def _with_line(source: str, line_no: int, new: str) -> str:
    lines = source.split("\n")
    lines[line_no - 1] = new
    return "\n".join(lines)


def _typed_lost(tail: str) -> int:
    """How many characters of TYPED are missing from ``tail`` (what follows the cell's own
    lines), in order: lost, or moved elsewhere in the cell."""
    kept = sum(b.size for b in difflib.SequenceMatcher(None, TYPED, tail,
                                                       autojunk=False).get_matching_blocks())
    return len(TYPED) - kept


async def _fresh_read(agent: Any, person: Person, base: dict[str, str]) -> Any:
    """The agent's read, once its document has the person's reset (kli's kernel receives the
    room's updates a moment after the person makes them)."""
    deadline = time.monotonic() + 5
    while True:
        read = await agent.read(TARGET_INDEX, TARGET)
        if read[0] == base[TARGET] or time.monotonic() > deadline:
            return read
        time.sleep(0.05)


async def run_task(task: str, rep: int, agent: Any, person: Person) -> Outcome:
    import anyio

    person.reset()
    time.sleep(0.2)
    new = f"c = a + b + {rep}"
    base = BASE[TARGET]
    want = _with_line(base, TARGET_LINE, new)
    read = await _fresh_read(agent, person, BASE)
    typist = None
    if task == "stale_same_line":
        person.replace_line(TARGET, TARGET_LINE, PERSON_SAME_LINE)
        time.sleep(THINK)
    elif task == "stale_other_line":
        person.replace_line(TARGET, 1, PERSON_OTHER_LINE)
        time.sleep(THINK)
    elif task == "drift":
        person.insert_cell(0, f"p{rep}", "# the person's new cell")
        time.sleep(THINK)
    elif task.startswith("typing"):
        typist = Typist(person, TARGET if task == "typing_same_cell" else "c3")
        typist.start()
        typist.started_typing.wait(5)
        if task == "typing_same_cell":  # the agent reads while the person types, as it would
            read = await agent.read(TARGET_INDEX, TARGET)
    t0 = time.perf_counter()
    ok, message = await agent.edit(TARGET_INDEX, TARGET, read, TARGET_LINE, new)
    t1 = time.perf_counter()
    out = Outcome(task, ok, "lost", call_ms=(t1 - t0) * 1000, message=message[:300])
    if typist is not None:
        await anyio.to_thread.run_sync(typist.join)
    in_doc = person.wait_for(lambda s: new in s[TARGET].split("\n"), SEEN if ok else SETTLE)
    t2 = time.perf_counter()
    time.sleep(0.2 if ok else 0.0)  # a blind write can still arrive: look once it settled
    after = person.sources()
    cell = after[TARGET].split("\n")
    if task == "edit":
        out.result = ("applied" if after[TARGET] == want else
                      "wrong_text" if in_doc else "refused" if not ok else "lost")
        if out.result == "applied":
            out.ms = (t2 - t0) * 1000
    elif task in ("stale_same_line", "stale_other_line"):
        mine = PERSON_SAME_LINE if task == "stale_same_line" else PERSON_OTHER_LINE
        agent_in, person_in = new in cell, mine in cell
        out.result = ("merged" if agent_in and person_in else "blind" if agent_in else
                      "refused" if person_in and not ok else "lost")
    elif task == "typing_other_cell":
        typed = after["c3"]
        out.typed_lost = _typed_lost(typed[len(BASE["c3"]):] if typed.startswith(BASE["c3"])
                                     else typed)
        out.result = ("applied" if after[TARGET] == want else
                      "refused" if after[TARGET] == base and not ok else "lost")
    elif task == "typing_same_cell":
        # the edit is judged on the cell's five lines, the typing on what follows them
        applied = after[TARGET] == want + TYPED
        lines = after[TARGET].split("\n")
        out.typed_lost = _typed_lost("\n" + "\n".join(lines[5:]) if len(lines) > 5 else "")
        # kli holds an edit of a cell that does not parse (the person's half-typed line) as a
        # repair preview, written only when accepted: not written, but not a stale refusal
        held = not ok and "Repair preview" in message
        out.result = ("applied" if applied else
                      "held" if held and after[TARGET].startswith(base) else
                      "refused" if after[TARGET].startswith(base) and not ok else
                      "garbled" if in_doc else "lost")
    elif task == "drift":
        changed = [cid for cid in IDS if cid != TARGET and after.get(cid) != BASE[cid]]
        if changed:
            out.result = "wrong_cell"
        elif after[TARGET] == want:
            out.result = "applied"
        else:
            out.result = "refused" if not ok else "lost"
    out.cells = after
    return out


# ---------------------------------------------------------------------------------------------
# Running both


def peer_version(peer_python: str) -> str:
    """The installed jupyter-mcp-server version, or exit 2 saying how to install it."""
    code = ("import importlib.metadata as m, jupyter_mcp_server; "
            "print(m.version('jupyter-mcp-server'))")
    try:
        done = subprocess.run([peer_python, "-c", code], capture_output=True, text=True,
                              timeout=120)
        why = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        ok = done.returncode == 0
    except (OSError, subprocess.TimeoutExpired) as exc:
        why, ok = f"{type(exc).__name__}: {exc}", False
    if not ok:
        print(f"bench_peer_notebook: the peer (jupyter-mcp-server) is not importable with "
              f"--peer-python {peer_python} ({why}).\nInstall it in its own virtualenv: "
              "python3.11 -m venv /work/venv-peer && /work/venv-peer/bin/pip install "
              "jupyter-mcp-server (or pass --peer-python PATH).", file=sys.stderr)
        sys.exit(2)
    return done.stdout.strip()


async def run_all(server: Any, kernel_id: str, peer_python: str, peer_log: Path, repeat: int,
                  only: list[str]) -> dict[str, list[Outcome]]:
    from mcp import Client, StdioServerParameters
    from mcp_types import Implementation

    info = Implementation(name="bench_peer_notebook", version="1")
    kli_params = StdioServerParameters(command=sys.executable, env=dict(os.environ), args=[
        "-m", "kli.tools.cli", "mcp", "--server-url", server.url, "--kernel-id", kernel_id])
    peer_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # the peer logs every websocket connection on stderr: to a file, kept for a failed run
    peer_params = StdioServerParameters(command="sh", env=peer_env, args=[
        "-c", f'exec "$0" "$@" 2>>"{peer_log}"', peer_python, "-m", "jupyter_mcp_server", "--transport", "stdio", "--jupyter-url", server.url,
        "--jupyter-token", "", "--start-new-code-sandbox", "false"])
    results: dict[str, list[Outcome]] = {}
    people = {"kli.ipynb": Person(server, "kli.ipynb"), "peer.ipynb": Person(server, "peer.ipynb")}
    try:
        async with contextlib.AsyncExitStack() as stack:
            kli = await stack.enter_async_context(Client(kli_params, client_info=info))
            peer = await stack.enter_async_context(Client(peer_params, client_info=info))
            used = await peer.call_tool("use_notebook", {"notebook_name": "peer",
                                                         "notebook_path": "peer.ipynb"})
            assert not used.is_error, _text(used)
            agents: list[tuple[Any, str]] = [(KliAgent(kli, "kli.ipynb"), "kli.ipynb")]
            for tool in ("edit_cell_source", "overwrite_cell_source"):
                for by_index in (False, True):
                    agents.append((PeerAgent(peer, tool, by_index), "peer.ipynb"))
            for agent, _ in agents:
                results[agent.name] = []
            for rep in range(repeat):
                for task in only:  # tasks and tools alternate, so load hits them alike
                    for agent, nb in agents:
                        results[agent.name].append(await run_task(task, rep, agent, people[nb]))
    finally:
        for p in people.values():
            p.close()
    return results


def _share(outs: list[Outcome], *results: str) -> str:
    n = sum(o.result in results for o in outs)
    return f"{n}/{len(outs)}" if outs else "—"


def table(results: dict[str, list[Outcome]]) -> str:
    rows = ["| tool | (a) edit applied exactly | median ms to the person's document (a) "
            "| (b) stale, same line: refused / applied blind | (b′) stale, other line: "
            "refused / blind / merged | (c) typing in another cell: typed kept / edit applied "
            "| (c′) typing in the same cell: typed kept / edit applied, cell intact / refused "
            "(stale) / held (repair preview) / applied, cell garbled | (d) cell "
            "inserted above: right cell / refused / wrong cell |",
            "|---|---|---|---|---|---|---|---|"]
    for name, outs in results.items():
        by: dict[str, list[Outcome]] = {t: [o for o in outs if o.task == t] for t in TASKS}
        ms = [o.ms for o in by["edit"] if o.ms is not None]
        med = f"{statistics.median(ms):.1f}" if ms else "—"

        def kept(task: str, by: dict[str, list[Outcome]] = by) -> str:
            xs = by[task]
            if not xs:
                return "—"
            n = sum(o.typed_lost == 0 for o in xs)
            lost = sum(o.typed_lost or 0 for o in xs)
            return f"{n}/{len(xs)}" + (f" ({lost} typed chars lost or moved)" if lost else "")

        rows.append(
            f"| {name} | {_share(by['edit'], 'applied')} | {med} "
            f"| {_share(by['stale_same_line'], 'refused')} / "
            f"{_share(by['stale_same_line'], 'blind')} "
            f"| {_share(by['stale_other_line'], 'refused')} / "
            f"{_share(by['stale_other_line'], 'blind')} / "
            f"{_share(by['stale_other_line'], 'merged')} "
            f"| {kept('typing_other_cell')} / {_share(by['typing_other_cell'], 'applied')} "
            f"| {kept('typing_same_cell')} / {_share(by['typing_same_cell'], 'applied')} / "
            f"{_share(by['typing_same_cell'], 'refused')} / "
            f"{_share(by['typing_same_cell'], 'held')} / "
            f"{_share(by['typing_same_cell'], 'garbled')} "
            f"| {_share(by['drift'], 'applied')} / {_share(by['drift'], 'refused')} / "
            f"{_share(by['drift'], 'wrong_cell')} |")
    return "\n".join(rows)


def odd_outcomes(results: dict[str, list[Outcome]]) -> list[str]:
    """Outcomes the columns do not count (lost edits, wrong text): named, not hidden."""
    counted = {"edit": {"applied"}, "stale_same_line": {"refused", "blind"},
               "stale_other_line": {"refused", "blind", "merged"},
               "typing_other_cell": {"applied"},
               "typing_same_cell": {"applied", "refused", "held", "garbled"},
               "drift": {"applied", "refused", "wrong_cell"}}
    lines = []
    for name, outs in results.items():
        c = Counter((o.task, o.result) for o in outs if o.result not in counted[o.task])
        for (task, result), n in sorted(c.items()):
            lines.append(f"- {name}: {task} → {result} ×{n}")
    return lines


# ---------------------------------------------------------------------------------------------
# The context an agent pays: characters of tool output for one scripted notebook task (issue 25)

CTX_CELLS = ["k0", "k1", "k2", "k3"]
CTX_EDIT = "k3"  # the cell edited and run: line 3 "c = a + b" -> "c = a * b"
CTX_LONG_LINES = 2000


def plot_output() -> dict[str, Any]:
    """A plot as a notebook holds it: a matplotlib figure through IPython's inline "retina"
    path (``retina_figure``: drawn at twice its dpi, 1280×960, with the size it is shown at,
    640×480, in the output's metadata), a histogram of skewed data with a title, axis labels and
    a legend — something an agent must read to judge."""
    import matplotlib

    matplotlib.use("Agg")
    from IPython.core.pylabtools import retina_figure
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.8), dpi=100)
    ax = fig.subplots()
    data = [(i % 97) * (i % 89) / 97 for i in range(2000)]
    ax.hist(data, bins=40, label="order sizes")
    ax.axvline(sum(data) / len(data), color="red", linestyle="--", label="mean")
    ax.set_title("Order sizes are skewed to the right")
    ax.set_xlabel("order size (units)")
    ax.set_ylabel("orders")
    ax.legend()
    png, meta = retina_figure(fig, base64=False, bbox_inches=None)
    import base64

    return {"output_type": "display_data", "metadata": {"image/png": meta},
            "data": {"image/png": base64.b64encode(png).decode(),
                     "text/plain": "<Figure size 640x480 with 1 Axes>"}}


def context_notebook() -> dict[str, Any]:
    """A notebook with a plot (a retina image/png output, ``plot_output``) and a long output
    (2000 printed lines)."""
    def code(cid: str, src: str, outputs: list[dict[str, Any]], n: int | None) -> dict[str, Any]:
        return {"cell_type": "code", "execution_count": n, "id": cid, "metadata": {},
                "outputs": outputs, "source": src}

    long = "".join(f"{i}\n" for i in range(CTX_LONG_LINES))
    return {
        "cells": [
            code("k0", "import math\nr = 2", [], 1),
            code("k1", "import matplotlib.pyplot as plt\nplt.plot(range(10))", [
                {"output_type": "execute_result", "execution_count": 2, "metadata": {},
                 "data": {"text/plain": "[<matplotlib.lines.Line2D at 0x7f>]"}},
                plot_output(),
            ], 2),
            code("k2", f"for i in range({CTX_LONG_LINES}):\n    print(i)", [
                {"output_type": "stream", "name": "stdout", "text": long}], 3),
            code(CTX_EDIT, "a = 6\nb = 7\nc = a + b\nprint(c)", [], None),
        ],
        "metadata": {"kernelspec": {"name": "kli", "display_name": "Python 3 (kli)",
                                    "language": "python"},
                     "language_info": {"name": "python"}},
        "nbformat": 4, "nbformat_minor": 5,
    }


def _blocks(result: Any) -> str:
    """"ok", or what else the model gets besides text (an image block: its base64 size)."""
    if result.is_error:
        return "error"
    extra = [f"+ {getattr(c, 'mime_type', '') or getattr(c, 'mimeType', '')} image "
             f"{len(getattr(c, 'data', '')):,} b64" for c in result.content
             if getattr(c, "type", "") == "image"]
    return ", ".join(extra) or "ok"


# Images handed to the model, per side: (step, mime, width, height, image bytes, base64 chars)
IMAGES: dict[str, list[tuple[str, str, int, int, int, int]]] = {}
IMAGES_OUT: Path | None = None  # --images-out: where each image sent is written, to look at


def _keep_images(side: str, step: str, result: Any) -> None:
    import base64
    import io

    from PIL import Image

    for n, c in enumerate(c for c in result.content if getattr(c, "type", "") == "image"):
        data = base64.b64decode(c.data)
        mime = getattr(c, "mime_type", "") or getattr(c, "mimeType", "")
        with Image.open(io.BytesIO(data)) as img:
            w, h = img.size
        IMAGES.setdefault(side, []).append((step, mime, w, h, len(data), len(c.data)))
        if IMAGES_OUT is not None:
            IMAGES_OUT.mkdir(parents=True, exist_ok=True)
            ext = "jpg" if mime == "image/jpeg" else "png"
            (IMAGES_OUT / f"{side}-{n}.{ext}").write_bytes(data)


def openai_tokens(w: int, h: int) -> int:
    """OpenAI's published image cost, high detail (the tile models: GPT-4o, GPT-4.1): fit in
    2048×2048, then the short side scaled down to 768, then 170 per 512-px tile plus 85."""
    import math

    if max(w, h) > 2048:
        w, h = w * 2048 / max(w, h), h * 2048 / max(w, h)
    if min(w, h) > 768:
        w, h = w * 768 / min(w, h), h * 768 / min(w, h)
    return 85 + 170 * math.ceil(w / 512) * math.ceil(h / 512)


def anthropic_tokens(w: int, h: int) -> int:
    """Anthropic's published estimate: width × height / 750, the image first scaled down by the
    API when its long edge is over 1568 px or it would cost over ~1,600 tokens."""
    if max(w, h) > 1568:
        w, h = w * 1568 / max(w, h), h * 1568 / max(w, h)
    return min(round(w * h / 750), 1600)


async def context_kli(client: Any, nb: str) -> list[tuple[str, int, str]]:
    """kli: read the notebook, edit line 3 of the cell by its anchor, run it, read it back."""
    steps: list[tuple[str, int, str]] = []

    async def step(name: str, tool: str, args: dict[str, Any]) -> str:
        r = await client.call_tool(tool, args)
        text = _text(r)
        steps.append((name, len(text), _blocks(r)))
        _keep_images("kli", name, r)
        return text

    await step("read the notebook", "read", {"path": nb})
    await step("read the plot cell k1", "read", {"path": f"{nb}#k1"})
    await step("look at the plot k1 (an image)", "look", {"path": f"{nb}#k1"})
    await step("read the long-output cell k2", "read", {"path": f"{nb}#k2"})
    cell = await step("read the cell to edit", "read", {"path": f"{nb}#{CTX_EDIT}"})
    m = re.search(r"^3:([0-9a-f]{2})\|c = a \+ b$", cell, re.M)
    assert m, cell
    await step("edit one line", "edit",
               {"input": f"@@ {nb}#{CTX_EDIT}\n= 3:{m.group(1)}\n~c = a * b\n"})
    await step("run the cell", "run_cells", {"path": nb, "cell": CTX_EDIT})
    out = await step("read the result", "read", {"path": f"{nb}#{CTX_EDIT}"})
    steps.append(("(result correct)", 0, "ok" if "42" in out else "no 42 in: " + out[-200:]))
    return steps


async def context_peer(client: Any) -> list[tuple[str, int, str]]:
    """jupyter-mcp-server: read the notebook, overwrite the cell's source, execute it, read it."""
    steps: list[tuple[str, int, str]] = []
    index = CTX_CELLS.index(CTX_EDIT)

    async def step(name: str, tool: str, args: dict[str, Any]) -> str:
        r = await client.call_tool(tool, args)
        text = _text(r)
        steps.append((name, len(text), _blocks(r)))
        _keep_images("jupyter-mcp-server", name, r)
        return text

    await step("read the notebook", "read_notebook",
               {"notebook_name": "ctx_peer", "response_format": "detailed"})
    await step("read the plot cell k1", "read_cell", {"cell_index": 1})
    await step("read the long-output cell k2", "read_cell", {"cell_index": 2})
    await step("read the cell to edit", "read_cell", {"cell_index": index})
    await step("edit one line", "overwrite_cell_source",
               {"cell_index": index, "cell_source": "a = 6\nb = 7\nc = a * b\nprint(c)"})
    await step("run the cell", "execute_cell", {"cell_index": index})
    out = await step("read the result", "read_cell", {"cell_index": index})
    steps.append(("(result correct)", 0, "ok" if "42" in out else "no 42 in: " + out[-200:]))
    return steps


async def run_context(server: Any, kernel_id: str, peer_python: str,
                      peer_log: Path) -> dict[str, list[tuple[str, int, str]]]:
    from mcp import Client, StdioServerParameters
    from mcp_types import Implementation

    info = Implementation(name="bench_peer_notebook", version="1")
    kli_params = StdioServerParameters(command=sys.executable, env=dict(os.environ), args=[
        "-m", "kli.tools.cli", "mcp", "--server-url", server.url, "--kernel-id", kernel_id])
    peer_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    peer_params = StdioServerParameters(command="sh", env=peer_env, args=[
        "-c", f'exec "$0" "$@" 2>>"{peer_log}"', peer_python, "-m", "jupyter_mcp_server",
        "--transport", "stdio", "--jupyter-url", server.url, "--jupyter-token", "",
        "--start-new-code-sandbox", "false"])
    async with contextlib.AsyncExitStack() as stack:
        kli = await stack.enter_async_context(Client(kli_params, client_info=info))
        peer = await stack.enter_async_context(Client(peer_params, client_info=info))
        used = await peer.call_tool("use_notebook", {"notebook_name": "ctx_peer",
                                                     "notebook_path": "ctx_peer.ipynb"})
        assert not used.is_error, _text(used)
        return {"kli (`read`, `edit`, `run_cells`)": await context_kli(kli, "ctx_kli.ipynb"),
                "jupyter-mcp-server (`read_notebook`, `read_cell`, `overwrite_cell_source`, "
                "`execute_cell`)": await context_peer(peer)}


def context_table(results: dict[str, list[tuple[str, int, str]]]) -> str:
    names = list(results)
    rows = ["| step | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    steps: list[str] = []
    for out in results.values():
        steps += [s[0] for s in out if s[0] not in steps]
    for st in steps:
        cells = []
        for out in results.values():
            hit = next((s for s in out if s[0] == st), None)
            cells.append("—" if hit is None else
                         (hit[2] if st.startswith("(") else
                          f"{hit[1]:,}" + ("" if hit[2] == "ok" else f" ({hit[2]})")))
        rows.append(f"| {st} | " + " | ".join(cells) + " |")
    totals = [f"**{sum(s[1] for s in out):,}**" for out in results.values()]
    rows.append("| **total characters** | " + " | ".join(totals) + " |")
    return "\n".join(rows)


def images_table() -> str:
    rows = ["| side | step | image sent | bytes | base64 characters | OpenAI tokens (high "
            "detail) | Anthropic tokens |", "|---|---|---|---:|---:|---:|---:|"]
    for side, images in IMAGES.items():
        for step, mime, w, h, n, b64 in images:
            rows.append(f"| {side} | {step} | {mime} {w}×{h} | {n:,} | {b64:,} | "
                        f"{openai_tokens(w, h):,} | {anthropic_tokens(w, h):,} |")
    return "\n".join(rows)


def main_context(peer_python: str) -> None:
    import anyio

    from tests.notebook_live.conftest import start_collab_server

    version = peer_version(peer_python)
    with tempfile.TemporaryDirectory() as tmp, start_collab_server(Path(tmp)) as server:
        for name in ("ctx_kli.ipynb", "ctx_peer.ipynb"):
            server.api("PUT", f"/api/contents/{name}", {"type": "notebook", "format": "json",
                                                        "content": context_notebook()})
        kernel_id = server.start_session("ctx_kli.ipynb")
        peer_log = Path(tmp) / "peer.log"
        try:
            results = anyio.run(run_context, server, kernel_id, peer_python, peer_log)
        except BaseException:
            if peer_log.exists():
                print("the peer's log, last lines:\n" + peer_log.read_text()[-3000:],
                      file=sys.stderr)
            raise
    print(f"jupyter-mcp-server {version} (from {peer_python}); characters of tool output the "
          "model reads, per step\n")
    print(context_table(results))
    print("\nImages handed to the model (image tokens by each provider's published formula)\n")
    print(images_table())


def main() -> None:
    import anyio

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--peer-python", default=DEFAULT_PEER_PYTHON,
                    help="a Python with jupyter-mcp-server installed (default %(default)s)")
    ap.add_argument("--json", metavar="OUT", help="write every outcome to this JSON file")
    ap.add_argument("--tasks", default=",".join(TASKS), help="comma-separated subset")
    ap.add_argument("--context", action="store_true",
                    help="measure the context instead: characters of tool output per step")
    ap.add_argument("--images-out", metavar="DIR",
                    help="with --context: write each image a side sent the model here")
    ns = ap.parse_args()
    if ns.context:
        global IMAGES_OUT
        IMAGES_OUT = Path(ns.images_out) if ns.images_out else None
        main_context(ns.peer_python)
        return
    only = [t for t in ns.tasks.split(",") if t]
    bad = [t for t in only if t not in TASKS]
    if bad:
        ap.error(f"unknown task(s) {bad}; known: {TASKS}")
    version = peer_version(ns.peer_python)
    from importlib.metadata import version as dist_version

    from tests.notebook_live.conftest import start_collab_server

    with tempfile.TemporaryDirectory() as tmp, start_collab_server(Path(tmp)) as server:
        cells = [(cid, BASE[cid]) for cid in IDS]
        server.new_notebook("kli.ipynb", cells)
        server.new_notebook("peer.ipynb", cells)
        kernel_id = server.start_session("kli.ipynb")
        began = time.monotonic()
        peer_log = Path(tmp) / "peer.log"
        try:
            results = anyio.run(run_all, server, kernel_id, ns.peer_python, peer_log, ns.repeat,
                                only)
        except BaseException:
            if peer_log.exists():
                print("the peer's log, last lines:\n" + peer_log.read_text()[-3000:],
                      file=sys.stderr)
            raise
        took = time.monotonic() - began
    load = os.getloadavg()[0]
    print(f"jupyter-mcp-server {version} (from {ns.peer_python}); jupyter-collaboration "
          f"{dist_version('jupyter-collaboration')}; repeat {ns.repeat}; {took:.0f} s; load "
          f"average {load:.1f} on {os.cpu_count()} CPUs\n")
    print(table(results))
    odd = odd_outcomes(results)
    if odd:
        print("\nOutcomes outside the columns:\n" + "\n".join(odd))
    if ns.json:
        Path(ns.json).write_text(json.dumps({
            "peer": {"name": "jupyter-mcp-server", "version": version},
            "repeat": ns.repeat, "think_s": THINK, "type_every_s": TYPE_EVERY,
            "tasks": TASK_TITLES,
            "outcomes": {name: [o.__dict__ for o in outs] for name, outs in results.items()},
        }, indent=1))


if __name__ == "__main__":
    main()
