"""Undo takes back what an agent's call changed in the live image, in a real kernel (through
jupyter_client): each kind of change — in place, rebound, created, deleted, a module
attribute, too large, not copyable — taken back by the person's ``%kli undo`` or the panel's
undo request, and not taken back over a value the person set after the call unless forced
(docs/live-image.md, "Undo and the image")."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.kernel


def _text(outputs: list[dict[str, Any]]) -> str:
    parts = []
    for m in outputs:
        c = m["content"]
        parts.append(c.get("text") or (c.get("data") or {}).get("text/plain", "")
                     or "\n".join(c.get("traceback") or []))
    return "\n".join(parts)


def value(kernel: Any, expr: str) -> str:
    """``repr(expr)`` in the kernel, as the person's cell sees it."""
    _reply, out = kernel.execute(f"print(repr(({expr})))")
    return _text(out).strip()


def test_an_agents_eval_is_taken_back_in_the_image_names_and_contents(kernel: Any) -> None:
    kernel.execute("items = [1, 2]\nalias = items\nold_df_like = {'a': 1}\nx = 'before'\n"
                   "gone = 'kept'")
    agent, _ = kernel.open_comm("kli.agent", {"label": "image-bot"})
    r = kernel.call(agent, "eval", {"code": "items.append(3)\nold_df_like['b'] = 2\n"
                                            "x = 'agent'\nmade = 42\ndel gone"})
    assert r["ok"], r["text"]
    change = r["details"]["change"]
    assert "live image" not in r["text"]  # all of it can be undone: said in details only
    [image] = r["details"]["image"]
    assert image["created"] == ["made"] and image["rebound"] == ["x"]
    assert image["deleted"] == ["gone"] and sorted(image["mutated"]) == ["items", "old_df_like"]
    listed = _text(kernel.execute("%kli changes image-bot")[1])
    assert change in listed and "image:" in listed
    _reply, out = kernel.execute(f"%kli undo {change}")
    assert "took back change" in _text(out), _text(out)
    assert value(kernel, "items, alias is items, old_df_like") == "([1, 2], True, {'a': 1})"
    assert value(kernel, "x, gone, 'made' in dir()") == "('before', 'kept', False)"
    _reply, out = kernel.execute(f"%kli redo {change}")
    assert value(kernel, "items, x, made, 'gone' in dir()") == "([1, 2, 3], 'agent', 42, False)"
    kernel.close_comm(agent)


def test_the_panels_undo_puts_a_dataframe_back_in_the_same_object(kernel: Any) -> None:
    kernel.execute("import pandas as pd\ndf = pd.DataFrame({'a': [1, 2, 3]})\nview = df")
    agent, _ = kernel.open_comm("kli.agent", {"label": "frame-bot"})
    ui, _ = kernel.open_comm("kli.ui", {"replay": 0})
    r = kernel.call(agent, "eval", {"code": "df['b'] = df['a'] * 10\ndf.loc[0, 'a'] = 99"})
    assert r["ok"] and r["details"]["image"][0]["mutated"] == ["df"], r["text"]
    reply = kernel.request(ui, {"op": "undo", "change": r["details"]["change"]})
    assert reply["ok"], reply["text"]
    assert value(kernel, "list(df.columns), df['a'].tolist(), view is df") == "(['a'], [1, 2, 3], True)"
    kernel.close_comm(agent)
    kernel.close_comm(ui)


def test_a_module_attribute_the_agent_redefined_is_put_back(kernel: Any, kroot: Path) -> None:
    (kroot / "calc_mod.py").write_text("def add(a, b):\n    return a + b\n")
    kernel.execute("import calc_mod")
    agent, _ = kernel.open_comm("kli.agent", {"label": "module-bot"})
    r = kernel.call(agent, "eval", {"code": "calc_mod.add = lambda a, b: a - b"})
    assert r["ok"] and "calc_mod.add" in r["details"]["image"][0]["rebound"], r["text"]
    r2 = kernel.call(agent, "redefine", {"definition": "def add(a, b):\n    return a * b\n",
                                         "target": "calc_mod.add", "code": "calc_mod.add(2, 3)"})
    assert r2["ok"] and "[line 1] 6" in r2["text"], r2["text"]
    assert value(kernel, "calc_mod.add(2, 3)") == "6"
    _reply, out = kernel.execute("%kli undo --session module-bot --since 00:00")
    assert "took back 2 changes" in _text(out), _text(out)
    assert value(kernel, "calc_mod.add(2, 3)") == "5"
    kernel.close_comm(agent)


