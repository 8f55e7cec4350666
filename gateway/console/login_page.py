"""`/console/login` (the admin token → a session cookie), `/console/logout`, the language switch
(`/console/lang`) and the console's side of the gateway's allowlist (gateway/auth.py): the login
page, the switch and the assets the login page renders with are public; every other console
path needs a logged-in session."""

from __future__ import annotations

from aiohttp import web

from bot import i18n
from bot.i18n import text as _
from gateway.console.language import SWITCH, remember
from gateway.console.session import set_cookie
from gateway.console.web import SESSIONS_KEY, Ctx, Pages, guarded, refused

pages = Pages()
public = Pages()  # served without a logged-in session
HOME = "/console/channels"
LOGIN = "/console/login"
# what templates/login.html (and its base.html) loads; a test renders the page to keep it true
LOGIN_ASSETS = frozenset(
    {"/console/static/console.css", "/console/static/vendor/htmx-2.0.11.min.js"}
)


class Gate:
    """For the gateway's auth: what is public, who is logged in, the answer to a stranger."""

    public = frozenset({LOGIN, SWITCH}) | LOGIN_ASSETS

    def authed(self, request: web.Request) -> bool:
        session = request.app[SESSIONS_KEY].find(request)
        return session is not None and session.authed

    async def refuse(self, request: web.Request) -> web.StreamResponse:
        """What the console answers a request without a logged-in session: its login page
        (303) or 403, as every console page does."""
        return await guarded(_not_reached)(request)


async def _not_reached(ctx: Ctx) -> web.StreamResponse:
    return refused(ctx.request)  # the guard lets only a logged-in session get here


def safe_next(target: str) -> str:
    """Only a console path: never another site (`//evil`, `https://…`)."""
    if target.startswith("/console/") and not target.startswith("//") and "\\" not in target:
        return target
    return HOME


@public.get(LOGIN)
async def login_form(ctx: Ctx) -> web.StreamResponse:
    if ctx.session.authed:
        return ctx.back(safe_next(ctx.request.query.get("next", "")))
    return ctx.render("login.html", next=safe_next(ctx.request.query.get("next", "")), error="")


@public.post(LOGIN)
async def login(ctx: Ctx) -> web.StreamResponse:
    sessions = ctx.request.app[SESSIONS_KEY]
    target = safe_next(await ctx.field("next"))
    remote = ctx.request.remote or ""
    if sessions.throttled(remote):
        return ctx.render(
            "login.html",
            status=429,
            next=target,
            error=_("Too many wrong tokens from this address; wait a few minutes."),
        )
    session = sessions.login(ctx.session, await ctx.field("token"), remote)
    if session is None:
        return ctx.render(
            "login.html", status=401, next=target, error=_("That token is not the admin token.")
        )
    response = web.Response(status=303, headers={"Location": target})
    set_cookie(ctx.request, response, session)
    return response


@public.get(SWITCH)
async def switch_language(ctx: Ctx) -> web.StreamResponse:
    """The header's "en / 中文": remember the language asked for (`?to=zh-CN`) and go back to
    the page it was chosen on (`next`, a console path only). An unknown one changes nothing."""
    response = ctx.back(safe_next(ctx.request.query.get("next", "")))
    chosen = i18n.supported(ctx.request.query.get("to"))
    if chosen is not None:
        remember(response, ctx.request, chosen)
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
