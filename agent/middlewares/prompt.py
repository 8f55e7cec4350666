"""The system prompt, built per model call: today's date and who the user is stay current."""

from __future__ import annotations

from langchain.agents.middleware import ModelRequest
from langchain_core.messages import SystemMessage

from agent.context import RunContext
from agent.middlewares.base import RequestRewriter
from agent.prompt import system_prompt


class ChatPrompt(RequestRewriter):
    """Sets the system message: the default prompt, the configured extra, the user's name."""

    def __init__(self, extra: str = "") -> None:
        super().__init__()
        self.extra = extra

    def rewrite(self, request: ModelRequest) -> ModelRequest:
        context = request.runtime.context if request.runtime is not None else None
        lines = [self.extra] if self.extra else []
        if isinstance(context, RunContext) and context.user_name and context.chat_type == "dm":
            lines.insert(0, f"You are talking with {context.user_name}.")
        text = system_prompt("\n\n".join(lines))
        return request.override(system_message=SystemMessage(text))
