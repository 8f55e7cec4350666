"""Per-workspace token buckets for chat.update (Tier 3: ~50/min per workspace per app)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable


class TokenBucket:
    """A token bucket; `block_for` empties it for a platform Retry-After."""

    def __init__(
        self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rate, self.burst, self._clock = rate, burst, clock
        self._tokens = float(burst)
        self._stamp = clock()
        self._blocked_until = 0.0

    def _refill(self) -> float:
        now = self._clock()
        self._tokens = min(self.burst, self._tokens + (now - self._stamp) * self.rate)
        self._stamp = now
        return now

    def try_take(self) -> bool:
        now = self._refill()
        if now < self._blocked_until or self._tokens < 1:
            return False
        self._tokens -= 1
        return True

    def wait_time(self) -> float:
        now = self._refill()
        return max(self._blocked_until - now, (1 - self._tokens) / self.rate, 0.0)

    async def take(self) -> None:
        while not self.try_take():
            await asyncio.sleep(max(self.wait_time(), 0.01))

    def block_for(self, seconds: float) -> None:
        self._refill()
        self._tokens = 0.0
        self._blocked_until = max(self._blocked_until, self._clock() + seconds)


class WorkspaceBudgets:
    """One bucket per Slack workspace (team id), shared by all replies in it."""

    def __init__(self, rate: float, burst: int = 3) -> None:
        self.rate, self.burst = rate, burst
        self._buckets: dict[str, TokenBucket] = {}

    def __getitem__(self, team: str) -> TokenBucket:
        bucket = self._buckets.get(team)
        if bucket is None:
            bucket = self._buckets[team] = TokenBucket(self.rate, self.burst)
        return bucket
