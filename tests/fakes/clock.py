"""Virtual clocks for tests, so nothing waits in real time.

`FakeClock`: `now()` moves only when a test calls `advance` (its sleep never ends by itself: the
scheduler tests drive it with explicit ticks). `VirtualClock`, for a channel's Pacer
(`pacer.clock, pacer.sleep = clock, clock.sleep`): time moves when something sleeps through it,
so a test checks waits and intervals without waiting; sleeps add up, so every "at least this
long" guarantee still holds in virtual time.
"""

from __future__ import annotations

import asyncio


class FakeClock:
    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self.t = start
        self.sleeps: list[float] = []  # every delay asked for, in order

    def now(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds

    def set(self, epoch: float) -> None:
        self.t = epoch

    async def sleep(self, seconds: float) -> None:
        """Never ends by itself: tests drive the scheduler with explicit ticks."""
        self.sleeps.append(seconds)
        await asyncio.Event().wait()


class VirtualClock:
    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += max(seconds, 0.0)
        await asyncio.sleep(0)
