"""The held update: the newest document waiting for its budget, and the one task that shows it.

Every streamed reply coalesces the same way: an update that finds no budget is held, a newer one
replaces it, and one background task shows the newest held value once the budget allows, again
while another was held meanwhile. Stopping it (the final is next) never cuts a call off: a call
on its way may still land on the platform, so `stop()` waits for it, then ends the task.

    held: Held[ReplyDoc] = Held("deferred update", log)
    held.hold(doc)
    if not held.waiting:
        held.schedule(show, ready)   # ready(): wait for the budget; show(doc): one call
    ...
    await held.stop()                # before the final

`show` raising a `ChannelError` ends the task (logged; the final deals with it); a show that
was rate limited puts its value back with `hold_again` and the task waits for the next turn.
The ReplyStreamer (bot/replies.py) and the channels' own streams use it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Generic, TypeVar

from channels.errors import ChannelError

T = TypeVar("T")
Spawn = Callable[[Coroutine[Any, Any, None]], "asyncio.Task[None]"]


class Held(Generic[T]):
    """The newest value not yet shown, and the task that shows it when the budget allows."""

    def __init__(
        self,
        what: str = "held update",
        log: logging.Logger | None = None,
        *,
        lock: asyncio.Lock | None = None,
    ) -> None:
        self.what = what
        self.log = log or logging.getLogger("channels.held")
        self.lock = lock or asyncio.Lock()
        """Held while a value is shown; `stop()` takes it, so it never ends a call midway."""
        self.value: T | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def waiting(self) -> bool:
        """A task is on its way to show the held value: a newer value only needs `hold`."""
        return self._task is not None and not self._task.done()

    def hold(self, value: T) -> None:
        """Keep `value` as the newest to show (it replaces an older one not yet shown)."""
        self.value = value

    def hold_again(self, value: T) -> None:
        """A show of `value` was rate limited: show it next, unless a newer one is held."""
        if self.value is None:
            self.value = value

    def take(self) -> T | None:
        """The held value (now no longer held), or None."""
        value, self.value = self.value, None
        return value

    def schedule(
        self,
        show: Callable[[T], Awaitable[None]],
        ready: Callable[[], Awaitable[None]],
        spawn: Spawn = asyncio.create_task,
    ) -> None:
        """Start the task (unless one runs): `ready()`, then `show` the newest held value,
        as long as one is held."""
        if not self.waiting:
            self._task = spawn(self._run(show, ready))

    async def stop(self) -> None:
        """End the task, after the call on its way (if any); drop what is held."""
        task, self._task = self._task, None
        self.value = None
        if task is None or task.done():
            return
        async with self.lock:
            task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        self.value = None  # a show cut short by the stop may have held its value again

    async def _run(
        self, show: Callable[[T], Awaitable[None]], ready: Callable[[], Awaitable[None]]
    ) -> None:
        try:
            while self.value is not None:
                await ready()
                async with self.lock:
                    value = self.take()
                    if value is None:
                        return
                    await show(value)
        except ChannelError as exc:  # a refusal or a rate limit: the final deals with it
            self.log.info("%s skipped: %s", self.what, exc)
