"""Agent profiles (`agents:` in config.yaml): several agents on one service, each with its own
system prompt (inline or a SOUL/markdown file), model, tools, skills, MCP servers and memory.

`lead_agent` is the default profile: the one every chat and API run uses unless it picks
another. Without a configured `lead_agent` it is implied: `agent.system_prompt`, the default
model, everything the hands offer. A profile's `tools`, `skills` and `mcp_servers` are patterns
(names or shell globs, as a role's in `access.roles`); `None` allows everything. They act as one
more layer of the run's grant (agent/grant.py), so a tool a profile leaves out is never offered
and refused if called, exactly as one a role leaves out.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agent.grant import Grant, Layer

LEAD_AGENT = "lead_agent"
NAME_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"


class AgentProfile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=NAME_PATTERN)
    display_name: str = ""
    description: str = ""
    system_prompt: str = ""  # added to the base prompt; "" and no soul_file: agent.system_prompt
    soul_file: Path | None = None  # a SOUL.md / markdown file read instead of system_prompt
    model: str | None = None  # None: the default model; a chat's /models choice wins
    tools: list[str] | None = None  # patterns; None: every tool
    skills: list[str] | None = None  # None: every enabled skill; []: none
    mcp_servers: list[str] | None = None  # None: every MCP server
    memory: Literal["shared", "own"] = "shared"  # the person's memory, or one of its own

    @model_validator(mode="after")
    def _one_prompt(self) -> AgentProfile:
        if self.soul_file is not None and self.system_prompt.strip():
            raise ValueError("system_prompt: give system_prompt or soul_file, not both")
        return self

    @property
    def label(self) -> str:
        return self.display_name or self.name

    def prompt(self, fallback: str = "") -> str:
        """The profile's prompt: its SOUL file (read now), its `system_prompt`, or `fallback`."""
        if self.soul_file is not None:
            return self.soul_file.read_text(encoding="utf-8").strip()
        return self.system_prompt.strip() or fallback

    def layer(self) -> Layer | None:
        """The profile as a grant layer; None when it limits nothing."""
        if self.tools is None and self.skills is None and self.mcp_servers is None:
            return None
        every = ("*",)
        return Layer(
            role=f"agent {self.name}",
            tools=tuple(self.tools) if self.tools is not None else every,
            mcp_servers=tuple(self.mcp_servers) if self.mcp_servers is not None else every,
            skills=tuple(self.skills) if self.skills is not None else every,
            may_approve=True,  # approving is the person's right: the profile never narrows it
        )

    def narrow(self, grant: Grant | None) -> Grant | None:
        """`grant` capped by this profile (None: no grant, and the profile limits nothing)."""
        layer = self.layer()
        if layer is None:
            return grant
        return Grant((*(grant.layers if grant is not None else ()), layer))

    def memory_key(self, user_id: str) -> str:
        """Whose memory a run reads and writes: the person's, or the person's with this
        agent (`memory: own`)."""
        if self.memory == "shared" or not user_id:
            return user_id
        return f"{user_id}@agent:{self.name}"


def with_lead(profiles: list[AgentProfile]) -> dict[str, AgentProfile]:
    """Every profile by name, `lead_agent` first (implied when not configured)."""
    found = {p.name: p for p in profiles}
    lead = found.pop(LEAD_AGENT, None) or AgentProfile(
        name=LEAD_AGENT, display_name="Lead agent", description="The default agent"
    )
    return {LEAD_AGENT: lead, **found}


def profile_problems(profiles: list[AgentProfile], models: set[str]) -> list[str]:
    """Configuration errors with their YAML paths: duplicate names, unknown models."""
    problems: list[str] = []
    seen: set[str] = set()
    for i, profile in enumerate(profiles):
        if profile.name.lower() in seen:
            problems.append(f"agents[{i}].name: duplicate agent name {profile.name!r}")
        seen.add(profile.name.lower())
        if profile.model is not None and profile.model not in models:
            problems.append(f"agents[{i}].model: {profile.model!r} is not one of models[].name")
    return problems


def bound_problems(bound: dict[str, str | None], profiles: list[AgentProfile]) -> list[str]:
    """Bots bound to an agent no profile names (`bound`: channel → its `agent`)."""
    names = {p.name for p in profiles} | {LEAD_AGENT}
    problems = []
    for channel, agent in bound.items():
        if agent is not None and agent not in names:
            platform, _, bot = channel.partition(".")
            where = f"channels.{platform}" + (f".bots[{bot}]" if bot else "")
            problems.append(f"{where}.agent: {agent!r} is not one of agents[].name")
    return problems


def soul_problems(profiles: list[AgentProfile]) -> list[str]:
    """SOUL files that are missing (checked once paths are resolved against the config's
    folder)."""
    return [
        f"agents[{i}].soul_file: {p.soul_file} is not a file"
        for i, p in enumerate(profiles)
        if p.soul_file is not None and not p.soul_file.is_file()
    ]
