"""The agent's hands, assembled from `AgentConfig`: sandbox and interaction tools, configured
tools (`agent.tools[]`), skills, MCP servers, subagents, and the middlewares that keep runs
sound. `AgentRunner(tool_providers=[hands.tools], middleware_providers=[hands.middlewares])`.

Constructing it does no network IO; it loads skills (problems are reported, not fatal) and
imports configured tools (a bad import path raises ValueError naming the entry).
"""

from __future__ import annotations

from typing import Any

from agent.config import AgentConfig
from agent.context import BuildContext, RunContext
from agent.hands_text import lead_static, skills_section, subagent_static
from agent.mcp import McpTools
from agent.sandbox.provider import make_provider
from agent.sandbox.shell import LocalProvider
from agent.skills.registry import SkillRegistry
from agent.subagents import Subagents
from agent.tools.configured import load_configured_tools


class Hands:
    def __init__(self, config: AgentConfig) -> None:
        from agent.tools.sandbox_tools import FSFactory

        self.config = config
        self.bash = config.sandbox.bash_enabled
        # bwrap is probed (once per process) only when commands may run at all
        self.sandbox = make_provider(config.sandbox) if self.bash else LocalProvider(config.sandbox)
        self.skills = SkillRegistry(config.skills.path, config.extensions_config)
        self.mcp = McpTools(config.extensions_config)
        self.configured, self.notes = load_configured_tools(config.tools, bash_enabled=self.bash)
        self.fs_for = FSFactory(config.skills.path, self.skills.dir_allowed)
        self.subagents = (
            Subagents(config.subagents, bash_enabled=self.bash, build=self._build_subagent)
            if config.subagents.enabled
            else None
        )

    # providers -------------------------------------------------------------------------------

    def base_tools(self) -> list[Any]:
        from agent.tools.sandbox_tools import sandbox_tools

        return _unique(
            [*sandbox_tools(self.config.sandbox, self.fs_for, self.sandbox), *self.configured]
        )

    def tools(self, ctx: BuildContext) -> list[Any]:
        """Tool provider for the lead agent."""
        from agent.tools.interaction import interaction_tools

        base = self.base_tools()
        tools = _unique([*base, *interaction_tools()])
        if self.subagents is not None:
            tools.append(self.subagents.task_tool(ctx, base))
        return tools

    def middlewares(self, ctx: BuildContext) -> list[Any]:
        """Middleware provider for the lead agent."""
        from agent.middlewares.subagent_limit import SubagentLimit

        types = self.subagents.types() if self.subagents is not None else None
        static = lead_static(
            bash=self.bash, subagent_types=types, limit=self.config.subagents.max_concurrent
        )
        common = self._common(static)
        return [common[0], SubagentLimit(self.config.subagents.max_concurrent), *common[1:]]

    def _common(self, static: str, *, can_ask: bool = True) -> list[Any]:
        from agent.middlewares.approval import ApprovalGuard
        from agent.middlewares.grant import GrantGuard
        from agent.middlewares.hands_prompt import HandsPrompt
        from agent.middlewares.loop_guard import LoopGuard
        from agent.middlewares.mcp_tools import McpToolsMiddleware
        from agent.middlewares.tool_errors import ToolErrors

        return [
            HandsPrompt(static, self.skills, skills_section),
            LoopGuard(),
            McpToolsMiddleware(self.mcp),
            GrantGuard(self.mcp.qualify),
            ApprovalGuard(self.mcp.qualify, can_ask=can_ask, skills_of=self.skills.used_in),
            ToolErrors(),
        ]

    def _build_subagent(self, ctx: BuildContext, tools: list[Any], prompt: str) -> Any:
        from langchain.agents import create_agent

        from agent.models import create_chat_model

        return create_agent(
            model=create_chat_model(ctx.model, ctx.agent, thinking=False, purpose="subagent"),
            tools=tools,
            system_prompt=prompt,
            # a pause for approval is kept in the lead's saver (agent/subagents.py)
            middleware=self._common(
                subagent_static(bash=self.bash), can_ask=ctx.checkpointer is not None
            ),
            context_schema=RunContext,
            checkpointer=ctx.checkpointer,
        )

    # state -----------------------------------------------------------------------------------

    def status_notes(self) -> list[str]:
        """Lines for /status: skill problems, configured tools left out, MCP state."""
        lines = [*self.skills.problems, *self.notes]
        if self.mcp.servers:
            lines.append("MCP: " + ", ".join(self.mcp.servers))
        elif not self.mcp.loaded and self.config.extensions_config.exists():
            lines.append("MCP: not loaded yet (loads with the first message)")
        lines += self.mcp.problems
        enabled = [s.name for s in self.skills.enabled()]
        if enabled:
            lines.insert(0, "Skills: " + ", ".join(f"/{n}" for n in enabled))
        return lines


def _unique(tools: list[Any]) -> list[Any]:
    """Drop tools whose name is taken by an earlier one (built-ins win over configured)."""
    seen: set[str] = set()
    kept = []
    for item in tools:
        if item.name not in seen:
            seen.add(item.name)
            kept.append(item)
    return kept
