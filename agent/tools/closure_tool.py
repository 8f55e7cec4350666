"""`closure_tool(fn)`: LangChain's `@tool` for a tool function defined inside a builder.

`@tool` infers the argument schema from the signature by creating a pydantic model (~10 ms a
tool). A builder that runs on every graph build (each model/thinking/plan choice, and every
service start) would redo that for a signature that never changes: the schema is inferred once
per function code and default values, and later tools are built with it. Only the schema is
shared; each tool keeps its own function and closure.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from langchain_core.tools import BaseTool, tool

_SCHEMAS: dict[Hashable, Any] = {}


def closure_tool(fn: Callable[..., Any]) -> BaseTool:
    key = (fn.__code__, fn.__defaults__, _kwdefaults(fn))
    schema = _SCHEMAS.get(key)
    if schema is not None:
        return tool(fn, args_schema=schema)
    built = tool(fn)
    _SCHEMAS[key] = built.args_schema
    return built


def _kwdefaults(fn: Callable[..., Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted((fn.__kwdefaults__ or {}).items()))
