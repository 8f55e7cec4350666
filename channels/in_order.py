"""Background calls that run beside a reply, in order per key: one message's reactions (👀, then
👍) never overtake each other, and none holds up the reply. Shared by the channels' status
reactions (channels/<platform>/reactions.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable

from channels.tasks import cancel_all


class InOrder:
    def __init__(self) -> None:
        self._last: dict[Hashable, asyncio.Task[None]] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def run(self, key: Hashable, call: Callable[[], Awaitable[None]]) -> None:
        """Run `call()` in the background once the calls queued before it for `key` are done
        (whatever became of them). `call` handles its own errors."""
        task = asyncio.create_task(self._after(self._last.get(key), call))
        self._last[key] = task
        self._tasks.add(task)
        task.add_done_callback(lambda done: self._done(key, done))

    @staticmethod
    async def _after(
        before: asyncio.Task[None] | None, call: Callable[[], Awaitable[None]]
    ) -> None:
        if before is not None:
            await asyncio.gather(before, return_exceptions=True)
        await call()

    def _done(self, key: Hashable, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if self._last.get(key) is task:
            del self._last[key]

    @property
    def pending(self) -> list[asyncio.Task[None]]:
        return list(self._tasks)

    async def close(self) -> None:
        """Cancel what is still queued or running (the channel stops)."""
        await cancel_all(self._tasks)
