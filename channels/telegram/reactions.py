"""Status reactions on the person's message (setMessageReaction): 👀 while the agent works on it,
👍 once it is answered; cleared when the answer failed or was stopped (`status_reactions`).

A reaction is a sign of life, never in the answer's way: each goes out in the background, in
order per message, within the bot-wide budget messages use (channels/telegram/pacing.py) and
never while a 429 blocks the bot; a refusal (reactions off in the chat) is only logged.
"""

from __future__ import annotations

import asyncio
import logging

from telegram import ReactionTypeEmoji

from channels.base import ChannelError, ChatRef, ReplyStatus
from channels.telegram.api import Sender

log = logging.getLogger("channels.telegram")
WORKING, DONE = "👀", "👍"


class Reactions:
    def __init__(self, sender: Sender, enabled: bool) -> None:
        self.sender = sender
        self.enabled = enabled
        self._last: dict[tuple[str, int], asyncio.Task[None]] = {}  # per message, in order
        self._tasks: set[asyncio.Task[None]] = set()

    def working(self, chat: ChatRef, message_id: int | None) -> None:
        self._set(chat, message_id, WORKING)

    def finished(self, chat: ChatRef, message_id: int | None, status: ReplyStatus) -> None:
        self._set(chat, message_id, DONE if status == "done" else None)

    def _set(self, chat: ChatRef, message_id: int | None, emoji: str | None) -> None:
        if not self.enabled or message_id is None:
            return
        key = (chat.key, message_id)
        task = asyncio.create_task(self._send(chat, message_id, emoji, self._last.get(key)))
        self._last[key] = task
        self._tasks.add(task)
        task.add_done_callback(lambda done: self._done(key, done))

    async def _send(
        self,
        chat: ChatRef,
        message_id: int,
        emoji: str | None,
        before: asyncio.Task[None] | None,
    ) -> None:
        if before is not None:
            await asyncio.gather(before, return_exceptions=True)
        reaction = [ReactionTypeEmoji(emoji)] if emoji else []
        try:
            await self.sender.bot_wide(
                chat,
                lambda: self.sender.bot.set_message_reaction(
                    chat_id=int(chat.chat_id), message_id=message_id, reaction=reaction
                ),
            )
        except ChannelError as exc:  # reactions off in this chat, a 429: the answer matters
            log.debug("reaction not set on %s: %s", chat.key, exc)

    def _done(self, key: tuple[str, int], task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if self._last.get(key) is task:
            del self._last[key]

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
