"""`/agent [NAME]`: list the agent profiles the sender may use, or switch this conversation's
agent (in a main chat: the agent new conversations there start with), like `/models`.

A conversation without a choice of its own talks to its bot's agent (`channels.<platform>.bots`),
else `lead_agent`. Agents a role leaves out (`access.roles.<role>.agents`) are neither listed
nor chosen.
"""

from __future__ import annotations

from bot import texts
from bot.command_context import CommandContext, CommandReply
from bot.setting_choice import refused, switched
from bot.setting_choice import target as target_of
from channels.base import Button


async def agent_command(ctx: CommandContext, args: str) -> CommandReply:
    service, main = ctx.service, ctx.msg.in_main_chat
    target = await target_of(ctx)
    current = target.agent or service.bound_agent(ctx.msg.chat.channel)
    if not args:
        return _listing(ctx, None, current, main)
    name = _named(ctx, args)
    if name is None:
        return _listing(ctx, texts.unknown_agent(args), current, main)
    allowed = ctx.grant.allows_agent(name)
    if (refusal := refused(ctx, "agent", name, allowed, texts.agent_denied)) is not None:
        return refusal
    await service.conversations.update(target.key, agent=name)
    label = service.agent.profile(name).label
    return await switched(
        ctx,
        texts.agent_switched(label),
        lambda running: texts.chat_default_agent(label, running),
        lambda: _listing(ctx, None, name, main),
    )


def _named(ctx: CommandContext, args: str) -> str | None:
    """The configured agent `args` names (letter case aside), or None."""
    wanted = args.strip().lower()
    return next((n for n in ctx.service.agent.agent_names() if n.lower() == wanted), None)


def _listing(
    ctx: CommandContext, heading: str | None, current: str | None, main: bool
) -> CommandReply:
    agents = ctx.service.agent
    active = agents.profile(current)
    lines = [heading or texts.agent_list(active.label, chat_default=main), ""]
    buttons = []
    for name in [n for n in agents.agent_names() if ctx.grant.allows_agent(n)]:
        profile = agents.profile(name)
        here = name == active.name
        lines.append(texts.agent_line(name, profile.label, profile.description, here))
        buttons.append(Button(label=("✓ " if here else "") + profile.label, value=f"/agent {name}"))
    return CommandReply("\n".join(lines), tuple(buttons))
