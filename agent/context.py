"""Run-time context handed to the graph (`context=`): what tools and middlewares may read.

Graphs are built once per model and cached, so everything that differs per thread or per turn
travels here, read through `runtime.context` (tools take a `ToolRuntime` argument).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent.approval import ApprovalPolicy
from agent.config import AgentConfig, ModelConfig
from agent.events import RunSettings
from agent.grant import Grant, ToolObserver
from agent.paths import ThreadDirs
from agent.profiles import LEAD_AGENT, AgentProfile


@dataclass(frozen=True, slots=True)
class RunContext:
    thread_id: str
    dirs: ThreadDirs
    user_id: str = ""
    user_name: str = ""
    chat_type: str = "dm"
    settings: RunSettings = field(default_factory=RunSettings)
    memory: str = ""  # the person's `<memory>` block for this turn ("" when none)
    chat: str = ""
    grant: Grant | None = None  # None: every tool (agent/grant.py)
    observe: ToolObserver | None = None  # told of every tool call (the service's audit)
    approvals: ApprovalPolicy | None = None  # None: no call waits for approval
    # tool call ids a resumed approval decided: asked again whatever the policy now says, so a
    # decision is never ignored (a denial never turns into a run)
    deciding: tuple[str, ...] = ()
    # False in a subagent resumed after its approval: a further call that needs one is refused
    # (one pause per `task` call; the lead may delegate again)
    may_ask: bool = True


@dataclass(frozen=True, slots=True)
class BuildContext:
    """What providers see when a graph is built (once per agent profile, model and
    thinking/plan choice)."""

    model: ModelConfig
    agent: AgentConfig
    settings: RunSettings
    models: tuple[ModelConfig, ...] = ()  # every configured model (for `model_name` settings)
    checkpointer: Any = None  # the lead's saver: subagents keep their pauses in it too
    profile: AgentProfile | None = None  # None: the implied lead_agent

    @property
    def profile_name(self) -> str:
        return self.profile.name if self.profile is not None else LEAD_AGENT

    @property
    def prompt(self) -> str:
        """The system prompt's configured part: the profile's, else `agent.system_prompt`."""
        fallback = self.agent.system_prompt
        return self.profile.prompt(fallback) if self.profile is not None else fallback

    def model_named(self, name: str | None) -> ModelConfig:
        """The configured model called `name`; this graph's model when unset or unknown."""
        return next((m for m in self.models if name and m.name == name), self.model)
