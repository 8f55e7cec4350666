"""The long connection: lark-oapi's ws client on its own thread, owned and supervised by us.

lark-oapi's `ws.Client.start()` blocks forever on a module-global loop and has no stop. We never
call it. Instead the client lives on an `SdkThread` loop: we connect, run its ping loop, and a
supervisor reconnects when the connection closes or goes silent (no frame, not even a pong, for
`silence_timeout`). A failed connect, the first one included, is retried with the one backoff
(`channels/backoff.py`) for as long as it takes; `start()` returns after the first attempt either
way. `stop()` cancels all of it, closes the websocket and joins the thread.

The module-global `lark_oapi.ws.client.loop` is what the client schedules its receive and
handler tasks on; we replace it once with a proxy that schedules on the *running* loop, so any
number of clients can each live on their own thread.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

import lark_oapi as lark
from lark_oapi.ws import client as lark_ws_client
from lark_oapi.ws.enum import FrameType
from lark_oapi.ws.pb.pbbp2_pb2 import Frame

from channels._threads import SdkThread, call_blocking
from channels.backoff import Backoff, BackoffPolicy, RetryState, describe
from channels.feishu.config import FeishuConfig
from channels.tasks import cancel_all

log = logging.getLogger("channels.feishu")
StateFn = Callable[[bool, str | None, RetryState | None], None]
LOST = "feishu long connection lost; reconnecting"


class _RunningLoop:
    """Stands in for lark's module-global loop: tasks go to whichever loop is running."""

    def __init__(self, fallback: asyncio.AbstractEventLoop) -> None:
        self._fallback = fallback

    def create_task(self, coro: Any) -> asyncio.Task[Any]:
        try:
            return asyncio.get_running_loop().create_task(coro)
        except RuntimeError:
            return self._fallback.create_task(coro)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._fallback, name)


def _install_loop_proxy() -> None:
    if not isinstance(lark_ws_client.loop, _RunningLoop):
        lark_ws_client.loop = _RunningLoop(lark_ws_client.loop)


def _quiet_closed(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The SDK's receive task ends with ConnectionClosed on every disconnect: not worth a trace."""
    exc = context.get("exception")
    if exc is not None and type(exc).__name__.startswith("ConnectionClosed"):
        log.debug("feishu ws task ended: %r", exc)
        return
    loop.default_exception_handler(context)


def _is_event(msg: bytes) -> bool:
    """A data frame (an event or card action to acknowledge), not a ping's answer."""
    frame = Frame()
    frame.ParseFromString(msg)
    return int(frame.method) == FrameType.DATA.value


class LongConnection:
    """One supervised lark ws client on a thread of its own."""

    def __init__(
        self,
        config: FeishuConfig,
        handler: lark.EventDispatcherHandler,
        on_state: StateFn,
        backoff: BackoffPolicy | None = None,
        may_receive: Callable[[], bool] = lambda: True,
    ) -> None:
        self.config = config
        self.may_receive = may_receive  # False: this worker's hold on the connection lapsed
        self.handler = handler
        self.on_state = on_state
        self.backoff = Backoff("feishu long connection", log, backoff)
        self.thread: SdkThread | None = None
        self.client: lark.ws.Client | None = None
        self.last_frame = 0.0
        self.connections = 0
        self._tasks: list[asyncio.Task[Any]] = []

    @property
    def reconnects(self) -> int:
        return max(0, self.connections - 1)

    async def start(self) -> None:
        _install_loop_proxy()
        self.thread = SdkThread("feishu-ws")
        self.thread.loop.set_exception_handler(_quiet_closed)
        self.thread.start()
        try:
            await self.thread.run(self._open())
        except BaseException:
            await call_blocking(self.thread.stop)
            raise

    async def stop(self) -> None:
        if self.thread is None:
            return
        if self.thread.alive:
            try:
                await self.thread.run(self._close())
            except Exception as exc:  # closing a dead connection: nothing left to do
                log.debug("feishu ws close: %r", exc)
        await call_blocking(self.thread.stop)
        self.thread = None

    # ------------------------------------------------------------------ on the SDK thread
    async def _open(self) -> None:
        self.client = lark.ws.Client(
            self.config.app_id,
            self.config.app_secret.get_secret_value(),
            event_handler=self.handler,
            domain=self.config.base_url,
            auto_reconnect=False,
            log_level=lark.LogLevel.WARNING,
        )
        original = self.client._handle_message

        async def handle_and_note(msg: bytes) -> None:
            self.last_frame = time.monotonic()
            if not self.may_receive() and _is_event(msg):
                log.warning("feishu: this worker's hold on the connection lapsed; event unacked")
                return  # Feishu pushes it again (to the connection held now)
            await original(msg)

        self.client._handle_message = handle_and_note
        await self._attempt()
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self.client._ping_loop()),
            loop.create_task(self._supervise()),
        ]

    async def _attempt(self) -> bool:
        """One connect; a failure is counted and reported (the supervisor waits and retries)."""
        assert self.client is not None
        try:
            await self.client._connect()
        except Exception as exc:
            retry = self.backoff.failure(describe(exc))
            self.on_state(False, f"feishu long connection: {retry.last_error}", retry)
            return False
        self.last_frame = time.monotonic()
        self.connections += 1
        self.backoff.success()
        self.on_state(True, None, None)
        return True

    def _silence_limit(self) -> float:
        assert self.client is not None
        return self.config.silence_timeout or 3.0 * float(self.client._ping_interval)

    def _healthy(self) -> bool:
        assert self.client is not None
        if self.client._conn is None:
            return False
        return time.monotonic() - self.last_frame < self._silence_limit()

    async def _supervise(self) -> None:
        assert self.client is not None
        while True:
            if self.backoff.attempts:  # in an outage: wait out the backoff, then try again
                await self.backoff.wait()
            else:
                await asyncio.sleep(0.1)
                if self._healthy():
                    continue
                self.on_state(False, LOST, None)
            await self.client._disconnect()
            await self._attempt()

    async def _close(self) -> None:
        await cancel_all(self._tasks)
        if self.client is not None:
            await self.client._disconnect()
        self.on_state(False, None, None)