def test_what_is_too_large_or_cannot_be_copied_is_named_when_recorded_and_undone(
        kernel: Any, kroot: Path) -> None:
    settings = kroot / ".kli" / "settings.json"
    settings.parent.mkdir(exist_ok=True)
    before = settings.read_text() if settings.exists() else None
    settings.write_text(json.dumps({"image_undo_object_mb": 1}))
    try:
        kernel.execute("import socket\nbig = bytearray(2 * 1024 * 1024)\nsock = socket.socket()")
        agent, _ = kernel.open_comm("kli.agent", {"label": "large-bot"})
        r = kernel.call(agent, "eval", {"code": "big[0] = 7\nsock.settimeout(3)\nsmall = 1"})
        assert r["ok"], r["text"]
        notes = r["details"]["image"][0]["not_kept"]
        assert "[live image: created small; big was changed in place" in r["text"], r["text"]
        assert any(n.startswith("big was changed in place and is too large to restore") for n in notes)
        assert any(n.startswith("sock may have been changed in place") and "cannot be copied" in n
                   for n in notes), notes
        _reply, out = kernel.execute(f"%kli undo {r['details']['change']}")
        said = _text(out)
        assert "Not taken back: " in said and "big was changed in place" in said, said
        assert "re-run" in said
        assert value(kernel, "big[0], 'small' in dir()") == "(7, False)"
        kernel.execute("sock.close()")
        kernel.close_comm(agent)
    finally:
        if before is None:
            settings.unlink()
        else:
            settings.write_text(before)


def test_a_name_the_person_changed_after_the_call_is_not_overwritten_unless_forced(kernel: Any) -> None:
    kernel.execute("count = 1\nlog = ['a']")
    agent, _ = kernel.open_comm("kli.agent", {"label": "late-bot"})
    r = kernel.call(agent, "eval", {"code": "count = 2\nlog.append('agent')"})
    change = r["details"]["change"]
    kernel.execute("count = 3\nlog.append('person')")
    _reply, out = kernel.execute(f"%kli undo {change}")
    said = _text(out)
    assert "undo refused: in the live image, count was rebound, log was changed" in said, said
    assert value(kernel, "count, log") == "(3, ['a', 'agent', 'person'])"
    _reply, out = kernel.execute(f"%kli undo {change} --force")
    assert "took back change" in _text(out), _text(out)
    assert value(kernel, "count, log") == "(1, ['a'])"
    kernel.close_comm(agent)


def test_a_held_eval_accepted_by_the_person_is_recorded_and_undone_with_its_image(kernel: Any) -> None:
    ui, _ = kernel.open_comm("kli.ui", {"replay": 0})
    agent, _ = kernel.open_comm("kli.agent", {"label": "held-bot"})
    kernel.execute("held_list = [1]")
    kernel.request(ui, {"op": "approval", "mode": "review", "kind": "eval"})
    try:
        e = kernel.call(agent, "eval", {"code": "held_list.append(2)\nheld_new = 'x'"})
        assert e["details"]["status"] == "pending", e["text"]
        a = kernel.request(ui, {"op": "accept", "candidate": e["details"]["proposal"]})
        assert a["ok"], a["text"]
        assert value(kernel, "held_list, held_new") == "([1, 2], 'x')"
        listed = _text(kernel.execute("%kli changes held-bot")[1])
        change = next(w for w in listed.split() if w.startswith("ch-"))
        assert "image: held_new, held_list" in listed or "image: held_list, held_new" in listed, listed
    finally:
        kernel.request(ui, {"op": "approval", "mode": "auto"})
    _reply, out = kernel.execute(f"%kli undo {change}")
    assert "took back change" in _text(out), _text(out)
    assert value(kernel, "held_list, 'held_new' in dir()") == "([1], False)"
    kernel.close_comm(agent)
    kernel.close_comm(ui)


def test_an_agents_undo_held_for_review_changes_the_image_only_when_the_person_accepts(
        kernel: Any) -> None:
    ui, _ = kernel.open_comm("kli.ui", {"replay": 0})
    agent, _ = kernel.open_comm("kli.agent", {"label": "review-bot"})
    kernel.execute("reviewed = 'person'")
    r = kernel.call(agent, "eval", {"code": "reviewed = 'agent'"})
    kernel.request(ui, {"op": "approval", "mode": "review", "kind": "file"})
    try:
        u = kernel.call(agent, "undo", {"change": r["details"]["change"]})
        assert u["details"].get("status") == "pending", u["text"]
        assert "put back in the live image: image: reviewed" in u["text"], u["text"]
        assert value(kernel, "reviewed") == "'agent'"  # nothing changed before the Accept
        a = kernel.request(ui, {"op": "accept", "candidate": u["details"]["proposal"]})
        assert a["ok"], a["text"]
        assert value(kernel, "reviewed") == "'person'"
    finally:
        kernel.request(ui, {"op": "approval", "mode": "auto"})
    kernel.close_comm(agent)
    kernel.close_comm(ui)


