"""The parts of the kli persona that need no Jupyter AI: which notebook a chat message means,
the persona's settings, and each step of a run as a line of the chat.

Everything here is plain data in, plain data out, so it is tested without a server.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, ClassVar

from kli.tools.agent import DEFAULT_MAX_TURNS, DEFAULT_REVIEW_WAIT, Event, Finished, Held, Stopped

MENTION = re.compile(r"^\s*@kli\b[:,]?\s*", re.IGNORECASE)
NAMED = re.compile(r"""(?<![\w/.-])([^\s"'`<>()]+\.ipynb)\b""")
UNDO = re.compile(r"^\s*undo(\s+(this|the\s+last|last)\s+turn)?\s*[.!]?\s*$", re.IGNORECASE)
CONTEXT_CHARS = 6000  # characters of the notebook's cells, and of the image summary, the agent starts from


def strip_mention(body: str) -> str:
    """The task: the message without a leading ``@kli`` (routing is by metadata, the
    mention is only text)."""
    return MENTION.sub("", body, count=1).strip()


def is_undo(task: str) -> bool:
    """``undo``, ``undo this turn``, ``undo the last turn`` / ``undo last turn``."""
    return bool(UNDO.match(task))


@dataclass
class Choice:
    """The notebook a message means (``path``, a server path, and its kernel ``kernel_id``),
    or ``answer``: what to tell the person when there is none or several."""

    path: str | None = None
    kernel_id: str | None = None
    answer: str | None = None


HOW_TO_CHOOSE = ("attach the notebook to your message, or name it (`@kli in analysis.ipynb "
                 "fix the plot`)")


def _listing(paths: list[str]) -> str:
    return ", ".join(f"`{p}`" for p in sorted(paths))


def _same(named: str, path: str) -> bool:
    named = named.lstrip("./")
    return path == named or path.endswith("/" + named)


def choose_notebook(task: str, attached: list[str], running: dict[str, str]) -> Choice:
    """The notebook of a message: an attached ``.ipynb``, else one the task names, else the only
    one with a kli kernel. ``running`` maps each server path of a notebook with a kli kernel to
    that kernel's id."""
    wanted = [p for p in attached if p.endswith(".ipynb")]
    how = "attached"
    if not wanted:
        wanted = list(dict.fromkeys(NAMED.findall(task)))
        how = "named"
    if wanted:
        matches = {path: kid for path, kid in running.items()
                   if any(_same(w, path) for w in wanted)}
        if len(matches) == 1:
            path, kid = next(iter(matches.items()))
            return Choice(path, kid)
        if not matches:
            others = (f" Notebooks with a kli kernel: {_listing(list(running))}." if running
                      else "")
            return Choice(answer=(
                f"The notebook you {how} ({_listing(wanted)}) has no kli kernel running. Open it, "
                f"choose the kli kernel (Kernel → Change Kernel… → kli), and ask again.{others}"))
        return Choice(answer=(
            f"Several notebooks with a kli kernel match {_listing(wanted)}: "
            f"{_listing(list(matches))}. Say which: {HOW_TO_CHOOSE}, with its folder."))
    if len(running) == 1:
        path, kid = next(iter(running.items()))
        return Choice(path, kid)
    if not running:
        return Choice(answer=(
            "No notebook has a kli kernel running, and kli works on the live notebook. Open a "
            "notebook, choose the kli kernel (Kernel → Change Kernel… → kli), and ask again."))
    return Choice(answer=(
        f"Several notebooks have a kli kernel running: {_listing(list(running))}. Say which one: "
        f"{HOW_TO_CHOOSE}."))


# -- settings --------------------------------------------------------------------------------
@dataclass
class Settings:
    """What a person can set for the persona: the tool ``profile`` (kli, slmcode, all), the
    ``steps`` (turns with a tool call before the final answer is asked for), ``review_wait``
    (seconds a held call waits for the person) and ``on_review_timeout`` (continue or stop)."""

    profile: str = "kli"
    steps: int = DEFAULT_MAX_TURNS
    review_wait: float = DEFAULT_REVIEW_WAIT
    on_review_timeout: str = "continue"

    ENV: ClassVar[dict[str, str]] = {"profile": "KLI_AGENT_PROFILE", "steps": "KLI_AGENT_STEPS",
           "review_wait": "KLI_AGENT_REVIEW_WAIT",
           "on_review_timeout": "KLI_AGENT_ON_REVIEW_TIMEOUT"}
    CHOICES: ClassVar[dict[str, tuple[str, ...]]] = {
        "profile": ("kli", "slmcode", "all"),
        "steps": ("5", "10", "20", "40"),
        "review_wait": ("0", "60", "300", "600"),
        "on_review_timeout": ("continue", "stop"),
    }

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Settings:
        """The defaults, each overridden by its ``KLI_AGENT_…`` variable when set; a value that
        does not parse raises ValueError naming the variable."""
        env = os.environ if environ is None else environ
        settings = cls()
        settings.update({key: env[var] for key, var in cls.ENV.items() if env.get(var)},
                        source="variable")
        return settings

    def update(self, values: dict[str, Any], source: str = "setting") -> None:
        """Apply ``values`` (strings, as a chat sends them); ValueError saying which is wrong."""
        for key, raw in values.items():
            if raw is None:
                continue
            name = self.ENV.get(key, key) if source == "variable" else key
            text = str(raw).strip()
            try:
                if key == "profile":
                    if text not in self.CHOICES["profile"]:
                        raise ValueError
                    self.profile = text
                elif key == "steps":
                    steps = int(text)
                    if steps < 1:
                        raise ValueError
                    self.steps = steps
                elif key == "review_wait":
                    wait = float(text)
                    if not 0 <= wait <= 600:
                        raise ValueError
                    self.review_wait = wait
                elif key == "on_review_timeout":
                    if text not in self.CHOICES["on_review_timeout"]:
                        raise ValueError
                    self.on_review_timeout = text
                else:
                    raise KeyError(key)
            except KeyError:
                raise ValueError(f"kli has no {source} {key!r} (it has: "
                                 f"{', '.join(self.CHOICES)})") from None
            except ValueError:
                expected = {"steps": "a whole number ≥ 1",
                            "review_wait": "seconds, 0 to 600"}.get(
                                key, " or ".join(self.CHOICES.get(key, ())))
                raise ValueError(f"kli {source} {name}={text!r}: expected {expected}") from None

    def current(self) -> dict[str, str]:
        return {"profile": self.profile, "steps": str(self.steps),
                "review_wait": f"{self.review_wait:g}",
                "on_review_timeout": self.on_review_timeout}


# -- the steps as chat lines ------------------------------------------------------------------
def _md(text: str) -> str:
    """Plain text safe in one Markdown line of the chat (no HTML, no emphasis by accident)."""
    return re.sub(r"([\\`*<>])", r"\\\1", text)


def step_line(event: Event) -> str | None:
    """The chat line for one event, or None for events shown otherwise (a call's start goes to
    the status line; the answer ends the reply)."""
    kind = event.kind
    if kind in ("call", "answer"):
        return None
    if isinstance(event, Held):
        return f"- ‖ {_md(event.line())}\n"  # in the fonts of a bare Debian Chromium (⏸ is not)
    if isinstance(event, Stopped):
        return f"- ■ {_md(event.line())}\n"
    if kind == "reply":
        calls = getattr(event, "calls", [])
        if not calls:  # its text is the answer, shown in full at the end
            return None
    return f"- {_md(event.line())}\n"


def status_of(event: Event) -> str | None:
    """What the chat's status line says while this step runs."""
    if event.kind == "call":
        tool, target = getattr(event, "tool", ""), getattr(event, "target", "")
        return f"is running {tool} {target}".rstrip() + "…"
    if isinstance(event, Held):
        return f"is waiting for your review of {event.proposal}…"
    if event.kind in ("outcome", "decided"):
        return "is thinking…"
    return None


def ending(event: Finished, label: str) -> str:
    """The reply's end: the answer, then how the run stopped, its tokens, and its session."""
    tokens = f", {event.usage['total']} tokens" if "total" in event.usage else ""
    turns = f"{event.turns} turn{'s' if event.turns != 1 else ''}"
    answer = event.answer.strip() if event.answer else "(the model gave no answer)"
    return (f"\n{answer}\n\n_{_md(event.stopped)} after {turns}{tokens} · session "
            f"{_md(label)} · `@kli undo` takes this turn back_\n")


def bounded_block(text: str, limit: int = CONTEXT_CHARS) -> str:
    """``text`` cut to ``limit`` characters, saying so."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[… {len(text) - limit} more characters; read it for the rest]"
