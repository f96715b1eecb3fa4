"""``kli ai enable | disable | status | key``: the opt-in that puts kli's tools on Jupyter AI's MCP
server, and the key that locks them there.

jupyter-server-mcp serves its tools on ``http://localhost:<mcp_port>/mcp`` with no token, to any
local process; Jupyter AI gives that server to every agent of its chats. kli's tools (shell, eval,
edits) go there only after a person runs ``kli ai enable``, and answer only a caller that brings
this user's key in the ``X-Kli-Key`` header (or the Jupyter server's own token): everything
else gets a refusal. ``enable`` writes two files:

    <config dir>/jupyter_server_config.d/kli-jupyter-ai.json
    {"KliJupyterAI": {"mcp_tools": true}}

    <data dir>/kli/jupyter-ai.key          (the key: only this user may read it)

``<data dir>`` is the user's Jupyter data dir (``jupyter --data-dir``, ``JUPYTER_DATA_DIR``):
the key is the user's even when the switch is the environment's (``--sys-prefix``), so on a
shared machine every user's server has a key of its own. Jupyter AI hands the key on: at its
start the server puts it in the ``headers`` of Jupyter AI's built-in MCP entry
(``PersonaManager.builtin_mcp_servers``), which Jupyter AI gives every agent it starts from a
chat. An entry of a person's own for this endpoint in ``.jupyter/mcp_settings.json`` carries it
as ``{"name": "X-Kli-Key", "value": "<key>"}`` (``kli ai key`` prints the entry's header).

``<config dir>`` is the user's Jupyter config dir (``jupyter --config-dir``, ``JUPYTER_CONFIG_DIR``)
or, with ``--sys-prefix``, ``<sys.prefix>/etc/jupyter`` (this environment only). The write is
atomic. ``kli ai disable`` removes that file again. The Jupyter server reads the switch when it
starts (``kli.kernel.ai.mcp_route.tool_specs``): restart it after either command.

The switch is what the nearest ``kli-jupyter-ai.json`` on the Jupyter config path says, in
jupyter_core's order (``jupyter_config_path``: ``$JUPYTER_CONFIG_PATH``, the user's dir, the
environment's, the system's); none: off.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

FILE = os.path.join("jupyter_server_config.d", "kli-jupyter-ai.json")
SECTION, KEY = "KliJupyterAI", "mcp_tools"
KEY_FILE = os.path.join("kli", "jupyter-ai.key")
KEY_HEADER = "X-Kli-Key"
KEY_BYTES = 32  # of randomness in a key (secrets.token_urlsafe)


def key_path() -> str:
    """Where this user's key lives: ``<Jupyter data dir>/kli/jupyter-ai.key``."""
    from jupyter_core.paths import jupyter_data_dir

    return os.path.join(jupyter_data_dir(), KEY_FILE)


def read_key() -> str | None:
    """This user's key, or None when there is none (or it is not this user's alone)."""
    path = key_path()
    try:
        info = os.stat(path)
        with open(path, encoding="ascii") as f:
            value = f.read().strip()
    except (OSError, ValueError):
        return None
    if hasattr(os, "getuid") and (info.st_uid != os.getuid() or info.st_mode & 0o077):
        return None  # readable by others: not a secret any more
    return value or None


