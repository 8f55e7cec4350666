"""`setup_agent` and `update_agent`: the agent writes a custom agent's soul and settings, as
DeerFlow's agent-creation chat does.

- **`setup_agent(soul, description, skills?)`** is offered only in a *bootstrap* run
  (`RunSettings.bootstrap` names the agent being set up: DeerFlow's UI sends `is_bootstrap` and
  `agent_name` in the run's context). It creates that agent, or replaces its soul, description
  and skills when it exists (DeerFlow's upsert).
- **`update_agent(soul?, description?, skills?, tool_groups?, model?)`** is offered to a custom
  agent (every profile but `lead_agent`) and changes only what it is given, on that agent.

The agent keeps no agents itself: the service hands it an `AgentPort` (wired in its
composition root), which checks who asks, writes config.yaml through the one configuration
editor and answers with the outcome the model reads back. The prompt of a bootstrap run says
which agent is being made (`SetupPrompt`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from langchain.agents.middleware import ModelRequest
from langchain.tools import ToolRuntime
from langchain_core.tools import BaseTool

from agent.context import BuildContext, RunContext
from agent.grant import Grant
from agent.middlewares.base import RequestRewriter, append_system
from agent.profiles import LEAD_AGENT
from agent.tools.closure_tool import closure_tool

SETUP_TOOL = "setup_agent"
UPDATE_TOOL = "update_agent"
_NULLISH = frozenset({"null", "none", "undefined"})


@dataclass(frozen=True, slots=True)
class AgentEdit:
    """One change the agent asks for. `fields` are the profile's keys (`system_prompt`,
    `description`, `skills`, `tools`, `model`); `create`: setup_agent (create or replace)."""

    name: str
    fields: dict[str, Any]
    create: bool
    tool: str
    user_id: str = ""
    thread_id: str = ""
    grant: Grant | None = None
    changed: tuple[str, ...] = field(default=())  # the tool's own argument names, for the answer


class AgentPort(Protocol):
    async def edit(self, request: AgentEdit) -> str:
        """Apply the change; returns what happened, or `Error: <why>`."""
        ...


_SETUP_DESCRIPTION = """Create the custom agent this conversation is setting up (its name is \
given in the system prompt) once you know what it should be. `soul`: the full SOUL.md of the \
agent, in markdown: who it is, what it does, its tone and its rules. `description`: one line \
saying what the agent does. `skills`: the skill names it may use (omit for every enabled \
skill, [] for none). Calling it again replaces the soul, description and skills."""

_UPDATE_DESCRIPTION = """Change this custom agent's own settings when the user asks to refine \
it. Only the fields you pass change; omit the others (never pass "null"). `soul`: the FULL new \
SOUL.md (start from the current one and apply the edits). `description`: one line. `skills`: \
the skill names it may use ([] none). `tool_groups`: the tool names or globs it may use ([] \
none). `model`: a configured model name. The change applies from the next message on."""

_BOOTSTRAP_PROMPT = """<agent_setup>
You are helping the user create a new custom agent named "{name}". Talk with them to learn \
what the agent is for, who it serves, its tone and its rules; ask a few short questions, one \
topic at a time, in the user's language. When you know enough (or the user asks to save), \
write the agent's SOUL.md and call `setup_agent` with it and a one-line description. Tell the \
user the outcome the tool reports.
</agent_setup>"""


def setup_tool(port: AgentPort) -> BaseTool:
    async def setup_agent(
        soul: str,
        description: str,
        runtime: ToolRuntime[RunContext],
        skills: list[str] | None = None,
    ) -> str:
        context = runtime.context
        name = context.settings.bootstrap if isinstance(context, RunContext) else None
        if not name:
            return "Error: setup_agent only works in an agent-creation conversation."
        if not soul or not soul.strip():
            return "Error: soul content is empty; refusing to create an agent with an empty soul"
        fields: dict[str, Any] = {"system_prompt": soul.strip(), "description": description}
        if skills is not None:
            fields["skills"] = skills
        return await port.edit(_request(context, name, fields, create=True, tool=SETUP_TOOL))

    return closure_tool(setup_agent, name=SETUP_TOOL, description=_SETUP_DESCRIPTION)


def update_tool(port: AgentPort) -> BaseTool:
    async def update_agent(
        runtime: ToolRuntime[RunContext],
        soul: str | None = None,
        description: str | None = None,
        skills: list[str] | None = None,
        tool_groups: list[str] | None = None,
        model: str | None = None,
    ) -> str:
        context = runtime.context
        name = context.settings.agent if isinstance(context, RunContext) else None
        if not name or name == LEAD_AGENT:
            return "Error: update_agent only works in a custom agent's conversation."
        given = {"soul": soul, "description": description, "skills": skills,
                 "tool_groups": tool_groups, "model": model}  # fmt: skip
        given = {k: v for k, v in given.items() if v is not None and not _nullish(v)}
        if not given:
            return "Error: no fields given; pass at least one of soul, description, skills, " \
                "tool_groups, model"  # fmt: skip
        if "soul" in given and not str(given["soul"]).strip():
            return "Error: soul content is empty; omit soul to keep the current one"
        keys = {"soul": "system_prompt", "tool_groups": "tools"}
        fields = {keys.get(k, k): v for k, v in given.items()}
        request = _request(context, name, fields, create=False, tool=UPDATE_TOOL)
        return await port.edit(replace(request, changed=tuple(given)))

    return closure_tool(update_agent, name=UPDATE_TOOL, description=_UPDATE_DESCRIPTION)


def _nullish(value: Any) -> bool:
    return isinstance(value, str) and value.strip().lower() in _NULLISH


def _request(
    context: RunContext, name: str, fields: dict[str, Any], *, create: bool, tool: str
) -> AgentEdit:
    return AgentEdit(name=name, fields=fields, create=create, tool=tool,
                     user_id=context.user_id, thread_id=context.thread_id,
                     grant=context.grant)  # fmt: skip


class SetupPrompt(RequestRewriter):
    """Tells the model of a bootstrap run which agent it is making."""

    def rewrite(self, request: ModelRequest) -> ModelRequest:
        context = request.runtime.context if request.runtime is not None else None
        if not isinstance(context, RunContext) or not context.settings.bootstrap:
            return request
        return append_system(request, _BOOTSTRAP_PROMPT.format(name=context.settings.bootstrap))


def agent_setup_tools(port: AgentPort) -> Callable[[BuildContext], list[Any]]:
    """A tool provider: `setup_agent` in a bootstrap graph, `update_agent` in a custom
    agent's (agent.tools)."""
    setup, update = setup_tool(port), update_tool(port)

    def provide(ctx: BuildContext) -> list[Any]:
        if ctx.settings.bootstrap:
            return [setup]
        return [update] if ctx.profile_name != LEAD_AGENT else []

    return provide


def agent_setup_middlewares(ctx: BuildContext) -> list[Any]:
    """A middleware provider: the bootstrap prompt in a bootstrap graph."""
    return [SetupPrompt()] if ctx.settings.bootstrap else []
