"""Platform budgets wider than a conversation, shared by the workers of one bot.

Each channel's `Pacer` (channels/pacing.py, the one rate-limit mechanism) gets a `SharedScopes`
from here: its bot-wide and workspace-wide budgets (Telegram's sends per second, Slack's
workspace `chat.update`) are split evenly among the live workers (their count from Redis), so
together they stay within the platform's budget; and a 429 that blocks such a scope on one
worker is published (`<prefix>:pacing:<channel>`) and applied by every other worker, so nobody
reaches the blocked scope before the platform's retry-after.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from channels.pacing import Key, Pacer

log = logging.getLogger("bot.cluster.budgets")


class _Scopes:
    """The `SharedScopes` of one channel's pacer."""

    def __init__(self, owner: SharedPacing, channel: str) -> None:
        self.owner = owner
        self.channel = channel

    def processes(self) -> int:
        return max(1, self.owner.live_workers())

    def blocked(self, key: Key, seconds: float) -> None:
        self.owner.publish(self.channel, key, seconds)


class SharedPacing:
    """Attaches the channels' pacers to Redis and applies the blocks other workers publish."""

    def __init__(
        self,
        client: Callable[[], aioredis.Redis | None],
        prefix: str,
        worker: Callable[[], str],
        live_workers: Callable[[], int],
    ) -> None:
        self.client = client
        self.prefix = prefix
        self.worker = worker
        self.live_workers = live_workers
        self.pacers: dict[str, Pacer] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._listener: asyncio.Task[None] | None = None

    def attach(self, channel: str, pacer: Pacer) -> None:
        pacer.shared = _Scopes(self, channel)
        self.pacers[channel] = pacer

    def publish(self, channel: str, key: Key, seconds: float) -> None:
        client = self.client()
        if client is None:
            return
        body = json.dumps({"worker": self.worker(), "key": list(key), "seconds": seconds})
        task = asyncio.create_task(self._send(client, f"{self.prefix}:pacing:{channel}", body))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _send(self, client: aioredis.Redis, topic: str, body: str) -> None:
        try:
            await client.publish(topic, body)
        except (RedisError, OSError) as exc:
            log.warning("budgets: a block was not shared: %s", exc)

    def listen(self) -> None:
        self._listener = asyncio.create_task(self._listen(), name="cluster-budgets")

    async def close(self) -> None:
        tasks = [*self._tasks, *([self._listener] if self._listener else [])]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _listen(self) -> None:
        while True:
            client = self.client()
            try:
                if client is not None:
                    await self._serve(client)
            except (RedisError, OSError) as exc:
                log.warning("budgets: listening failed (%s); listening again", exc)
            await asyncio.sleep(1)

    async def _serve(self, client: aioredis.Redis) -> None:
        pubsub = client.pubsub()
        await pubsub.psubscribe(f"{self.prefix}:pacing:*")
        try:
            async for message in pubsub.listen():
                if message.get("type") == "pmessage":
                    self._apply(message["channel"].rsplit(":", 1)[1], message["data"])
        finally:
            with contextlib.suppress(RedisError, OSError):
                await pubsub.aclose()

    def _apply(self, channel: str, data: str) -> None:
        block = json.loads(data)
        pacer = self.pacers.get(channel)
        if pacer is not None and block["worker"] != self.worker():
            pacer.apply_block(tuple(block["key"]), float(block["seconds"]))
