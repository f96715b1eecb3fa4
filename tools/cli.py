"""The ``kli`` console script, generated from the registry.

    kli call TOOL '{"json": "args"}' [--root DIR] [--profile P]
    kli tools [--profile kli|slmcode|all]
    kli serve --stdio [--root DIR]
    kli mcp [--start | --newest | --connection-file F | --server-url U] [--transport http]
    kli ai enable | disable | status [--sys-prefix]

``mcp`` (serve a live kli kernel's tools over the Model Context Protocol) and ``ai`` (put them on
Jupyter AI's MCP server) are the kernel package's: a host package adds its subcommands in the
entry point group ``kli.commands`` (``COMMANDS``), each a ``main(argv)`` loaded only when it
runs, so ``tools/`` names no host module and imports nothing from the kernel, Jupyter or MCP
(``kli mcp --help`` lists its options).

``serve --stdio`` reads one JSON request per line — ``{"id": 1, "tool": "read", "args": {...}}``
(``{"id": 2, "op": "list", "profile": "kli"}`` returns the specs, ``{"id": 3, "op": "ping"}``
a pong) — and writes one JSON reply per line, all in one session, so a read and a following edit
share anchors. The envelope is the ``kli.agent`` comm's (docs/protocol.md: an ``id`` on every
request, the same error codes and texts for the same bad input); a bad line gets an error reply
``{"id", "ok": false, "error", "text"}`` and the loop goes on.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from importlib.metadata import EntryPoint, entry_points
from typing import Any, TextIO

from kli.tools.core.formats import FORMATS, in_format
from kli.tools.core.request import BadRequest, decode_line, parse_request
from kli.tools.core.result import ToolResult
from kli.tools.core.workspace import Workspace
from kli.tools.registry import ALL, PROFILE_CHOICES

# The entry point group of the subcommands a host package adds (the arrow goes from the
# hosts to tools/, never back): name -> ``main(argv) -> int``, its docstring's first line the
# help.
COMMANDS = "kli.commands"


def host_commands() -> dict[str, EntryPoint]:
    """The subcommands host packages add (entry point group ``COMMANDS``), by name."""
    return {ep.name: ep for ep in entry_points(group=COMMANDS)}


def _help(ep: EntryPoint) -> str:
    try:
        doc = ep.load().__doc__ or ""
    except Exception as exc:  # a broken host command must not break the others
        return f"(cannot be loaded: {type(exc).__name__}: {exc})"
    return doc.strip().splitlines()[0] if doc.strip() else f"see kli {ep.name} --help"


def _dump(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, default=str)


def handle_request(ws: Workspace, line: str) -> dict[str, Any]:
    """Answer one ``serve --stdio`` request line; never raises. The envelope is parsed by
    ``kli.tools.core.request`` exactly as the kernel's ``kli.agent`` comm parses it."""
    data = decode_line(line)
    request = data if isinstance(data, BadRequest) else parse_request(data, PROFILE_CHOICES)
    if isinstance(request, BadRequest):
        return {"id": request.id, "ok": False, "error": request.error, "text": request.text}
    if request.op == "ping":
        return {"id": request.id, "ok": True, "op": "pong"}
    if request.op == "cancel":  # lines are answered one at a time: nothing else is running
        return {"id": request.id, "ok": True, "op": "cancel", "request": request.data["request"],
                "found": False}
    if request.op == "list":
        profile = None if request.profile == ALL else request.profile
        return {"id": request.id, "ok": True, "specs": ws.specs(profile)}
    result = ws.call(request.tool, request.args, source="cli")
    return {"id": request.id, **result.to_json()}


def serve(ws: Workspace, stdin: TextIO, stdout: TextIO) -> int:
    for line in stdin:
        if not line.strip():
            continue
        stdout.write(_dump(handle_request(ws, line)) + "\n")
        stdout.flush()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kli", description="kli tools from the command line.")
    sub = parser.add_subparsers(dest="command", required=True)

    p_call = sub.add_parser("call", help="call one tool and print its result as JSON")
    p_call.add_argument("tool")
    p_call.add_argument("args", nargs="?", default="{}", help="the arguments as a JSON object")
    p_call.add_argument("--root", default=os.getcwd())

    p_tools = sub.add_parser("tools", help="print the JSON-Schema specs of the tools")
    p_tools.add_argument("--profile", default="kli", choices=PROFILE_CHOICES)
    p_tools.add_argument("--format", default=None, choices=list(FORMATS),
                         help="the tool list as that API takes it (default: plain specs)")

    p_prompt = sub.add_parser(
        "prompt", help="print the system prompt for an agent using a profile's tools")
    p_prompt.add_argument("--profile", default="kli", choices=PROFILE_CHOICES)

    p_serve = sub.add_parser("serve", help="answer JSON requests, one per line")
    p_serve.add_argument("--stdio", action="store_true", required=True)
    p_serve.add_argument("--root", default=os.getcwd())

    # A host's subcommand: its options are its own; they pass through unparsed here.
    hosts = host_commands()
    given = sys.argv[1:] if argv is None else argv
    listing = not given or given[0] in ("-h", "--help")  # only the full help shows their lines
    for name, ep in hosts.items():
        sub.add_parser(name, add_help=False, help=_help(ep) if listing else None)

    ns, rest = parser.parse_known_args(argv)
    if ns.command in hosts:
        host_main: Any = hosts[ns.command].load()
        return int(host_main(rest))
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    if ns.command == "tools":
        ws = Workspace(os.getcwd())
        specs = ws.specs(None if ns.profile == ALL else ns.profile)
        print(json.dumps(in_format(specs, ns.format) if ns.format else specs, indent=2))
        return 0
    if ns.command == "prompt":
        from kli.tools.agent import system_prompt

        print(system_prompt(ns.profile))
        return 0
    if ns.command == "serve":
        return serve(Workspace(ns.root), sys.stdin, sys.stdout)
    try:
        args = json.loads(ns.args)
    except json.JSONDecodeError as exc:
        result = ToolResult.error(
            f"arguments are not valid JSON ({exc.msg} at column {exc.colno}); pass one JSON "
            'object, e.g. \'{"path": "a.py"}\'.', error="bad_json")
    else:
        result = Workspace(ns.root).call(ns.tool, args, source="cli")
    print(_dump(result.to_json()))
    return 0 if result.ok else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
