"""THE registry: every tool of both profiles, listed once.

Adding a tool means adding one module (which defines ``TOOL``) and one line below. Every face —
Python API, CLI, magics, comm, JSON schemas — reads this registry; none keeps its own list.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kli.tools.core.registry import Profile, Tool

# -- kli profile: process tools and the hashline file surface -----------------------------
# -- slmcode profile -------------------------------------------------------------------------

_TOOLS: list[Tool] = []

_PROFILES: list[Profile] = [Profile("kli")]


@dataclass
class Registry:
    tools: dict[str, Tool] = field(default_factory=dict)
    profiles: dict[str, Profile] = field(default_factory=dict)

    @classmethod
    def build(cls, tools: list[Tool], profiles: list[Profile]) -> Registry:
        reg = cls()
        for profile in profiles:
            reg.profiles[profile.name] = profile
        for tool in tools:
            if tool.name in reg.tools:
                raise ValueError(f"tool {tool.name!r} registered twice")
            if tool.profile not in reg.profiles:
                raise ValueError(f"tool {tool.name!r} names unknown profile {tool.profile!r}")
            reg.tools[tool.name] = tool
        return reg

    def names(self, profile: str | None = None) -> list[str]:
        return [n for n, t in self.tools.items() if profile is None or t.profile == profile]


REGISTRY = Registry.build(_TOOLS, _PROFILES)
