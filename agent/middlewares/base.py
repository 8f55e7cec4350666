"""The shape most of our middlewares share: rewrite the model request, then call the model."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import SystemMessage

from agent.relay import content_text


class RequestRewriter(AgentMiddleware):
    """Subclasses implement `rewrite`; both the sync and async model paths use it."""

    def rewrite(self, request: ModelRequest) -> ModelRequest:
        raise NotImplementedError

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> Any:
        return handler(self.rewrite(request))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> Any:
        return await handler(self.rewrite(request))


def append_system(request: ModelRequest, extra: str) -> ModelRequest:
    """The request with `extra` appended to its system prompt (a paragraph of its own)."""
    if not extra:
        return request
    current = request.system_message
    base = content_text(current.content) if current is not None else ""
    text = f"{base}\n\n{extra}" if base else extra
    return request.override(system_message=SystemMessage(text))
