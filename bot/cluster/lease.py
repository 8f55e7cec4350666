"""The one lease: who may act on a shared thing (a bus partition, a platform connection).

A lease is a Redis key set only if absent, with an expiry (`SET NX PX`), renewed by its holder
well before it runs out. Its value is a fencing token: a number from a counter that only grows,
so a holder that was paused past the expiry (and whose lease another worker took since) finds a
different token and acts no more: renewing, releasing and every fenced action compare the token
in one Lua script.

Every call is given up after a third of the lease (a cut network hangs them), and the holder
counts the lease as its own for three quarters of it after a renewal began: it stops acting a
while before another worker can take the key.
"""

from __future__ import annotations

import time

import redis.asyncio as aioredis

from bot.cluster.redis_client import within

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
        self.patience = seconds / 3  # a call that hangs longer is given up
        self.margin = seconds * 0.75  # how long after a renewal began it counts as held

    @property
    def held(self) -> bool:
        return self.token is not None and time.monotonic() < self.valid_until

    async def acquire(self) -> bool:
        """Take the lease if nobody holds it; True when it is ours now."""
        if self.token is not None:
            return await self.renew()
        started = time.monotonic()
        number = await within(self.client.incr(f"{self.key}:fence"), self.patience)
        token = f"{number}:{self.holder}"
        if not await within(self.client.set(self.key, token, nx=True, px=self.ms), self.patience):
            return False
        self.token, self.valid_until = token, started + self.margin
        return True

    async def renew(self) -> bool:
        """Extend the lease; False (and not held any more) when another worker holds it."""
        if self.token is None:
            return False
        started = time.monotonic()
        if await within(self.client.eval(_RENEW, 1, self.key, self.token, self.ms), self.patience):
            self.valid_until = started + self.margin
            return True
        self.token = None
        return False

    async def release(self) -> None:
        if self.token is not None:
            token, self.token = self.token, None
            await within(self.client.eval(_RELEASE, 1, self.key, token), self.patience)
