"""One live platform connection per bot account, across workers.

Every long-connection channel receives on one connection per bot account across the workers
(Telegram's getUpdates: a second poller gets 409 Conflict; Slack Socket Mode, Feishu's long
connection and DingTalk's stream would spread the events over every worker's connection). Each
worker starts such a channel for sending only; a `Holder` per
channel then competes for the Redis lease `<prefix>:conn:<channel>:<bot id>`. The worker that
gets it starts receiving and renews the lease; the others stand by and try again every fifth of
the lease time, so when the holder dies another takes the connection within
`bus.redis.lease_seconds` (+ a fifth). Nothing the platform delivered meanwhile is lost: the
platform keeps what was not confirmed (Telegram's offset) and the journal recognises what the
dead holder had already accepted. The channel checks the lease before each receive call
(`Channel.may_receive`), so a holder paused past its lease does not poll beside the new one, and
an event pushed to its socket before it closed is left unacknowledged (the platform delivers it
again, to the connection held now). After Redis was unreachable, a worker waits half a lease
(at least 1.5 s) from Redis's return before it competes again, so the messages every worker
held meanwhile are appended before a new holder publishes later ones (bot/cluster/outage.py).
A holder cut off from Redis (not from the platform) hands what it received and could not
append to the other workers through the journal once Redis failed it for a lease time; so a
worker taking over a connection another held waits a lease time, takes those messages up
(`take_up`) and only then receives: they go in before what arrives after, about two
lease times after the cut, not when the old holder's line is back.
Webhook modes have no lease: any worker receives. Each such channel is also given a send relay
(`channels.relay`, bot/cluster/send_relay.py): a platform that sends only on that connection
(WeCom) sends through its holder from the other workers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from bot.cluster.lease import Lease
from bot.cluster.redis_client import within
from bot.cluster.send_relay import RedisRelay
from channels.base import Channel
from channels.tasks import cancel

log = logging.getLogger("bot.cluster.connections")

RELAY_WAIT = 10.0
"""Least seconds a relayed send waits for a holder (a handover takes about the lease time)."""
Report = Callable[[str], None]  # "held" or "standby", for /health
TakeUp = Callable[[], Awaitable[object]]  # the messages handed over, into the bus (stores)


class Holder:
    """Competes for one channel's connection lease and starts or stops its receiving."""

    def __init__(
        self,
        client: aioredis.Redis,
        key: str,
        seconds: float,
        worker: str,
        channel: Channel,
        report: Report,
        take_up: TakeUp | None = None,
    ) -> None:
        self.lease = Lease(client, key, seconds, worker)
        self.take_up = take_up
        self.channel = channel
        self.seconds = seconds
        self.report = report
        self.receiving = False
        channel.may_receive = lambda: self.lease.held
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.report("standby")
        self._task = asyncio.create_task(self._run(), name=f"lease {self.channel.name}")

    async def stop(self) -> None:
        """Let go: stop receiving and hand the lease back, so a standby takes it at once."""
        await cancel(self._task)
        await self._set_receiving(False)
        with contextlib.suppress(RedisError, OSError):
            await self.lease.release()

    async def _run(self) -> None:
        down = False
        while True:
            try:
                if down and not self.lease.held:  # once Redis answers again, let the workers
                    await within(self.lease.client.ping(), self.lease.patience)  # append what
                    await asyncio.sleep(max(1.5, self.seconds / 2))  # they held first, in order
                held = await self.lease.acquire()  # renews when already held
                if held and not self.receiving and self.take_up is not None:
                    held = await self._taken_up()
                down = False
            except (RedisError, OSError) as exc:
                log.warning("connection lease of %s: Redis unreachable: %s", self.channel.name, exc)
                held, down = self.lease.held, True
            await self._set_receiving(held)
            await asyncio.sleep(self.seconds / (3 if held else 5))

    async def _taken_up(self) -> bool:
        """Before receiving on a connection another worker held: a lease time for what a
        cut-off holder hands over, then take it up; True when the lease is still ours."""
        assert self.take_up is not None
        assert self.lease.token is not None
        if int(self.lease.token.split(":", 1)[0]) > 1:  # the fence: somebody held it before
            for _ in range(3):  # renewed meanwhile, as while receiving
                await asyncio.sleep(self.seconds / 3)
                if not await self.lease.renew():
                    return False
        try:  # bounded (the lease must be renewed in time), never cut off (it claims rows)
            await asyncio.wait_for(asyncio.shield(self.take_up()), self.seconds / 2)
        except Exception as exc:  # the database is away: the periodic take-over does it later
            log.warning(
                "channel %s: taking up handed-over messages failed: %s", self.channel.name, exc
            )
        return await self.lease.acquire()

    async def _set_receiving(self, on: bool) -> None:
        if on == self.receiving:
            return
        try:
            if on:
                log.info("channel %s: this worker holds the platform connection", self.channel.name)
                await self.channel.start_receiving()
            else:
                log.warning("channel %s: platform connection handed over", self.channel.name)
                await self.channel.stop_receiving()
        except Exception as exc:  # the connect failed: let another worker try
            log.warning(
                "channel %s: %s receiving failed: %s",
                self.channel.name,
                "starting" if on else "stopping",
                exc,
            )
            if on:
                with contextlib.suppress(RedisError, OSError):
                    await self.lease.release()
                return
        self.receiving = on
        self.report("held" if on else "standby")


class ConnectionLeases:
    """The holders of this worker, one per running channel with an exclusive connection."""

    def __init__(
        self,
        client: Callable[[], aioredis.Redis | None],
        prefix: str,
        seconds: float,
        worker: Callable[[], str],
    ) -> None:
        self.client = client
        self.prefix = prefix
        self.seconds = seconds
        self.worker = worker
        self.holders: dict[str, Holder] = {}
        self.take_up: TakeUp | None = None  # set by the service: the stores' take-over

    def prepare(self, channel: Channel) -> None:
        """Before `channel.start()`: connect for sending only when the connection is exclusive."""
        bot = channel.exclusive_connection()
        channel.receiving = bot is None
        if bot is not None:  # sends from this worker reach the holder (channels.relay)
            channel.relay = RedisRelay(
                self.client,
                f"{self.prefix}:relay:{channel.name}:{bot}",
                self.worker,
                lambda: channel.may_receive(),
                wait=max(RELAY_WAIT, 3 * self.seconds),
                repost=max(1.0, self.seconds / 3),
            )

    def hold(self, name: str, channel: Channel, report: Report) -> None:
        """After a successful start: compete for the connection."""
        bot = channel.exclusive_connection()
        client = self.client()
        if bot is None or client is None:
            return
        key = f"{self.prefix}:conn:{channel.name}:{bot}"
        holder = Holder(client, key, self.seconds, self.worker(), channel, report, self.take_up)
        self.holders[name] = holder
        holder.start()

    async def let_go(self, name: str) -> None:
        holder = self.holders.pop(name, None)
        if holder is not None:
            await holder.stop()
