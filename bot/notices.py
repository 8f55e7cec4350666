"""Queued notices: the sign of life of a message that waits, shown below the reply it waits for.

A notice is a message in the chat, and the waiting message's answer later appears in it. So the
running reply must already be a message when the notice goes out, or its final would land below
the notice and the chat would read the answers in the wrong order (a Telegram DM streams a reply
as a draft: no message exists until its final). Before a notice is sent behind a running reply,
that reply is materialized (`Channel.materialize_reply`, a no-op where replies are messages from
the start) and its new ids are in the delivery journal, so a restart continues in that message.
"""

from __future__ import annotations

import asyncio
import logging
import time

from bot import texts
from bot.metrics import Metrics
from bot.replies import ReplyStreamer
from bot.stores.journal import Journal
from channels.base import Channel, ChannelError, InboundMessage, ReplyDoc, ReplyHandle

log = logging.getLogger("bot.notices")


class RunningReply:
    """The reply a lane's run is writing, as the notices queued behind it see it."""

    def __init__(self) -> None:
        self._streamer: ReplyStreamer | None = None
        self._known = asyncio.Event()  # the reply is open, or the run ended without one

    def opened(self, streamer: ReplyStreamer) -> None:
        self._streamer = streamer
        self._known.set()

    @property
    def doc(self) -> ReplyDoc | None:
        """The reply's document now (what its next update shows); None before it opens."""
        return self._streamer.doc if self._streamer is not None else None

    @property
    def finishing(self) -> bool:
        """The reply's final is on its way (a stop now could show the answer twice)."""
        return self._streamer is not None and self._streamer.finishing

    def ended(self) -> None:
        self._streamer = None
        self._known.set()

    async def materialize(self) -> None:
        """Return once the reply is a message in the chat (or finished, or never opened)."""
        await self._known.wait()
        if self._streamer is not None:
            await self._streamer.materialize()


class QueuedNotices:
    def __init__(self, journal: Journal, metrics: Metrics) -> None:
        self.journal = journal
        self.metrics = metrics

    def send(
        self,
        channel: Channel,
        msg: InboundMessage,
        doc: ReplyDoc | None,
        behind: RunningReply | None = None,
    ) -> asyncio.Task[ReplyHandle | None]:
        """Send the notice beside intake: a slow platform never holds other messages."""
        return asyncio.create_task(self._send(channel, msg, doc, behind), name="queued notice")

    async def _send(
        self,
        channel: Channel,
        msg: InboundMessage,
        doc: ReplyDoc | None,
        behind: RunningReply | None,
    ) -> ReplyHandle | None:
        if behind is not None:
            try:
                await behind.materialize()
            except ChannelError as exc:  # the notice still goes out: the message must show
                log.warning("running reply not materialized on %s: %s", channel.name, exc)
        try:
            handle = await channel.mark_queued(
                msg, doc or ReplyDoc(status="queued", labels=texts.labels())
            )
        except Exception as exc:  # a notice that failed must not lose the message
            log.warning("queued notice failed on %s: %s", channel.name, exc)
            return None
        if msg.received_at and not channel.signs_at_acceptance:  # else shown at acceptance
            self.metrics.first_visible.labels(channel=channel.name).observe(
                max(0.0, time.time() - msg.received_at)
            )
        if handle is not None and (state := channel.handle_state(handle)) is not None:
            await self.journal.keep_handle(msg, state)  # a restart reuses the notice
        return handle
