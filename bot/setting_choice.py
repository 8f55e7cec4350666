"""What `/models` and `/agent` share: the conversation a switch changes and the answer to it.

In a main chat (docs/channels/README.md, "Scope") a switch sets the chat-level conversation,
whose settings new threads start with; a pressed button is answered with its listing again,
the ✓ moved.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from bot.command_context import CommandContext, CommandReply

if TYPE_CHECKING:
    from bot.stores.conversations import Conversation


async def target(ctx: CommandContext) -> Conversation:
    """The conversation a switch sets: the chat-level one in a main chat, else this one."""
    if ctx.msg.in_main_chat:
        return await ctx.service.conversations.get_or_create(ctx.msg.chat.with_topic(None))
    return ctx.conversation


def refused(
    ctx: CommandContext, kind: str, name: str, allowed: bool, denied: Callable[[str, str], str]
) -> CommandReply | None:
    """None when the sender's grant allows `name` (`allowed`); else `denied(name, role)`, the
    refusal written to the audit as a denied `kind`."""
    if allowed:
        return None
    access = ctx.service.access
    if access is not None:
        access.audit.denied(kind, ctx.person, ctx.msg.chat.key, name, ctx.grant.role)
    return CommandReply(denied(name, ctx.grant.role))


async def switched(
    ctx: CommandContext,
    here: str,
    chat_wide: Callable[[int], str],
    listing: Callable[[], CommandReply],
) -> CommandReply:
    """`here` for a conversation; in a main chat `chat_wide(the sender's running replies)`;
    after a button press the listing follows."""
    if ctx.msg.in_main_chat:
        lanes, msg = ctx.lanes, ctx.msg
        text = chat_wide(len(await lanes.runs_in_chat_anywhere(msg.chat, msg.sender.id)))
    else:
        text = here
    if not ctx.msg.is_button:
        return CommandReply(text)
    again = listing()
    return CommandReply(f"{text}\n\n{again.text}", again.buttons)
