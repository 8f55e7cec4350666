"""Agents: the agent profiles (`agents:`, agent/profiles.py) and how many conversations talk to
each; on a conversation's page, the switch of its agent.

The switch follows `/agent`'s rule: an agent the chat's person may use (their role's
`agents`, capped by the chat's ceiling). The console knows a conversation, not a sender, so the
person is the chat's own account (a direct chat's user on platforms whose chat id is the user's
id), else the channel's default role applies. A refused switch is audited as a denied `agent`,
as `/agent` does; every switch is a console action in the audit trail.
"""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web

from agent.profiles import AgentProfile
from bot.i18n import text as _
from bot.stores.conversations import Conversation
from gateway.console.agent_grant import who_talks
from gateway.console.conversations_page import of_conversation
from gateway.console.web import Ctx, Pages

pages = Pages()


@dataclass(frozen=True)
class AgentRow:
    profile: AgentProfile
    conversations: int
    model: str  # the model's label: the profile's, else the default


@pages.get("/console/agents")
async def agents(ctx: Ctx) -> web.StreamResponse:
    service = ctx.services.conversations
    convs = await service.store.all(limit=1000)
    talking: dict[str, int] = {}
    for conv in convs:
        name = service.agent_of(conv).name
        talking[name] = talking.get(name, 0) + 1
    rows = [
        AgentRow(p, talking.get(p.name, 0), service.resolve_model(p.model).label)
        for p in service.agents()
    ]
    return ctx.render("agents.html", page="agents", title=_("Agents"), rows=rows)


@pages.post("/console/conversations/{thread_id}/agent")
@of_conversation
async def switch_agent(ctx: Ctx, conv: Conversation) -> web.StreamResponse:
    here = f"/console/conversations/{conv.thread_id}"
    service, name = ctx.services.conversations, await ctx.field("agent")
    profile = next((p for p in service.agents() if p.name == name), None)
    if profile is None:
        return ctx.back(here, _("Unknown agent {name}.", name=repr(name)), "error")
    who = await who_talks(ctx.services.people, conv)
    if who is not None and not who.grant.allows_agent(name):
        people = ctx.services.people
        assert people is not None
        people.audit.denied("agent", who.person, conv.key, name, who.grant.role)
        refused = _(
            "The agent {name} is not allowed for {role} here.", name=name, role=who.grant.role
        )
        return ctx.back(here, refused, "error")
    await service.store.update(conv.key, agent=name)
    done = _("Agent switched to {label}; it applies from the next message.", label=profile.label)
    return ctx.back(here, done)
