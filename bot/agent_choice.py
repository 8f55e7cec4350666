"""`/agent [NAME]`: list the agent profiles the sender may use, or switch this conversation's
agent (in a main chat: the agent new conversations there start with), like `/models`.

A conversation without a choice of its own talks to its bot's agent (`channels.<platform>.bots`),
else `lead_agent`. Agents a role leaves out (`access.roles.<role>.agents`) are neither listed
nor chosen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent.grant import Grant
from bot import texts
from bot.command_context import CommandContext
from bot.setting_choice import Choice

if TYPE_CHECKING:
    from bot.stores.conversations import Conversation


def _named(ctx: CommandContext, args: str) -> str | None:
    """The configured agent `args` names (letter case aside), or None."""
    wanted = args.strip().lower()
    return next((n for n in ctx.service.agent.agent_names() if n.lower() == wanted), None)


def _current(ctx: CommandContext, conv: Conversation) -> str | None:
    return conv.agent or ctx.service.bound_agent(ctx.msg.chat.channel)


def _line(ctx: CommandContext, name: str, here: bool) -> str:
    profile = ctx.service.agent.profile(name)
    return texts.agent_line(name, profile.label, profile.description, here)


AGENTS = Choice(
    command="agent",
    column="agent",
    names=lambda ctx: ctx.service.agent.agent_names(),
    line=_line,
    heading=texts.agent_list,
    named=_named,
    unknown=texts.unknown_agent,
    allows=Grant.allows_agent,
    denied=texts.agent_denied,
    current=_current,
    active=lambda ctx, current: ctx.service.agent.profile(current).name,
    label=lambda ctx, name: ctx.service.agent.profile(name).label,
    switched=texts.agent_switched,
    chat_default=texts.chat_default_agent,
)
