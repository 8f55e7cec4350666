"""Messages a channel restart took from the instance answering them, answered again.

A reply cut by a restart (bot/channel_restarts.py), or refused by the instance a restart
replaced (a revoked token), is answered again from the delivery journal as after a crash: on
the channel's current instance, in the reply the user already sees. A message of a channel
switched off meanwhile waits (parked) until the channel is switched on again; the journal keeps
it unsettled, so a restart of the service answers it too.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from bot.resume import restored_handle
from bot.stores.journal import UNSETTLED, Entry, Journal, State
from channels.base import Channel, InboundMessage, ReplyHandle

log = logging.getLogger("bot.answer_again")


@dataclass(frozen=True, slots=True)
class Again:
    msg: InboundMessage
    handle: ReplyHandle | None
    entry: Entry | None  # None: it never started, so it is answered as a first time


class AnswerAgain:
    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self.parked: dict[str, list[InboundMessage]] = {}

    async def cut(self, channel: Channel | None, msg: InboundMessage) -> Again | None:
        """`msg` was cut from its instance; `channel` is the current one (None: switched off)."""
        await self.journal.give_back(msg)  # a restart is no failure of the message
        if channel is None:
            self.park(msg)
            return None
        return await self._again(channel, msg)

    def park(self, msg: InboundMessage) -> None:
        log.info("channel %s is off; %s waits for it", msg.chat.channel, msg.event_id)
        self.parked.setdefault(msg.chat.channel, []).append(msg)

    async def unpark(self, name: str, channel: Channel) -> list[Again]:
        """The channel `name` is switched on again: what waited for it."""
        found = [await self._again(channel, msg) for msg in self.parked.pop(name, [])]
        return [again for again in found if again is not None]

    async def _again(self, channel: Channel, msg: InboundMessage) -> Again | None:
        entry = await self.journal.entry(msg)
        if entry is None or entry.state not in UNSETTLED:
            return None  # settled meanwhile (another worker, a /stop)
        started = entry.state is not State.accepted
        return Again(msg, restored_handle(channel, entry), entry if started else None)