def ensure_key() -> str:
    """This user's key, made (random, readable by this user only, written atomically) when
    there is none."""
    import secrets

    value = read_key()
    if value:
        return value
    path = key_path()
    folder = os.path.dirname(path)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    value = secrets.token_urlsafe(KEY_BYTES)
    tmp = os.path.join(folder, f".jupyter-ai.key.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(value + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    return value


def remove_key() -> str | None:
    """Remove this user's key; the path removed (None: there was none)."""
    path = key_path()
    try:
        os.remove(path)
    except FileNotFoundError:
        return None
    return path


def config_dir(sys_prefix: bool = False) -> str:
    """Where ``enable`` writes: the user's Jupyter config dir, or this environment's."""
    from jupyter_core.paths import jupyter_config_dir

    return os.path.join(sys.prefix, "etc", "jupyter") if sys_prefix else jupyter_config_dir()


def _read(path: str) -> bool | None:
    """The switch a file sets: None when the file is missing or says nothing readable."""
    try:
        with open(path, encoding="utf-8") as f:
            value = json.load(f).get(SECTION, {}).get(KEY)
    except (OSError, ValueError, AttributeError):
        return None
    return value if isinstance(value, bool) else None


def switches() -> list[tuple[str, bool]]:
    """Each switch file on the Jupyter config path and what it says, nearest the user first."""
    from jupyter_core.paths import jupyter_config_path

    found = []
    for folder in jupyter_config_path():
        path = os.path.join(folder, FILE)
        value = _read(path)
        if value is not None:
            found.append((path, value))
    return found


def enabled() -> bool:
    """Whether kli's tools go on Jupyter AI's MCP server: the nearest switch file says true."""
    found = switches()
    return bool(found) and found[0][1]


def enable(sys_prefix: bool = False) -> str:
    """Write the switch (atomically) and make sure this user has a key; the switch's path."""
    from kli.tools.core.atomic import write_atomic

    path = os.path.join(config_dir(sys_prefix), FILE)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    data = json.dumps({SECTION: {KEY: True}}, indent=2) + "\n"
    write_atomic(path, data.encode())
    ensure_key()
    return path


def disable(sys_prefix: bool = False) -> str | None:
    """Remove the switch file ``enable`` writes; the path removed (None: there was none)."""
    path = os.path.join(config_dir(sys_prefix), FILE)
    try:
        os.remove(path)
    except FileNotFoundError:
        return None
    return path


def _jupyter_ai_note() -> str:
    try:
        import jupyter_server_mcp  # noqa: F401
    except ImportError:
        return ("\nNote: jupyter-server-mcp is not installed here: install Jupyter AI 3 (pip "
                "install jupyter-ai) in the environment of the Jupyter server.")
    return ""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="kli ai",
        description="Put kli's tools on Jupyter AI's MCP server (jupyter-server-mcp), for the "
                    "agents of its chats, or take them off. They answer only callers with your "
                    "key (X-Kli-Key, which Jupyter AI hands the agents it starts) or the "
                    "server's token. Restart the Jupyter server afterwards.")
    sub = p.add_subparsers(dest="command", required=True)
    for name, text in (("enable", f"write {FILE} in the Jupyter config dir"),
                       ("disable", f"remove {FILE} from the Jupyter config dir")):
        cmd = sub.add_parser(name, help=text)
        cmd.add_argument("--sys-prefix", action="store_true",
                         help="this environment's config dir (<sys.prefix>/etc/jupyter) instead "
                              "of the user's")
    sub.add_parser("status", help="say whether kli's tools go on Jupyter AI's MCP server")
    sub.add_parser("key", help=f"print the {KEY_HEADER} header an MCP entry of your own for "
                               "the endpoint needs (.jupyter/mcp_settings.json)")
    args = p.parse_args(argv)
    if args.command == "enable":
        path = enable(args.sys_prefix)
        print(f"Wrote {path} and your key ({key_path()}, readable by you only).\nkli's tools "
              "go on Jupyter AI's MCP server from the next start of the Jupyter server: restart "
              "it. They answer the agents Jupyter AI starts from a chat (it hands them your key "
              f"in the {KEY_HEADER} header) and refuse every other caller. Calls from a chat's "
              "agent run in the notebook's kli kernel, one kli session per chat. An MCP entry "
              "of your own for the endpoint in .jupyter/mcp_settings.json needs the header: "
              "`kli ai key` prints it. `kli ai disable` takes the tools off."
              + _jupyter_ai_note())
        if not enabled():
            print(f"But a switch nearer in the Jupyter config path says false: {switches()[0][0]}.")
            return 1
        return 0
    if args.command == "disable":
        gone = disable(args.sys_prefix)
        print(f"Removed {gone}." if gone else
              f"No {FILE} in {config_dir(args.sys_prefix)}: nothing to remove.")
        still = [path for path, on in switches() if on]
        if enabled():
            print(f"kli's tools are still enabled by {still[0]}: remove it (or run kli ai "
                  "disable with --sys-prefix).")
            return 1
        key = remove_key()
        if key:
            print(f"Removed your key {key} (the next enable makes a new one).")
        print("kli's tools are off Jupyter AI's MCP server from the next start of the Jupyter "
              "server: restart it.")
        return 0
    if args.command == "key":
        key_value = read_key()
        if key_value is None:
            print(f"No key at {key_path()} (or it is readable by others): `kli ai enable` makes "
                  "one.")
            return 1
        print(json.dumps({"name": KEY_HEADER, "value": key_value}))
        return 0
    found = switches()
    if not found:
        print(f"Off: no {FILE} on the Jupyter config path. `kli ai enable` turns it on.")
    else:
        print(("On" if enabled() else "Off") + ":")
        for path, value in found:
            print(f"  {path}: {'true' if value else 'false'}")
    return 0
