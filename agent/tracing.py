"""LangSmith bookkeeping without thread hops while tracing is off.

LangChain's agent factory wraps every middleware's `awrap_model_call` in LangSmith's
`@traceable`, which runs its run-start and run-end bookkeeping through `run_in_executor`: two
thread hops per middleware per model call, even when nothing is traced. With tracing off the
bookkeeping is a few microseconds of Python, so it runs inline; with tracing on, LangSmith's
default (a worker thread) is kept.
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable
from typing import Any

_installed = False


async def _inline_unless_tracing(
    default: Callable[..., Awaitable[Any]],
    ctx: contextvars.Context,
    func: Callable[..., Any],
    /,
    *args: Any,
    **kwargs: Any,
) -> Any:
    from langsmith.utils import tracing_is_enabled

    if tracing_is_enabled():
        return await default(ctx, func, *args, **kwargs)
    return ctx.run(func, *args, **kwargs)


def inline_untraced_bookkeeping() -> None:
    """Install the override (LangSmith's public `set_runtime_overrides`), once per process."""
    global _installed
    if _installed:
        return
    import langsmith

    langsmith.set_runtime_overrides(aio_to_thread=_inline_unless_tracing)
    _installed = True
