"""At most N `task` calls per model response run; the rest are answered with a note instead."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, ToolMessage

TASK_TOOL = "task"


def dropped_note(limit: int) -> str:
    return (
        f"Not run: at most {limit} subagents run at once per response. "
        "Wait for the results, then delegate this again if it is still needed."
    )


class SubagentLimit(AgentMiddleware):
    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def _limit(self, response: ModelResponse) -> ModelResponse:
        ai = next((m for m in response.result if isinstance(m, AIMessage)), None)
        if ai is None:
            return response
        tasks = [c for c in ai.tool_calls if c["name"] == TASK_TOOL]
        extra = tasks[self.limit :]
        if not extra:
            return response
        notes = [
            ToolMessage(
                content=dropped_note(self.limit),
                tool_call_id=c["id"] or "",
                name=TASK_TOOL,
                status="error",
            )
            for c in extra
        ]
        return ModelResponse(
            result=[*response.result, *notes], structured_response=response.structured_response
        )

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> Any:
        return self._limit(handler(request))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> Any:
        return self._limit(await handler(request))
