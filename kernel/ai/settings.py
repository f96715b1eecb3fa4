"""What a person can set for the persona ``@kli``: the tool profile, the steps, the review wait
and what follows it — from ``KLI_AGENT_…`` variables and the chat's settings menu.

Profile names come from the registry (``kli.tools.registry.PROFILE_CHOICES``) and the review
wait's range from the agent loop (``kli.tools.agent.check_review_wait``, the rule
``%kli agent --wait`` follows too).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, ClassVar

from kli.tools.agent import (
    DEFAULT_MAX_TURNS,
    DEFAULT_REVIEW_WAIT,
    MAX_REVIEW_WAIT,
    check_review_wait,
)
from kli.tools.registry import PROFILE_CHOICES


@dataclass
class Settings:
    """The tool ``profile`` (a registry profile, or all), the ``steps`` (turns with a tool call
    before the final answer is asked for), ``review_wait`` (seconds a held call waits for the
    person) and ``on_review_timeout`` (continue or stop)."""

    profile: str = "kli"
    steps: int = DEFAULT_MAX_TURNS
    review_wait: float = DEFAULT_REVIEW_WAIT
    on_review_timeout: str = "continue"

    ENV: ClassVar[dict[str, str]] = {"profile": "KLI_AGENT_PROFILE", "steps": "KLI_AGENT_STEPS",
           "review_wait": "KLI_AGENT_REVIEW_WAIT",
           "on_review_timeout": "KLI_AGENT_ON_REVIEW_TIMEOUT"}
    CHOICES: ClassVar[dict[str, tuple[str, ...]]] = {
        "profile": PROFILE_CHOICES,
        "steps": ("5", "10", "20", "40"),
        "review_wait": ("0", "60", "300", f"{MAX_REVIEW_WAIT:g}"),
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
                    self.review_wait = check_review_wait(text)
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
                            "review_wait": f"seconds from 0 to {MAX_REVIEW_WAIT:g}"}.get(
                                key, " or ".join(self.CHOICES.get(key, ())))
                raise ValueError(f"kli {source} {name}={text!r}: expected {expected}") from None

    def current(self) -> dict[str, str]:
        return {"profile": self.profile, "steps": str(self.steps),
                "review_wait": f"{self.review_wait:g}",
                "on_review_timeout": self.on_review_timeout}
