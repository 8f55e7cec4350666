"""The one access gate: who may talk to the bot, and which group messages are meant for it.

Every channel publishes what it parsed (sender, `chat.chat_type`, `mentions_bot`,
`replies_to_bot`); the service context asks this gate before the message is recorded. The order is
the same on every platform:

1. messages from bots are ignored;
2. in groups, a message counts only when it is addressed to the bot — a mention, a reply to the
   bot (or a thread the bot answers in), a command or a button press — unless the chat's trigger
   (`group_trigger`, or its entry in `group_trigger_chats`) is `all`;
3. a sender or chat outside the allowlists is refused: one short notice (`texts.NOT_ALLOWED`) per
   user and chat within `REFUSAL_INTERVAL`, paced by the service's one rate-limit mechanism.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Awaitable, Callable

from channels.base import ChannelConfig, InboundMessage, RateBudget
from channels.pacing import Pacer

log = logging.getLogger("bot.access")

REFUSAL_INTERVAL = 3600.0
"""At most one refusal notice per user and chat in this many seconds."""

_REFUSAL_BUDGET = (RateBudget(scope="reply", per_second=1 / REFUSAL_INTERVAL, burst=1),)

Notify = Callable[[InboundMessage], Awaitable[None]]


class Verdict(enum.StrEnum):
    admit = "admit"
    ignore = "ignore"  # not meant for the bot: dropped without a word
    refuse = "refuse"  # meant for the bot, but the sender or chat is not allowed


class AccessGate:
    """Decides per message; tells refused senders (rate-limited) through `notify`."""

    def __init__(self, configs: dict[str, ChannelConfig], pacer: Pacer, notify: Notify) -> None:
        self.configs = configs
        self.pacer = pacer
        self.notify = notify

    def verdict(self, msg: InboundMessage) -> Verdict:
        cfg = self.configs.get(msg.chat.channel)
        if cfg is None:
            return Verdict.admit
        if msg.sender.is_bot or not triggered(msg, cfg):
            return Verdict.ignore
        return Verdict.admit if allowed(msg, cfg) else Verdict.refuse

    async def screen(self, msg: InboundMessage) -> Verdict:
        """The verdict; a refusal is logged and, at most once per interval, told to the sender."""
        verdict = self.verdict(msg)
        if verdict is Verdict.refuse:
            log.info("refused %s in %s (not in the allowlist)", msg.sender.id, msg.chat.key)
            if await self._may_tell(msg):
                await self.notify(msg)
        return verdict

    async def _may_tell(self, msg: InboundMessage) -> bool:
        key = f"refusal/{msg.chat.key}/{msg.sender.id}"
        return self.pacer.try_take(msg.chat, _REFUSAL_BUDGET, key)


def trigger_mode(msg: InboundMessage, cfg: ChannelConfig) -> str:
    return cfg.group_trigger_chats.get(msg.chat.chat_id, cfg.group_trigger)


def triggered(msg: InboundMessage, cfg: ChannelConfig) -> bool:
    """Is the message meant for the bot? DMs and button presses always are."""
    if msg.chat.chat_type == "dm" or msg.is_button:
        return True
    if trigger_mode(msg, cfg) == "all":
        return True
    return msg.mentions_bot or msg.replies_to_bot or msg.text.lstrip().startswith("/")


def allowed(msg: InboundMessage, cfg: ChannelConfig) -> bool:
    """The sender is allowed by id or by one of their roles, in an allowed chat and workspace.

    A user or role allowlist admits whoever is on either; the chat and workspace lists each
    narrow where (a DM belongs to no workspace, so a workspace list refuses DMs)."""
    roles = cfg.role_allowlist
    people = not cfg.allowed_users and not roles
    people = people or msg.sender.id in cfg.allowed_users
    people = people or any(r in roles for r in msg.sender.roles)
    chats_ok = not cfg.allowed_chats or msg.chat.chat_id in cfg.allowed_chats
    spaces = cfg.workspace_allowlist
    spaces_ok = not spaces or msg.chat.workspace in spaces
    return people and chats_ok and spaces_ok
