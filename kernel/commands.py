"""The kernel package's subcommands of the ``kli`` command: ``kli mcp`` and ``kli ai``.

They are registered in the entry point group ``kli.commands`` (pyproject.toml), which the
``kli`` command (``kli.tools.cli``) lists: the tools name no host module, and the arrow goes from
the host to the tools. Each is ``main(argv) -> int``; its first docstring line is its line in
``kli --help``, and its module is imported only when the subcommand runs.
"""

from __future__ import annotations


def mcp(argv: list[str]) -> int:
    """serve a live kli kernel's tools over MCP (see kli mcp --help)"""
    from kli.kernel.mcp.cli import main

    return int(main(argv))


def ai(argv: list[str]) -> int:
    """put kli's tools on Jupyter AI's MCP server, or take them off (kli ai enable | disable | status)"""
    from kli.kernel.ai.optin import main

    return int(main(argv))
