"""Token buckets that keep every channel within its platform's send/edit budgets.

Buckets are keyed by the budget's scope (one reply, one chat, one workspace, the whole bot), so
all replies in a Slack workspace share one chat.update budget. A rate-limit answer blocks the
affected scope until its retry-after has passed.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass

from channels.base import ChatRef, RateBudget

Clock = Callable[[], float]


@dataclass
class _Bucket:
    rate: float
    burst: float
    tokens: float
    stamp: float

    def wait_time(self, now: float) -> float:
        self._refill(now)
        return 0.0 if self.tokens >= 1 else (1 - self.tokens) / self.rate

    def take(self, now: float) -> None:
        self._refill(now)
        self.tokens -= 1

    def _refill(self, now: float) -> None:
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now


class Pacer:
    """Shared by every reply of the process; one per channel name inside the keys."""

    def __init__(self, clock: Clock = time.monotonic, max_buckets: int = 50_000) -> None:
        self.clock = clock
        self._buckets: dict[tuple[str, ...], _Bucket] = {}
        self._blocked: dict[tuple[str, ...], float] = {}
        self._max = max_buckets

    def scope_key(self, channel: str, scope: str, chat: ChatRef, reply_key: str) -> tuple[str, ...]:
        if scope == "reply":
            return (channel, scope, reply_key)
        if scope == "chat":
            return (channel, scope, chat.workspace, chat.chat_id)
        if scope == "workspace":
            return (channel, scope, chat.workspace)
        return (channel, "bot")

    def wait_time(self, channel: str, chat: ChatRef, budgets: tuple[RateBudget, ...],
                  reply_key: str) -> float:
        now = self.clock()
        waits = [self._blocked_for(channel, chat, reply_key, now)]
        for budget in budgets:
            waits.append(self._bucket(channel, budget, chat, reply_key, now).wait_time(now))
        return max(waits)

    async def acquire(self, channel: str, chat: ChatRef, budgets: tuple[RateBudget, ...],
                      reply_key: str) -> None:
        """Wait until every budget has a token, then take one from each."""
        while (wait := self.wait_time(channel, chat, budgets, reply_key)) > 0:
            await asyncio.sleep(wait)
        now = self.clock()
        for budget in budgets:
            self._bucket(channel, budget, chat, reply_key, now).take(now)

    def block(self, channel: str, scope: str, chat: ChatRef, reply_key: str,
              seconds: float) -> None:
        key = self.scope_key(channel, scope, chat, reply_key)
        self._blocked[key] = max(self._blocked.get(key, 0.0), self.clock() + seconds)

    def forget_reply(self, channel: str, reply_key: str) -> None:
        self._buckets.pop((channel, "reply", reply_key), None)
        self._blocked.pop((channel, "reply", reply_key), None)

    def _blocked_for(self, channel: str, chat: ChatRef, reply_key: str, now: float) -> float:
        wait = 0.0
        for scope in ("bot", "workspace", "chat", "reply"):
            until = self._blocked.get(self.scope_key(channel, scope, chat, reply_key))
            if until is not None:
                wait = max(wait, until - now)
        return wait

    def _bucket(self, channel: str, budget: RateBudget, chat: ChatRef, reply_key: str,
                now: float) -> _Bucket:
        key = self.scope_key(channel, budget.scope, chat, reply_key)
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= self._max:
                self._buckets.clear()
            burst = float(budget.burst)
            bucket = _Bucket(rate=budget.per_second, burst=burst, tokens=burst, stamp=now)
            self._buckets[key] = bucket
        return bucket
