"""A scripted OpenAI-compatible model endpoint on 127.0.0.1 — NOT a model.

A remote model cannot exist in these tests, so this server stands in for one: the one thing
the tests fake. ``script(request)`` returns the assistant message to answer with (a dict:
``content``, ``tool_calls``), whichever of OpenAI's two wire APIs asked:

- ``POST /v1/chat/completions``: one JSON response or, when the request asks ``stream: true``,
  server-sent events the way OpenAI streams (the text in pieces, each tool call's arguments in
  pieces, then the finish reason, then a usage chunk when ``stream_options.include_usage`` asks
  for one).
- ``POST /v1/responses`` (the Responses API, which Codex speaks): the same message as output
  items — a ``message`` with ``output_text``, a ``function_call`` per tool call (its ``call_id``
  the tool call's id) — streamed as the Responses API's typed events (``response.created``,
  ``response.output_item.added``, text and arguments deltas in pieces,
  ``response.output_item.done``, ``response.completed`` with usage), or whole when the request
  does not stream.
- ``POST /v1/messages`` (Anthropic's Messages API, which Claude Code speaks): the same message
  as content blocks — ``text``, a ``tool_use`` per tool call — streamed as Anthropic's events
  (``message_start``, ``content_block_start`` / ``_delta`` / ``_stop`` with text and
  ``input_json_delta`` pieces, ``message_delta`` with the stop reason and usage,
  ``message_stop``), or whole.

:func:`tool_outputs` reads the tool results a Responses or Messages request carries.

Every request and its path and headers are recorded. Usage is counted crudely (characters / 4)
but reported as a provider does, so tests can check it is carried through.

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


def _text(value: Any) -> str:
    if isinstance(value, list):  # content parts
        return "".join(str(p.get("text", "")) for p in value if isinstance(p, dict))
    return str(value)


def tool_outputs(request: dict[str, Any]) -> list[str]:
    """The tool results a Responses API request (its ``function_call_output`` items) or a
    Messages API request (its users' ``tool_result`` blocks) carries, as text, in order."""
    out = [_text(item.get("output")) for item in request.get("input") or []
           if isinstance(item, dict) and item.get("type") == "function_call_output"]
    for message in request.get("messages") or []:
        if message.get("role") == "user" and isinstance(message.get("content"), list):
            out += [_text(block.get("content")) for block in message["content"]
                    if isinstance(block, dict) and block.get("type") == "tool_result"]
    return out


def _content_blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    """An assistant message as Anthropic Messages API content blocks."""
    blocks: list[dict[str, Any]] = []
    if message.get("content"):
        blocks.append({"type": "text", "text": message["content"]})
    for call in message.get("tool_calls") or []:
        blocks.append({"type": "tool_use", "id": f"toolu_{call['id']}",
                       "name": call["function"]["name"],
                       "input": json.loads(call["function"]["arguments"] or "{}")})
    return blocks


def _output_items(message: dict[str, Any]) -> list[dict[str, Any]]:
    """An assistant message as Responses API output items."""
    items: list[dict[str, Any]] = []
    if message.get("content"):
        items.append({"type": "message", "id": "msg_scripted", "role": "assistant",
                      "status": "completed",
                      "content": [{"type": "output_text", "text": message["content"],
                                   "annotations": []}]})
    for call in message.get("tool_calls") or []:
        item = {"type": "function_call", "id": f"fc_{call['id']}", "status": "completed",
                "call_id": call["id"], "name": call["function"]["name"],
                "arguments": call["function"]["arguments"]}
        if call.get("namespace"):  # a tool of a namespace the request offered (Codex's MCP)
            item["namespace"] = call["namespace"]
        items.append(item)
    return items


def _usage(request: dict[str, Any], message: dict[str, Any]) -> dict[str, int]:
    prompt = len(json.dumps(request.get("messages") or request.get("input") or [])) // 4
    completion = max(1, len(json.dumps(message)) // 4)
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion}


class ScriptedEndpoint:
    """The server; ``requests`` / ``headers`` what it received, in order."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.headers: list[dict[str, str]] = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:
                path = self.path.split("?", 1)[0].rstrip("/")
                if path not in ("/v1/chat/completions", "/v1/responses", "/v1/messages"):
                    self.send_error(404)
                    return
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                endpoint.requests.append(request)
                endpoint.paths.append(path)
                endpoint.headers.append(dict(self.headers))
                message = endpoint.script(request)
                if path == "/v1/messages":
                    if request.get("stream"):
                        self._messages_stream(request, message)
                    else:
                        self._json(self._message(request, message))
                elif path == "/v1/responses":
                    if request.get("stream"):
                        self._responses_stream(request, message)
                    else:
                        self._json(self._response(request, message))
                elif request.get("stream"):
                    self._stream(request, message)
                else:
                    self._whole(request, message)

            def _json(self, value: dict[str, Any]) -> None:
                body = json.dumps(value).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            @staticmethod
            def _response(request: dict[str, Any], message: dict[str, Any]) -> dict[str, Any]:
                usage = _usage(request, message)
                return {"id": "resp_scripted", "object": "response", "created_at": 0,
                        "status": "completed", "model": request.get("model", ""),
                        "output": _output_items(message),
                        "usage": {"input_tokens": usage["prompt_tokens"],
                                  "output_tokens": usage["completion_tokens"],
                                  "total_tokens": usage["total_tokens"]}}

            @staticmethod
            def _message(request: dict[str, Any], message: dict[str, Any]) -> dict[str, Any]:
                usage = _usage(request, message)
                return {"id": "msg_scripted", "type": "message", "role": "assistant",
                        "model": request.get("model", ""), "content": _content_blocks(message),
                        "stop_reason": "tool_use" if message.get("tool_calls") else "end_turn",
                        "stop_sequence": None,
                        "usage": {"input_tokens": usage["prompt_tokens"],
                                  "output_tokens": usage["completion_tokens"]}}

            def _typed_events(self) -> Callable[..., None]:
                """Start a stream of typed server-sent events (Anthropic's and the Responses
                API's shape); the function that sends one."""
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()

                def send(kind: str, **data: Any) -> None:
                    text = json.dumps({"type": kind, **data})
                    self.wfile.write(f"event: {kind}\ndata: {text}\n\n".encode())
                    self.wfile.flush()
                return send

            def _messages_stream(self, request: dict[str, Any], message: dict[str, Any]) -> None:
                send = self._typed_events()
                whole = self._message(request, message)

                send("message_start", message={**whole, "content": [], "stop_reason": None,
                                               "usage": {**whole["usage"], "output_tokens": 1}})
                for index, block in enumerate(whole["content"]):
                    if block["type"] == "text":
                        send("content_block_start", index=index,
                             content_block={"type": "text", "text": ""})
                        for i in range(0, len(block["text"]), PIECE):
                            send("content_block_delta", index=index, delta={
                                "type": "text_delta", "text": block["text"][i:i + PIECE]})
                    else:
                        send("content_block_start", index=index,
                             content_block={**block, "input": {}})
                        args = json.dumps(block["input"])
                        for i in range(0, len(args), PIECE):
                            send("content_block_delta", index=index, delta={
                                "type": "input_json_delta", "partial_json": args[i:i + PIECE]})
                    send("content_block_stop", index=index)
                send("message_delta", delta={"stop_reason": whole["stop_reason"],
                                             "stop_sequence": None},
                     usage={"output_tokens": whole["usage"]["output_tokens"]})
                send("message_stop")
                self.close_connection = True

            def _responses_stream(self, request: dict[str, Any], message: dict[str, Any]) -> None:
                send = self._typed_events()
                whole = self._response(request, message)

                send("response.created", response={**whole, "status": "in_progress",
                                                   "output": []})
                for index, item in enumerate(whole["output"]):
                    if item["type"] == "message":
                        send("response.output_item.added", output_index=index,
                             item={**item, "status": "in_progress", "content": []})
                        text = item["content"][0]["text"]
                        for i in range(0, len(text), PIECE):
                            send("response.output_text.delta", item_id=item["id"],
                                 output_index=index, content_index=0, delta=text[i:i + PIECE])
                    else:
                        send("response.output_item.added", output_index=index,
                             item={**item, "status": "in_progress", "arguments": ""})
                        args = item["arguments"]
                        for i in range(0, len(args), PIECE):
                            send("response.function_call_arguments.delta", item_id=item["id"],
                                 output_index=index, delta=args[i:i + PIECE])
                    send("response.output_item.done", output_index=index, item=item)
                send("response.completed", response=whole)
                self.close_connection = True

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
