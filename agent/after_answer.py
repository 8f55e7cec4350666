"""Work that follows an answer (the thread's title, queueing the exchange for memory).

It runs beside the reply, never on its path: the final answer is out before any of it starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine
from typing import Any

log = logging.getLogger(__name__)


class AfterAnswer:
    """The tasks started after answers; `close()` ends them at shutdown."""

    def __init__(self) -> None:
        self._cancellable: set[asyncio.Task[None]] = set()
        self._finishing: set[asyncio.Task[None]] = set()

    def spawn(self, coro: Coroutine[Any, Any, None], *, finish: bool = False) -> None:
        """Run `coro` beside the reply; `finish`: `close()` lets it end instead of cancelling
        it (a quick write that must not be lost)."""
        task = asyncio.create_task(coro, name="after-answer")
        (self._finishing if finish else self._cancellable).add(task)
        task.add_done_callback(self._done)

    async def close(self) -> None:
        tasks = list(self._cancellable)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await asyncio.gather(*self._finishing, return_exceptions=True)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._cancellable.discard(task)
        self._finishing.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("after-answer work failed: %s", task.exception())
