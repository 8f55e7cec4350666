"""The virtual clock for tests, so nothing waits in real time.

`VirtualClock` is a clock (`clock()` or `clock.now()`: seconds) and a sleep (`clock.sleep`), for
whatever takes them: a channel's Pacer (`pacer.clock, pacer.sleep = clock, clock.sleep`), the
scheduler (`schedule_clock=`), the access gate's pacer, a fake platform server that checks
intervals. Time moves only by `advance`/`set` and, by default, by sleeping through it: sleeps
return at once and add up, so every "at least this long" guarantee still holds in virtual time.

`hold()` parks every sleeper (before its time passes) until `release()`, so a test can act while
a paced call waits, as if it were quicker than the interval. `VirtualClock(start,
sleep_moves=False)`: sleeping never ends by itself and moves nothing (the scheduler tests drive
the loop with explicit ticks). The delays asked for are in `sleeps`.
Reading it from another thread (a fake server's) is safe. It starts at 1000 s, like a monotonic
clock: at epoch magnitudes a float cannot hold sub-microsecond waits, so a pacer's last tiny
remainder would never pass (schedule tests start it at `time.time()` and never sleep through it).
"""

from __future__ import annotations

import asyncio

START = 1000.0


class VirtualClock:
    def __init__(self, start: float = START, *, sleep_moves: bool = True) -> None:
        self.t = start
        self.sleep_moves = sleep_moves
        self.sleeps: list[float] = []  # every delay asked for, in order
        self.held = False

    def __call__(self) -> float:
        return self.t

    def now(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds

    def set(self, epoch: float) -> None:
        self.t = epoch

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        if not self.sleep_moves:
            await asyncio.Event().wait()  # tests drive the scheduler with explicit ticks
        while self.held:
            await asyncio.sleep(0.001)
        self.t += max(seconds, 0.0)
        await asyncio.sleep(0)

    def hold(self) -> None:
        self.held = True

    def release(self) -> None:
        self.held = False
