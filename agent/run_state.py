"""What a running turn is to the runner: its task, the errors and texts around it, the config
LangGraph takes for a thread (shared by agent/runner.py and agent/graph_api.py)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

BUSY = "I'm still working on the previous message in this conversation."
CANCELLED = "Stopped."


@dataclass
class Run:
    task: asyncio.Task[None] | None = None


class ThreadBusy(RuntimeError):
    """The thread already has a run."""


class RunCancelled(Exception):
    """A graph run was cancelled (`cancel(thread_id)`) before it finished."""


def thread_config(thread_id: str, checkpoint_id: str | None = None) -> dict[str, Any]:
    at = {"checkpoint_ns": "", "checkpoint_id": checkpoint_id} if checkpoint_id else {}
    return {"configurable": {"thread_id": thread_id, **at}}


async def settle(task: asyncio.Task[None] | None) -> None:
    """Cancel a producer that is still going and wait for it to end."""
    if task is None:
        return
    if not task.done():
        task.cancel()
    await asyncio.wait([task])  # never raises the task's error; our own cancellation still does
