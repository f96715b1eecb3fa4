"""``python -m kli.kernel.sandbox -f CONNECTION_FILE``: the kli kernel started in the box
(kernelspec ``kli-sandboxed``, docs/sandbox.md).

Why the whole kernel: an agent's ``eval`` runs in the kernel's own process (it is the live
image the person's cells share), so the only way to box it is to box that process; then the
person's cells, ``bash``, background jobs and ``ws_shell`` are boxed with it, and nothing the
kernel starts can leave (its own PID namespace, killed with the kernel).

This launcher stays outside the box, and only forwards messages: Jupyter wrote
``CONNECTION_FILE`` for TCP (or IPC) sockets the box cannot reach when its network is off, so
the kernel in the box listens on Unix sockets in the box's own ``/tmp`` (a folder this launcher
made, and removes at exit), and one ZMQ proxy per channel joins the two. Interrupts come as
messages (the kernelspec's ``interrupt_mode``), as a signal to this launcher would not reach
the kernel's new session.

Where the box cannot be made (no ``bwrap``, no user namespaces, not Linux, a root holding the
home folder), the kernel starts unboxed with ``KLI_SANDBOX_FAILED`` set to the reason: it
says so at once (stderr, ``%kli status``, the activity panel) and refuses every agent shell and
eval call, so the box is never claimed where it is not.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
from typing import Any

from kli.tools.core import sandbox
from kli.tools.core.settings import SettingsLoader

CHANNELS = ("shell", "control", "stdin", "hb")  # request/reply: ROUTER outside, DEALER inside
INSIDE_TMP = "/tmp"  # the box's own temporary folder, as the kernel sees it
INNER_IPC = "k"  # the kernel's socket files: /tmp/k-1 … /tmp/k-5 in the box


def _address(conn: dict[str, Any], channel: str) -> str:
    port = conn[f"{channel}_port"]
    if conn.get("transport", "tcp") == "ipc":
        return f"ipc://{conn['ip']}-{port}"
    return f"tcp://{conn['ip']}:{port}"


def _inner(conn: dict[str, Any]) -> dict[str, Any]:
    """The connection the kernel in the box listens on: the same key, Unix sockets."""
    inner = {k: v for k, v in conn.items() if not k.endswith("_port")}
    inner.update(transport="ipc", ip=f"{INSIDE_TMP}/{INNER_IPC}")
    for i, channel in enumerate((*CHANNELS, "iopub"), start=1):
        inner[f"{channel}_port"] = i
    return inner


def _proxies(conn: dict[str, Any], inner: dict[str, Any], tmp: str) -> list[Any]:
    """Start one proxy per channel between Jupyter's sockets and the box's."""
    import zmq
    from zmq.devices import ThreadProxy

    started = []
    for channel in (*CHANNELS, "iopub"):
        inside = f"ipc://{tmp}/{INNER_IPC}-{inner[channel + '_port']}"
        if channel == "iopub":
            proxy = ThreadProxy(zmq.XPUB, zmq.XSUB)
            proxy.setsockopt_in(zmq.XPUB_VERBOSE, 1)  # every client's subscription reaches it
        else:
            proxy = ThreadProxy(zmq.ROUTER, zmq.DEALER)
        proxy.setsockopt_in(zmq.LINGER, 0)
        proxy.setsockopt_out(zmq.LINGER, 0)
        proxy.bind_in(_address(conn, channel))
        proxy.connect_out(inside)
        proxy.start()
        started.append(proxy)
    return started


def unboxed(connection_file: str, why: str) -> int:
    """Start the kernel outside the box, saying why at once; it refuses agent shell and eval."""
    print(f"[kli] {sandbox.KERNEL_TITLE}: the box could not be made: {why}. This kernel runs "
          "UNBOXED; an agent's shell and Python are refused in it.", file=sys.stderr, flush=True)
    env = dict(os.environ, **{sandbox.ENV_FAILED: why})
    env.pop(sandbox.ENV_INSIDE, None)
    argv = [sys.executable, "-m", "kli.kernel", "-f", connection_file]
    os.execve(sys.executable, argv, env)
    return 1  # not reached


def box_argv(root: str, tmp: str, network: str, bwrap: str) -> list[str]:
    """The ``bwrap`` command line that starts the kernel in the box."""
    facts = json.dumps({"network": network, "root": os.path.realpath(root),
                        "kernelspec": sandbox.KERNEL_NAME})
    return [
        *sandbox.base_args(bwrap),
        *sandbox.folder_args(root, tmp, network, writable=sandbox.KERNEL_WRITES,
                             prefixes=(sys.prefix,)),
        "--setenv", sandbox.ENV_INSIDE, facts,
        "--setenv", "IPYTHONDIR", f"{INSIDE_TMP}/ipython",
        "--setenv", "JUPYTER_RUNTIME_DIR", f"{INSIDE_TMP}/runtime",
        # The kernel's parent in the box is its init, PID 1: said so, ipykernel's parent
        # poller does not take it for a dead parent (the box dies with this launcher anyway)
        # and prints no "ipython kernel" banner.
        "--setenv", "JPY_PARENT_PID", "1",
        "--unsetenv", sandbox.ENV_FAILED,
        "--", sys.executable, "-m", "kli.kernel", "-f", f"{INSIDE_TMP}/kernel.json",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kli.kernel.sandbox",
                                     description="Start the kli kernel in the box.")
    parser.add_argument("-f", dest="connection_file", required=True)
    ns = parser.parse_args(argv)
    root = os.getcwd()
    settings, problem = SettingsLoader(root).load()
    chosen, bad = sandbox.choice(settings if problem is None else {})
    network = chosen.network if bad is None else sandbox.NET_OFF
    found = sandbox.available()
    why = found.reason if not found.ok else sandbox.root_problem(root)
    if why is not None or found.bwrap is None:
        return unboxed(ns.connection_file, why or "bwrap not found")
    with open(ns.connection_file, encoding="utf-8") as fh:
        conn = json.load(fh)
    tmp = sandbox.new_box_tmp()  # removed at exit; a killed launcher's by the next one
    try:
        try:
            argv = box_argv(root, tmp, network, found.bwrap)
        except OSError as exc:  # .kli or its writable folders could not be made
            shutil.rmtree(tmp, ignore_errors=True)
            return unboxed(ns.connection_file,
                           f"its folders could not be made ({exc.strerror}: {exc.filename})")
        inner = _inner(conn)
        with open(os.path.join(tmp, "kernel.json"), "w", encoding="utf-8") as fh:
            json.dump(inner, fh)
        _proxies(conn, inner, tmp)
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # interrupts arrive as messages
        proc = subprocess.Popen(argv)

        def stop(_signum: int, _frame: Any) -> None:
            proc.kill()  # the box's init dies with bwrap, and everything in its PID namespace

        signal.signal(signal.SIGTERM, stop)
        return proc.wait()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