def test_cells_an_agent_ran_are_taken_back_in_the_image_with_their_outputs(
        kernel: Any, kroot: Path) -> None:
    nb = {"cells": [{"cell_type": "code", "execution_count": None, "id": "rc1", "metadata": {},
                     "outputs": [], "source": "ran_value = 5\nrc_items.append(1)\nprint('ran')"}],
          "metadata": {"kernelspec": {"name": "kli", "display_name": "kli", "language": "python"}},
          "nbformat": 4, "nbformat_minor": 5}
    (kroot / "rc.ipynb").write_text(json.dumps(nb))
    saved = (kroot / "rc.ipynb").read_bytes()
    kernel.execute("rc_items = []")
    agent, _ = kernel.open_comm("kli.agent", {"label": "cells-bot"})
    r = kernel.call(agent, "run_cells", {"path": "rc.ipynb", "cell": "rc1"})
    assert r["ok"], r["text"]
    [image] = r["details"]["image"]
    assert image["created"] == ["ran_value"] and image["mutated"] == ["rc_items"], image
    assert value(kernel, "ran_value, rc_items") == "(5, [1])"
    _reply, out = kernel.execute(f"%kli undo {r['details']['change']}")
    assert "took back change" in _text(out), _text(out)
    assert value(kernel, "'ran_value' in dir(), rc_items") == "(False, [])"
    assert (kroot / "rc.ipynb").read_bytes() == saved  # its outputs went with it
    kernel.close_comm(agent)


def test_a_trace_and_a_reloaded_module_are_taken_back(kernel: Any, kroot: Path) -> None:
    (kroot / "reload_mod.py").write_text("def twice(x):\n    return 2 * x\n")
    kernel.execute("import reload_mod\ndef traced_fn(x):\n    return x + 1\noriginal_fn = traced_fn")
    agent, _ = kernel.open_comm("kli.agent", {"label": "trace-bot"})
    t = kernel.call(agent, "trace", {"function": "traced_fn"})
    assert t["ok"] and t["details"]["image"][0]["rebound"] == ["traced_fn"], t["text"]
    (kroot / "reload_mod.py").write_text("def twice(x):\n    return 3 * x\n")
    r = kernel.call(agent, "redefine", {"reload": "reload_mod", "code": "reload_mod.twice(2)"})
    assert r["ok"] and "[line 1] 6" in r["text"], r["text"]
    assert "reload_mod.twice" in r["details"]["image"][0]["rebound"], r["details"]["image"]
    _reply, out = kernel.execute("%kli undo --session trace-bot --since 00:00")
    assert "took back 2 changes" in _text(out), _text(out)
    assert value(kernel, "traced_fn is original_fn, reload_mod.twice(2)") == "(True, 4)"
    kernel.close_comm(agent)


@pytest.mark.parametrize("sender", ["agent", "panel"])
def test_an_undo_of_the_image_sent_while_a_cell_runs_waits_for_the_cell(
        kernel: Any, sender: str) -> None:
    """An undo that takes back a live image part, asked while a person's cell runs (by an
    agent's ``undo`` or the panel's), waits for the cell to end: the cell never sees a name
    taken away between its statements. A file-only undo is still answered at once
    (tests/kernel/test_review*.py)."""
    agent, _ = kernel.open_comm("kli.agent", {"label": "wait-bot"})
    ui, _ = kernel.open_comm("kli.ui", {"replay": 0})
    try:
        made = kernel.call(agent, "eval", {"code": f"made_by_{sender} = 1"})
        change = made["details"]["change"]
        start = len(kernel.seen)
        cell = kernel.kc.execute(  # reads the name 20 times over 2 s
            "import time\nread = []\nfor _ in range(20):\n"
            f"    read.append(made_by_{sender})\n    time.sleep(0.1)\nprint('cell read', len(read))")
        kernel.wait_for(lambda m: m["parent_header"].get("msg_id") == cell
                        and m["msg_type"] == "status"
                        and m["content"]["execution_state"] == "busy", since=start)
        time.sleep(0.3)  # the cell is in its loop
        if sender == "agent":
            undone = kernel.request(agent, {"op": "call", "tool": "undo",
                                            "args": {"change": change}}, timeout=60)
        else:
            undone = kernel.request(ui, {"op": "undo", "change": change}, timeout=60)
        assert undone["ok"], undone["text"]
        ended = kernel.wait_for(lambda m: m["parent_header"].get("msg_id") == cell
                                and m["msg_type"] in ("stream", "error"), since=start)
        assert ended["msg_type"] == "stream" and "cell read 20" in ended["content"]["text"], ended
        assert value(kernel, f"'made_by_{sender}' in dir()") == "False"  # taken back, after
    finally:
        kernel.close_comm(ui)
        kernel.close_comm(agent)
