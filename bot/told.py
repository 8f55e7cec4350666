"""One-line notices the service sends outside any reply: "busy" and "not allowed" in reply to a
message (in its sender's language), and the scheduler's notices into a schedule's chat."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping

from bot import i18n, texts
from bot.language import Languages
from bot.schedules.scheduler import EVENT_PREFIX as SCHEDULED_RUN
from channels.base import Channel, ChannelError, InboundMessage

log = logging.getLogger("bot.app")


class Told:
    def __init__(self, channels: Mapping[str, Channel]) -> None:
        self.channels = channels  # the App's, as they are (re)started
        self.languages: Languages | None = None  # set once access is built

    async def notify(self, owner: InboundMessage, text: Callable[[], str]) -> None:
        """A notice from the scheduler (a run late or skipped) into the schedule's chat, in the
        language of the schedule's owner (`owner`: the run's message, sent by its creator):
        their /lang, else their platform's hint, else the chat's channel language."""
        chat = owner.chat
        channel = self.channels.get(chat.channel)
        if channel is None:
            raise ChannelError(f"channel {chat.channel} is not running")
        with i18n.use(await self.language_of(owner)):
            said = text()
        await channel.send_text(chat, said)

    async def language_of(self, msg: InboundMessage) -> str:
        return await self.languages.of(msg) if self.languages else i18n.current()

    async def busy(self, msg: InboundMessage) -> None:
        if not msg.event_id.startswith(SCHEDULED_RUN):  # a scheduled run is published again
            await self._tell(msg, lambda: texts.BUSY, "busy")

    async def refused(self, msg: InboundMessage) -> None:
        await self._tell(msg, lambda: texts.NOT_ALLOWED, "refusal")

    async def _tell(self, msg: InboundMessage, text: Callable[[], str], what: str) -> None:
        """A one-line notice in reply to `msg`, in its sender's language; a failure is logged."""
        channel = self.channels.get(msg.chat.channel)
        try:
            with i18n.use(await self.language_of(msg)):
                said = text()
            if channel is not None:
                await channel.send_text(msg.chat, said, reply_to=msg.message_id)
        except Exception as exc:
            log.warning("%s notice on %s failed: %s", what, msg.chat.channel, exc)
