"""The bus on Redis streams: any worker publishes, the owner of a partition handles it.

`publish` records the message in the delivery journal (the dedupe, as on the in-memory bus),
then appends it to its partition's stream (`<prefix>:bus:<p>`, the partition a hash of the
conversation key). The worker holding that partition's lease (bot/cluster/partitions.py) reads
it through the consumer group, so a conversation's messages reach one worker, in order, and its
dispatcher's lane keeps them in order; other conversations run on other workers in parallel.

What a read entry becomes follows the journal: settled (a duplicate, or a message a dead worker
finished) → acknowledged; accepted → dispatched; running or delivering (a worker died mid-reply)
→ resumed in the reply the user already sees, never answered twice (bot/turns.py). An entry is
acknowledged only once the journal settles its message (`settled`, called by the journal the
service uses), and only while this worker still holds the partition's lease (the fencing token
is compared in the same Lua script). A dead worker's unacknowledged entries are claimed by the
partition's next owner once the lease ran out.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import RedisError, ResponseError

from bot.bus import MessageBus, OverflowHandler
from bot.cluster import redis_client
from bot.cluster.outage import Epoch, HeldMessages
from bot.cluster.partitions import PartitionHooks, Partitions, partition_of
from bot.cluster.redis_client import within
from bot.config.schema import RedisConfig
from bot.metrics import Metrics
from bot.stores.journal import (
    UNSETTLED,
    Entry,
    Journal,
    State,
    dump_message,
    event_key,
    load_message,
)
from channels.base import InboundMessage
from channels.tasks import cancel_all

log = logging.getLogger("bot.cluster.bus")

GROUP = "antler"
Resume = Callable[[list[Entry]], Awaitable[None]]
Abandon = Callable[[set[str]], Awaitable[None]]

_ACK = """
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return -1 end
for i = 3, #ARGV do
  redis.call('XACK', KEYS[1], ARGV[2], ARGV[i])
  redis.call('XDEL', KEYS[1], ARGV[i])
