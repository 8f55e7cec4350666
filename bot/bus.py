"""The inbound message bus: bounded, durable admission between channels and the dispatcher.

`publish` records the message in the delivery journal (so a redelivery is recognised and a crash
loses nothing) and queues it. A full queue never drops silently: the journal entry is released
(so the platform's redelivery is taken later), the sender is told to retry, and it is counted.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot.metrics import Metrics
from bot.stores.journal import Journal
from channels.base import InboundMessage, PublishResult

log = logging.getLogger("bot.bus")

OverflowHandler = Callable[[InboundMessage], Awaitable[None]]


@dataclass
class BusCounters:
    published: int = 0
    duplicates: int = 0
    overflowed: int = 0


class MessageBus:
    def __init__(
        self,
        journal: Journal,
        maxsize: int,
        on_overflow: OverflowHandler,
        metrics: Metrics | None = None,
    ) -> None:
        self.metrics = metrics or Metrics()
        self.journal = journal
        self.queue: asyncio.Queue[InboundMessage] = asyncio.Queue(maxsize)
        self.on_overflow = on_overflow
        self.counters = BusCounters()
        self.closed = False
        # a new message handed on: its first sign of life goes out beside the queue (bot/signs.py)
        self.on_accepted: Callable[[InboundMessage], None] = lambda msg: None

    async def _accept(self, msg: InboundMessage) -> bool:
        """Record `msg` in the journal; False (counted, logged) for a platform's redelivery."""
        if await self.journal.accept(msg):
            return True
        self.counters.duplicates += 1
        self.metrics.duplicates.labels(channel=msg.chat.channel).inc()
        log.info("duplicate %s:%s suppressed", msg.chat.channel, msg.event_id)
        return False

    async def publish(self, msg: InboundMessage) -> PublishResult:
        """Accept and queue `msg`. A caller cancelled meanwhile (a channel that stops receiving:
        its connection was handed over) does not cut this short: a message the journal took is
        one the platform will not deliver again, so it must reach the queue (or be held)."""
        return await asyncio.shield(self._publish(msg))

    async def _publish(self, msg: InboundMessage) -> PublishResult:
        if self.closed:
            return PublishResult.closed
        if not await self._accept(msg):
            return PublishResult.duplicate
        self.on_accepted(msg)  # before it is queued: the sign never waits for the queue
        refused = await self._enqueue(msg)
        if refused:
            await self.journal.forget(msg)
            self.counters.overflowed += 1
            self.metrics.overflowed.labels(channel=msg.chat.channel).inc()
            log.warning("%s; told the sender to retry", refused)
            await self.on_overflow(msg)
            return PublishResult.busy
        self.counters.published += 1
        self.metrics.inbound.labels(channel=msg.chat.channel).inc()
        return PublishResult.accepted

    async def _enqueue(self, msg: InboundMessage) -> str:
        """Hand an accepted message on to its worker; why not ("" when it went)."""
        try:
            self.queue.put_nowait(msg)
        except asyncio.QueueFull:
            return f"inbound queue full ({self.queue.maxsize})"
        return ""

    def requeue(self, msg: InboundMessage) -> None:
        """Queue a message the journal already holds (replay after restart)."""
        self.queue.put_nowait(msg)

    async def get(self) -> InboundMessage:
        return await self.queue.get()

    def close(self) -> None:
        self.closed = True

    @property
    def depth(self) -> int:
        return self.queue.qsize()
