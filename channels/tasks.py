"""Ending background tasks: cancel them and wait until each has finished (its `finally` run)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any


async def cancel(*tasks: asyncio.Task[Any] | None) -> None:
    """Cancel `tasks` (None ones passed over) and wait for them; their errors are not raised."""
    await cancel_all(t for t in tasks if t is not None)


async def cancel_all(tasks: Iterable[asyncio.Task[Any]]) -> None:
    """`cancel` for a collection (a copy is taken: tasks may leave it as they end)."""
    live = list(tasks)
    for task in live:
        task.cancel()
    await asyncio.gather(*live, return_exceptions=True)
