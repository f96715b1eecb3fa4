"""The person's review choice lasts when they keep it (issue 26): through the panel's `kli.ui`
comm a kept `review` is written to the project's settings file, a restarted kernel starts with
it (its hello and `%kli approval` say where it comes from), and a choice for this kernel only
is gone after the restart — said as such before it."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytestmark = pytest.mark.kernel

REVIEW = {"file": "review", "shell": "review", "eval": "review"}
AUTO = {"file": "auto", "shell": "auto", "eval": "auto"}


def restart(h: Any) -> None:
    h.km.restart_kernel(now=True)
    h.kc.wait_for_ready(timeout=60)
    h.execute("pass")
    h.settle(0.1)


def out(h: Any, code: str) -> str:
    _, outputs = h.execute(code)
    return "".join(o["content"].get("text", "") for o in outputs)


def test_a_kept_review_choice_survives_a_kernel_restart(fresh_kernel: Any) -> None:
    h = fresh_kernel
    settings = h.root / ".kli" / "settings.json"
    ui, hello = h.open_comm("kli.ui", {"replay": 0})
    assert hello["approval"] == AUTO and hello["approval_origin"] == "default"

    # Switched for this kernel only: said so, and gone after a restart.
    reply = h.request(ui, {"op": "approval", "mode": "review"})
    assert reply["approval"] == REVIEW and reply["origin"] == "kernel" and "kept" not in reply
    assert "this kernel only" in out(h, "%kli approval")
    restart(h)
    ui, hello = h.open_comm("kli.ui", {"replay": 0})
    assert hello["approval"] == AUTO and not settings.exists()

    # Kept: written to the project's settings file, and a restart starts with it.
    reply = h.request(ui, {"op": "approval", "mode": "review", "keep": True})
    assert reply["approval"] == REVIEW and reply["origin"] == "kept"
    assert reply["kept"] == str(settings) and reply["said"] == "kept in .kli/settings.json"
    assert json.loads(settings.read_text()) == {"approval": REVIEW}
    restart(h)
    ui, hello = h.open_comm("kli.ui", {"replay": 0})
    assert hello["approval"] == REVIEW and hello["approval_origin"] == "kept"
    assert hello["approval_kept"] == str(settings)
    assert out(h, "%kli approval").startswith(
        "approval: file review, shell review, eval review (kept in .kli/settings.json)")
    agent, _ = h.open_comm("kli.agent", {"label": "after restart"})
    held = h.call(agent, "write", {"path": "w.txt", "content": "w\n"})
    assert held["details"]["status"] == "pending" and not (h.root / "w.txt").exists()

    # A switch of a kept choice changes it where it is kept; --no-keep takes it out.
    reply = h.request(ui, {"op": "approval", "mode": "auto", "kind": "shell"})
    assert reply["origin"] == "kept"
    assert json.loads(settings.read_text())["approval"]["shell"] == "auto"
    said = out(h, "%kli approval --no-keep")
    assert "(this kernel only: a restart forgets it)" in said
    assert json.loads(settings.read_text()) == {}
    # a keep request with no mode: only where the modes are kept changes
    reply = h.request(ui, {"op": "approval", "keep": True})
    assert reply["approval"] == {"file": "review", "shell": "auto", "eval": "review"}
    assert reply["origin"] == "kept"
    h.close_comm(agent)
    h.close_comm(ui)
