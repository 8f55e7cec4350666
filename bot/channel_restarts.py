"""Restarting or switching off one channel at run time without losing a reply.

A changed channel key (bot/config/apply.py) or the admin API's restart replaces the channel's
instance: the old one stops receiving at once and a fresh one takes the platform connection, so
new messages go to it, and the caller (the config API, holding the configuration lock) does not
wait. In the background the old instance keeps sending: the replies it writes finish on it for
at most `channels.shutdown_grace_seconds`. A reply still running then is cut with a visible note
and answered again from the delivery journal on the channel's current instance, in the reply
the user sees, as after a crash (bot/dispatcher.py). Then the old instance is stopped.

Switching a channel off goes the same way without a successor: its running and queued replies
finish on the old instance within the grace; what is left is answered when the channel is
switched on again (or at the next start of the service: the journal keeps it unsettled). A
second change during a drain drains each replaced instance on its own.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from bot import texts
from bot.dispatcher import Dispatcher
from bot.supervisor import ChannelSupervisor
from channels.base import Channel

log = logging.getLogger("bot.channel_restarts")

POLL = 0.05


class ChannelRestarts:
    def __init__(
        self,
        supervisor: ChannelSupervisor,
        dispatcher: Dispatcher,
        grace: Callable[[], float],
    ) -> None:
        self.supervisor = supervisor
        self.dispatcher = dispatcher
        self.grace = grace  # read when a drain begins: the key is live
        self.draining: dict[asyncio.Task[None], Channel] = {}

    async def restart(self, name: str) -> bool:
        """A fresh instance of `name` takes over now; the old one drains in the background.
        False if the fresh one did not start (it is retried with backoff)."""
        old, ok = await self.supervisor.replace(name)
        self._drain(name, old, texts.CHANNEL_RESTARTED)
        return ok

    async def start(self, name: str) -> bool:
        """Switch `name` on; once started it also answers what waited for it while it was off.
        False if it did not start (it is retried with backoff)."""
        self.supervisor.channels[name] = self.supervisor.build(name)
        ok = await self.supervisor.start(name)
        if ok:
            await self.dispatcher.take_up(name)
        return ok

    async def stop(self, name: str) -> None:
        """Switch `name` off: it receives no more; its replies finish in the background."""
        old = await self.supervisor.take_out(name)
        if old is not None:
            self.dispatcher.retiring[name] = old
            self._drain(name, old, texts.CHANNEL_SWITCHED_OFF)

    async def close(self) -> None:
        """At shutdown (after the dispatcher's): stop every instance still draining."""
        for task in list(self.draining):
            task.cancel()
        await asyncio.gather(*self.draining, return_exceptions=True)

    def _drain(self, name: str, old: Channel, note: str) -> None:
        task = asyncio.create_task(self._retire(name, old, note), name=f"drain {name}")
        self.draining[task] = old
        task.add_done_callback(lambda done: self.draining.pop(done, None))

    async def _retire(self, name: str, old: Channel, note: str) -> None:
        try:
            if not await self._finished(name, old, self.grace()):
                log.warning("channel %s: replies still running after the grace; cut", name)
                await self._cut(old, note)
        finally:
            if self.dispatcher.retiring.get(name) is old:
                del self.dispatcher.retiring[name]
            await self.supervisor.retire(name, old)
            log.info("channel %s: the replaced instance is stopped", name)

    async def _finished(self, name: str, old: Channel, grace: float) -> bool:
        """Wait until `old` writes no reply (switched off: until the channel has no reply
        running or queued), at most `grace` seconds; False if some still run."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace
        while self._busy(name, old):
            if loop.time() >= deadline:
                return False
            await asyncio.sleep(POLL)
        return True

    async def _cut(self, old: Channel, note: str) -> None:
        """Cut the replies `old` still writes: each ends with `note` and its message stays
        unsettled, to be answered again (Dispatcher._answer_again)."""
        runs = []
        for lane in self.dispatcher.lanes.values():
            if lane.channel is old and lane.run is not None and not lane.run.done():
                lane.stop_reason, lane.cut = note, True
                self.dispatcher.turns.keep_pending(lane.run)
                lane.run.cancel()
                runs.append(lane.run)
        await asyncio.gather(*runs, return_exceptions=True)

    def _busy(self, name: str, old: Channel) -> bool:
        lanes = self.dispatcher.lanes
        if any(lane.channel is old and lane.run is not None for lane in lanes.values()):
            return True
        off = name not in self.dispatcher.channels
        return off and any(key.startswith(name + ":") for key in lanes)
