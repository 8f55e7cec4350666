"""The one bridge between the service loop and SDKs that insist on their own thread.

lark-oapi's long connection and dingtalk-stream's client run blocking code and own an event
loop. `SdkThread` runs such a loop on a daemon thread owned by the channel, lets the channel
submit coroutines to it, and stops it cleanly. `call_blocking` keeps a synchronous SDK call off
the service loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class SdkThread:
    """An event loop on its own daemon thread."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._started = threading.Event()

    def start(self) -> None:
        self._thread.start()
        self._started.wait()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.call_soon(self._started.set)
        try:
            self.loop.run_forever()
        finally:
            self._drain()
            self.loop.close()

    def _drain(self) -> None:
        pending = [t for t in asyncio.all_tasks(self.loop) if not t.done()]
        for task in pending:
            task.cancel()
        if pending:
            self.loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Run `coro` on the SDK loop; the returned future may be awaited via `wrap_future`."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    async def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await `coro` on the SDK loop from the service loop."""
        return await asyncio.wrap_future(self.submit(coro))

    def stop(self, timeout: float = 5.0) -> bool:
        """Stop the loop (cancelling what runs on it) and join. True when the thread ended."""
        if self._thread.is_alive():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout)
        return not self._thread.is_alive()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()


async def call_blocking(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """Run a blocking SDK call on a worker thread so the service loop never waits on it."""
    return await asyncio.to_thread(functools.partial(fn, *args, **kwargs))


def post_to_loop(
    loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, T]
) -> concurrent.futures.Future[T]:
    """From an SDK thread, hand `coro` to another loop (the service loop) without waiting."""
    return asyncio.run_coroutine_threadsafe(coro, loop)
