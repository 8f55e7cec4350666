"""The web console at `/console`: server-rendered pages over the service, for the operator.

It uses the admin API's token (a login page turns it into a session cookie, see session.py),
talks to the service only through the narrow objects of services.py, and ships its JS and CSS
(htmx, uPlot: vendored, pinned, licences in static/vendor/) in the package: no CDN, no build.
"""

from __future__ import annotations

from collections.abc import Callable

from aiohttp import web
from aiohttp.web import Request, Response

from gateway.console import (
    access_page,
    agents_page,
    approvals_page,
    channels_page,
    conversations_page,
    deliveries_page,
    extensions_page,
    live_page,
    login_page,
    mcp_page,
    memory_page,
    metrics_page,
    schedules_page,
    usage_page,
)
from gateway.console.services import ConsoleServices
from gateway.console.session import Sessions
from gateway.console.web import HEADERS, HERE, SERVICES_KEY, SESSIONS_KEY, guarded

PAGE_MODULES = (
    login_page,
    channels_page,
    conversations_page,
    agents_page,
    deliveries_page,
    extensions_page,
    live_page,
    mcp_page,
    memory_page,
    metrics_page,
    schedules_page,
    usage_page,
    access_page,
    approvals_page,
)


async def _static_headers(request: web.Request, response: web.StreamResponse) -> None:
    if request.path.startswith("/console/"):
        for name, value in HEADERS.items():
            response.headers.setdefault(name, value)


async def _to_console(request: Request) -> Response:
    # (`web` here would be this package's own web module once it is imported: aiohttp's names)
    return Response(status=308, headers={"Location": "/console"})


def mount_console(
    app: web.Application, services: ConsoleServices, token: Callable[[], str | None]
) -> None:
    """Add the console's routes to the gateway's aiohttp app (before its catch-all route).
    `token` is the admin token now (it changes live)."""
    app[SERVICES_KEY] = services
    app[SESSIONS_KEY] = Sessions(token)
    for method, path, fn in login_page.public.routes:
        app.router.add_route(method, path, guarded(fn, login=False))
    for module in PAGE_MODULES:
        for method, path, fn in module.pages.routes:
            app.router.add_route(method, path, guarded(fn))
    app.router.add_get("/console/", _to_console)  # a typed trailing slash finds the console
    app.router.add_static("/console/static", HERE / "static", append_version=False)
    app.on_response_prepare.append(_static_headers)
