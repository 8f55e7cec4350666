"""The one rate-limit mechanism: token buckets for declared budgets, blocks for 429s.

Every platform declares its budgets once, as `RateBudget`s in its `Capabilities` (per method:
"update" for the service's reply updates, or a platform call such as "chat.update", "draft").
Each channel owns one `Pacer` (`Channel.pacer`); the service's reply streamer and the channel's
own calls take tokens from that same instance, so no budget is enforced twice.

Buckets are keyed by method and scope (one reply, one chat, one workspace, the whole bot). A
rate-limit answer blocks its scope (every method, or only the one named) until its retry-after
has passed: nothing waiting on the pacer reaches the blocked scope before then. The clock and
the sleep are injectable, so tests run on virtual time.

With several processes on one bot (scale-out), the service gives the pacer a `SharedScopes`:
budgets wider than a chat (the bot's, a workspace's) are pooled, one bucket for all processes
(taken from atomically, so an idle process's share is the busy one's), and a block of such a
scope is told to the others, who apply it too (`apply_block`). While the pool cannot be reached
each process keeps an even share of those budgets locally. A pooled token is only taken by
`acquire`/`slot` (it costs a round trip): `try_take` says no to pooled budgets, and `wait_time`
leaves them out.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from channels.errors import ChannelError, RateLimited
from channels.types import ChatRef, RateBudget, Scope

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]
Key = tuple[str, ...]
Pooled = tuple[Key, float, float]  # a wide budget's bucket: its key, rate and burst
SCOPES: tuple[Scope, ...] = ("bot", "workspace", "chat", "reply")
_EPSILON = 1e-9  # a token short by a rounding error is a token
WIDE: tuple[Scope, ...] = ("bot", "workspace")  # scopes several processes share


class SharedScopes(Protocol):
    """What the pacer needs from processes sharing its bot (injected; see bot/cluster)."""

    def processes(self) -> int:
        """How many processes share the bot's wide budgets now (at least 1)."""
        ...

    async def take(self, buckets: tuple[Pooled, ...]) -> float | None:
        """One token from every pooled bucket at once: 0.0 when taken, else the seconds until
        all have one (nothing taken); None when the pool cannot be reached now."""
        ...

    def blocked(self, key: Key, seconds: float) -> None:
        """A wide scope was blocked here for `seconds`: tell the other processes."""
        ...


@dataclass
class _Bucket:
    rate: float
    burst: float
    tokens: float
    stamp: float

    def wait_time(self, now: float) -> float:
        self._refill(now)
        return 0.0 if self.tokens >= 1 - _EPSILON else (1 - self.tokens) / self.rate

    def take(self, now: float) -> None:
        self._refill(now)
        self.tokens -= 1

    def refund(self) -> None:
        self.tokens = min(self.burst, self.tokens + 1)

    def restart(self, now: float) -> None:
        """The call just ended: the interval counts from now (the call's time is not refill)."""
        self.stamp = max(self.stamp, now)

    def _refill(self, now: float) -> None:
        self.tokens = min(self.burst, self.tokens + max(0.0, now - self.stamp) * self.rate)
        self.stamp = max(self.stamp, now)


