"""Status reactions on the person's message: OnIt while the agent works on it, DONE once it is
answered; OnIt removed when the answer failed or was stopped (`status_reactions`).

Each change runs beside the reply (never in its way), in order per message
(channels/in_order.py), within the app's reaction budget (the message-reaction API allows
about 1,000 calls a minute and 50 a second per app: declared in the channel's capabilities and
kept in its Pacer); a failure is only logged.
"""

from __future__ import annotations

import logging

from channels.base import ChannelError, ChatRef, RateBudget, ReplyStatus
from channels.feishu.api import FeishuApi
from channels.in_order import InOrder
from channels.pacing import Pacer

log = logging.getLogger("channels.feishu")
REACTION = "reaction"  # the budget's method
WORKING, DONE = "OnIt", "DONE"
BUDGET = RateBudget(scope="bot", method=REACTION, per_second=16.0, burst=20)


class StatusReactions:
    def __init__(self, api: FeishuApi, pacer: Pacer, *, enabled: bool) -> None:
        self.api, self.pacer, self.enabled = api, pacer, enabled
        self.calls = InOrder()  # per message: OnIt, then its removal and DONE
        self._working: dict[str, str | None] = {}  # message id -> its OnIt's reaction id

    def working(self, chat: ChatRef, message_id: str | None) -> None:
        if not self.enabled or not message_id or message_id in self._working:
            return
        self._working[message_id] = None

        async def add() -> None:
            if message_id in self._working:  # not finished meanwhile
                self._working[message_id] = await self._add(chat, message_id, WORKING)

        self.calls.run(message_id, add)

    def finished(self, chat: ChatRef, message_id: str | None, status: ReplyStatus) -> None:
        if self.enabled and message_id:
            self.calls.run(message_id, lambda: self._finish(chat, message_id, status == "done"))

    async def _finish(self, chat: ChatRef, message_id: str, done: bool) -> None:
        reaction_id = self._working.pop(message_id, None)
        if reaction_id:
            try:
                async with self.pacer.slot(chat, (BUDGET,)):
                    await self.api.unreact(message_id, reaction_id)
            except ChannelError as exc:
                log.info("feishu: reaction not removed: %s", exc)
        if done:
            await self._add(chat, message_id, DONE)

    async def _add(self, chat: ChatRef, message_id: str, emoji: str) -> str | None:
        try:
            async with self.pacer.slot(chat, (BUDGET,)):
                return await self.api.react(message_id, emoji)
        except ChannelError as exc:  # the answer matters, not its reaction
            log.info("feishu: reaction failed: %s", exc)
            return None
