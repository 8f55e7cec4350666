"""The one backoff for every retry loop: decorrelated jitter, a cap, reset after success.

A loop keeps one `Backoff` and tells it what happened:

    backoff = Backoff("feishu long connection", log, policy)
    while True:
        try:
            await connect()
        except Exception as exc:
            retry = backoff.failure(describe(exc))  # logs the first failure of a streak only
            report(retry)                            # attempts, last error, next retry
            await backoff.wait()
            continue
        backoff.success()                            # logs the recovery, resets the delays
        ...

Delays follow "decorrelated jitter" (each delay is drawn between `base` and three times the
previous one, never above `cap`), so many clients that failed together do not retry together.
`sleep`, `rand` and `clock` are injectable: tests run the loops on virtual time.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True)
class BackoffPolicy:
    """How long to wait between attempts, and the clock and sleep to wait with."""

    base: float = 1.0
    """The first delay's floor and every delay's floor, in seconds."""
    cap: float = 60.0
    """No delay is longer than this."""
    sleep: Sleep = asyncio.sleep
    rand: Callable[[], float] = random.random
    """Uniform in [0, 1)."""
    clock: Callable[[], float] = time.time
    """Wall-clock seconds, for `RetryState.next_retry_at` and the outage's length."""

    def __post_init__(self) -> None:
        if not 0 < self.base <= self.cap:
            raise ValueError(f"backoff needs 0 < base <= cap (base={self.base}, cap={self.cap})")


@dataclass(frozen=True)
class RetryState:
    """Where a failing loop stands: what `/api/channels` shows."""

    attempts: int
    """Consecutive failed attempts."""
    last_error: str
    next_retry_at: float
    """`policy.clock()` time of the next attempt."""
    failing_since: float


def describe(exc: BaseException) -> str:
    """An exception in one line, without a traceback: `Type: message`."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class Backoff:
    """The delays of one retry loop and its log lines (one per failure streak, one recovery)."""

    def __init__(self, what: str, log: logging.Logger, policy: BackoffPolicy | None = None) -> None:
        self.what = what
        self.log = log
        self.policy = policy or BackoffPolicy()
        self.state: RetryState | None = None
        self._previous = self.policy.base
        self._delay = 0.0

    @property
    def attempts(self) -> int:
        return self.state.attempts if self.state else 0

    def next_delay(self) -> float:
        """Draw the next delay (decorrelated jitter) and remember it as the previous one."""
        p = self.policy
        upper = max(p.base, self._previous * 3)
        self._previous = min(p.cap, p.base + p.rand() * (upper - p.base))
        return self._previous

    def failure(self, error: str, *, at_least: float = 0.0) -> RetryState:
        """Count a failed attempt and pick the delay before the next (at least `at_least`)."""
        now = self.policy.clock()
        self._delay = max(self.next_delay(), at_least)
        since = self.state.failing_since if self.state else now
        self.state = RetryState(self.attempts + 1, error, now + self._delay, since)
        if self.state.attempts == 1:
            self.log.warning(
                "%s failed: %s; retrying with backoff (next in %.1f s)",
                self.what,
                error,
                self._delay,
            )
        else:
            self.log.debug(
                "%s failed again (attempt %d): %s; next in %.1f s",
                self.what,
                self.state.attempts,
                error,
                self._delay,
            )
        return self.state

    async def wait(self) -> None:
        """Sleep the delay picked by the last `failure()`."""
        await self.policy.sleep(self._delay)

    def success(self) -> bool:
        """The attempt worked: log the recovery if there was an outage and reset. True if so."""
        state, self.state = self.state, None
        self._previous, self._delay = self.policy.base, 0.0
        if state is None:
            return False
        down = max(0.0, self.policy.clock() - state.failing_since)
        self.log.info(
            "%s recovered after %d failed attempt(s) over %.1f s", self.what, state.attempts, down
        )
        return True
