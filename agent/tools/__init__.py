"""The seam where tools and middlewares join the agent.

A *tool provider* is `fn(BuildContext) -> Iterable[tool]` (LangChain tools or plain functions);
a *middleware provider* is `fn(BuildContext) -> Iterable[AgentMiddleware]`. `AgentRunner` takes
lists of both and calls them whenever it builds a graph (once per model/thinking/plan choice),
so built-in tools, skills, MCP, memory and subagents each arrive as one provider. Per-thread
data (directories, user) is read at run time from `runtime.context` (`agent.context.RunContext`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from agent.context import BuildContext

ToolProvider = Callable[[BuildContext], Iterable[Any]]
MiddlewareProvider = Callable[[BuildContext], Iterable[Any]]


def builtin_tools(_ctx: BuildContext) -> list[Any]:
    """The built-in tool set (file tools, present_files, web …) lands here."""
    return []


DEFAULT_TOOL_PROVIDERS: tuple[ToolProvider, ...] = (builtin_tools,)


def collect(
    providers: Iterable[Callable[[BuildContext], Iterable[Any]]], ctx: BuildContext
) -> list[Any]:
    items: list[Any] = []
    for provider in providers:
        items.extend(provider(ctx))
    return items
