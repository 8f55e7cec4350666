"""A Gateway run's live events across workers.

The worker running an API run appends each of its SSE events, in order, to a Redis stream of
the run's own (`<prefix>:run:<run_id>`, capped, expiring `TTL_SECONDS` after its last event);
a worker asked to stream or join that run reads it from the start, so a client joining on any
worker sees the run's deltas live, and a reconnect with `Last-Event-ID` resumes there.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import RedisError

log = logging.getLogger("bot.cluster.run_events")

TTL_SECONDS = 600  # a finished run's events stay this long for late joiners
MAX_EVENTS = 10_000  # per run (the oldest go first)
READ_BLOCK_MS = 1_000

Deliver = Callable[[int, str, Any], None]


class RunEvents:
    """Publish this worker's API runs' events; relay other workers' runs' events."""

    def __init__(self, client: Callable[[], aioredis.Redis | None], prefix: str) -> None:
        self.client = client
        self.prefix = prefix
        self._writers: set[asyncio.Task[None]] = set()

    def key(self, run_id: str) -> str:
        return f"{self.prefix}:run:{run_id}"

    def publisher(self, run_id: str) -> Deliver:
        """A sink for the run's events (sync, in order): a task writes them to Redis."""
        queue: asyncio.Queue[tuple[int, str, Any]] = asyncio.Queue()
        task = asyncio.create_task(self._write(run_id, queue), name=f"run-events:{run_id}")
        self._writers.add(task)
        task.add_done_callback(self._writers.discard)
        return lambda seq, event, data: queue.put_nowait((seq, event, data))

    async def _write(self, run_id: str, queue: asyncio.Queue[tuple[int, str, Any]]) -> None:
        key, failed = self.key(run_id), False
        while True:
            seq, event, data = await queue.get()
            client = self.client()
            if client is not None and not failed:
                try:
                    entry = {"seq": seq, "event": event, "data": json.dumps(data)}
                    await client.xadd(key, entry, maxlen=MAX_EVENTS, approximate=True)  # type: ignore[arg-type]
                    await client.expire(key, TTL_SECONDS)
                except (RedisError, OSError) as exc:  # followers elsewhere get the end only
                    log.warning("run %s: live events not shared: %s", run_id, exc)
                    failed = True
            if event == "end":
                return

    async def relay(self, run_id: str, deliver: Deliver) -> bool:
        """Deliver the run's events from its first until `end`; True if `end` was read."""
        key, last = self.key(run_id), "0-0"
        while True:
            client = self.client()
            if client is None:
                return False
            try:
                found = await client.xread({key: last}, count=100, block=READ_BLOCK_MS)
            except (RedisError, OSError) as exc:
                log.warning("run %s: live events not read: %s", run_id, exc)
                return False
            for _stream, entries in found or []:
                for entry_id, fields in entries:
                    last = entry_id
                    event = fields["event"]
                    deliver(int(fields["seq"]), event, json.loads(fields["data"]))
                    if event == "end":
                        return True
