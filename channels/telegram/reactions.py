"""Status reactions on the person's message (setMessageReaction): 👀 while the agent works on it,
👍 once it is answered; cleared when the answer failed or was stopped (`status_reactions`).

A reaction is a sign of life, never in the answer's way: each goes out in the background, in
order per message (channels/in_order.py), within the bot-wide budget messages use
(channels/telegram/pacing.py) and never while a 429 blocks the bot; a refusal (reactions off
in the chat) is only logged.
"""

from __future__ import annotations

import logging

from telegram import ReactionTypeEmoji

from channels.base import ChannelError, ChatRef, ReplyStatus
from channels.in_order import InOrder
from channels.telegram.api import Sender

log = logging.getLogger("channels.telegram")
WORKING, DONE = "👀", "👍"


class Reactions:
    def __init__(self, sender: Sender, enabled: bool) -> None:
        self.sender = sender
        self.enabled = enabled
        self.calls = InOrder()

    def working(self, chat: ChatRef, message_id: int | None) -> None:
        self._set(chat, message_id, WORKING)

    def finished(self, chat: ChatRef, message_id: int | None, status: ReplyStatus) -> None:
        self._set(chat, message_id, DONE if status == "done" else None)

    def _set(self, chat: ChatRef, message_id: int | None, emoji: str | None) -> None:
        if self.enabled and message_id is not None:
            self.calls.run((chat.key, message_id), lambda: self._send(chat, message_id, emoji))

    async def _send(self, chat: ChatRef, message_id: int, emoji: str | None) -> None:
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

    async def close(self) -> None:
        await self.calls.close()
