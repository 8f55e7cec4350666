"""Which worker owns which partition of the bus: leases, shared out evenly among live workers.

There are `bus.redis.partitions` streams. Every worker announces itself (a score in a sorted set
that is its expiry) and aims to hold its share, ceil(partitions / live workers), of the
partition leases (bot/cluster/lease.py): it takes free ones, renews its own, and hands back
extras when more workers are live. Handing back is graceful: the partition is first read no
more (draining); its lease is released once every message read from it has settled, so a
conversation never has two workers at once. A dead worker's leases run out after
`lease_seconds` and the survivors take its partitions, with its unacknowledged messages.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from bot.cluster.lease import Lease

log = logging.getLogger("bot.cluster.partitions")

Hook = Callable[[int], Awaitable[None]]


@dataclass(frozen=True)
class PartitionHooks:
    """What the bus does about its partitions: `load(p)` counts the messages read from p and
    not yet settled; `on_gained(p)` runs before p is read (to claim its unacknowledged
    messages), `on_lost(p)` when a lease was taken away (a pause longer than the lease);
    `sweep(p)` once per lease time for each partition read (it claims entries another consumer
    left unacknowledged too long); `upkeep()` first in every round (the bus's epoch check)."""

    load: Callable[[int], int]
    on_gained: Hook
    on_lost: Hook
    sweep: Hook
    upkeep: Callable[[], Awaitable[None]] | None = None


def partition_of(conversation_key: str, partitions: int) -> int:
    """The partition of a conversation: stable across processes and releases."""
    return zlib.crc32(conversation_key.encode()) % partitions


class Partitions:
    """This worker's partition leases. `readable` are read; `draining` wait for their messages
    to settle (`PartitionHooks` say what the bus does about them)."""

    def __init__(
        self,
        client: aioredis.Redis,
        prefix: str,
        count: int,
        seconds: float,
        worker: str,
        hooks: PartitionHooks,
    ) -> None:
        self.client = client
        self.prefix = prefix
        self.count = count
        self.seconds = seconds
        self.worker = worker
        self.load = hooks.load
        self.on_gained = hooks.on_gained
        self.on_lost = hooks.on_lost
        self.sweep = hooks.sweep
        self.upkeep = hooks.upkeep
        self._ticks = 0
        self.leases = {
            p: Lease(client, f"{prefix}:bus:{p}:owner", seconds, worker) for p in range(count)
        }
        self.readable: set[int] = set()
        self.draining: set[int] = set()
        self.live_workers = 1
        self.changed = asyncio.Event()  # set when `readable` changes
        self.closing = False

    @property
    def workers_key(self) -> str:
        return f"{self.prefix}:workers"

    def owns(self, p: int) -> bool:
        return (p in self.readable or p in self.draining) and self.leases[p].held

    async def run(self) -> None:
        """Keep the share up to date, every third of the lease time; a watch gives up the
        partitions whose lease lapsed even while Redis calls hang (a cut network)."""
        watch = asyncio.create_task(self._watch(), name="bus-lease-watch")
        try:
            await self._keep()
        finally:
            watch.cancel()

    async def _watch(self) -> None:
        """Every tenth of the lease: a lease this worker could not renew in time is renewed at
        once (after a stalled loop it still can: nobody else took it) or, when that fails or
        hangs for a tenth of the lease, given up (its runs stop) before it runs out in Redis
        and another worker takes it."""
        while True:
            await asyncio.sleep(self.seconds / 10)
            for p in sorted(self.readable | self.draining):
                if not self.leases[p].held and not await self._renewed(p):
                    await self._lose(p, "its lease could not be renewed in time")

    async def _renewed(self, p: int) -> bool:
        try:
            return await asyncio.wait_for(self.leases[p].renew(), self.seconds / 10)
        except (RedisError, OSError):
            return False

    async def _keep(self) -> None:
        while True:
            try:
                await self.tick()
            except (RedisError, OSError) as exc:
                log.warning("bus: Redis unreachable (%s); partitions kept while leases last", exc)
            except Exception:  # never let the keeper die: the leases would lapse silently
                log.exception("bus: partition upkeep failed")
            await asyncio.sleep(self.seconds / 3)

    async def tick(self) -> None:
        await self._announce()
        if self.upkeep is not None:
            await self.upkeep()
        for p in sorted(self.readable | self.draining):
            if not await self.leases[p].renew():
                await self._lose(p, "another worker took it over (this one paused too long)")
        self._ticks += 1
        if self._ticks % 3 == 0:  # once per lease time
            for p in sorted(self.readable):
                await self.sweep(p)
        target = 0 if self.closing else math.ceil(self.count / max(1, self.live_workers))
        if len(self.readable) < target:
            await self._gain(target - len(self.readable))
        elif len(self.readable) > target:
            self._drain(len(self.readable) - target)
        for p in sorted(self.draining):
            if self.load(p) == 0:
                await self.leases[p].release()
                self.draining.discard(p)
                log.info("bus: partition %d handed back", p)

    async def release_all(self) -> None:
        """Shutdown: hand every partition back at once (unsettled messages stay pending in the
        stream and go to the next owner)."""
        for p in sorted(self.readable | self.draining):
            try:
                await self.leases[p].release()
            except (RedisError, OSError):
                pass
        self.readable.clear()
        self.draining.clear()
        try:
            await self.client.zrem(self.workers_key, self.worker)
        except (RedisError, OSError):
            pass

    async def lose_all(self) -> None:
        """Redis lost every lease (it lost its data): stop work on every partition."""
        for p in sorted(self.readable | self.draining):
            self.leases[p].token = None
            await self._lose(p, "Redis lost its data")

    async def _announce(self) -> None:
        now = time.time()
        async with self.client.pipeline(transaction=False) as pipe:
            pipe.zadd(self.workers_key, {self.worker: now + self.seconds})
            pipe.zremrangebyscore(self.workers_key, "-inf", now)
            pipe.zcard(self.workers_key)
            *_, live = await asyncio.wait_for(pipe.execute(), self.seconds / 3)
        self.live_workers = int(live)

    async def _gain(self, wanted: int) -> None:
        start = zlib.crc32(self.worker.encode()) % self.count  # spread the first tries
        for i in range(self.count):
            p = (start + i) % self.count
            if wanted == 0:
                return
            if p in self.readable or p in self.draining:
                continue
            if await self.leases[p].acquire():
                await self.on_gained(p)
                self.readable.add(p)
                self.changed.set()
                wanted -= 1
                log.info("bus: partition %d taken", p)

    def _drain(self, extra: int) -> None:
        for p in sorted(self.readable, reverse=True)[:extra]:
            self.readable.discard(p)
            self.draining.add(p)
            self.changed.set()

    async def _lose(self, p: int, why: str) -> None:
        log.error("bus: partition %d given up: %s; its next owner answers its messages", p, why)
        self.readable.discard(p)
        self.draining.discard(p)
        self.changed.set()
        await self.on_lost(p)
