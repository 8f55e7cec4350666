"""Memory: who is remembered, a person's summaries and facts; forget one fact or everything."""

from __future__ import annotations

import re
from urllib.parse import quote

from aiohttp import web

from bot.i18n import text as _
from gateway.console.web import Ctx, Pages, not_found
from gateway.registry import PATH_PARAMS

pages = Pages()
HERE = "/console/memory"


def person_url(person: str) -> str:
    return f"{HERE}/{quote(person, safe=':')}"


def _person(ctx: Ctx) -> str | None:
    person = ctx.request.match_info["person"]
    return person if re.fullmatch(PATH_PARAMS["person"], person) else None


@pages.get(HERE)
async def people(ctx: Ctx) -> web.StreamResponse:
    memory = ctx.services.memory.service
    return ctx.render(
        "memory.html",
        page="memory",
        title=_("Memory"),
        enabled=memory.enabled,
        people=await memory.store.people(),
        person_url=person_url,
    )


@pages.get(HERE + "/{person}")
async def person(ctx: Ctx) -> web.StreamResponse:
    who = _person(ctx)
    if who is None:
        return not_found(ctx, _("that person"))
    view = await ctx.services.memory.service.listing(who)
    return ctx.render(
        "person.html",
        page="memory",
        title=_("Memory of {person}", person=who),
        person=who,
        url=person_url(who),
        contexts=view.contexts,
        facts=view.facts,
    )


@pages.post(HERE + "/{person}/facts/{fact_id:[1-9][0-9]{0,17}}/forget")
async def forget_fact(ctx: Ctx) -> web.StreamResponse:
    who = _person(ctx)
    if who is None:
        return not_found(ctx, _("that person"))
    store = ctx.services.memory.service.store
    fact_id = int(ctx.request.match_info["fact_id"])
    if not await store.forget(await store.person(who), fact_id):
        return ctx.back(person_url(who), _("That fact was already forgotten."), "error")
    return ctx.back(person_url(who), _("Fact forgotten."))


@pages.post(HERE + "/{person}/forget")
async def forget_all(ctx: Ctx) -> web.StreamResponse:
    who = _person(ctx)
    if who is None:
        return not_found(ctx, _("that person"))
    if await ctx.field("confirm") != "yes":
        return ctx.back(
            person_url(who), _("Tick the box to confirm; nothing was forgotten."), "error"
        )
    await ctx.services.memory.service.clear(who)
    return ctx.back(HERE, _("Everything about {person} was forgotten.", person=who))
