"""A scripted OpenAI-compatible chat-completions endpoint on 127.0.0.1 — NOT a model.

A remote model cannot exist in these tests, so this server stands in for one: the one thing
the tests fake. ``script(request)`` returns the assistant message to answer with (a dict:
``content``, ``tool_calls``); the server answers ``POST /v1/chat/completions`` with it, as one
JSON response or, when the request asks ``stream: true``, as server-sent events the way OpenAI
streams (the text in pieces, each tool call's arguments in pieces, then the finish reason, then
a usage chunk when ``stream_options.include_usage`` asks for one). Every request and its
headers are recorded. Usage is counted crudely (characters / 4) but reported as a provider
does, so tests can check it is carried through.

    with ScriptedEndpoint(script) as url:   # http://127.0.0.1:PORT/v1
        ...
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Script = Callable[[dict[str, Any]], dict[str, Any]]
PIECE = 7  # characters per streamed piece: small, so rebuilding them is really exercised


def tool_call(name: str, args: dict[str, Any] | str, n: int = 0) -> dict[str, Any]:
    """One tool call of an assistant message (``args`` a dict, or raw text as sent)."""
    return {"id": f"call_{n}", "type": "function",
            "function": {"name": name, "arguments": args if isinstance(args, str)
                         else json.dumps(args)}}


def calls(*pairs: tuple[str, dict[str, Any] | str], n: int = 0) -> dict[str, Any]:
    """An assistant message asking for ``pairs`` (tool name, arguments), ids from ``n``."""
    return {"role": "assistant", "content": None,
            "tool_calls": [tool_call(name, args, n + i) for i, (name, args) in enumerate(pairs)]}


def answer(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def _usage(request: dict[str, Any], message: dict[str, Any]) -> dict[str, int]:
    prompt = len(json.dumps(request.get("messages", []))) // 4
    completion = max(1, len(json.dumps(message)) // 4)
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion}


class ScriptedEndpoint:
    """The server; ``requests`` / ``headers`` what it received, in order."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self.send_error(404)
                    return
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                endpoint.requests.append(request)
                endpoint.headers.append(dict(self.headers))
                message = endpoint.script(request)
                if request.get("stream"):
                    self._stream(request, message)
                else:
                    self._whole(request, message)

            def _whole(self, request: dict[str, Any], message: dict[str, Any]) -> None:
                body = json.dumps({
                    "id": "chatcmpl-scripted", "object": "chat.completion", "created": 0,
                    "model": request.get("model", ""),
                    "choices": [{"index": 0, "message": message,
                                 "finish_reason": "tool_calls" if message.get("tool_calls")
                                 else "stop"}],
                    "usage": _usage(request, message)}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _stream(self, request: dict[str, Any], message: dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                base = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk",
                        "created": 0, "model": request.get("model", "")}

                def send(choices: list[dict[str, Any]], **extra: Any) -> None:
                    data = json.dumps({**base, "choices": choices, **extra})
                    self.wfile.write(f"data: {data}\n\n".encode())
                    self.wfile.flush()

                send([{"index": 0, "delta": {"role": "assistant", "content": ""},
                       "finish_reason": None}])
                text = message.get("content") or ""
                for i in range(0, len(text), PIECE):
                    send([{"index": 0, "delta": {"content": text[i:i + PIECE]},
                           "finish_reason": None}])
                for index, call in enumerate(message.get("tool_calls") or []):
                    args = call["function"]["arguments"]
                    send([{"index": 0, "delta": {"tool_calls": [{
                        "index": index, "id": call["id"], "type": "function",
                        "function": {"name": call["function"]["name"], "arguments": ""}}]},
                        "finish_reason": None}])
                    for i in range(0, len(args), PIECE):
                        send([{"index": 0, "delta": {"tool_calls": [{
                            "index": index, "function": {"arguments": args[i:i + PIECE]}}]},
                            "finish_reason": None}])
                send([{"index": 0, "delta": {},
                       "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}])
                if (request.get("stream_options") or {}).get("include_usage"):
                    send([], usage=_usage(request, message))
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> str:
        self._thread.start()
        return self.url

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
