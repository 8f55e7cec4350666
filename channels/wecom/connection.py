"""The bot's long connection: the SDK's WSClient, watched and restarted.

wecom-aibot-python-sdk 1.0.2 has traps this module handles:
- its own reconnect gives up for good after a normal close (1000/1001, which ends its receive
  loop without an error) or two missed pongs (it closes the socket itself, normally), silently:
  no event, only `is_connected` turns False. The client is made with no reconnects of its own
  and a watchdog here restarts it (a new client) with the service's one backoff;
- without an `error` listener an authentication failure (40001) raises inside its receive loop
  (pyee re-raises an unheard `error`), so a listener is always registered; the failure is final
  (reported, not retried);
- it always connects with its own TLS context (certifi's bundle): `ca_file` is added to it
  (and to the media download's), a `ws://` URL is refused by the config.

Every call goes through the SDK's own methods (`reply_stream`, `send_message`,
`update_template_card`, and `reply` for the upload commands it has no helper for): the SDK sends
one frame per request id at a time and waits for its acknowledgement; errors become the
contract's (a frequency limit RateLimited, another errcode WeComRefused, no answer retryable).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import ssl
from collections.abc import Awaitable, Callable
from typing import Any

import aibot
from aibot import api as sdk_api
from aibot import ws as sdk_ws

from channels.backoff import Backoff, BackoffPolicy, describe
from channels.base import ChannelContext, ChannelError, RateLimited
from channels.wecom.config import WeComConfig

log = logging.getLogger("channels.wecom")
AUTH_TIMEOUT = 15.0
WATCH_EVERY = 1.0
CLOSE_WAIT = 2.0
TAKEOVER_WAIT = 60.0
"""After WeCom's `disconnected_event` (a newer connection with the same Bot ID took over), the
least wait before connecting again: two programs on one bot take turns slowly, not in a loop."""
TAKEN_OVER = (
    "another connection with this Bot ID took over (a second Antler or another program "
    "using the same bot; WeCom keeps one connection per bot)"
)
RATE_WAIT = 2.0
"""WeCom names no retry-after: a frequency refusal blocks the conversation this long."""
_RATE_CODES = {45009, 45033, 45047}  # frequency limits (api freq, concurrency, per-chat)
_AUTH_CODES = {40001, 40014, 40029, 40058, 40068, 40070}
_CODE = re.compile(r"(?:errcode=|code: )(-?\d+)")
FrameHandler = Callable[[dict[str, Any]], None]


def trust(config: WeComConfig) -> None:
    """Add `ca_file` to the SDK's TLS contexts (module-wide: every client of the process)."""
    if config.ca_file is None:
        return
    try:
        for context in (sdk_ws._SSL_CONTEXT, sdk_api._SSL_CONTEXT):
            context.load_verify_locations(cafile=str(config.ca_file))
    except (OSError, ssl.SSLError) as exc:
        raise ChannelError(
            f"channels.wecom.ca_file: {config.ca_file} is not a readable PEM file of CA "
            f"certificates ({exc.strerror if isinstance(exc, OSError) else exc})"
        ) from exc


class WeComRefused(ChannelError):
    """WeCom answered a command with an error code."""

    def __init__(self, what: str, code: int, detail: str) -> None:
        super().__init__(f"wecom refused {what}: errcode {code} {detail}".strip())
        self.code = code


def error_code(exc: BaseException) -> int | None:
    """The errcode in one of the SDK's error messages, if any."""
    found = _CODE.search(str(exc))
    return int(found.group(1)) if found else None


class SdkLog:
    """The SDK's logger interface on Python logging (it prints to stderr by default). Its
    errors are about what this module handles and logs itself (a failed connect, a closed
    socket, a refused command), so they stay at info."""

    def __init__(self) -> None:
        self.log = logging.getLogger("channels.wecom.sdk")

    def _line(self, level: int, message: str, args: tuple[Any, ...]) -> None:
        self.log.log(level, "%s", " ".join(map(str, (message, *args))))

    def debug(self, message: str, *args: Any) -> None:
        self._line(logging.DEBUG, message, args)

    def info(self, message: str, *args: Any) -> None:
        self._line(logging.DEBUG, message, args)

    def warn(self, message: str, *args: Any) -> None:
        self._line(logging.INFO, message, args)

    def error(self, message: str, *args: Any) -> None:
        self._line(logging.INFO, message, args)


