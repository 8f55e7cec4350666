"""A tool that raises does not end the run: the exception becomes an error tool message."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import ToolMessage
from langgraph.errors import GraphBubbleUp

from agent.sandbox.vfs import SandboxError

log = logging.getLogger(__name__)


def error_message(request: Any, exc: Exception) -> ToolMessage:
    call = request.tool_call
    if isinstance(exc, SandboxError):
        text = f"Error: {exc}"
    else:
        log.warning("tool %s failed: %s: %s", call.get("name"), type(exc).__name__, exc)
        text = f"Error: {type(exc).__name__}: {exc}"[:2000]
    return ToolMessage(
        content=text, tool_call_id=call.get("id") or "", name=call.get("name"), status="error"
    )


class ToolErrors(AgentMiddleware):
    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        try:
            return handler(request)
        except GraphBubbleUp:
            raise
        except Exception as exc:
            return error_message(request, exc)

    async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        try:
            return await handler(request)
        except GraphBubbleUp:
            raise
        except Exception as exc:
            return error_message(request, exc)
