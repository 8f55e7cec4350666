"""Run-time context handed to the graph (`context=`): what tools and middlewares may read.

Graphs are built once per model and cached, so everything that differs per thread or per turn
travels here, read through `runtime.context` (tools take a `ToolRuntime` argument).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agent.config import AgentConfig, ModelConfig
from agent.events import RunSettings
from agent.paths import ThreadDirs


@dataclass(frozen=True, slots=True)
class RunContext:
    thread_id: str
    dirs: ThreadDirs
    user_id: str = ""
    user_name: str = ""
    chat_type: str = "dm"
    settings: RunSettings = field(default_factory=RunSettings)


@dataclass(frozen=True, slots=True)
class BuildContext:
    """What providers see when a graph is built (once per model and thinking/plan choice)."""

    model: ModelConfig
    agent: AgentConfig
    settings: RunSettings
