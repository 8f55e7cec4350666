"""Status reactions on the person's message: OnIt while the agent works on it, DONE once it is
answered; OnIt removed when the answer failed or was stopped (`status_reactions`).

Each change runs beside the reply (never in its way), in order per message, within the app's
reaction budget (the message-reaction API allows about 1,000 calls a minute and 50 a second per
app: declared in the channel's capabilities and kept in its Pacer); a failure is only logged.
"""

from __future__ import annotations

import asyncio
import logging

from channels.base import ChannelError, ChatRef, RateBudget, ReplyStatus
from channels.feishu.api import FeishuApi
from channels.pacing import Pacer

log = logging.getLogger("channels.feishu")
REACTION = "reaction"  # the budget's method
WORKING, DONE = "OnIt", "DONE"
BUDGET = RateBudget(scope="bot", method=REACTION, per_second=16.0, burst=20)


class StatusReactions:
    def __init__(self, api: FeishuApi, pacer: Pacer, *, enabled: bool) -> None:
        self.api, self.pacer, self.enabled = api, pacer, enabled
        self._working: dict[str, asyncio.Task[str | None]] = {}  # message id -> its OnIt
        self._tasks: set[asyncio.Task[None]] = set()

    def working(self, chat: ChatRef, message_id: str | None) -> None:
        if not self.enabled or not message_id or message_id in self._working:
            return
        self._working[message_id] = asyncio.create_task(self._add(chat, message_id, WORKING))

    def finished(self, chat: ChatRef, message_id: str | None, status: ReplyStatus) -> None:
        if not self.enabled or not message_id:
            return
        working = self._working.pop(message_id, None)
        task = asyncio.create_task(self._finish(chat, message_id, working, status == "done"))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _finish(
        self, chat: ChatRef, message_id: str, working: asyncio.Task[str | None] | None, done: bool
    ) -> None:
        reaction_id = (await working) if working is not None else None
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

    @property
    def pending(self) -> list[asyncio.Task[None] | asyncio.Task[str | None]]:
        return [*self._tasks, *self._working.values()]
