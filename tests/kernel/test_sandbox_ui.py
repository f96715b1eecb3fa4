"""The person sees and switches the box (docs/sandbox.md) in a real kernel: the ``kli.ui`` hello
carries it, a ``sandbox`` request switches it (kept per project as approval is) and every UI is
told, ``%kli sandbox`` / ``%kli status`` say what it is and what it stops, and an agent's code
cannot switch it. Each message is validated against the protocol's schema."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema

from kli.kernel import protocol as P


def _valid(shape: P.Shape, data: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator(P.schema_of(shape)).validate(data)


def _text(outputs: list[dict[str, Any]]) -> str:
    return "".join(o["content"].get("text", "") for o in outputs)


def test_the_hello_says_the_box_is_off_with_what_it_would_stop(kernel: Any) -> None:
    _ui, hello = kernel.open_comm("kli.ui")
    _valid(P.UI_HELLO, hello)
    box = hello["sandbox"]
    assert box["mode"] == "off" and box["state"] == "off"
    assert "full powers" in box["said"]
    assert any("kernel exploit" in line for line in box["does_not_stop"])


def test_the_panels_switch_turns_the_box_on_kept_and_every_ui_hears_it(kernel: Any,
                                                                      kroot: Path) -> None:
    ui, _hello = kernel.open_comm("kli.ui")
    other, _ = kernel.open_comm("kli.ui")
    start = len(kernel.seen)
    try:
        reply = kernel.request(ui, {"op": "sandbox", "mode": "on"})
        _valid(P.SANDBOX, reply)
        want = "commands" if shutil.which("bwrap") else "unavailable"
        assert reply["box"]["state"] == want
        assert reply["box"]["mode"] == "on"
        told = [d for d in kernel.comm_data(other, start) if d.get("op") == "sandbox"]
        assert told and told[0]["box"]["state"] == want
        kept = json.loads((kroot / ".kli" / "settings.json").read_text())
        assert kept["sandbox"] == {"mode": "on", "network": "off"}
        _reply, outputs = kernel.execute("%kli status")
        text = _text(outputs)
        assert "approval: file auto, shell auto, eval auto" in text
        if want == "commands":
            assert "box: on for shell commands" in text and "it stops:" in text
        else:
            assert "box: NOT made" in text
        reply = kernel.request(ui, {"op": "sandbox", "network": "all"})
        assert reply["box"]["network"] == "all"
        bad = kernel.request(ui, {"op": "sandbox", "network": ["pypi.org"]})
        assert bad["op"] == "error"
    finally:
        kernel.request(ui, {"op": "sandbox", "mode": "off", "network": "off"})
    assert json.loads((kroot / ".kli" / "settings.json").read_text())["sandbox"]["mode"] == "off"


def test_an_agents_code_cannot_switch_the_box_off(kernel: Any, kroot: Path) -> None:
    ui, _hello = kernel.open_comm("kli.ui")
    agent, _ = kernel.open_comm("kli.agent", {"label": "agent"})
    try:
        kernel.request(ui, {"op": "sandbox", "mode": "on"})
        if shutil.which("bwrap") is None:
            return  # eval is refused anyway (the box cannot be made), tested elsewhere
        reply = kernel.call(agent, "eval", {"code": "get_ipython().run_line_magic("
                                                    "'kli', 'sandbox off')"})
        assert not reply["ok"] and "sandbox_outside" in json.dumps(reply)
        box = json.loads((kroot / ".kli" / "settings.json").read_text())["sandbox"]
        assert box["mode"] == "on"
    finally:
        kernel.request(ui, {"op": "sandbox", "mode": "off"})
