"""Starts, restarts and stops the channels; a start that fails is retried until it works.

Channels are also started, restarted and stopped one by one at run time, when their section of
the configuration changes (bot/config/apply.py). Such a restart replaces the instance without
cutting the replies it writes: `replace` starts a fresh one, the old one stops receiving but
keeps sending until bot/channel_restarts.py has let its replies finish and `retire`s it.

The first start of each channel is awaited (the service comes up with what it can reach). When it
fails, the channel's state says `retrying` and a task keeps trying with the one backoff
(`channels/backoff.py`), each time with a fresh instance of the channel, until a start succeeds
or the channel is stopped or restarted. An outage gives one warning and one recovery line.

With several workers (`bus.backend: redis`), a channel whose platform allows one receiving
connection per bot starts for sending only, and receives only while this worker holds the
bot's connection lease (bot/cluster/connections.py).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from bot.cluster.connections import ConnectionLeases
from bot.context import RetiredContext, ServiceContext
from channels.backoff import Backoff, BackoffPolicy, describe
from channels.base import Channel
from channels.tasks import cancel

log = logging.getLogger("bot.supervisor")


class ChannelSupervisor:
    """Owns the life of every channel in `channels` (a dict shared with the dispatcher)."""

    def __init__(
        self,
        channels: dict[str, Channel],
        contexts: dict[str, ServiceContext],
        build: Callable[[str], Channel],
        policy: BackoffPolicy | None = None,
        connections: ConnectionLeases | None = None,
    ) -> None:
        self.channels = channels
        self.connections = connections  # with several workers: who receives on each bot
        self.contexts = contexts
        self.build = build
        self.policy = policy or BackoffPolicy()
        self._retries: dict[str, asyncio.Task[None]] = {}

    async def start(self, name: str) -> bool:
        """Start `name` now; on failure keep retrying in the background. True if it started."""
        backoff = Backoff(f"channel {name}: start", log, self.policy)
        if await self._attempt(name, self.channels[name], backoff):
            return True
        task = asyncio.create_task(self._keep_trying(name, backoff), name=f"start-{name}")
        self._retries[name] = task
        return False

    async def replace(self, name: str) -> tuple[Channel, bool]:
        """Start a fresh instance of `name` in place of the current one, which is returned: it
        stops receiving at once but keeps sending (stop it with `retire` when its replies are
        done). True if the fresh instance started (else it is retried with backoff)."""
        await self._cancel_retry(name)
        old = self.channels[name]
        await self._let_go_of(name, old)
        self.contexts[name].state.last_error = None
        self.channels[name] = self.build(name)
        return old, await self.start(name)

    async def take_out(self, name: str) -> Channel | None:
        """Take `name` out of `channels` without stopping it: it stops receiving and keeps
        sending (stop it with `retire` when its replies are done)."""
        await self._cancel_retry(name)
        channel = self.channels.get(name)
        if channel is not None:
            await self._let_go_of(name, channel)
            del self.channels[name]
        return channel

    async def _let_go_of(self, name: str, channel: Channel) -> None:
        """The instance frees the platform connection for a successor and no longer reports
        the channel's state."""
        ctx = self.contexts[name]
        channel.ctx = RetiredContext(ctx)
        await self._stop_receiving(name, channel)
        ctx.state.running = ctx.state.connected = False
        ctx.state.settled("stopped")

    async def retire(self, name: str, channel: Channel) -> None:
        """Stop an instance `take_out` or `replace` took out (the channel's state is its
        successor's)."""
        await self._stop_quietly(name, channel)

    async def stop_all(self) -> None:
        for name in list(self._retries):
            await self._cancel_retry(name)
        for name, channel in reversed(self.channels.items()):
            await self._stop_one(name, channel)

    async def _keep_trying(self, name: str, backoff: Backoff) -> None:
        while True:
            await backoff.wait()
            self.channels[name] = self.build(name)
            if await self._attempt(name, self.channels[name], backoff):
                self._retries.pop(name, None)
                return

    async def _attempt(self, name: str, channel: Channel, backoff: Backoff) -> bool:
        state = self.contexts[name].state
        state.status, state.next_retry_at = "connecting", None
        if self.connections is not None:
            self.connections.prepare(channel)
        try:
            await channel.start()
        except Exception as exc:
            retry = backoff.failure(describe(exc))
            await self._stop_quietly(name, channel)  # let go of what the failed start opened
            state.running = state.connected = False
            state.retrying(retry)
            return False
        backoff.success()
        state.running = True
        if state.status == "connecting":  # not already reported connected or retrying
            state.settled("connected" if state.connected else "connecting")
        log.info("channel %s: running", name)
        if self.connections is not None:
            self.connections.hold(name, channel, state.connection_is)
        return True

    async def _stop_one(self, name: str, channel: Channel) -> None:
        if self.connections is not None:  # (stop() lets go of a connection of its own)
            await self._stop_receiving(name, channel)
        await self._stop_quietly(name, channel)
        state = self.contexts[name].state
        state.running = state.connected = False
        state.settled("stopped")

    async def _stop_receiving(self, name: str, channel: Channel) -> None:
        """Let go of the platform connection (with several workers: hand it over)."""
        try:
            if self.connections is not None:
                await self.connections.let_go(name)
            elif channel.exclusive_connection() is not None and channel.receiving:
                await channel.stop_receiving()
        except Exception as exc:
            log.warning("channel %s: handing the connection over failed: %s", name, describe(exc))

    async def _stop_quietly(self, name: str, channel: Channel) -> None:
        try:
            await channel.stop()
        except Exception as exc:
            log.warning("channel %s: stop failed: %s", name, describe(exc))

    async def _cancel_retry(self, name: str) -> None:
        task = self._retries.pop(name, None)
        await cancel(task)
