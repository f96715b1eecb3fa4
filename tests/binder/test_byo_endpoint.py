"""bring_your_own_agent.ipynb with a model endpoint configured: the real-model path works.

A remote model cannot exist here, so a local HTTP server stands in for an OpenAI-compatible
chat-completions endpoint (the one thing this test fakes; tests/endpoint.py). It answers from the conversation it
receives — read the file, edit the line whose anchor the read result shows, then answer — and
records every request, so the test checks what the notebook really sent: the model name, the
bearer key, the tools in the OpenAI shape built from ``specs()``, and the tool results.
The notebook runs on the ``kli`` kernel of the environment under test.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, ClassVar

import nbformat
import pytest
from nbclient import NotebookClient

from kli.tools.registry import REGISTRY
from tests.endpoint import ScriptedEndpoint, answer, calls

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "binder" / "bring_your_own_agent.ipynb"


def _script(request: dict[str, Any]) -> dict[str, Any]:
    """Read the file, edit the line whose anchor the read result shows, then answer."""
    tool_messages = [m for m in request["messages"] if m["role"] == "tool"]
    n = len(tool_messages)
    # As a strict model calls: every parameter present, null for the ones not meant.
    if not tool_messages:
        return calls(("read", {"path": "calc.py", "start": None, "end": None, "raw": None}), n=n)
    if len(tool_messages) == 1:
        found = re.search(r"^(\d+:[0-9a-f]{2})\|    return a - b$", tool_messages[0]["content"],
                          re.M)
        anchor = found.group(1) if found else "0:00"
        return calls(("edit", {"input": f"@@ calc.py\n= {anchor}\n~    return a + b\n",
                               "repair": None, "accept_repair": None, "path": None}), n=n)
    return answer("fixed by the stand-in endpoint")


class _Endpoint:
    """What the scripted endpoint of the running test received (tests/endpoint.py)."""

    requests: ClassVar[list[dict[str, Any]]] = []
    headers_seen: ClassVar[list[dict[str, str]]] = []


@pytest.fixture
def endpoint() -> Any:
    server = ScriptedEndpoint(_script)
    _Endpoint.requests, _Endpoint.headers_seen = server.requests, server.headers
    with server as url:
        yield url


@pytest.mark.kernel
def test_notebook_drives_a_configured_endpoint_through_the_tools(
    endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", endpoint)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("KLI_MODEL", "stand-in-model")
    work = tmp_path / "binder"
    work.mkdir()
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(nb, kernel_name="kli", timeout=120, startup_timeout=90, allow_errors=True,
                   resources={"metadata": {"path": str(work)}}).execute()

    outputs = [o for c in nb.cells for o in c.get("outputs", [])]
    assert not [o for o in outputs if o["output_type"] == "error"]
    text = "".join(o.get("text", "") for o in outputs if o["output_type"] == "stream")
    assert "final answer: fixed by the stand-in endpoint" in text

    requests = _Endpoint.requests
    assert len(requests) == 3
    first = requests[0]
    assert first["model"] == "stand-in-model"
    assert _Endpoint.headers_seen[0]["Authorization"] == "Bearer sk-test"
    assert [t["type"] for t in first["tools"]] == ["function"] * len(first["tools"])
    assert [t["function"]["name"] for t in first["tools"]] == REGISTRY.names("kli")
    assert all(t["function"]["strict"] is True for t in first["tools"])  # OpenAI strict format
    read = next(t["function"]["parameters"] for t in first["tools"]
                if t["function"]["name"] == "read")
    assert read["required"] == ["path", "start", "end", "raw"]
    assert first["messages"][0]["role"] == "system" and first["messages"][1]["role"] == "user"
    read_result = requests[1]["messages"][-1]
    assert read_result["role"] == "tool" and "5:b8|    return a - b" in read_result["content"]
    edit_result = requests[2]["messages"][-1]["content"]
    assert edit_result.startswith("Edited calc.py (+1 -1)")
    # the endpoint's edit landed; then the notebook's scripted stand-in fixed the same bug again
    assert (work / "demo" / "byo" / "calc.py").read_text().count("return a + b") == 1
