"""Which notebook a Jupyter AI chat means: one pure function for both hosts of a chat.

The persona ``@kli`` (``kli.kernel.ai.persona``) and kli's tools on Jupyter AI's MCP server
(``kli.kernel.ai.mcp_route``) both turn "this chat, these words or arguments, the notebooks open
on this server" into one kli kernel to work on, and the path of the notebook as that kernel sees
it. They ask ``choose``; it reads nothing and changes nothing, so it is tested alone
(tests/kernel/ai/choices/, one case a file).

The ladder, first rung that decides wins:

1. **attached now** — a notebook attached to the persona's message itself;
2. **named** — the notebooks the request names (the persona's message text, the call's
   arguments: ``read path="sub/b.ipynb#c1"``, an edit's ``@@ b.ipynb#c1``) by their path from the
   server's root or by the end of it (``b.ipynb``, when no other kli notebook ends so); when
   the names point at several kernels, the rungs below choose among those only. A person's
   notebook (attached or named) without a kli kernel is refused; a model's name of one falls
   through (it may read a file), except that ``run_cells`` naming a notebook on another kernel
   is refused;
3. **attached** — the notebooks attached to the chat's messages, newest message first;
4. **last** — the notebook this chat worked on last (a chat that named one stays there);
5. **folder** — the only kli notebook in the chat file's folder;
6. **only** — the only kli notebook of the server;
7. **console** (the model's calls only) — no notebook runs a kli kernel: the most recently
   active kli kernel (a console's).

Otherwise nothing runs: a ``refusal`` saying what to do, in the words of its reader (a person
reads the persona's, a model the MCP route's; both texts live here, side by side).

A kernel that a Jupyter server started for a notebook works in that notebook's folder, so a path
from the server's root (``sub/b.ipynb``) is not the kernel's path (``b.ipynb``): the chosen
kernel's ``local`` path, and the arguments with every open notebook's root path under that
folder made relative to it (``args``), are the ones to hand the kernel.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from kli.kernel.protocol import KERNEL_NAME, KLI_KERNEL_NAMES

Reader = Literal["person", "model"]
# Tools that run a notebook's cells in the live image: naming a notebook that runs another
# kernel must not run its cells in a kli kernel (and write their outputs there).
RUNS_CELLS = frozenset({"run_cells"})
# Arguments that say where a call acts (beside a patch's ``@@ PATH#CELL`` headers).
PATH_KEYS = frozenset({"path", "paths"})

# A notebook's name in free text or an argument: a token ending in .ipynb (a #cell may follow).
NAMED = re.compile(r"""(?<![\w.-])([^\s"'`<>()\[\]{},;]+?\.ipynb)(?![\w.-])""")


@dataclass(frozen=True)
class Open:
    """A notebook open on the server: its path from the server's root, its kernel."""

    path: str
    kernel_id: str
    kernel_name: str = KERNEL_NAME


@dataclass(frozen=True)
class Server:
    """What runs on the server: its notebook sessions (any kernel) and every kli kernel with its
    last activity (ISO time), consoles' too."""

    notebooks: tuple[Open, ...] = ()
    kli_kernels: tuple[tuple[str, str], ...] = ()

    def kli(self) -> dict[str, str]:
        """Each notebook on a kli kernel: path -> kernel id."""
        return {o.path: o.kernel_id for o in self.notebooks if o.kernel_name in KLI_KERNEL_NAMES}


@dataclass(frozen=True)
class Chat:
    """What is known of the chat: notebooks attached to the request itself (the persona's
    message), to its messages (newest first), the chat file's folder (None: unknown), and the
    kernel it worked on last."""

    attached_now: tuple[str, ...] = ()
    attached: tuple[str, ...] = ()
    folder: str | None = None
    last: str | None = None


@dataclass(frozen=True)
class Choice:
    """The answer: a kernel (``kernel_id``), its notebook (``path`` from the server's root, None
    for a console's kernel), the notebook's path as the kernel sees it (``local``), the
    arguments as the kernel must get them (``args``), which rung decided (``rung``) — or a
    ``refusal``, the text for the reader, and nothing else."""

    kernel_id: str | None = None
    path: str | None = None
    local: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    rung: str = ""
    refusal: str | None = None


# -- the words, each for its reader -----------------------------------------------------------
HOW_TO_CHOOSE = ("attach the notebook to your message, or name it (`@kli in analysis.ipynb "
                 "fix the plot`)")
OPEN_WITH_KLI = "Open it, choose the kli kernel (Kernel → Change Kernel… → kli), and ask again."


def _listing(paths: Any) -> str:
    return ", ".join(f"`{p}`" for p in sorted(paths))


def _several(candidates: list[str], named: list[str], reader: Reader) -> str:
    if reader == "person":
        if named:
            return (f"Several notebooks with a kli kernel match {_listing(named)}: "
                    f"{_listing(candidates)}. Say which: {HOW_TO_CHOOSE}, with its folder.")
        return (f"Several notebooks have a kli kernel running: {_listing(candidates)}. Say which "
                f"one: {HOW_TO_CHOOSE}.")
    first = sorted(candidates)[0]
    return (f"kli: {len(candidates)} notebooks run a kli kernel on this Jupyter server "
            f"({', '.join(sorted(candidates))}) and nothing says which one this call is about, so "
            f'nothing ran. Name the notebook in the call by its path from the server\'s root (e.g. '
            f'read path="{first}"); this chat\'s later calls stay on its kernel. Or ask the person '
            "to attach the notebook to their chat message.")


def _not_kli(path: str, kernel: str, reader: Reader, tool: str | None) -> str:
    if reader == "person":
        return (f"The notebook `{path}` runs the {kernel} kernel, not kli, so I cannot work in "
                f"it. {OPEN_WITH_KLI}")
    return (f"kli: {path} runs the {kernel} kernel, not a kli kernel, so nothing ran: {tool} "
            "runs a notebook's cells in that notebook's own kli kernel. Ask the person to switch "
            "its kernel to kli (Kernel > Change Kernel > kli), then call again.")


def _not_running(named: list[str], how: str, others: list[str], reader: Reader) -> str:
    rest = f" Notebooks with a kli kernel: {_listing(others)}." if others else ""
    return (f"The notebook you {how} ({_listing(named)}) has no kli kernel running. "
            f"{OPEN_WITH_KLI}{rest}")


def _none(reader: Reader) -> str:
    if reader == "person":
        return ("No notebook has a kli kernel running, and kli works on the live notebook. Open a "
                "notebook, choose the kli kernel (Kernel → Change Kernel… → kli), and ask again.")
    return ("kli: no kli kernel runs on this Jupyter server, so nothing ran. Ask the person to "
            "open the notebook with the kli kernel (in JupyterLab: Kernel > Change Kernel > "
            "kli), then call again.")


# -- names --------------------------------------------------------------------------------------
def _clean(name: str) -> str:
    """A name as a server path: ``./`` and a leading ``/`` dropped, ``#cell`` cut."""
    name = name.split("#", 1)[0]
    while name.startswith("./"):
        name = name[2:]
    return name.lstrip("/")


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _texts(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _texts(v)]
    return []


def names(args: dict[str, Any]) -> list[str]:
    """The notebooks the arguments name, as server paths, in order, once each: those of a
    path argument (``PATH_KEYS``) or of a patch's ``@@`` headers when there are any — they say
    where the call acts — else every one in the arguments' strings (a command, the
    persona's message)."""
    where = [t for k, v in args.items() if k in PATH_KEYS for t in _texts(v)]
    where += [line for t in _texts(args) for line in t.splitlines() if line.startswith("@@")]
    for texts in (where, _texts(args)):
        found = [_clean(m) for text in texts for m in NAMED.findall(text)]
        found = [n for n in dict.fromkeys(found) if n and not n.startswith("../")]
        if found:
            return found
    return []


def _matches(name: str, paths: Any) -> list[str]:
    """The paths ``name`` means: the one it is exactly, else those it is the end of."""
    paths = list(paths)
    if name in paths:
        return [name]
    return [p for p in paths if p.endswith("/" + name)]


# -- the kernel's view ---------------------------------------------------------------------------
def local(path: str) -> str:
    """``path`` (from the server's root) as the kernel of its notebook sees it: the kernel
    works in the notebook's folder."""
    return posixpath.basename(path)


def for_kernel(args: dict[str, Any], path: str, server: Server) -> dict[str, Any]:
    """``args`` with each open notebook's root path under ``path``'s folder said as the kernel
    of ``path`` sees it (``sub/b.ipynb#c1`` -> ``b.ipynb#c1`` when the kernel works in ``sub``).
    Other text is left as it is."""
    folder = posixpath.dirname(path)
    if not folder:
        return dict(args)
    under = sorted((o.path for o in server.notebooks if o.path.startswith(folder + "/")),
                   key=len, reverse=True)
    if not under:
        return dict(args)
    said = re.compile(r"(?<![\w./-])(?:\./|/)?(" + "|".join(map(re.escape, under)) +
                      r")(?![\w.-])")

    def fix(value: Any) -> Any:
        if isinstance(value, str):
            return said.sub(lambda m: m.group(1)[len(folder) + 1:], value)
        if isinstance(value, list):
            return [fix(v) for v in value]
        if isinstance(value, dict):
            return {k: fix(v) for k, v in value.items()}
        return value

    return {k: fix(v) for k, v in args.items()}


# -- the ladder ------------------------------------------------------------------------------------
def choose(chat: Chat, args: dict[str, Any], server: Server, *, reader: Reader,
           tool: str | None = None) -> Choice:
    """The kernel and notebook a request of ``chat`` is about (the ladder in the module's
    docstring), or a refusal for ``reader``. ``args``: the call's arguments (the persona passes
    its message as one); ``tool``: the tool called, if any. Pure: reads only its inputs."""
    kli = server.kli()
    by_path = {o.path: o for o in server.notebooks}

    def chosen(path: str, rung: str) -> Choice:
        return Choice(kli[path], path, local(path), for_kernel(args, path, server), rung)

    def missing(wanted: list[str], how: str) -> Choice:
        """A person's notebook (attached or named) that no kli kernel runs."""
        other = [by_path[p] for w in wanted for p in _matches(w, by_path) if p not in kli]
        if other:
            return Choice(refusal=_not_kli(other[0].path, other[0].kernel_name, reader, tool),
                          rung=how)
        return Choice(refusal=_not_running(wanted, how, list(kli), reader), rung=how)

    candidates, matched = list(kli), []
    # 1. attached to the request itself (the persona's message)
    wanted = [_clean(a) for a in chat.attached_now if a.endswith(".ipynb")]
    if wanted:
        now = list(dict.fromkeys(p for w in wanted for p in _matches(w, kli)))
        if len({kli[p] for p in now}) == 1:
            return chosen(now[0], "attached now")
        if not now and reader == "person":
            return missing(wanted, "attached")
        candidates = now or candidates
    # 2. named in the request's words or arguments
    named = names(args) if not wanted else []
    if named:
        hit = list(dict.fromkeys(p for n in named for p in _matches(n, kli)))
        if len({kli[p] for p in hit}) == 1:
            return chosen(hit[0], "named")
        if not hit and (reader == "person" or tool in RUNS_CELLS):
            other = [p for n in named for p in _matches(n, by_path) if p not in kli]
            if reader == "person" or other:
                return missing(named, "named")
        candidates = hit or candidates
        matched = named if hit else []
    # 3. attached to the chat's messages, newest first
    for path in chat.attached:
        if _clean(path) in candidates:
            return chosen(_clean(path), "attached")
    # 4. the kernel this chat worked on last
    if chat.last is not None:
        for path in candidates:
            if kli[path] == chat.last:
                return chosen(path, "last")
    # 5. the only one in the chat file's folder
    if chat.folder is not None:
        near = [p for p in candidates if posixpath.dirname(p) == chat.folder.strip("/")]
        if len(near) == 1:
            return chosen(near[0], "folder")
    # 6. the only one
    if candidates and len({kli[p] for p in candidates}) == 1:
        return chosen(candidates[0], "only")
    if not kli:
        # 7. the model's calls: a console's kli kernel
        if reader == "model" and server.kli_kernels:
            newest = max(server.kli_kernels, key=lambda k: k[1])[0]
            return Choice(newest, None, None, dict(args), "console")
        return Choice(refusal=_none(reader))
    return Choice(refusal=_several(candidates, matched, reader))
