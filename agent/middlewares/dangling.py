"""Repair tool calls left without results (a run cancelled while tools ran).

Providers reject an assistant message whose tool calls are not all answered. Before each model
call, unanswered calls get an error `ToolMessage` ("interrupted") right after their message.
The repair is applied to what the model sees; the checkpoint keeps the original history.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain.agents.middleware import ModelRequest
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, ToolMessage

from agent.middlewares.base import RequestRewriter

INTERRUPTED = "interrupted: this tool call did not finish (the run was stopped)"


def repair_dangling_tool_calls(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    repaired: list[BaseMessage] = []
    for message in messages:
        repaired.append(message)
        if not isinstance(message, AIMessage):
            continue
        for call in message.tool_calls:
            if call.get("id") and call["id"] not in answered:
                repaired.append(
                    ToolMessage(
                        content=INTERRUPTED,
                        tool_call_id=call["id"],
                        name=call["name"],
                        status="error",
                    )
                )
    return repaired


class DanglingToolCalls(RequestRewriter):
    def rewrite(self, request: ModelRequest) -> ModelRequest:
        messages = repair_dangling_tool_calls(request.messages)
        if len(messages) == len(request.messages):
            return request
        fixed: list[AnyMessage] = list(messages)  # type: ignore[arg-type]
        return request.override(messages=fixed)
