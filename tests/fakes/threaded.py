"""Run a fake server (an aiohttp Application) on 127.0.0.1 in its own thread and event loop.

SDKs that make blocking HTTP calls from async code (lark-oapi, dingtalk-stream) would deadlock
against a fake on the test's own loop, so every fake runs here.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from typing import Any, Self, TypeVar

import pytest
from aiohttp import web

T = TypeVar("T")


@dataclass
class Recorded:
    """One call a fake server received."""

    method: str
    path: str
    body: Any
    headers: dict[str, str] = field(default_factory=dict)
    at: float = field(default_factory=time.monotonic)
    refused: bool = False  # the server answered it with an injected failure: it had no effect


def max_in_window(times: list[float], window: float) -> int:
    """The most of `times` (sorted) within any `window` seconds."""
    best, lo = 0, 0
    for hi, t in enumerate(times):
        while t - times[lo] > window:
            lo += 1
        best = max(best, hi - lo + 1)
    return best


class Running:
    """A fake that runs from `start()` to `stop()`: `with Fake().start() as fake:` stops it at
    the end of the block (a test fixture's whole body)."""

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self: R) -> R:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


R = TypeVar("R", bound=Running)


class Served(Running):
    """A fake platform: its aiohttp app on a `ThreadedServer`, started and stopped with it."""

    server: ThreadedServer

    def start(self) -> Self:
        self.server.start()
        return self

    def stop(self) -> None:
        self.server.stop()

    @property
    def base(self) -> str:
        return self.server.base


class Awaited:
    """A fake whose threads notify `_cond` on every change to the calls it records: tests wait
    on a predicate of the fake (`until` from async code, `wait_for` from a thread)."""

    name = "fake"
    wait_seconds = 5.0  # `until`'s default
    calls: list[Recorded]
    _cond: threading.Condition

    def methods(self) -> list[str]:
        return [c.method for c in self.calls]

    def wait_for(self, predicate: Any, timeout: float = 5.0) -> bool:
        """Block (in a worker thread) until `predicate(self)` holds; tests use `to_thread`."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not predicate(self):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(min(left, 0.05))
        return True

    async def until(self, predicate: Any, timeout: float | None = None) -> None:
        seconds = self.wait_seconds if timeout is None else timeout
        if not await asyncio.to_thread(self.wait_for, predicate, seconds):
            raise AssertionError(f"{self.name}: condition not met; calls={self.methods()}")


S = TypeVar("S", bound=Served)


def fake_fixture(fake_type: Callable[[], S], name: str) -> Any:
    """The pytest fixture `name`: a fresh `fake_type()` served for one test, stopped after it."""

    def serve() -> Iterator[S]:
        with fake_type().start() as fake:
            yield fake

    return pytest.fixture(serve, name=name)


class ThreadedServer:
    """aiohttp on an ephemeral loopback port, in a daemon thread with its own loop."""

    def __init__(self, app: web.Application) -> None:
        self.app = app
        self.loop = asyncio.new_event_loop()
        self.port = 0
        self._runner: web.AppRunner | None = None
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.websockets: set[web.WebSocketResponse] = set()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> ThreadedServer:
        self._thread.start()
        self.call(self._start())
        return self

    async def _start(self) -> None:
        self._runner = web.AppRunner(self.app, handle_signals=False, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0, backlog=1024)
        await site.start()
        self.port = self._runner.addresses[0][1]

    def call(self, coro: Coroutine[Any, Any, T], timeout: float = 10.0) -> T:
        """Run `coro` on the server's loop and wait for its result (from any thread)."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def call_soon(self, fn: Callable[[], Any]) -> None:
        self.loop.call_soon_threadsafe(fn)

    def stop(self) -> None:
        if not self._thread.is_alive():
            return
        try:
            self.call(self._stop())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(5)

    async def _stop(self) -> None:
        for ws in list(self.websockets):
            await ws.close()
        if self._runner is not None:
            await self._runner.cleanup()
