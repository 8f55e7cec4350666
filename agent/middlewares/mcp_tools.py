"""Adds the MCP servers' tools to each model call and runs them when the model calls them.

Tools join per call (not at graph build), so a changed extensions_config.json takes effect on
the next model call without rebuilding the graph.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse

from agent.mcp import McpTools


class McpToolsMiddleware(AgentMiddleware):
    def __init__(self, mcp: McpTools) -> None:
        super().__init__()
        self.mcp = mcp

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> Any:
        extra = await self.mcp.tools()
        if not extra:
            return await handler(request)
        have = {getattr(t, "name", None) for t in request.tools}
        tools = [*request.tools, *(t for t in extra if t.name not in have)]
        return await handler(request.override(tools=tools))

    async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        if request.tool is None:
            tool = self.mcp.by_name(request.tool_call["name"])
            if tool is not None:
                return await handler(request.override(tool=tool))
        return await handler(request)
