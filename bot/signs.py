"""The first sign of life, at acceptance: beside the queue, never behind it.

The bus calls `Signs.send` once a message is newly accepted in the delivery journal (a
redelivery is not, so it sends nothing) and before it is queued for the dispatcher. The
message's channel shows at once that it was heard (`Channel.sign_of_life`: typing on
Telegram), within the platform's limits; the answer still waits for its lane and a run slot,
which no longer delay the first sign.
"""

from __future__ import annotations

import asyncio
import logging
import time

from bot.metrics import Metrics
from channels.base import Channel, InboundMessage

log = logging.getLogger("bot.signs")


class Signs:
    def __init__(self, channels: dict[str, Channel], metrics: Metrics) -> None:
        self.channels = channels  # the running instances (a restart replaces one in place)
        self.metrics = metrics
        self._tasks: set[asyncio.Task[None]] = set()

    def send(self, msg: InboundMessage) -> None:
        channel = self.channels.get(msg.chat.channel)
        if channel is None or not channel.signs_at_acceptance:
            return
        task = asyncio.create_task(self._show(channel, msg), name="sign of life")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _show(self, channel: Channel, msg: InboundMessage) -> None:
        try:
            shown = await channel.sign_of_life(msg)
        except Exception as exc:  # a sign is never worth more than a log line
            log.debug("no sign of life for %s: %s", msg.chat.key, exc)
            return
        if shown and msg.received_at:
            self.metrics.first_visible.labels(channel=channel.name).observe(
                max(0.0, time.time() - msg.received_at)
            )

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
