"""Telegram's limits, declared once and enforced by the channel's `Pacer` (channels/pacing.py).

- "message": sends and edits, one per chat per `stream_interval_dm` (1 s) in DMs and per
  `stream_interval_group` (3 s: 20 a minute) in groups, counted from the end of the previous
  call; at most `messages_per_second` (30) a second over the whole bot, with a burst of as many.
- "draft": sendMessageDraft, one per DM per `stream_interval_dm`, in a bucket of its own. A
  draft is not a message: Telegram carries it as a typing action (`sendMessageTextDraftAction`),
  so drafts do not spend the chat's message budget and the final `sendMessage` goes out right
  after the last draft instead of a second later (see docs/channels/telegram.md).
- After a 429 the whole bot is blocked for `retry_after` ("bot" scope): no call is made at all
  until then. `FloodGate` is the view of that block for one-off calls.
"""

from __future__ import annotations

from channels.base import ChannelError, ChatRef, RateBudget, RateLimited
from channels.pacing import Pacer

MESSAGE, DRAFT = "message", "draft"
BOT_WIDE_PER_SECOND = 30.0
_ANY_CHAT = ChatRef(channel="telegram", chat_id="")


def budgets(
    dm_interval: float, group_interval: float, bot_per_second: float = BOT_WIDE_PER_SECOND
) -> tuple[RateBudget, ...]:
    """Every Telegram budget (the service itself paces nothing: the channel coalesces)."""
    return (
        RateBudget(
            scope="chat", method=MESSAGE, per_second=1 / dm_interval, chat_type="dm", serial=True
        ),
        RateBudget(
            scope="chat",
            method=MESSAGE,
            per_second=1 / group_interval,
            chat_type="group",
            serial=True,
        ),
        RateBudget(
            scope="bot",
            method=MESSAGE,
            per_second=bot_per_second,
            burst=int(bot_per_second),
        ),
        RateBudget(
            scope="chat", method=DRAFT, per_second=1 / dm_interval, chat_type="dm", serial=True
        ),
    )


class FloodGate:
    """The bot-wide block a 429 imposes, as kept by the channel's Pacer."""

    def __init__(self, pacer: Pacer) -> None:
        self.pacer = pacer

    def remaining(self) -> float:
        return self.pacer.blocked_for(_ANY_CHAT)

    def block(self, seconds: float) -> None:
        """Block every call for `seconds` from now (a longer block already in place wins)."""
        self.pacer.block("bot", _ANY_CHAT, "", seconds)

    def check(self) -> None:
        """Raise RateLimited(scope="bot") while blocked."""
        left = self.remaining()
        if left > 0:
            raise RateLimited(left, scope="bot")

    async def wait(self) -> None:
        """Sleep until the block (which may grow while waiting) has passed."""
        await self.pacer.wait_unblocked(_ANY_CHAT)


class EntitiesRejected(ChannelError):
    """Telegram could not parse the HTML entities; nothing was shown, the caller resends
    plain text (at once: a refused call spends no budget)."""
