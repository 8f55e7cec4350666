"""The console's page plumbing: templates, the per-request context, redirects, the guard that
every page passes (session, login, CSRF) and the security headers of every answer."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2
from aiohttp import web
from babel.dates import format_datetime
from multidict import MultiDictProxy

from bot import i18n
from bot.access.store import AuditEntry
from bot.i18n import N_
from bot.i18n import text as _
from gateway.console.language import choices, locale_of
from gateway.console.services import ConsoleServices
from gateway.console.session import Session, Sessions, csrf_ok, set_cookie
from gateway.errors import ApiError

log = logging.getLogger("gateway.console")

HERE = Path(__file__).parent
TEMPLATES = jinja2.Environment(
    loader=jinja2.FileSystemLoader(HERE / "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    extensions=["jinja2.ext.i18n"],
)
# the templates' _() / gettext() / ngettext(): the service's catalog in the request's language
TEMPLATES.install_gettext_callables(  # type: ignore[attr-defined]
    gettext=i18n.gettext, ngettext=i18n.ngettext, newstyle=True
)
NAV = (  # each label is translated where the header shows it
    ("channels", N_("Channels")),
    ("conversations", N_("Conversations")),
    ("agents", N_("Agents")),
    ("deliveries", N_("Deliveries")),
    ("extensions", N_("Models & skills")),
    ("mcp", N_("MCP servers")),
    ("memory", N_("Memory")),
    ("metrics", N_("Metrics")),
    ("usage", N_("Usage")),
    ("schedules", N_("Schedules")),
    ("people", N_("People")),
    ("approvals", N_("Approvals")),
    ("audit", N_("Audit")),
)
HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data:; connect-src 'self'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


def when(ts: float | None) -> str:
    """A unix time in UTC as the page's language writes it: `2026-11-23 16:40:05 UTC`,
    `2026年11月23日 16:40:05 UTC` (Babel's format_datetime; "—" for none)."""
    if not ts:
        return "—"
    moment = dt.datetime.fromtimestamp(ts, dt.UTC)
    pattern = i18n.gettext("yyyy-MM-dd HH:mm:ss 'UTC'")
    return format_datetime(moment, pattern, tzinfo=dt.UTC, locale=i18n.current())


TEMPLATES.filters["when"] = when


@dataclass
class Ctx:
    """What a page handler gets: the request, its session and the console's services."""

    request: web.Request
    session: Session
    services: ConsoleServices
    fresh: bool = False  # the session was made for this request: send its cookie
    _form: MultiDictProxy[Any] | None = field(default=None, repr=False)

    async def form(self) -> MultiDictProxy[Any]:
        if self._form is None:
            self._form = await self.request.post()
        return self._form

    async def field(self, name: str) -> str:
        value = (await self.form()).get(name, "")
        return value.strip() if isinstance(value, str) else ""

    def render(self, template: str, *, status: int = 200, **values: Any) -> web.Response:
        page = TEMPLATES.get_template(template).render(
            nav=NAV,
            csrf=self.session.csrf,
            flash=self.session.take_flash(),
            open_mode=self.request.app[SESSIONS_KEY].open,
            lang=i18n.tag(i18n.current()),
            languages=choices(),
            here=self.request.path_qs,
            **values,
        )
        return web.Response(text=page, status=status, content_type="text/html", charset="utf-8")

    def back(self, path: str, text: str = "", kind: str = "ok") -> web.Response:
        """Redirect (303) after a change, with a message for the page shown next."""
        if text:
            self.session.say(text, kind)
        return web.Response(status=303, headers={"Location": path})


ConsoleHandler = Callable[[Ctx], Awaitable[web.StreamResponse]]
SERVICES_KEY: web.AppKey[ConsoleServices] = web.AppKey("console_services", ConsoleServices)
SESSIONS_KEY: web.AppKey[Sessions] = web.AppKey("console_sessions", Sessions)


@dataclass
class Pages:
    """One page module's routes: `pages.get(path)(handler)`, `pages.post(path)(handler)`."""

    routes: list[tuple[str, str, ConsoleHandler]] = field(default_factory=list)

    def get(self, path: str) -> Callable[[ConsoleHandler], ConsoleHandler]:
        return self._add("GET", path)

    def post(self, path: str) -> Callable[[ConsoleHandler], ConsoleHandler]:
        return self._add("POST", path)

    def _add(self, method: str, path: str) -> Callable[[ConsoleHandler], ConsoleHandler]:
        def register(fn: ConsoleHandler) -> ConsoleHandler:
            self.routes.append((method, path, fn))
            return fn

        return register


def guarded(fn: ConsoleHandler, *, login: bool = True) -> Callable[[web.Request], Any]:
    """The handler behind the session check (login unless `login=False`) and, for changes,
    the CSRF check; every answer gets the security headers."""

    async def handle(request: web.Request) -> web.StreamResponse:
        with i18n.use(locale_of(request)):
            return await _guard(request, fn, login=login)

    return handle


async def _guard(request: web.Request, fn: ConsoleHandler, *, login: bool) -> web.StreamResponse:
    """The session check, the CSRF check and the page, in the request's language."""
    sessions = request.app[SESSIONS_KEY]
    session, fresh = sessions.find(request), False
    if session is None and (sessions.open or not login or request.method == "GET"):
        session, fresh = sessions.new(authed=False), True
    if session is None or (request.method == "POST" and not await csrf_ok(request, session)):
        response: web.StreamResponse = refused(request)
    elif login and not session.authed:
        response = web.Response(
            status=303,
            headers={"Location": "/console/login?next=" + quote(request.path_qs, safe="")},
        )
    else:
        response = await _page(fn, Ctx(request, session, request.app[SERVICES_KEY], fresh))
        if request.method == "POST" and login:
            await audit_console_action(request, response.status)
    if fresh and session is not None:
        set_cookie(request, response, session)
    response.headers.update(HEADERS)
    return response


async def _page(fn: ConsoleHandler, ctx: Ctx) -> web.StreamResponse:
    """The page, or an error page: a failure is shown as a short text, never a traceback."""
    try:
        return await fn(ctx)
    except ApiError as exc:
        return ctx.render(
            "failed.html", status=exc.status, title=_("Failed"), page="", detail=str(exc.detail)
        )
    except Exception:
        log.exception("%s %s failed", ctx.request.method, ctx.request.path)
        return ctx.render(
            "failed.html",
            status=500,
            title=_("Failed"),
            page="",
            detail=_("Internal error; see the service log."),
        )


async def audit_console_action(request: web.Request, status: int) -> None:
    """A change made in the console, into the audit trail (the page's own entry, if any, says
    more: a role change records the roles)."""
    people = request.app[SERVICES_KEY].people
    if people is None or request.path.startswith("/console/login"):
        return
    outcome = "ok" if status < 400 else f"http {status}"
    entry = AuditEntry(kind="console", actor="console", subject=request.path, outcome=outcome)
    await people.audit.record(entry)


def refused(request: web.Request) -> web.Response:
    page = TEMPLATES.get_template("refused.html").render(lang=i18n.tag(i18n.current()))
    return web.Response(text=page, status=403, content_type="text/html", charset="utf-8")


def not_found(ctx: Ctx, what: str) -> web.Response:
    return ctx.render("missing.html", status=404, what=what)
