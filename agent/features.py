"""The middleware provider for memory, summarization, images and plan mode.

`context_middlewares(ctx)` is always among the runner's middleware providers; each piece is
switched by config (`agent.summarization`), the model (`supports_vision`) or the conversation's
settings (plan mode). Memory injection reads the block the runner put in `RunContext.memory`.
"""

from __future__ import annotations

from typing import Any

from agent.context import BuildContext
from agent.models import create_chat_model


def context_middlewares(ctx: BuildContext) -> list[Any]:
    from agent.middlewares.memory import InjectMemory
    from agent.middlewares.todos import PlanTodos
    from agent.middlewares.vision import VisionImages

    items: list[Any] = [InjectMemory()]
    if ctx.model.supports_vision:
        items.append(VisionImages())
    if ctx.agent.summarization.enabled:
        items.append(summarizer(ctx))
    if ctx.settings.plan_mode:
        items.append(PlanTodos())
    return items


def summarizer(ctx: BuildContext) -> Any:
    """LangChain's summarization middleware on our thresholds: past `trigger_tokens`, older
    messages become one summary message and the last `keep_messages` stay as they are."""
    from langchain.agents.middleware import SummarizationMiddleware

    cfg = ctx.agent.summarization
    model = create_chat_model(
        ctx.model_named(cfg.model_name), ctx.agent, thinking=False, purpose="summary"
    )
    return SummarizationMiddleware(
        model,
        trigger=("tokens", cfg.trigger_tokens),
        keep=("messages", cfg.keep_messages),
        trim_tokens_to_summarize=cfg.trim_tokens_to_summarize,
    )