class Connection:
    def __init__(
        self,
        config: WeComConfig,
        ctx: ChannelContext,
        on_frame: FrameHandler,
        policy: BackoffPolicy | None = None,
    ) -> None:
        self.config, self.ctx, self.on_frame = config, ctx, on_frame
        self.backoff = Backoff("wecom connection", log, policy)
        self.client: aibot.WSClient | None = None
        self._authed = asyncio.Event()
        self._lost = asyncio.Event()
        self._failure: BaseException | None = None
        self._watch: asyncio.Task[None] | None = None
        self.restarts = 0
        self.takeover_wait = TAKEOVER_WAIT
        self._taken_over = False
        self.watch_every = min(WATCH_EVERY, config.heartbeat_seconds)

    @property
    def connected(self) -> bool:
        return self.client is not None and self.client.is_connected and self._authed.is_set()

    # ------------------------------------------------------------------ lifecycle

    async def open(self) -> None:
        """Connect and authenticate; raise ChannelError (retryable unless the credentials were
        refused) when that fails. Then the watchdog keeps the connection up."""
        await self._attempt()
        self.ctx.report(connected=True)
        self._watch = asyncio.create_task(self._watchdog(), name="wecom-watchdog")

    async def _attempt(self) -> None:
        self._authed.clear()
        self._lost.clear()
        self._failure = None
        client = self._new_client()
        self.client = client
        await client.connect()
        waiter = asyncio.create_task(self._authed.wait())
        lost = asyncio.create_task(self._lost.wait())
        await asyncio.wait(
            {waiter, lost}, timeout=AUTH_TIMEOUT, return_when=asyncio.FIRST_COMPLETED
        )
        waiter.cancel()
        lost.cancel()
        if self._authed.is_set() and client.is_connected:
            return
        self._drop(client)
        error = self._failure
        if error is not None and error_code(error) in _AUTH_CODES:
            raise ChannelError(f"wecom refused bot_id/secret: {describe(error)}")
        raise ChannelError(
            f"wecom connection failed: {describe(error) if error else 'not authenticated'}",
            retryable=True,
        )

    def _new_client(self) -> aibot.WSClient:
        options = aibot.WSClientOptions(
            bot_id=self.config.bot_id,
            secret=self.config.secret_text,
            ws_url=self.config.ws_url,
            max_reconnect_attempts=0,  # the watchdog reconnects (the SDK's own stops for good)
            heartbeat_interval=int(self.config.heartbeat_seconds * 1000),
            logger=SdkLog(),
        )
        client = aibot.WSClient(options)
        client.on("authenticated", self._authed.set)
        client.on("error", self._on_error)
        client.on("disconnected", lambda _reason: self._lost.set())
        client.on("message", self.on_frame)
        client.on("event", self.on_frame)
        return client

    def taken_over(self) -> None:
        """WeCom's `disconnected_event`: it is about to close this connection for a newer one."""
        log.warning("wecom: %s", TAKEN_OVER)
        self._taken_over = True

    def _on_error(self, error: BaseException) -> None:
        if "Max reconnect attempts" in str(error):  # its reconnects are off: only "closed"
            self._lost.set()
            return
        if self._failure is None or error_code(error) is not None:
            self._failure = error  # the first, or one that names a code (40001 over "give up")
        self._lost.set()

    async def _watchdog(self) -> None:
        """Restart the client whenever it is not connected (the SDK's silent stops)."""
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._lost.wait(), self.watch_every)
            if self.connected:
                self._lost.clear()
                continue
            if not await self._restart():
                return

    async def _restart(self) -> bool:
        """Reconnect until it works (True) or the credentials are refused (False)."""
        if self.client is not None:
            self._drop(self.client)
        while True:
            why = describe(self._failure) if self._failure else "connection closed"
            wait = 0.0
            if self._taken_over:  # WeCom said another connection with this Bot ID took over
                why, wait, self._taken_over = TAKEN_OVER, self.takeover_wait, False
            retry = self.backoff.failure(why, at_least=wait)
            self.ctx.report(connected=False, error=f"wecom: {why}", retry=retry)
            await self.backoff.wait()
            try:
                await self._attempt()
            except ChannelError as exc:
                if not exc.retryable:
                    self.ctx.report(connected=False, error=str(exc))
                    log.error("wecom connection stopped: %s", exc)
                    return False
                continue
            self.restarts += 1
            self.backoff.success()
            self.ctx.report(connected=True)
            return True

    def _drop(self, client: aibot.WSClient) -> None:
        client.remove_all_listeners()
        client.on("error", lambda _error: None)  # a late error must not raise in the SDK
        with contextlib.suppress(Exception):
            client.disconnect()

    async def close(self) -> None:
        watch, self._watch = self._watch, None
        if watch is not None:
            watch.cancel()
            await asyncio.gather(watch, return_exceptions=True)
        client, self.client = self.client, None
        if client is None:
            return
        self._drop(client)  # the SDK closes the socket in a task of its own: wait for it
        loop = asyncio.get_running_loop()
        until = loop.time() + CLOSE_WAIT
        while client.is_connected and loop.time() < until:
            await asyncio.sleep(0.01)

    # ------------------------------------------------------------------ commands

    async def command(self, cmd: str, body: dict[str, Any], req_id: str | None = None) -> Any:
        """Send one command frame and return WeCom's acknowledgement (a frame)."""
        frame = {"headers": {"req_id": req_id or aibot.generate_req_id(cmd)}}
        return await self._call(cmd, lambda client: client.reply(frame, body, cmd))

    async def stream(self, req_id: str, stream_id: str, content: str, *, finish: bool) -> Any:
        """One frame of a stream reply to the message with request id `req_id`."""
        frame = {"headers": {"req_id": req_id}}
        return await self._call(
            "stream frame", lambda client: client.reply_stream(frame, stream_id, content, finish)
        )

    async def push(self, chatid: str, body: dict[str, Any]) -> Any:
        """A message to a chat (the person's userid or the group's chatid)."""
        return await self._call("push", lambda client: client.send_message(chatid, body))

    async def update_card(self, req_id: str, card: dict[str, Any]) -> Any:
        """Replace the card a press (request id `req_id`) came from."""
        frame = {"headers": {"req_id": req_id}}
        return await self._call(
            "card update", lambda client: client.update_template_card(frame, card)
        )

    async def _call(self, what: str, call: Callable[[Any], Awaitable[Any]]) -> Any:
        """One SDK call (it waits for WeCom's acknowledgement); errors become the contract's."""
        client = self.client
        if client is None or not self.connected:
            raise ChannelError("wecom connection is down", retryable=True)
        try:
            return await call(client)
        except TimeoutError as exc:
            raise ChannelError(f"wecom {what}: no acknowledgement", retryable=True) from exc
        except RuntimeError as exc:
            code = error_code(exc)
            if code is None:  # not connected, or the connection closed while waiting
                raise ChannelError(f"wecom {what}: {exc}", retryable=True) from exc
            if code in _RATE_CODES:
                raise RateLimited(RATE_WAIT, scope="chat") from exc
            raise WeComRefused(what, code, str(exc)) from exc
