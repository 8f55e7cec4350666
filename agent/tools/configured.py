"""`agent.tools[]`: tools loaded by import path.

`use: "module:variable"` names a LangChain tool (used as is, under the entry's `name`) or a
factory `fn(entry: ToolEntry) -> tool`; a factory raises `ToolUnavailable(reason)` when it cannot
work with the options given (e.g. no API key), and the tool is left out with a start-up note.
A bad import path is a configuration error at load time.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent.config import ToolEntry

from agent.import_path import resolve_variable

log = logging.getLogger(__name__)


class ToolUnavailable(Exception):
    """A configured tool that cannot run with its options; the reason is reported at start."""


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
