"""The Stream-mode connection: dingtalk-stream's client on a thread the channel owns.

`DingTalkStreamClient.start()` has no stop (it swallows one CancelledError and sleeps 10 s) and
opens the gateway with blocking `requests` without a timeout. So Antler runs its own connect loop
on an `SdkThread` and uses the SDK's pieces for the rest: the client's frame routing, its system
handler (ping acks, disconnect) and its callback-handler ack. The gateway is opened with aiohttp
(timeout, cancellable), at the SDK's `OPEN_CONNECTION_API` (set by `endpoint.apply_sdk_endpoint`).
A failed open or a dropped socket, at start as later, is retried with the one backoff
(`channels/backoff.py`); a `disconnect` frame (a clean close) reconnects at once.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any
from urllib.parse import quote_plus

import aiohttp
import dingtalk_stream
import websockets.asyncio.client
from dingtalk_stream.frames import AckMessage, CallbackMessage
from dingtalk_stream.version import VERSION_STRING

from channels._threads import SdkThread, post_to_loop
from channels.backoff import Backoff, BackoffPolicy, RetryState, describe
from channels.base import ChannelError
from channels.dingtalk.config import DingTalkConfig
from channels.dingtalk.endpoint import apply_sdk_endpoint, open_connection_url
from channels.dingtalk.parse import CARD_CALLBACK_TOPIC, CHATBOT_TOPIC

log = logging.getLogger("channels.dingtalk.stream")

OnMessage = Callable[[dict[str, Any]], Coroutine[Any, Any, None]]
OnState = Callable[[bool, str | None, RetryState | None], Coroutine[Any, Any, None]]
CLEAN_CLOSE_PAUSE = 0.2
"""Seconds before reconnecting after the server closed the socket cleanly (`disconnect`)."""


class _ChatbotCallback(dingtalk_stream.CallbackHandler):
    """Acks every chatbot callback at once; the message goes to the service loop unawaited."""

    def __init__(self, deliver: Callable[[dict[str, Any]], None]) -> None:
        super().__init__()
        self._deliver = deliver

    async def process(self, message: CallbackMessage) -> tuple[int, str]:
        try:
            self._deliver(message.data if isinstance(message.data, dict) else {})
        except Exception:
            log.exception("dingtalk: could not hand a callback to the service")
        return AckMessage.STATUS_OK, "OK"


class StreamLink:
    """Connects, reconnects and stops the Stream-mode websocket."""

    def __init__(
        self,
        config: DingTalkConfig,
        on_message: OnMessage,
        on_state: OnState,
        backoff: BackoffPolicy | None = None,
        on_card_press: OnMessage | None = None,
        may_receive: Callable[[], bool] = lambda: True,
    ) -> None:
        self.config = config
        self.may_receive = may_receive  # False: this worker's hold on the connection lapsed
        self._on_message = on_message
        self._on_state = on_state
        self._on_card_press = on_card_press
        self.backoff = Backoff("dingtalk stream", log, backoff)
        credential = dingtalk_stream.Credential(
            config.client_id, config.client_secret.get_secret_value()
        )
        self.client = dingtalk_stream.DingTalkStreamClient(credential, logger=log)
        self.client.register_callback_handler(CHATBOT_TOPIC, _ChatbotCallback(self._deliver))
        self.client.register_callback_handler(CARD_CALLBACK_TOPIC, _ChatbotCallback(self._press))
        self.connected = False
        self.connections = 0
        self._home: asyncio.AbstractEventLoop | None = None
        self._thread: SdkThread | None = None
        self._serving: concurrent.futures.Future[None] | None = None
        self._frames: set[asyncio.Task[Any]] = set()

    # ------------------------------------------------------------------ lifecycle (service loop)

    @property
    def running(self) -> bool:
        return self._thread is not None

    async def start(self, timeout: float = 10.0) -> bool:
        """Start the thread and the connect loop; True once connected. Returns False as soon as
        the first attempt failed (the loop goes on retrying) or after `timeout`."""
        apply_sdk_endpoint(self.config.api_base)
        self._home = asyncio.get_running_loop()
        self._thread = SdkThread("dingtalk-stream")
        self._thread.start()
        self._serving = self._thread.submit(self._serve())
        deadline = time.monotonic() + timeout
        while not (self.connected or self.backoff.attempts or self._serving.done()):
            if time.monotonic() >= deadline:
                break
            await asyncio.sleep(0.01)
        return self.connected

    async def stop(self, timeout: float = 5.0) -> bool:
        """Cancel the connect loop, close the socket, end the thread. True when it ended."""
        thread, self._thread = self._thread, None
        if thread is None:
            return True
        if self._serving is not None and not self._serving.done():
            thread.loop.call_soon_threadsafe(self._serving.cancel)
        thread.stop(timeout=0)
        deadline = time.monotonic() + timeout
        while thread.alive and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        self.connected = False
        return not thread.alive

    # ------------------------------------------------------------------ the SDK thread

    def _deliver(self, data: dict[str, Any]) -> None:
        if self._home is not None:
            post_to_loop(self._home, self._on_message(data))

    def _press(self, data: dict[str, Any]) -> None:
        """A card button press (channels/dingtalk/buttons.py), acked like a message."""
        if self._home is not None and self._on_card_press is not None:
            post_to_loop(self._home, self._on_card_press(data))

    def _state(self, connected: bool, error: str | None, retry: RetryState | None = None) -> None:
        self.connected = connected
        if self._home is not None and not self._home.is_closed():
            post_to_loop(self._home, self._on_state(connected, error, retry))

    async def _serve(self) -> None:
        self.client.pre_start()
        while True:
            try:
                await self._connect_once()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                retry = self.backoff.failure(describe(exc))
                self._state(False, f"dingtalk stream: {retry.last_error}", retry)
                await self.backoff.wait()
            else:
                self._state(False, None)
                await self.backoff.policy.sleep(CLEAN_CLOSE_PAUSE)

    async def _connect_once(self) -> None:
        ticket = await self._open_gateway()
        uri = f"{ticket['endpoint']}?ticket={quote_plus(ticket['ticket'])}"
        async with websockets.asyncio.client.connect(
            uri, proxy=None, open_timeout=10, close_timeout=2, max_size=8 * 1024 * 1024
        ) as ws:
            self.client.websocket = ws
            self.connections += 1
            self.backoff.success()
            self._state(True, None)
            async for raw in ws:
                self._dispatch(raw)

    def _dispatch(self, raw: str | bytes) -> None:
        try:
            frame = json.loads(raw)
        except ValueError:
            log.warning("dingtalk stream: skipped a frame that is not JSON")
            return
        if not isinstance(frame, dict):
            log.warning("dingtalk stream: skipped a frame that is not an object")
            return
        if frame.get("type") == "CALLBACK" and not self.may_receive():
            log.warning("dingtalk: this worker's hold on the connection lapsed; callback unacked")
            return  # DingTalk delivers it again (to the connection held now)
        task = asyncio.create_task(self.client.background_task(frame))
        self._frames.add(task)
        task.add_done_callback(self._frames.discard)

    async def _open_gateway(self) -> dict[str, str]:
        """POST /v1.0/gateway/connections/open -> {endpoint, ticket} (checked)."""
        body = {
            "clientId": self.config.client_id,
            "clientSecret": self.config.client_secret.get_secret_value(),
            "subscriptions": [
                {"type": "CALLBACK", "topic": topic} for topic in self.client.callback_handler_map
            ],
            "ua": f"dingtalk-sdk-python/v{VERSION_STRING}-union antler",
            "localIp": "",
        }
        timeout = aiohttp.ClientTimeout(total=15)
        async with (
            aiohttp.ClientSession(timeout=timeout, trust_env=False) as session,
            session.post(open_connection_url(), json=body) as resp,
        ):
            text = await resp.text()
            if resp.status != 200:
                raise ChannelError(f"gateway open failed: HTTP {resp.status} {text[:200]}")
        data = json.loads(text) if text else {}
        if not isinstance(data, dict) or not data.get("endpoint") or not data.get("ticket"):
            raise ChannelError("gateway open: response without endpoint/ticket")
        return {"endpoint": str(data["endpoint"]), "ticket": str(data["ticket"])}
