"""`module:variable` import paths (configured tools, search providers), resolved and checked."""

from __future__ import annotations

import importlib
from typing import Any


def resolve_variable(use: str) -> Any:
    module_name, _, attr = use.partition(":")
    if not module_name or not attr:
        raise ValueError(f"use must be 'module:variable', got {use!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(
            f"cannot import {module_name!r} (from use {use!r}): {exc}; is the package installed?"
        ) from exc
    try:
        return getattr(module, attr)
    except AttributeError as exc:
        raise ValueError(f"module {module_name!r} has no {attr!r} (from use {use!r})") from exc


def check_import_path(use: str) -> str:
    """Validator for `ToolEntry.use`: the module imports and has the variable."""
    resolve_variable(use)
    return use
