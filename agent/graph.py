"""Build the lead agent graph (LangChain `create_agent`). Imports LangChain only when called."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agent.context import BuildContext, RunContext
from agent.models import create_chat_model
from agent.tools import MiddlewareProvider, ToolProvider, collect


def build_agent(
    ctx: BuildContext,
    *,
    checkpointer: Any,
    tool_providers: Sequence[ToolProvider],
    middleware_providers: Sequence[MiddlewareProvider],
) -> Any:
    """A compiled graph for one agent profile, model and thinking/plan choice, checkpointed
    per thread."""
    from langchain.agents import create_agent

    from agent.middlewares import ChatPrompt, DanglingToolCalls

    model = create_chat_model(ctx.model, ctx.agent, thinking=ctx.settings.thinking)
    middleware = [
        ChatPrompt(ctx.prompt),
        DanglingToolCalls(),
        *collect(middleware_providers, ctx),
    ]
    return create_agent(
        model=model,
        tools=collect(tool_providers, ctx),
        middleware=middleware,
        context_schema=RunContext,
        checkpointer=checkpointer,
    )
