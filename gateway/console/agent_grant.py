"""Whose grant decides a conversation's agents in the console (gateway/console/agents_page.py):
the chat's own account (a direct chat's user where the platform's chat id is the user's id),
else the channel's default role; capped by the chat's ceiling, as `/agent` is."""

from __future__ import annotations

from agent.profiles import AgentProfile
from bot.access.people import People, Who
from bot.stores.conversations import Conversation
from channels.bots import platform_of
from channels.types import ChatRef
from gateway.console.web import Ctx


async def who_talks(people: People | None, conv: Conversation) -> Who | None:
    """The person whose grant decides the conversation's agents (None: no access config)."""
    if people is None:
        return None
    chat = ChatRef(channel=conv.channel, chat_id=conv.chat_id)
    return await people.who_in(f"{platform_of(conv.channel)}:{conv.chat_id}", chat)


async def allowed_agents(ctx: Ctx, conv: Conversation) -> list[AgentProfile]:
    """The agents the conversation may be switched to (the conversation page's choice)."""
    who = await who_talks(ctx.services.people, conv)
    profiles = ctx.services.conversations.agents()
    return [p for p in profiles if who is None or who.grant.allows_agent(p.name)]
