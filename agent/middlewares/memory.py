"""Adds the person's `<memory>` block (computed by the runner per turn) to the system prompt."""

from __future__ import annotations

from langchain.agents.middleware import ModelRequest

from agent.context import RunContext
from agent.middlewares.base import RequestRewriter, append_system


class InjectMemory(RequestRewriter):
    def rewrite(self, request: ModelRequest) -> ModelRequest:
        context = request.runtime.context if request.runtime is not None else None
        if not isinstance(context, RunContext) or not context.memory:
            return request
        return append_system(request, context.memory)
