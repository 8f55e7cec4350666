"""What the bus does while Redis is away, and when it comes back without its data.

- **Held messages.** A message the journal accepted (it is durable there) whose append to its
  partition's stream failed or hung is held here, in order, and appended once Redis answers
  again (retried with the one backoff): the person gets the answer late, never "busy".
  Messages of later arrivals queue behind the held ones, so a conversation keeps its order.
  When Redis has failed this worker for `hand_over_after` (a lease time: its leases lapsed, so
  it is cut off, not slowed down by a stall), what it holds is handed to the other workers
  through the journal (bot/stores/journal: `hand_over`), and so is every message it holds from
  then on until an append goes through again: a live worker that reaches Redis takes them up
  and appends them (the new connection holder does before it receives,
  bot/cluster/connections.py), so they are appended about two lease times after the cut, not
  when this worker's line is mended.
- **The bus's epoch.** A key written once, read back at every upkeep: when Redis restarted
  without persistence (or was flushed) it is gone, and with it the streams, the consumer groups
  and every lease. The worker that sees it first writes a new one; every worker that sees a
  different epoch than its own rebuilds (bot/cluster/stream_bus.py): gives up its partitions,
  makes the consumer groups again, and appends the messages it had accepted or was answering
  and had not settled, from the journal, so each partition's next owner answers them once.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections import deque
from collections.abc import Awaitable, Callable

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from bot.cluster.redis_client import done
from channels.backoff import Backoff, BackoffPolicy, describe
from channels.base import InboundMessage
from channels.tasks import cancel

log = logging.getLogger("bot.cluster.bus")

Append = Callable[[InboundMessage], Awaitable[None]]
HandOver = Callable[[list[InboundMessage]], Awaitable[int]]


class HeldMessages:
    """Accepted messages waiting for Redis, appended in order by one task."""

    def __init__(
        self, append: Append, limit: int, hand_over: HandOver, hand_over_after: float
    ) -> None:
        self.append = append
        self.limit = limit
        self.hand_over = hand_over
        self.hand_over_after = hand_over_after
        self.messages: deque[InboundMessage] = deque()
        self.failing_since: float | None = None  # monotonic: the first failed append of now
        self._task: asyncio.Task[None] | None = None

    def __len__(self) -> int:
        return len(self.messages)

    def hold(self, msg: InboundMessage, why: str) -> bool:
        """Hold `msg` for later; False when `limit` are held already (then it is refused)."""
        if len(self.messages) >= self.limit:
            return False
        if self.failing_since is None:
            self.failing_since = time.monotonic()
        if not self.messages:
            log.warning(
                "bus: Redis did not take a message (%s); holding messages until it does", why
            )
        self.messages.append(msg)
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._release(), name="bus-held")
        return True

    async def _release(self) -> None:
        backoff = Backoff("bus: appending held messages", log, BackoffPolicy(base=0.1, cap=0.5))
        while self.messages:
            try:
                await self.append(self.messages[0])
            except (RedisError, OSError) as exc:
                backoff.failure(describe(exc))
                if await self._handed_over():
                    return
                await backoff.wait()
                continue
            self.messages.popleft()
            self.appended()
            backoff.success()
        log.info("bus: every held message is in Redis again")

    def appended(self) -> None:
        """An append went through: Redis answers this worker again."""
        self.failing_since = None

    async def _handed_over(self) -> bool:
        """Past `hand_over_after` of failures: every held message to the journal, for the
        other workers; True when they went."""
        since = self.failing_since
        if since is None or time.monotonic() - since < self.hand_over_after:
            return False
        msgs = list(self.messages)
        try:
            given = await self.hand_over(msgs)
        except Exception as exc:  # the database is away too: hold them on
            log.warning("bus: handing held messages over failed: %s", exc)
            return False
        self.messages.clear()
        log.warning(
            "bus: Redis unreachable for %.1f s; %d held messages handed to the other workers",
            time.monotonic() - since,
            given,
        )
        return True

    async def close(self) -> None:
        await cancel(self._task)


class Epoch:
    """The bus's epoch key; `changed()` is True once when Redis lost it (and took a new one)."""

    def __init__(self, client: aioredis.Redis, prefix: str) -> None:
        self.client = client
        self.key = f"{prefix}:bus:epoch"
        self.seen = ""

    async def take(self) -> None:
        """At start: the epoch now (writing one if there is none)."""
        await self.client.set(self.key, uuid.uuid4().hex, nx=True)
        self.seen = str(await self.client.get(self.key) or "")

    async def changed(self) -> bool:
        now = await done(self.client.get(self.key))
        if now == self.seen:
            return False
        if now is None:
            await self.client.set(self.key, uuid.uuid4().hex, nx=True)
            now = await done(self.client.get(self.key))
        log.warning("bus: Redis lost its data (restarted without persistence?); rebuilding")
        self.seen = str(now or "")
        return True
