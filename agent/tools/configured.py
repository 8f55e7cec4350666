"""`agent.tools[]`: tools loaded by import path.

`use: "module:variable"` names a LangChain tool (used as is, under the entry's `name`) or a
factory `fn(entry: ToolEntry) -> tool`; a factory raises `ToolUnavailable(reason)` when it cannot
work with the options given (e.g. no API key), and the tool is left out with a start-up note.
A bad import path is a configuration error at load time.
"""

from __future__ import annotations

import importlib
import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent.config import ToolEntry

log = logging.getLogger(__name__)


class ToolUnavailable(Exception):
    """A configured tool that cannot run with its options; the reason is reported at start."""


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


def load_configured_tools(
    entries: list[ToolEntry], *, bash_enabled: bool
) -> tuple[list[Any], list[str]]:
    """The tools of `agent.tools[]` and one note per entry that was left out."""
    from langchain_core.tools import BaseTool

    tools: list[Any] = []
    notes: list[str] = []
    for index, entry in enumerate(entries):
        where = f"agent.tools[{index}] ({entry.name})"
        if entry.group == "bash" and not bash_enabled:
            notes.append(f"{where}: left out because agent.sandbox.bash_enabled is false")
            continue
        target = resolve_variable(entry.use)
        try:
            made = target if isinstance(target, BaseTool) else target(entry)
        except ToolUnavailable as exc:
            notes.append(f"{where}: not available: {exc}")
            continue
        if not isinstance(made, BaseTool):
            raise ValueError(
                f"{where}: {entry.use} is neither a LangChain tool nor a factory returning one"
            )
        tools.append(
            made if made.name == entry.name else made.model_copy(update={"name": entry.name})
        )
    for note in notes:
        log.warning("%s", note)
    return tools, notes
