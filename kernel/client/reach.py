"""A notebook's review holds for every agent call that can change it, whichever kernel runs it.

A person switches review on for a notebook (its activity panel, ``%kli approval``): that is its
kernel's mode. But an agent's call in one kernel can change another kernel's notebook — ``bash``
in ``sub/b.ipynb``'s kernel runs ``sed -i … ../a.ipynb`` — and the hosts that send agents' calls
(Jupyter AI's route and persona, ``kli mcp``, ``%kli agent``) can see the other kernels. So before
a call goes to kernel K, the host asks the other kli kernels that hold notebooks what they are
under (the ``reach`` request: their approval modes, their root, whether the box confines their
agent's shell and eval) and sends K, with the call, the kinds to hold whatever K's own mode says
(the call's ``review``; in the kernel ``kli.tools.core.approval.required``), each with the
notebooks under review that a call of that kind in K can change (``review_floor``):

- a ``file`` call in K changes files under K's root (its file tools are jailed there);
- a ``shell`` or ``eval`` call in K changes any file the person can change, unless K's box
  confines it to K's root (``kli.tools.core.sandbox.CONFINING_STATES``);
- a kernel that does not answer in time is taken to be under review for every kind (the check
  fails closed), and its notebook is named with why.

K's own notebooks are K's own modes' business: with its mode on auto they add nothing, and on
review the call is held anyway. Where the notebooks are known from: inside a Jupyter server its
own sessions (``kli.kernel.ai.reach``); elsewhere every Jupyter server of this user on this
machine (``on_this_machine``: ``jpserver-*.json`` and ``GET /api/sessions``, as
``kli.kernel.client.find`` finds a notebook's kernel). With no other kli notebook, nothing is
asked.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kli.kernel.protocol import KLI_KERNEL_NAMES
from kli.tools.core.approval import ACTIONS, FILE, REVIEW

REACH_TIMEOUT = 5.0  # seconds a kernel has to answer ``reach`` (a busy one answers at once)
SESSIONS_TIMEOUT = 1.0  # seconds a server of this machine has to list its sessions
SILENT = " (its kernel did not answer, so it is taken to be under review)"


@dataclass(frozen=True)
class Kernel:
    """A kli kernel as ``reach`` answered: its notebooks (real paths), its approval modes (None:
    it did not answer), its root (real path; "" unknown), whether its agent's shell and eval are
    confined to the root."""

    kernel_id: str
    notebooks: tuple[str, ...]
    approval: Mapping[str, str] | None = None
    root: str = ""
    boxed: bool = False

    @classmethod
    def answered(cls, kernel_id: str, notebooks: tuple[str, ...],
                 answer: Mapping[str, Any] | None) -> Kernel:
        """The kernel from its ``reach`` answer (None: it did not answer)."""
        approval = (answer or {}).get("approval")
        return cls(kernel_id, notebooks, approval if isinstance(approval, dict) else None,
                   str((answer or {}).get("root") or ""), bool((answer or {}).get("boxed")))


def _under(path: str, root: str) -> bool:
    return bool(root) and (path == root or path.startswith(root.rstrip(os.sep) + os.sep))


def review_floor(here: Kernel, others: Iterable[Kernel],
                 shown: Mapping[str, str] | None = None) -> dict[str, list[str]]:
    """The review kernel ``here`` must apply to an agent's call for the other kernels'
    notebooks: action kind → the notebooks under review (as ``shown`` names them, else their
    path) that a call of that kind in ``here`` can change. Empty: none."""
    shown = shown or {}
    floor: dict[str, list[str]] = {}
    for kind in ACTIONS:
        confined = kind == FILE or here.boxed
        for other in others:
            if other.kernel_id == here.kernel_id:
                continue
            if other.approval is not None and other.approval.get(kind) != REVIEW:
                continue
            for path in other.notebooks:
                if confined and here.root and not _under(path, here.root):
                    continue
                name = shown.get(path, path) + (SILENT if other.approval is None else "")
                if name not in floor.get(kind, []):
                    floor.setdefault(kind, []).append(name)
    return floor


def of_workspace(ws: Any) -> dict[str, Any]:
    """A kernel's own ``reach`` answer: its modes, its root, whether its box confines its
    agent's shell and eval (the ``reach`` request's reply is this)."""
    from kli.tools.core import approval, sandbox

    return {"approval": approval.modes(ws.settings)[0], "root": os.path.realpath(ws.root),
            "boxed": sandbox.describe(ws)["state"] in sandbox.CONFINING_STATES}


def kernel_id_of(connection_file: str) -> str:
    """The kernel id a Jupyter server's connection file is named for (``kernel-ID.json``), or
    ""."""
    name = os.path.basename(connection_file)
    if name.startswith("kernel-") and name.endswith(".json"):
        return name[len("kernel-"):-len(".json")]
    return ""


# -- asking a kernel ----------------------------------------------------------------------------
_clients: dict[str, Any] = {}  # connection file → a client kept for ``reach``
_clients_lock = threading.Lock()


def ask(connection_file: str) -> dict[str, Any] | None:
    """``reach`` of the kernel of ``connection_file``, through a client kept for it
    (reconnected after a failure); None when it does not answer in time."""
    from kli.kernel.client import connect

    with _clients_lock:
        client = _clients.get(connection_file)
    try:
        if client is None:
            client = connect(connection_file, label="review check", timeout=REACH_TIMEOUT,
                             ready_timeout=REACH_TIMEOUT)
            with _clients_lock:
                _clients[connection_file] = client
        answer: dict[str, Any] = client.reach(REACH_TIMEOUT)
        return answer
    except Exception:
        with _clients_lock:
            dropped = _clients.pop(connection_file, None)
        if dropped is not None:
            try:
                dropped.close()
            except Exception:
                pass
        return None


def ask_all(connection_files: list[str]) -> list[dict[str, Any] | None]:
    """``ask`` each, at once (threads: a kernel that does not answer costs one timeout)."""
    if len(connection_files) <= 1:
        return [ask(f) for f in connection_files]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(8, len(connection_files))) as pool:
        return list(pool.map(ask, connection_files))


# -- the kernels of this machine's Jupyter servers ----------------------------------------------
def notebook_kernels() -> dict[str, tuple[str, dict[str, str]]]:
    """Every kli kernel holding a notebook in a Jupyter server of this user on this machine:
    kernel id → (its connection file, its notebooks: real path → path from the server's root).
    A server that does not answer is left out."""
    from kli.kernel.client.find import _runtime_dir, _sessions, alive, running_servers

    runtime = _runtime_dir()
    out: dict[str, tuple[str, dict[str, str]]] = {}
    for server in running_servers():
        if not alive(server):  # a dead server's file: its port may be another program's now
            continue
        try:
            sessions = _sessions(server, SESSIONS_TIMEOUT)
        except (OSError, ValueError):
            continue
        root = str(server.get("root_dir") or "")
        for s in sessions:
            kernel = s.get("kernel") or {}
            path = str(s.get("path") or "")
            if kernel.get("name") not in KLI_KERNEL_NAMES or not kernel.get("id") \
                    or not path.endswith(".ipynb"):
                continue
            kid = str(kernel["id"])
            entry = out.setdefault(kid, (os.path.join(runtime, f"kernel-{kid}.json"), {}))
            entry[1][os.path.realpath(os.path.join(root, path))] = path
    return out


def review_among(here: Mapping[str, Any], kernel_id: str,
                 kernels: Mapping[str, tuple[str, Mapping[str, str]]]) -> dict[str, list[str]]:
    """The ``review`` for a call to kernel ``kernel_id`` (its ``reach`` answer ``here``; "" when
    its id is not known) among ``kernels`` (``notebook_kernels``' shape), asking each other one;
    empty without another (then none is asked)."""
    others = {k: v for k, v in kernels.items() if k != kernel_id}
    if not others:
        return {}
    ids = sorted(others)
    answers = ask_all([others[k][0] for k in ids])
    shown = {real: rel for k in ids for real, rel in others[k][1].items()}
    return review_floor(Kernel.answered(kernel_id or "(here)", (), here),
                        [Kernel.answered(k, tuple(others[k][1]), a)
                         for k, a in zip(ids, answers, strict=True)], shown)


def on_this_machine(here: Mapping[str, Any], kernel_id: str = "") -> dict[str, list[str]]:
    """``review_among`` this machine's Jupyter servers' kli notebooks (``notebook_kernels``)."""
    return review_among(here, kernel_id, notebook_kernels())
