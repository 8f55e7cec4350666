"""`/console/login` (the admin token → a session cookie) and `/console/logout`."""

from __future__ import annotations

from aiohttp import web

from gateway.console.session import set_cookie
from gateway.console.web import SESSIONS_KEY, Ctx, Pages

pages = Pages()
public = Pages()  # served without a logged-in session
HOME = "/console/channels"


def safe_next(target: str) -> str:
    """Only a console path: never another site (`//evil`, `https://…`)."""
    if target.startswith("/console/") and not target.startswith("//") and "\\" not in target:
        return target
    return HOME


@public.get("/console/login")
async def login_form(ctx: Ctx) -> web.StreamResponse:
    if ctx.session.authed:
        return ctx.back(safe_next(ctx.request.query.get("next", "")))
    return ctx.render("login.html", next=safe_next(ctx.request.query.get("next", "")), error="")


@public.post("/console/login")
async def login(ctx: Ctx) -> web.StreamResponse:
    sessions = ctx.request.app[SESSIONS_KEY]
    target = safe_next(await ctx.field("next"))
    remote = ctx.request.remote or ""
    if sessions.throttled(remote):
        return ctx.render(
            "login.html",
            status=429,
            next=target,
            error="Too many wrong tokens from this address; wait a few minutes.",
        )
    session = sessions.login(ctx.session, await ctx.field("token"), remote)
    if session is None:
        return ctx.render(
            "login.html", status=401, next=target, error="That token is not the admin token."
        )
    response = web.Response(status=303, headers={"Location": target})
    set_cookie(ctx.request, response, session)
    return response


@pages.post("/console/logout")
async def logout(ctx: Ctx) -> web.StreamResponse:
    sessions = ctx.request.app[SESSIONS_KEY]
    sessions.end(ctx.session)
    response = web.Response(status=303, headers={"Location": "/console/login"})
    response.del_cookie("antler_console", path="/console")
    return response


@pages.get("/console")
async def home(ctx: Ctx) -> web.StreamResponse:
    return ctx.back(HOME)
