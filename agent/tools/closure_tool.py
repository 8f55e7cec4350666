"""`closure_tool(fn)`: LangChain's `@tool` for a tool function defined inside a builder.

`@tool` infers the argument schema from the signature by creating a pydantic model (~10 ms a
tool). A builder that runs on every graph build (each model/thinking/plan choice, and every
service start) would redo that for a signature that never changes: the schema is inferred once
per function code, default values and tool name, and later tools are built with it. Only the
schema is shared; each tool keeps its own function and closure.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Hashable
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool

_SCHEMAS: dict[Hashable, Any] = {}


def closure_tool(
    fn: Callable[..., Any], *, name: str | None = None, description: str | None = None
) -> BaseTool:
    """`@tool` (or `StructuredTool.from_function` with `name`/`description`) for `fn`."""
    key = (fn.__code__, fn.__defaults__, _kwdefaults(fn), name)
    is_async = inspect.iscoroutinefunction(fn)
    built = StructuredTool.from_function(
        func=None if is_async else fn,
        coroutine=fn if is_async else None,
        name=name,
        description=description,
        args_schema=_SCHEMAS.get(key),
    )
    _SCHEMAS.setdefault(key, built.args_schema)
    return built


def _kwdefaults(fn: Callable[..., Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted((fn.__kwdefaults__ or {}).items()))
