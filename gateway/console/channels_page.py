"""Channels: state, connected since, last event and error, counters; restart one."""

from __future__ import annotations

from aiohttp import web

from bot.i18n import text as _
from gateway.console.web import Ctx, Pages, not_found

pages = Pages()


@pages.get("/console/channels")
async def channels(ctx: Ctx) -> web.StreamResponse:
    states = ctx.services.channels.states()
    return ctx.render(
        "channels.html", page="channels", title=_("Channels"), channels=sorted(states.items())
    )


@pages.post("/console/channels/{name}/restart")
async def restart(ctx: Ctx) -> web.StreamResponse:
    name = ctx.request.match_info["name"]
    service = ctx.services.channels
    if name not in service.states():
        return not_found(ctx, _("channel {name}", name=name))
    if await service.restart(name):
        return ctx.back("/console/channels", _("{name} restarted.", name=name))
    error = service.states()[name].last_error
    return ctx.back(
        "/console/channels",
        _("{name} did not start: {error}; retrying with backoff.", name=name, error=error),
        "error",
    )
