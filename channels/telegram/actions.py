"""Chat actions ("typing…") on a lane of their own: a thread with its own event loop and its
own connections, so the first sign of life never waits behind the service loop.

On a busy service loop (a burst of turns starting, replies streaming) every step of a call
waits a whole turn of the loop; a typing call takes several steps, so a sign issued at once
landed seconds later. The lane's loop runs nothing else. Telegram counts chat actions against
no message limit, so they go out at once; a 429 still stops them: each checks the bot's block
(the channel's Pacer, read from the lane, and the lane's own note of a 429 it just got, before
the service loop has applied it) just before it goes, and at most TYPING_AT_ONCE are on their
way at once. Errors reach the caller as python-telegram-bot raised them (api.guarded maps them
and blocks the bot on a 429).
"""

from __future__ import annotations

import asyncio
from typing import Any

from telegram import Bot
from telegram.error import RetryAfter
from telegram.request import HTTPXRequest

from channels._threads import SdkThread
from channels.telegram.api import retry_seconds
from channels.telegram.pacing import FloodGate

# In flight at once, on as many connections. Their own pool also because httpcore's pool
# bookkeeping grows with the square of its connections and requests.
TYPING_AT_ONCE = 16


class ActionLane:
    def __init__(self, token: str, base_url: str, gate: FloodGate) -> None:
        self.bot = Bot(
            token,
            base_url=base_url,
            request=HTTPXRequest(connection_pool_size=TYPING_AT_ONCE, read_timeout=15),
        )
        self.gate = gate
        self._thread: SdkThread | None = None
        self._slots: asyncio.Semaphore | None = None  # made on the lane's loop
        self._blocked_until = 0.0  # a 429 this lane got, on the pacer's clock
        self._stopped = False  # with its channel: a late sign starts no thread again

    async def typing(self, where: dict[str, Any]) -> bool:
        """Send "typing…" to `where` (chat_id, thread) on the lane; False when blocked."""
        if self._stopped:
            return False
        if self._thread is None:  # started at the first use, stopped with the channel
            self._thread = SdkThread("telegram-actions")
            self._thread.start()
        return await self._thread.run(self._typing(where))

    async def _typing(self, where: dict[str, Any]) -> bool:
        if self._slots is None:
            self._slots = asyncio.Semaphore(TYPING_AT_ONCE)
        async with self._slots:
            if self.gate.remaining() > 0 or self.gate.pacer.clock() < self._blocked_until:
                return False
            try:
                await self.bot.send_chat_action(action="typing", **where)
            except RetryAfter as exc:
                self._blocked_until = self.gate.pacer.clock() + retry_seconds(exc)
                raise
        return True

    async def stop(self) -> None:
        self._stopped = True
        if self._thread is not None:
            try:
                await self._thread.run(self.bot.shutdown())
            finally:
                self._thread.stop()
                self._thread = None
