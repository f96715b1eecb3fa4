"""``kli mcp`` — a Model Context Protocol server over a live kli kernel.

Every MCP tool call becomes a tool call in a kli kernel through the ``kli.agent`` comm
(``kli.client``), so it runs in the notebook's image, shows in the notebook's activity panel
under its own session (labelled ``mcp: <client name>``), and a repair preview waits there for a
person's Accept. The tool list and JSON Schemas are the kernel's registry (``AgentClient.specs``).

Where the kernel comes from (one of):

- ``--start`` (the default): the server starts and owns a kernel whose root is ``--root``;
- ``--connection-file F``: the kernel of a connection file;
- ``--newest``: the newest running kernel (newest ``kernel-*.json`` in the Jupyter runtime dir);
- ``--server-url U --server-token T [--kernel-id K]``: a kernel of a Jupyter server (through its
  websocket: JupyterLab, a gateway, Binder).

When the kernel dies, the call that finds out returns an error naming what happened and how to
recover; with ``--start`` the server starts a fresh kernel at once, otherwise the next call
reconnects (to the same connection file, the newest kernel, or through the server).

Transports: stdio (the default) and streamable HTTP on 127.0.0.1 (``--transport http``), which
requires ``Authorization: Bearer TOKEN`` on every request.

The parts, one idea each:

- ``instructions`` — the MCP ``instructions`` text, per profile;
- ``targets`` — where the kernel is, and what a death of it means (advice; a restart when owned);
- ``bridge`` — MCP client sessions mapped onto agent connections, failures turned into results;
- ``server`` — the MCP handlers (tools/list, tools/call) over a bridge;
- ``stdio`` — the stdio transport, answering lines that are not JSON-RPC;
- ``auth`` — the bearer-token check of the HTTP transport;
- ``streamable_http`` — the streamable HTTP transport on 127.0.0.1;
- ``cli`` — the ``kli mcp`` command line (``main``).
"""
