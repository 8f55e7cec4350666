"""Virtual time for retry loops: a `BackoffPolicy` whose sleep returns at once and moves a clock.

`VirtualTime().policy()` goes wherever a channel or the service takes a `backoff=` policy; the
test then reads `slept` (every delay asked for) instead of waiting for it. `hold()` parks every
sleeper until `release()`, so a test can look at a loop between two attempts.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

from channels.backoff import BackoffPolicy


class VirtualTime:
    def __init__(self, start: float = 1_000_000.0, rand: Callable[[], float] = lambda: 0.5):
        self.now = start
        self.slept: list[float] = []
        self.rand = rand
        self.waiting = 0
        self._lock = threading.Lock()  # SDK threads sleep too
        self._open = threading.Event()
        self._open.set()

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        with self._lock:
            self.slept.append(seconds)
            self.now += seconds
            self.waiting += 1
        try:
            while not self._open.is_set():
                await asyncio.sleep(0.005)
            await asyncio.sleep(0.001)  # let other tasks run, without real waiting
        finally:
            with self._lock:
                self.waiting -= 1

    def hold(self) -> None:
        self._open.clear()

    def release(self) -> None:
        self._open.set()

    def policy(self, base: float = 1.0, cap: float = 60.0) -> BackoffPolicy:
        return BackoffPolicy(base=base, cap=cap, sleep=self.sleep, rand=self.rand, clock=self.clock)
