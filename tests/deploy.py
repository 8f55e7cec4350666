"""The approval tests' tool call: the model asks to write "v7" to deploy.txt in the outputs, a
call the approvals policy below holds for a decision; `deployed` is what got written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.fakes.openai_wire import Reply, ToolCall

TARGET = "/mnt/user-data/outputs/deploy.txt"
WRITE = Reply(tool_calls=[ToolCall("write_file", {"path": TARGET, "content": "v7"}, id="w1")])
ALWAYS: dict[str, Any] = {"approvals": {"tools": {"write_file": "always"}}}


def deployed(data_dir: Path) -> list[str]:
    """The contents of every deploy.txt written to the outputs under `data_dir`."""
    return [p.read_text() for p in data_dir.rglob("deploy.txt") if "outputs" in p.parts]
