"""A notebook's review holds for every agent call that can change it, whichever kernel runs it.

A person switches review on for a notebook (its activity panel, ``%kli approval``): that is its
kernel's mode. But an agent of a Jupyter AI chat reaches every kli kernel of the server — kli's
tools on the MCP route send each call to the kernel of the notebook it names, the persona works
on one per turn — and a call in one kernel can change another kernel's notebook: ``bash`` in
``sub/b.ipynb``'s kernel runs ``sed -i … ../a.ipynb``. So before a call goes to kernel K, the
host asks the server's other kli kernels what they are under (the ``reach`` request: their
approval modes, their root, whether the box confines their agent's shell and eval) and sends K,
with the call, the kinds to hold whatever K's own mode says (the call's ``review``), each with
the notebooks under review that a call of that kind in K can change (``review_floor``):

- a ``file`` call in K changes files under K's root (its file tools are jailed there);
- a ``shell`` or ``eval`` call in K changes any file the person can change, unless K's box
  confines it to K's root (``kli.tools.core.sandbox.CONFINING_STATES``);
- a kernel that does not answer in time is taken to be under review for every kind (the check
  fails closed), and its notebook is named with why.

K's own notebooks are K's own mode's business (the kernel applies it). With one kli notebook
on the server nothing is asked: there is nothing else to protect.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kli.kernel.ai.notebooks import Server
from kli.tools.core.approval import ACTIONS, FILE, REVIEW

REACH_TIMEOUT = 5.0  # seconds a kernel has to answer ``reach`` (a busy one answers at once)
SILENT = " (its kernel did not answer, so it is taken to be under review)"


@dataclass(frozen=True)
class Kernel:
    """A kli kernel of the server as ``reach`` answered: its notebooks (real paths), its
    approval modes (None: it did not answer), its root (real path; "" unknown), whether its
    agent's shell and eval are confined to the root."""

    kernel_id: str
    notebooks: tuple[str, ...]
    approval: Mapping[str, str] | None = None
    root: str = ""
    boxed: bool = False


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
                floor.setdefault(kind, []).append(name)
    return floor


# -- asking the kernels -------------------------------------------------------------------------
_clients: dict[str, Any] = {}
_clients_lock = threading.Lock()


def _reach(kernel_id: str) -> dict[str, Any] | None:
    """``reach`` of kernel ``kernel_id`` through a client kept for it (reconnected after a
    failure); None when it does not answer in time."""
    from kli.kernel.client import connect_in_server

    with _clients_lock:
        client = _clients.get(kernel_id)
    try:
        if client is None:
            client = connect_in_server(kernel_id, label="Jupyter AI route (review check)",
                                       timeout=REACH_TIMEOUT, ready_timeout=REACH_TIMEOUT)
            with _clients_lock:
                _clients[kernel_id] = client
        answer: dict[str, Any] = client.reach(REACH_TIMEOUT)
        return answer
    except Exception:
        with _clients_lock:
            dropped = _clients.pop(kernel_id, None)
        if dropped is not None:
            try:
                dropped.close()
            except Exception:
                pass
        return None


async def review_for(kernel_id: str, server: Server) -> dict[str, list[str]]:
    """The ``review`` to send with an agent's call to kernel ``kernel_id`` (``review_floor``),
    asking the server's kli kernels that hold notebooks (``server``: ``chats.server_state``)."""
    from kli.kernel.client.find import this_server

    server_root = str(getattr(this_server(), "root_dir", "") or os.getcwd())
    by_kernel: dict[str, list[str]] = {}
    for path, kid in server.kli().items():
        by_kernel.setdefault(kid, []).append(path)
    if not any(kid != kernel_id for kid in by_kernel):
        return {}  # no other kli notebook: nothing else to protect, nothing asked
    asked = sorted({kernel_id, *by_kernel})
    answers = await asyncio.gather(*(asyncio.to_thread(_reach, kid) for kid in asked))
    shown: dict[str, str] = {}
    kernels: dict[str, Kernel] = {}
    for kid, answer in zip(asked, answers, strict=True):
        notebooks = []
        for path in by_kernel.get(kid, []):
            real = os.path.realpath(os.path.join(server_root, path))
            shown[real] = path
            notebooks.append(real)
        approval = answer.get("approval") if answer else None
        kernels[kid] = Kernel(kid, tuple(notebooks),
                              approval if isinstance(approval, dict) else None,
                              str((answer or {}).get("root") or ""),
                              bool((answer or {}).get("boxed")))
    return review_floor(kernels[kernel_id], kernels.values(), shown)

