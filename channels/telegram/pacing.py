"""Telegram's flood limits, enforced inside the channel.

`FloodGate`: after a 429 the whole bot is blocked for `retry_after`; until then no API call is
made at all (`check` raises RateLimited for reply updates, `wait` sleeps for one-off sends).
`ChatPacer`: at most one visible call (send, edit, draft) per chat per interval, measured from
the *end* of the previous call, so the platform sees the gap even when requests are slow.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from channels.base import ChannelError, RateLimited

T = TypeVar("T")
Clock = Callable[[], float]


class FloodGate:
    """The bot-wide block a 429 imposes."""

    def __init__(self, clock: Clock = time.monotonic) -> None:
        self._clock = clock
        self._until = 0.0

    def remaining(self) -> float:
        return max(0.0, self._until - self._clock())

    def block(self, seconds: float) -> None:
        """Block every call for `seconds` from now (a longer block already in place wins)."""
        self._until = max(self._until, self._clock() + seconds)

    def check(self) -> None:
        """Raise RateLimited(scope="bot") while blocked."""
        left = self.remaining()
        if left > 0:
            raise RateLimited(left, scope="bot")

    async def wait(self) -> None:
        """Sleep until the block (which may grow while waiting) has passed."""
        while (left := self.remaining()) > 0:
            await asyncio.sleep(left)


class EntitiesRejected(Exception):
    """Telegram could not parse the HTML entities; the caller resends plain text."""


class ChatPacer:
    """One visible call per chat per interval; calls for one chat run one at a time."""

    def __init__(self, clock: Clock = time.monotonic) -> None:
        self._clock = clock
        self._last: dict[str, float] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    def ready_in(self, chat_id: str, interval: float) -> float:
        """Seconds until the chat may see the next call."""
        last = self._last.get(chat_id)
        return 0.0 if last is None else max(0.0, last + interval - self._clock())

    async def run(
        self, chat_id: str, interval: float, gate: FloodGate, call: Callable[[], Awaitable[T]]
    ) -> T:
        """Wait for the chat's slot, refuse while the bot is blocked, then make the call."""
        gate.check()
        lock = self._locks.setdefault(chat_id, asyncio.Lock())
        async with lock:
            while (wait := self.ready_in(chat_id, interval)) > 0:
                await asyncio.sleep(wait)
            gate.check()
            try:
                result = await call()
            except EntitiesRejected:
                raise  # nothing was shown: the plain resend may follow at once
            except ChannelError as exc:
                if exc.retryable:  # unknown outcome or a 429: count it
                    self._mark(chat_id)
                raise  # refused outright: nothing was shown
            except BaseException:
                self._mark(chat_id)
                raise
            self._mark(chat_id)
            return result

    def _mark(self, chat_id: str) -> None:
        self._last[chat_id] = self._clock()
        if len(self._last) > 10_000:
            self._prune()

    def _prune(self) -> None:
        cutoff = self._clock() - 60.0
        for chat_id, at in list(self._last.items()):
            lock = self._locks.get(chat_id)
            if at < cutoff and (lock is None or not lock.locked()):
                self._last.pop(chat_id, None)
                self._locks.pop(chat_id, None)
