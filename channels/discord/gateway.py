"""The gateway connection: discord.py's `Client.connect` with a retry loop around it.

discord.py reconnects and RESUMEs by itself (dropped sockets, op 7, an invalid session), but
`connect()` dies when a connect fails before it ever had a socket (its retry reads the missing
socket's sequence), and returns for good on a close it cannot handle. This loop restarts it
with the service's one backoff and reports the state; an authentication failure (4004) or
disallowed intents (4014) are final: reported, not retried.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

import discord
import yarl
from discord.gateway import DiscordWebSocket

from channels.backoff import Backoff, BackoffPolicy, describe
from channels.base import ChannelContext, ChannelError

log = logging.getLogger("channels.discord")
FATAL_CLOSES = {4004: "authentication failed", 4013: "invalid intents", 4014: "disallowed intents"}
READY_TIMEOUT = 30.0


def use_gateway(url: str) -> None:
    """Where discord.py connects (it has no option: the class default, also used after an
    invalid session)."""
    DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(url)


class Gateway:
    def __init__(
        self, client: discord.Client, ctx: ChannelContext, policy: BackoffPolicy | None
    ) -> None:
        self.client = client
        self.ctx = ctx
        self.backoff = Backoff("discord gateway", log, policy)
        self.ready = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._failed: BaseException | None = None
        client.event(self.on_ready)
        client.event(self.on_resumed)

    async def on_ready(self) -> None:
        self._connected()

    async def on_resumed(self) -> None:
        self._connected()

    def _connected(self) -> None:
        self.backoff.success()
        self.ready.set()
        self.ctx.report(connected=True)

    async def open(self) -> None:
        """Connect; return once READY, raise (retryable) when the first attempt fails."""
        self.ready.clear()
        self._failed = None
        self._task = asyncio.create_task(self._run(), name="discord-gateway")
        waiter = asyncio.create_task(self.ready.wait())
        await asyncio.wait(
            {waiter, self._task}, timeout=READY_TIMEOUT, return_when=asyncio.FIRST_COMPLETED
        )
        waiter.cancel()
        if not self.ready.is_set():
            error = self._failed
            await self.close()
            what = describe(error) if error else "no READY in time"
            raise ChannelError(
                f"discord gateway: {what}", retryable=error is None or _retryable(error)
            )

    async def _run(self) -> None:
        first = True
        while True:
            try:
                await self.client.connect(reconnect=True)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if first and not self.ready.is_set():
                    self._failed = exc
                    return
                if not _retryable(exc):
                    self.ctx.report(connected=False, error=f"discord gateway: {describe(exc)}")
                    log.error("discord gateway stopped: %s", describe(exc))
                    return
                retry = self.backoff.failure(describe(exc))
                self.ctx.report(
                    connected=False, error=f"discord gateway: {describe(exc)}", retry=retry
                )
                await self.backoff.wait()
                continue
            finally:
                first = False
            if self.client.is_closed():
                return

    async def close(self) -> None:
        """Stop receiving (the REST session stays open for sending)."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        ws = self.client.ws
        if ws is not None:
            with contextlib.suppress(Exception):
                await ws.close(code=1000)
        self.ready.clear()


def _retryable(exc: BaseException) -> bool:
    if isinstance(exc, discord.PrivilegedIntentsRequired):
        return False
    if isinstance(exc, discord.ConnectionClosed):
        return exc.code not in FATAL_CLOSES
    return not isinstance(exc, discord.LoginFailure)
