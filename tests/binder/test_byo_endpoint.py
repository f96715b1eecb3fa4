"""bring_your_own_agent.ipynb with a model endpoint configured: the real-model path works.

A remote model cannot exist here, so a local HTTP server stands in for an OpenAI-compatible
chat-completions endpoint (the one thing this test fakes). It answers from the conversation it
receives — read the file, edit the line whose anchor the read result shows, then answer — and
records every request, so the test checks what the notebook really sent: the model name, the
bearer key, the tools in the OpenAI shape built from ``specs()``, and the tool results.
The notebook runs on the ``kli`` kernel of the environment under test.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import nbformat
import pytest
from nbclient import NotebookClient

from kli.tools.registry import REGISTRY

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "binder" / "bring_your_own_agent.ipynb"


class _Endpoint(BaseHTTPRequestHandler):
    requests: ClassVar[list[dict[str, Any]]] = []
    headers_seen: ClassVar[list[dict[str, str]]] = []

    def log_message(self, *args: Any) -> None:  # keep test output clean
        pass

    def _reply(self, message: dict[str, Any]) -> None:
        body = json.dumps({"id": "x", "object": "chat.completion",
                           "choices": [{"index": 0, "message": message,
                                        "finish_reason": "stop"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        if self.path != "/v1/chat/completions":
            self.send_error(404)
            return
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(request)
        type(self).headers_seen.append(dict(self.headers))
        tool_messages = [m for m in request["messages"] if m["role"] == "tool"]

        def call(name: str, args: dict[str, Any]) -> dict[str, Any]:
            return {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"call_{len(tool_messages)}", "type": "function",
                 "function": {"name": name, "arguments": json.dumps(args)}}]}

        # As a strict model calls: every parameter present, null for the ones not meant.
        if not tool_messages:
            self._reply(call("read", {"path": "calc.py", "start": None, "end": None,
                                      "raw": None}))
        elif len(tool_messages) == 1:
            found = re.search(r"^(\d+:[0-9a-f]{2})\|    return a - b$", tool_messages[0]["content"],
                              re.M)
            anchor = found.group(1) if found else "0:00"
            self._reply(call("edit", {"input": f"@@ calc.py\n= {anchor}\n~    return a + b\n",
                                      "repair": None, "accept_repair": None, "path": None}))
        else:
            self._reply({"role": "assistant", "content": "fixed by the stand-in endpoint"})


@pytest.fixture
def endpoint() -> Any:
    _Endpoint.requests, _Endpoint.headers_seen = [], []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Endpoint)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


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
