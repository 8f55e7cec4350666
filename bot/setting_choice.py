"""What `/models` and `/agent` share: a per-conversation setting chosen from a list with buttons.

Each command describes its setting as a `Choice` (the names, how one is shown, the texts); `answer`
lists them, or switches the conversation to the one named. In a main chat (docs/channels/README.md,
"Scope") a switch sets the chat-level conversation, whose settings new threads start with; a
pressed button is answered with its listing again, the ✓ moved.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.command_context import CommandContext, CommandReply
from channels.base import Button

if TYPE_CHECKING:
    from agent.grant import Grant
    from bot.stores.conversations import Conversation


@dataclass(frozen=True, slots=True)
class Choice:
    """One setting: `/<command> [NAME]` sets the conversation's `column` (also the audit's kind)."""

    command: str
    column: str
    # the listing
    names: Callable[[CommandContext], list[str]]
    line: Callable[[CommandContext, str, bool], str]  # (name, ticked) -> its line in the listing
    heading: Callable[..., str]  # (current label, *, chat_default) -> the listing's first line
    # a name asked for
    named: Callable[[CommandContext, str], str | None]  # the configured name asked for, or None
    unknown: Callable[[str], str]  # (what was asked) -> the heading when nothing matches
    allows: Callable[[Grant, str], bool]
    denied: Callable[[str, str], str]  # (name, role) -> the refusal
    # the switch
    current: Callable[[CommandContext, Conversation], str | None]  # its choice, or what it uses
    active: Callable[[CommandContext, str | None], str]  # the name a choice resolves to
    label: Callable[[CommandContext, str], str]
    switched: Callable[[str], str]  # (label) -> the answer to a switch in a conversation
    chat_default: Callable[[str, int], str]  # (label, running replies) -> in a main chat


async def answer(ctx: CommandContext, choice: Choice, args: str) -> CommandReply:
    """`/<command>`: the listing; `/<command> NAME`: the switch, or why not."""
    main = ctx.msg.in_main_chat
    conv = await _target(ctx)
    current = choice.current(ctx, conv)
    if not args:
        return listing(ctx, choice, None, current, main)
    name = choice.named(ctx, args)
    if name is None:
        return listing(ctx, choice, choice.unknown(args), current, main)
    allowed = choice.allows(ctx.grant, name)
    if (refusal := _refused(ctx, choice.column, name, allowed, choice.denied)) is not None:
        return refusal
    await ctx.service.conversations.update(conv.key, **{choice.column: name})
    label = choice.label(ctx, name)
    return await _switched(
        ctx,
        choice.switched(label),
        lambda running: choice.chat_default(label, running),
        lambda: listing(ctx, choice, None, name, main),
    )


def listing(
    ctx: CommandContext, choice: Choice, heading: str | None, current: str | None, main: bool
) -> CommandReply:
    """The names the sender's grant allows, the active one ticked, a button each."""
    active = choice.active(ctx, current)
    lines = [heading or choice.heading(choice.label(ctx, active), chat_default=main), ""]
    buttons = []
    for name in [n for n in choice.names(ctx) if choice.allows(ctx.grant, n)]:
        here = name == active
        lines.append(choice.line(ctx, name, here))
        label = ("✓ " if here else "") + choice.label(ctx, name)
        buttons.append(Button(label=label, value=f"/{choice.command} {name}"))
    return CommandReply("\n".join(lines), tuple(buttons))


async def _target(ctx: CommandContext) -> Conversation:
    """The conversation a switch sets: the chat-level one in a main chat, else this one."""
    if ctx.msg.in_main_chat:
        return await ctx.service.conversations.get_or_create(ctx.msg.chat.with_topic(None))
    return ctx.conversation


def _refused(
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


async def _switched(
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