end
return 1
"""


@dataclass
class _InFlight:
    partition: int
    conversation: str
    ids: list[str] = field(default_factory=list)


class RedisBus(MessageBus):
    """`MessageBus` whose queue is the partition streams; the local queue holds only what this
    worker read and has not dispatched yet."""

    def __init__(
        self,
        journal: Journal,
        cfg: RedisConfig,
        maxsize: int,
        on_overflow: OverflowHandler,
        metrics: Metrics | None = None,
    ) -> None:
        super().__init__(journal, maxsize, on_overflow, metrics)
        self.cfg = cfg
        self.prefix = cfg.key_prefix
        self.worker = uuid.uuid4().hex[:12]
        self.client: aioredis.Redis | None = None
        self.partitions: Partitions | None = None
        self.inflight: dict[str, _InFlight] = {}
        self.on_resume: Resume | None = None  # the service's resume routine (journal rules)
        self.on_abandon: Abandon | None = None  # stop work on conversations of a lost partition
        self._room = asyncio.Event()
        self._reading: set[int] = set()  # partitions in the read now waiting for Redis
        self._tasks: list[asyncio.Task[None]] = []
        # accepted while Redis was away; handed over when it stays away for a lease time
        self.held = HeldMessages(
            lambda msg: within(self._append(msg), self.patience),  # a cut network hangs it
            maxsize,
            journal.hand_over,
            cfg.lease_seconds,
        )
        self._appending = asyncio.Lock()
        self.epoch: Epoch | None = None
        self.patience = cfg.lease_seconds / 3  # a Redis call that hangs longer is given up

    # ---------------------------------------------------------------- life

    async def open(self) -> None:
        """Reach Redis (RedisUnavailable naming bus.redis.url if not) and start taking a share
        of the partitions."""
        self.client = await redis_client.connect(self.cfg)
        await self._make_groups()
        self.epoch = Epoch(self.client, self.prefix)
        await self.epoch.take()
        self.partitions = Partitions(
            self.client,
            self.prefix,
            self.cfg.partitions,
            self.cfg.lease_seconds,
            self.worker,
            PartitionHooks(self._load, self._gained, self._lost, self.sweep, self._upkeep),
        )
        assert self.cfg.url is not None
        log.info(
            "bus: Redis at %s, worker %s",
            redis_client.where(self.cfg.url.get_secret_value()),
            self.worker,
        )

    async def _make_groups(self) -> None:
        assert self.client is not None
        for p in range(self.cfg.partitions):
            with contextlib.suppress(ResponseError):  # BUSYGROUP: made by another worker
                await self.client.xgroup_create(self.stream(p), GROUP, id="0", mkstream=True)

    async def _upkeep(self) -> None:
        """Each upkeep of the partitions: rebuild when Redis lost its data (bot/cluster/outage.py):
        the leases went with it; this worker's unsettled messages go back into the streams."""
        assert self.epoch is not None
        assert self.partitions is not None
        if not await asyncio.wait_for(self.epoch.changed(), self.patience):
            return
        await self.partitions.lose_all()
        await self._make_groups()
        entries = await self.journal.own_unsettled()
        await self.republish(entries)
        log.info("bus: rebuilt after Redis lost its data; %d messages appended again", len(entries))

    def start_reading(self) -> None:
        """Once the channels can answer: take a share of the partitions and read them."""
        assert self.partitions is not None
        self._tasks = [
            asyncio.create_task(self.partitions.run(), name="bus-partitions"),
            asyncio.create_task(self._read_loop(), name="bus-reader"),
        ]

    def live_workers(self) -> int:
        """Workers alive at the last look (this one included)."""
        return self.partitions.live_workers if self.partitions else 1

    def status(self) -> dict[str, object]:
        """What /health says about the bus."""
        parts = self.partitions
        return {
            "backend": "redis",
            "worker": self.worker,
            "partitions": sorted(parts.readable) if parts else [],
            "draining": sorted(parts.draining) if parts else [],
            "live_workers": parts.live_workers if parts else 0,
            "in_flight": len(self.inflight),
        }

    async def shutdown(self) -> None:
        """After the dispatcher stopped: stop reading and hand the partitions back."""
        await cancel_all(self._tasks)
        await self.held.close()  # what is still held stays accepted in the journal (taken over)
        if self.partitions is not None:
            await self.partitions.release_all()
        if self.client is not None:
            await self.client.aclose()

    def stream(self, p: int) -> str:
        return f"{self.prefix}:bus:{p}"

    def partition(self, msg: InboundMessage) -> int:
        return partition_of(msg.chat.key, self.cfg.partitions)

    # ---------------------------------------------------------------- publishing

    async def _enqueue(self, msg: InboundMessage) -> str:
        """Append the accepted message to its partition's stream (the bus's `publish`); while
        Redis is away, hold it (in order behind any held already) and append it later."""
        async with self._appending:  # one at a time: a later message never overtakes
            why = "messages held before it"
            if not self.held:
                try:
                    await asyncio.wait_for(self._append(msg), self.patience)
                    self.held.appended()
                    return ""
                except (RedisError, OSError) as exc:
                    why = str(exc) or type(exc).__name__
            if self.held.hold(msg, why):
                return ""
        return f"bus: Redis unreachable and {self.held.limit} messages held already"

    async def republish(self, entries: list[Entry]) -> None:
        """Messages of a worker that died before (or after) appending them, or handed over by one
        cut off from Redis: append them again (held, in order, if Redis is away here too); the
        partition's owner answers each once, by the journal's state."""
        for entry in entries:
            if entry.msg is not None and (refused := await self._enqueue(entry.msg)):
                log.warning("bus: %s handed back (%s)", entry.key, refused)
                await self.journal.hand_over([entry.msg])

    async def _append(self, msg: InboundMessage) -> None:
        assert self.client is not None
        await self.client.xadd(self.stream(self.partition(msg)), {"m": dump_message(msg)})

    # ---------------------------------------------------------------- reading

    async def _read_loop(self) -> None:
        assert self.client is not None
        assert self.partitions is not None
        while True:
            streams: dict[Any, Any] = {
                self.stream(p): ">" for p in sorted(self.partitions.readable)
            }
            room = self.queue.maxsize - len(self.inflight)
            if not streams or room <= 0 or self.closed:
                self._room.clear()
                self.partitions.changed.clear()
                await _first(self._room.wait(), self.partitions.changed.wait(), timeout=0.5)
                continue
            self._reading = set(self.partitions.readable)
            try:
                found = await within(
                    self.client.xreadgroup(GROUP, self.worker, streams, count=room, block=500),
                    0.5 + self.patience,
                )
            except (RedisError, OSError) as exc:
                log.warning("bus: reading from Redis failed: %s", exc)
                await asyncio.sleep(1)
                continue
            finally:
                self._reading = set()
            for stream, entries in found or []:
                p = int(stream.rsplit(":", 1)[1])
                for entry_id, fields in entries:
                    await self._take(p, entry_id, fields)

    async def _gained(self, p: int) -> None:
        """A partition just became ours: first what its last owner read and did not settle."""
        await self._claim(p, 0)

    async def sweep(self, p: int) -> None:
        """Entries of an owned partition left unacknowledged by another consumer for a lease
        time (a read that raced a handover, a worker that paused): ours to handle now."""
        await self._claim(p, int(self.cfg.lease_seconds * 1000))

    async def _claim(self, p: int, idle_ms: int) -> None:
        assert self.client is not None
        known = {i for f in self.inflight.values() if f.partition == p for i in f.ids}
        cursor = "0-0"
        while True:
            cursor, entries, *_ = await within(
                self.client.xautoclaim(
                    self.stream(p),
                    GROUP,
                    self.worker,
                    min_idle_time=idle_ms,
                    start_id=cursor,
                    count=100,
                ),
                self.patience,
            )
            for entry_id, fields in entries:
                if fields is not None and entry_id not in known:
                    await self._take(p, entry_id, fields)
            if cursor == "0-0":
                return

    async def _take(self, p: int, entry_id: str, fields: dict[str, str]) -> None:
        assert self.partitions is not None
        if not self.partitions.leases[p].held:  # fenced: another worker may own it by now
            return
        try:
            msg = load_message(fields["m"])
        except (KeyError, ValueError, TypeError):
            log.warning("bus: unreadable entry %s in partition %d dropped", entry_id, p)
            await self._ack_ids(p, [entry_id])
            return
        key = event_key(msg)
        if (known := self.inflight.get(key)) is not None:  # the same message twice: one answer
            known.ids.append(entry_id)
            return
        self.inflight[key] = _InFlight(p, msg.chat.key, [entry_id])
        try:
            await self._handle(msg)
        except Exception as exc:  # stays pending: the sweep takes it again after a lease time
            self.inflight.pop(key, None)
            log.warning("bus: %s left for later: %s", key, exc)

    async def _handle(self, msg: InboundMessage) -> None:
        """What the journal says the read message needs."""
        entry = await self.journal.entry(msg)
        if entry is None or entry.state not in UNSETTLED:
            await self.settled(msg)
        elif entry.state is State.accepted and not entry.handle:
            self.queue.put_nowait(msg)
        elif self.on_resume is not None:
            log.info("bus: taking up %s (%s by a worker that stopped)", entry.key, entry.state)
            await self.on_resume([entry])

    # ---------------------------------------------------------------- settling

    async def settled(self, msg: InboundMessage) -> None:
        """The journal settled `msg`: acknowledge its entries (fenced by the lease)."""
        done = self.inflight.pop(event_key(msg), None)
        if done is None:
            return
        self._room.set()
        try:
            await self._ack_ids(done.partition, done.ids)
        except (RedisError, OSError) as exc:  # stays pending: its next reader finds it settled
            log.warning("bus: acknowledging %s failed: %s", event_key(msg), exc)

    async def _ack_ids(self, p: int, ids: list[str]) -> None:
        assert self.client is not None
        assert self.partitions is not None
        token = self.partitions.leases[p].token or ""
        await within(
            self.client.eval(
                _ACK, 2, self.stream(p), f"{self.prefix}:bus:{p}:owner", token, GROUP, *ids
            ),
            self.patience,
        )

    def _load(self, p: int) -> int:
        """Messages of `p` not settled yet (a read of `p` under way counts as one)."""
        reading = 1 if p in self._reading else 0
        return reading + sum(1 for f in self.inflight.values() if f.partition == p)

    async def _lost(self, p: int) -> None:
        keys = {f.conversation for f in self.inflight.values() if f.partition == p}
        for key in [k for k, f in self.inflight.items() if f.partition == p]:
            del self.inflight[key]
        if keys and self.on_abandon is not None:
            await self.on_abandon(keys)

    @property
    def depth(self) -> int:
        return self.queue.qsize()


async def _first(*aws: Awaitable[object], timeout: float) -> None:
    tasks = [asyncio.ensure_future(a) for a in aws]
    try:
        await asyncio.wait(tasks, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
