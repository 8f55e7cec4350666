"""Adds the person's `<memory>` block (computed by the runner per turn) to the system prompt."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import SystemMessage

from agent.context import RunContext
from agent.relay import content_text


class InjectMemory(AgentMiddleware):
    def _inject(self, request: ModelRequest) -> ModelRequest:
        context = request.runtime.context if request.runtime is not None else None
        if not isinstance(context, RunContext) or not context.memory:
            return request
        current = request.system_message
        base = content_text(current.content) if current is not None else ""
        text = f"{base}\n\n{context.memory}" if base else context.memory
        return request.override(system_message=SystemMessage(text))

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> Any:
        return handler(self._inject(request))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> Any:
        return await handler(self._inject(request))