class Pacer:
    """Budgets and blocks of one channel, shared by every reply and call it makes."""

    def __init__(
        self, clock: Clock = time.monotonic, sleep: Sleep = asyncio.sleep, max_buckets: int = 50_000
    ) -> None:
        self.clock = clock
        self.sleep = sleep
        self._buckets: dict[Key, _Bucket] = {}
        self._blocked: dict[Key, float] = {}
        self._locks: dict[Key, asyncio.Lock] = {}
        self._probe = asyncio.Lock()
        self._waiting: dict[Key, int] = {}
        self._max = max_buckets
        self.shared: SharedScopes | None = None

    def _pooled(self, budget: RateBudget) -> bool:
        return self.shared is not None and budget.scope in WIDE

    def _local(self, budgets: tuple[RateBudget, ...]) -> tuple[RateBudget, ...]:
        return tuple(b for b in budgets if not self._pooled(b))

    # ------------------------------------------------------------------ keys

    @staticmethod
    def scope_key(scope: Scope, chat: ChatRef, reply_key: str = "") -> Key:
        if scope == "reply":
            return (scope, reply_key or chat.key)
        if scope == "chat":
            return (scope, chat.workspace, chat.chat_id)
        if scope == "workspace":
            return (scope, chat.workspace)
        return ("bot",)

    # ------------------------------------------------------------------ blocks

    def block(
        self, scope: Scope, chat: ChatRef, reply_key: str, seconds: float, method: str = ""
    ) -> None:
        """Nothing (or only `method`, when given) reaches `scope` for `seconds` from now."""
        key = (method, *self.scope_key(scope, chat, reply_key))
        self.apply_block(key, seconds)
        if scope in WIDE and self.shared is not None:
            self.shared.blocked(key, seconds)

    def apply_block(self, key: Key, seconds: float) -> None:
        """Block `key` (a method and a scope key) for `seconds` from now."""
        self._blocked[key] = max(self._blocked.get(key, 0.0), self.clock() + seconds)
        if len(self._blocked) > self._max:
            now = self.clock()
            self._blocked = {k: v for k, v in self._blocked.items() if v > now}

    def block_for(self, exc: RateLimited, chat: ChatRef, reply_key: str = "") -> None:
        self.block(exc.scope, chat, reply_key, exc.retry_after, exc.method)

    def blocked_for(
        self, chat: ChatRef, reply_key: str = "", methods: tuple[str, ...] = ()
    ) -> float:
        """Seconds until no block covers a call to `chat` (for `methods`) any more."""
        if not self._blocked:  # the usual case: no platform asked to wait (asked per send)
            return 0.0
        now = self.clock()
        wait = 0.0
        for scope in SCOPES:
            scope_key = self.scope_key(scope, chat, reply_key)
            for method in ("", *methods):
                until = self._blocked.get((method, *scope_key))
                if until is not None:
                    wait = max(wait, until - now)
        return wait

    async def wait_unblocked(
        self, chat: ChatRef, reply_key: str = "", methods: tuple[str, ...] = ()
    ) -> None:
        """Sleep until no block covers `chat`; a block that grows meanwhile is waited out too."""
        while (wait := self.blocked_for(chat, reply_key, methods)) > _EPSILON:
            await self.sleep(wait)

    # ------------------------------------------------------------------ budgets

    def wait_time(
        self, chat: ChatRef, budgets: tuple[RateBudget, ...], reply_key: str = ""
    ) -> float:
        now = self.clock()
        waits = [self.blocked_for(chat, reply_key, _methods(budgets))]
        waits += [
            self._bucket(b, chat, reply_key, now).wait_time(now) for b in self._local(budgets)
        ]
        return max(waits)

    def try_take(self, chat: ChatRef, budgets: tuple[RateBudget, ...], reply_key: str = "") -> bool:
        """Take a token from every budget if all have one now (and nothing is blocked), unless
        callers are already waiting for one: they go first, so a held update cannot starve.
        A pooled budget is never taken here (that needs a round trip): the caller acquires."""
        if any(self._pooled(b) for b in budgets):
            return False
        if any(self._waiting.get(self._key(b, chat, reply_key)) for b in budgets):
            return False
        if self.wait_time(chat, budgets, reply_key) > _EPSILON:
            return False
        self._take(chat, budgets, reply_key)
        return True

    async def acquire(
        self, chat: ChatRef, budgets: tuple[RateBudget, ...], reply_key: str = ""
    ) -> None:
        """Wait until nothing is blocked and every budget has a token, then take one from each."""
        keys = [self._key(b, chat, reply_key) for b in budgets]
        for key in keys:
            self._waiting[key] = self._waiting.get(key, 0) + 1
        pooled = tuple(b for b in budgets if self._pooled(b))
        try:
            await self._wait_local(chat, budgets, reply_key)
            while pooled and (wait := await self._take_pooled(chat, pooled, reply_key)) > 0:
                await self.sleep(wait)
                await self._wait_local(chat, budgets, reply_key)
            if pooled:  # another call may have taken a local token during the round trip
                await self._wait_local(chat, budgets, reply_key)
        finally:
            for key in keys:
                self._waiting[key] -= 1
                if not self._waiting[key]:
                    del self._waiting[key]
        self._take(chat, budgets, reply_key)

    @contextlib.asynccontextmanager
    async def slot(
        self, chat: ChatRef, budgets: tuple[RateBudget, ...], reply_key: str = ""
    ) -> AsyncIterator[None]:
        """One platform call within `budgets`.

        Serial budgets run their calls one at a time and count the interval from the end of the
        previous call, so the platform sees the gap even when requests are slow. When a block
        has just run out, one call goes first (a probe) and the others wait for its answer, so
        a platform still limiting sees one call, not a burst. A RateLimited from the call blocks
        its scope; a call refused outright (nothing was shown) gives its tokens back.
        """
        locks = [self._lock(b, chat, reply_key) for b in budgets if b.serial]
        methods = _methods(budgets)
        async with contextlib.AsyncExitStack() as stack:
            for lock in locks:
                await stack.enter_async_context(lock)
            probing = await self._pass_blocks(chat, reply_key, methods, stack)
            await self.acquire(chat, budgets, reply_key)
            try:
                yield
                if probing:
                    self._clear_expired(chat, reply_key, methods)
            except RateLimited as exc:
                self.block_for(exc, chat, reply_key)
                raise
            except ChannelError as exc:
                if not exc.retryable:
                    self._refund(chat, budgets, reply_key)
                raise
            finally:
                now = self.clock()
                for budget in self._local(budgets):
                    if budget.serial:
                        self._bucket(budget, chat, reply_key, now).restart(now)

    def spend(self, chat: ChatRef, budgets: tuple[RateBudget, ...], reply_key: str = "") -> None:
        """Start these budgets empty: a reply taken over from a process that just died may
        have used their burst a moment ago."""
        now = self.clock()
        for budget in self._local(budgets):
            bucket = self._bucket(budget, chat, reply_key, now)
            bucket.tokens, bucket.stamp = 0.0, now

    def forget_reply(self, reply_key: str) -> None:
        for store in (self._buckets, self._blocked, self._locks):
            for key in [k for k in store if k[1:3] == ("reply", reply_key)]:
                store.pop(key, None)

    # ------------------------------------------------------------------ internals

    async def _wait_local(
        self, chat: ChatRef, budgets: tuple[RateBudget, ...], reply_key: str
    ) -> None:
        while (wait := self.wait_time(chat, budgets, reply_key)) > _EPSILON:
            await self.sleep(wait)

    async def _take_pooled(
        self, chat: ChatRef, pooled: tuple[RateBudget, ...], reply_key: str
    ) -> float:
        """Take from the pool; 0 when taken, else the wait. When the pool cannot be reached,
        from this process's even share of it instead."""
        assert self.shared is not None
        keys = tuple((self._key(b, chat, reply_key), b.per_second, float(b.burst)) for b in pooled)
        wait = await self.shared.take(keys)
        if wait is not None:
            return wait if wait > _EPSILON else 0.0
        now = self.clock()
        buckets = [self._bucket(b, chat, reply_key, now) for b in pooled]
        wait = max(bucket.wait_time(now) for bucket in buckets)
        if wait > _EPSILON:
            return wait
        for bucket in buckets:
            bucket.take(now)
        return 0.0

    async def _pass_blocks(
        self,
        chat: ChatRef,
        reply_key: str,
        methods: tuple[str, ...],
        stack: contextlib.AsyncExitStack,
    ) -> bool:
        """Wait out the blocks; True when this call is the probe after one ran out."""
        while True:
            await self.wait_unblocked(chat, reply_key, methods)
            if not self._expired(chat, reply_key, methods):
                return False
            await self._probe.acquire()
            if self.blocked_for(chat, reply_key, methods) > 0 or not self._expired(
                chat, reply_key, methods
            ):
                self._probe.release()  # blocked again, or the probe went through meanwhile
                continue
            stack.callback(self._probe.release)
            return True

    def _covering(self, chat: ChatRef, reply_key: str, methods: tuple[str, ...]) -> list[Key]:
        keys = [self.scope_key(scope, chat, reply_key) for scope in SCOPES]
        return [(m, *k) for k in keys for m in ("", *methods) if (m, *k) in self._blocked]

    def _expired(self, chat: ChatRef, reply_key: str, methods: tuple[str, ...]) -> bool:
        now = self.clock()
        return any(self._blocked[k] <= now for k in self._covering(chat, reply_key, methods))

    def _clear_expired(self, chat: ChatRef, reply_key: str, methods: tuple[str, ...]) -> None:
        now = self.clock()
        for key in self._covering(chat, reply_key, methods):
            if self._blocked[key] <= now:
                del self._blocked[key]

    def _key(self, budget: RateBudget, chat: ChatRef, reply_key: str) -> Key:
        return (budget.method, *self.scope_key(budget.scope, chat, reply_key))

    def _take(self, chat: ChatRef, budgets: tuple[RateBudget, ...], reply_key: str) -> None:
        now = self.clock()
        for budget in self._local(budgets):
            self._bucket(budget, chat, reply_key, now).take(now)

    def _refund(self, chat: ChatRef, budgets: tuple[RateBudget, ...], reply_key: str) -> None:
        now = self.clock()
        for budget in self._local(budgets):
            self._bucket(budget, chat, reply_key, now).refund()

    def _bucket(self, budget: RateBudget, chat: ChatRef, reply_key: str, now: float) -> _Bucket:
        key = self._key(budget, chat, reply_key)
        bucket = self._buckets.get(key)
        share = self.shared.processes() if self.shared and budget.scope in WIDE else 1
        rate, burst = budget.per_second / share, max(1.0, float(budget.burst) / share)
        if bucket is None:
            if len(self._buckets) >= self._max:
                self._prune(now)
            bucket = _Bucket(rate=rate, burst=burst, tokens=burst, stamp=now)
            self._buckets[key] = bucket
        elif bucket.rate != rate:  # processes came or went: this one's share changed (used while
            # the pool of a wide budget cannot be reached)
            bucket.wait_time(now)
            bucket.rate, bucket.burst = rate, burst
            bucket.tokens = min(bucket.tokens, burst)
        return bucket

    def _lock(self, budget: RateBudget, chat: ChatRef, reply_key: str) -> asyncio.Lock:
        return self._locks.setdefault(self._key(budget, chat, reply_key), asyncio.Lock())

    def _prune(self, now: float) -> None:
        """Drop full buckets (they behave like new ones) and idle locks."""
        for key, bucket in list(self._buckets.items()):
            bucket.wait_time(now)
            if bucket.tokens >= bucket.burst:
                self._buckets.pop(key, None)
        for key, lock in list(self._locks.items()):
            if not lock.locked():
                self._locks.pop(key, None)


def _methods(budgets: tuple[RateBudget, ...]) -> tuple[str, ...]:
    return tuple({b.method for b in budgets})
