"""The review a host asks of a call for notebooks on other kernels (the ``review`` of a ``call``
request, kli.kernel.ai.reach), in a real kernel through jupyter_client: ``reach`` answers the
kernel's modes, root and box; a call whose kind the request names is held whatever the kernel's
own mode says, and its words name the notebook under review; a kind not named runs; a malformed
``review`` is refused before anything runs. The route and the persona through a real server:
tests/ai/acp/test_route_locked.py."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.kernel


def test_reach_answers_the_modes_the_root_and_whether_the_box_confines(
        kernel: Any, kroot: Path) -> None:
    agent, _ = kernel.open_comm("kli.agent", {"label": "host"})
    try:
        answer = kernel.request(agent, {"op": "reach"})
        assert answer["op"] == "reach"
        assert answer["approval"] == {"file": "auto", "shell": "auto", "eval": "auto"}
        assert answer["root"] == os.path.realpath(kroot) and answer["boxed"] is False
    finally:
        kernel.close_comm(agent)


def test_a_call_of_a_kind_the_host_holds_waits_naming_the_notebook_under_review(
        kernel: Any, kroot: Path) -> None:
    agent, _ = kernel.open_comm("kli.agent", {"label": "host"})
    ui, _ = kernel.open_comm("kli.ui", {"replay": 0})
    try:
        marker = kroot / "floor-ran.txt"
        review = {"shell": ["a.ipynb"]}
        held = kernel.request(agent, {"op": "call", "tool": "bash", "review": review,
                                      "args": {"command": f"touch {marker}"}})
        assert held["ok"] and held["details"]["status"] == "pending", held["text"]
        assert "a.ipynb is under review for shell commands, and this bash can change it" \
            in held["text"], held["text"]
        assert not marker.exists()
        # A kind the host does not name runs as the kernel's own mode (auto) says.
        ran = kernel.request(agent, {"op": "call", "tool": "write", "review": review,
                                     "args": {"path": "floor.txt", "content": "x\n"}})
        assert ran["ok"] and ran["details"].get("status") != "pending", ran["text"]
        assert (kroot / "floor.txt").read_text() == "x\n"
        # Without the host's review the same bash runs.
        plain = kernel.call(agent, "bash", {"command": f"touch {marker}"})
        assert plain["ok"] and marker.exists(), plain["text"]
        kernel.request(ui, {"op": "reject", "candidate": held["details"]["proposal"]})
    finally:
        kernel.close_comm(ui)
        kernel.close_comm(agent)


@pytest.mark.parametrize("review", [["shell"], {"network": ["a.ipynb"]}, {"shell": "a.ipynb"},
                                    {"shell": [1]}])
def test_a_malformed_review_is_refused_and_nothing_runs(kernel: Any, kroot: Path,
                                                        review: Any) -> None:
    agent, _ = kernel.open_comm("kli.agent", {"label": "host"})
    try:
        marker = kroot / "malformed-ran.txt"
        reply = kernel.request(agent, {"op": "call", "tool": "bash", "review": review,
                                       "args": {"command": f"touch {marker}"}})
        assert reply["op"] == "error" and reply["error"] == "bad_request", reply
        assert "'review' must map action kinds" in reply["text"]
        assert not marker.exists()
    finally:
        kernel.close_comm(agent)
