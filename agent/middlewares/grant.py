"""The person's grant, enforced: the model is offered only the tools it allows, and every tool
call is checked again when it runs (a hallucinated or forged call to a denied tool gets a clear
tool error). Every call, run or refused, is told to the run's observer (the service's audit).

It sits inside the MCP middleware, so it sees (and filters) the MCP tools too; subagents run
with the lead's run context, so they inherit the grant.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from langchain.agents.middleware import ModelRequest
from langchain_core.messages import ToolMessage

from agent.context import RunContext
from agent.grant import ToolUse
from agent.middlewares.base import RequestRewriter

log = logging.getLogger(__name__)

Qualify = Callable[[str], tuple[str, str | None]]


def _plain(name: str) -> tuple[str, str | None]:
    return name, None


class GrantGuard(RequestRewriter):
    def __init__(self, qualify: Qualify = _plain) -> None:
        super().__init__()
        self.qualify = qualify

    def _allowed(self, context: RunContext | None, name: str) -> bool:
        if context is None or context.grant is None:
            return True
        return context.grant.allows_tool(*self.qualify(name))

    def rewrite(self, request: ModelRequest) -> ModelRequest:
        """The request offering only the tools the grant allows."""
        context = _context(request.runtime)
        if context is None or context.grant is None:
            return request
        tools = [t for t in request.tools if self._allowed(context, _name(t))]
        return request.override(tools=tools) if len(tools) != len(request.tools) else request

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        context = _context(request.runtime)
        if not self._allowed(context, request.tool_call["name"]):
            return self._refuse(request, context)
        return handler(request)

    async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        context = _context(request.runtime)
        if not self._allowed(context, request.tool_call["name"]):
            return self._refuse(request, context)
        started = time.monotonic()
        outcome: Literal["ok", "error"] = "error"
        try:
            result = await handler(request)
            outcome = "error" if getattr(result, "status", "success") == "error" else "ok"
            return result
        finally:
            self._tell(request, context, outcome, time.monotonic() - started)

    def _refuse(self, request: Any, context: RunContext | None) -> ToolMessage:
        call = request.tool_call
        role = context.grant.role if context is not None and context.grant else ""
        log.warning("tool call refused: %s is not granted to %s", call["name"], role)
        self._tell(request, context, "denied", 0.0)
        return ToolMessage(
            content=f"Error: the tool {call['name']!r} is not available to this user "
            f"(role {role}). Do not call it again; answer with the tools you were given.",
            tool_call_id=call.get("id") or "",
            name=call["name"],
            status="error",
        )

    def _tell(
        self,
        request: Any,
        context: RunContext | None,
        outcome: Literal["ok", "error", "denied"],
        seconds: float,
    ) -> None:
        if context is None or context.observe is None:
            return
        call = request.tool_call
        tool, server = self.qualify(call["name"])
        use = ToolUse(
            user_id=context.user_id,
            chat=context.chat,
            thread_id=context.thread_id,
            tool=tool,
            server=server,
            args=dict(call.get("args") or {}),
            outcome=outcome,
            duration_ms=round(seconds * 1000, 1),
            role=context.grant.role if context.grant else "",
        )
        try:
            context.observe(use)
        except Exception:  # the audit never breaks a run
            log.exception("tool observer failed")


def _context(runtime: Any) -> RunContext | None:
    context = getattr(runtime, "context", None)
    return context if isinstance(context, RunContext) else None


def _name(tool: Any) -> str:
    return str(tool.get("name", "")) if isinstance(tool, dict) else str(getattr(tool, "name", ""))
