"""Platform budgets wider than a conversation, shared by the workers of one bot.

Each channel's `Pacer` (channels/pacing.py, the one rate-limit mechanism) gets a `SharedScopes`
from here. Its bot-wide and workspace-wide budgets (Telegram's sends per second, Slack's
workspace `chat.update`) are one token bucket in Redis per budget and scope
(`<prefix>:bucket:<channel>:<method>:<scope...>`), refilled and taken from in one Lua script, so
together the workers stay within the platform's budget and a worker with nothing to send leaves
its part to the busy ones. The script refills on Redis's clock (`TIME`), the same for every
worker. When Redis cannot be reached (or does not answer within a second) the pacer falls back
to an even split among the live workers, and says so once in the log. A 429 that blocks such a
scope on one worker is published (`<prefix>:pacing:<channel>`) and applied by every other
worker, so nobody reaches the blocked scope before the platform's retry-after.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from bot.cluster.redis_client import done, keep_listening
from channels.pacing import Key, Pacer, Pooled
from channels.tasks import cancel

log = logging.getLogger("bot.cluster.budgets")
TIMEOUT = 1.0  # seconds a take may wait for Redis before the even split is used instead

# KEYS: one hash per bucket. ARGV[1]: now in seconds ("" = Redis's clock), then rate and burst of
# each bucket. Takes a token from every bucket if all have one ("taken"); else takes nothing and
# returns the seconds until all have one.
_TAKE = """
local now = tonumber(ARGV[1])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) + tonumber(t[2]) / 1000000
end
local wait, state = 0, {}
for i, key in ipairs(KEYS) do
  local rate, burst = tonumber(ARGV[2 * i]), tonumber(ARGV[2 * i + 1])
  local saved = redis.call('HMGET', key, 'tokens', 'stamp')
  local tokens, stamp = tonumber(saved[1]) or burst, tonumber(saved[2]) or now
  if now > stamp then
    tokens, stamp = math.min(burst, tokens + (now - stamp) * rate), now
  end
  state[i] = {tokens, stamp, math.ceil(burst / rate * 1000) + 1000}
  if tokens < 1 - 1e-9 then wait = math.max(wait, (1 - tokens) / rate) end
end
if wait > 0 then return string.format('%.17g', wait) end
for i, key in ipairs(KEYS) do
  redis.call('HSET', key, 'tokens', string.format('%.17g', state[i][1] - 1),
             'stamp', string.format('%.17g', state[i][2]))
  redis.call('PEXPIRE', key, state[i][3])
end
return 'taken'
"""


class _Scopes:
    """The `SharedScopes` of one channel's pacer."""

    def __init__(self, owner: SharedPacing, channel: str) -> None:
        self.owner = owner
        self.channel = channel

    def processes(self) -> int:
        return max(1, self.owner.live_workers())

    async def take(self, buckets: tuple[Pooled, ...]) -> float | None:
        return await self.owner.take(self.channel, buckets)

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
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.client = client
        self.prefix = prefix
        self.worker = worker
        self.live_workers = live_workers
        self.clock = clock  # None: the buckets refill on Redis's clock (tests pass a virtual one)
        self.pool_down = False
        self.pacers: dict[str, Pacer] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._listener: asyncio.Task[None] | None = None

    def attach(self, channel: str, pacer: Pacer) -> None:
        pacer.shared = _Scopes(self, channel)
        self.pacers[channel] = pacer

    async def take(self, channel: str, buckets: tuple[Pooled, ...]) -> float | None:
        """A token from each pooled bucket (see `_TAKE`); None when Redis cannot be used."""
        client = self.client()
        if client is None:
            return None
        keys = [f"{self.prefix}:bucket:{channel}:" + ":".join(key) for key, _, _ in buckets]
        args: list[str | float] = [repr(self.clock()) if self.clock else ""]
        for _, rate, burst in buckets:
            args += [repr(rate), repr(burst)]
        try:
            async with asyncio.timeout(TIMEOUT):
                answer = await done(client.eval(_TAKE, len(keys), *keys, *args))
        except (RedisError, OSError, TimeoutError) as exc:
            if not self.pool_down:
                log.warning(
                    "budgets: Redis unreachable (%s); each worker keeps an even share of the "
                    "bot-wide and workspace budgets until it answers again",
                    exc or type(exc).__name__,
                )
            self.pool_down = True
            return None
        if self.pool_down:
            log.info("budgets: Redis answers again; the wide budgets are pooled again")
            self.pool_down = False
        return 0.0 if answer == "taken" else max(float(answer), 1e-6)

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
        self._listener = asyncio.create_task(
            keep_listening(self.client, self._serve, "budgets"), name="cluster-budgets"
        )

    async def close(self) -> None:
        await cancel(*self._tasks, self._listener)

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
