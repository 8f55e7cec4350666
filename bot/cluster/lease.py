"""The one lease: who may act on a shared thing (a bus partition, a platform connection).

A lease is a Redis key set only if absent, with an expiry (`SET NX PX`), renewed by its holder
well before it runs out. Its value is a fencing token: a number from a counter that only grows,
so a holder that was paused past the expiry (and whose lease another worker took since) finds a
different token and acts no more: renewing, releasing and every fenced action compare the token
in one Lua script.
"""

from __future__ import annotations

import time

import redis.asyncio as aioredis

from bot.cluster.redis_client import done

_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


class Lease:
    """One lease key; `token` is set while this worker holds it."""

    def __init__(self, client: aioredis.Redis, key: str, seconds: float, holder: str = "") -> None:
        self.client = client
        self.key = key
        self.ms = int(seconds * 1000)
        self.holder = holder  # who holds it, readable by others (a worker id)
        self.token: str | None = None
        self.valid_until = 0.0  # monotonic: past this, act as if the lease were lost

    @property
    def held(self) -> bool:
        return self.token is not None and time.monotonic() < self.valid_until

    async def acquire(self) -> bool:
        """Take the lease if nobody holds it; True when it is ours now."""
        if self.token is not None:
            return await self.renew()
        started = time.monotonic()
        number = await self.client.incr(f"{self.key}:fence")
        token = f"{number}:{self.holder}"
        if not await self.client.set(self.key, token, nx=True, px=self.ms):
            return False
        self.token, self.valid_until = token, started + self.ms / 1000 * 0.9
        return True

    async def renew(self) -> bool:
        """Extend the lease; False (and not held any more) when another worker holds it."""
        if self.token is None:
            return False
        started = time.monotonic()
        if await done(self.client.eval(_RENEW, 1, self.key, self.token, self.ms)):
            self.valid_until = started + self.ms / 1000 * 0.9
            return True
        self.token = None
        return False

    async def release(self) -> None:
        if self.token is not None:
            token, self.token = self.token, None
            await done(self.client.eval(_RELEASE, 1, self.key, token))
