"""What a person may use in a chat, as plain data the service hands the agent with each turn.

The service computes a `Grant` (bot/access/roles.py: the person's role capped by the chat's
ceiling) and puts it on the `Turn`; the agent offers the model only the tools and skills it
allows and checks every tool call against it again when the call runs. `None` for a grant means
"everything" (a Gateway run, or a service without `access.roles`).

A grant is a stack of *layers*, one per role that limits it (the person's, the chat's ceiling):
something is allowed when every layer allows it. A layer's patterns are names or shell globs
(`web_*`, `*`). MCP tools are `server:tool`: a server named in `mcp_servers` grants its tools,
unless the layer's `tools` hold `server:...` patterns for it, which narrow the server to those;
a `server:tool` pattern in `tools` grants that tool even without the server.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from functools import lru_cache
from typing import Any, Literal


@dataclass(frozen=True, slots=True)
class Layer:
    """One role's patterns."""

    role: str
    tools: tuple[str, ...] = ("*",)
    mcp_servers: tuple[str, ...] = ("*",)
    skills: tuple[str, ...] = ("*",)
    models: tuple[str, ...] = ("*",)
    agents: tuple[str, ...] = ("*",)  # agent profiles (agent/profiles.py)
    commands: tuple[str, ...] = ("*",)
    upload_bytes: int | None = None
    may_approve: bool = False

    def allows_tool(self, name: str, server: str | None = None) -> bool:
        if server is None:
            return matches(self.tools, name)
        qualified = f"{server}:{name}"
        scoped = [p for p in self.tools if ":" in p]
        if matches(scoped, qualified):
            return True
        narrowed = any(fnmatchcase(server, p.split(":", 1)[0]) for p in scoped)
        return not narrowed and matches(self.mcp_servers, server)


@dataclass(frozen=True, slots=True)
class Grant:
    layers: tuple[Layer, ...] = field(default_factory=tuple)

    @property
    def role(self) -> str:
        """The role it acts as: the person's, with the ceiling that capped it."""
        names = [layer.role for layer in self.layers]
        if len(set(names)) <= 1:
            return names[0] if names else "everyone"
        return f"{names[0]} (at most {', '.join(names[1:])} here)"

    def allows_tool(self, name: str, server: str | None = None) -> bool:
        return _allows_tool(self, name, server)

    def allows_skill(self, name: str) -> bool:
        return all(matches(layer.skills, name) for layer in self.layers)

    def allows_model(self, name: str) -> bool:
        return all(matches(layer.models, name) for layer in self.layers)

    def allows_agent(self, name: str) -> bool:
        return all(matches(layer.agents, name) for layer in self.layers)

    def allows_command(self, key: str) -> bool:
        """`key` is a command's permission key: `/status`, `/models NAME`, `/memory clear`."""
        return all(matches(layer.commands, key) for layer in self.layers)

    @property
    def upload_bytes(self) -> int | None:
        limits = [layer.upload_bytes for layer in self.layers if layer.upload_bytes is not None]
        return min(limits) if limits else None

    @property
    def may_approve(self) -> bool:
        return bool(self.layers) and all(layer.may_approve for layer in self.layers)


EVERYTHING = Grant((Layer(role="member"),))


@lru_cache(maxsize=4096)
def _allows_tool(grant: Grant, name: str, server: str | None) -> bool:
    """`Grant.allows_tool`, once per grant and tool: a grant is plain frozen data, and the
    guard asks for every offered tool on every model call."""
    return all(layer.allows_tool(name, server) for layer in grant.layers)


def matches(patterns: tuple[str, ...] | list[str], name: str) -> bool:
    return any(fnmatchcase(name, pattern) for pattern in patterns)


def allows(grant: Grant | None, tool: str, server: str | None = None) -> bool:
    """`grant.allows_tool`, where no grant allows everything."""
    return grant is None or grant.allows_tool(tool, server)


@dataclass(frozen=True, slots=True)
class ToolUse:
    """One tool call as it ran (or was refused), for the service's audit trail and metrics.

    `args` are the call's arguments as the model sent them: the receiver redacts and digests
    them before anything is written.
    """

    user_id: str
    chat: str
    thread_id: str
    tool: str
    server: str | None
    args: dict[str, Any]
    outcome: Literal["ok", "error", "denied"]
    duration_ms: float
    role: str


ToolObserver = Callable[[ToolUse], None]
