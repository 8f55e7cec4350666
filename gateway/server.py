"""The admin HTTP server (aiohttp): /health, the admin API and the channels' webhook routes."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from aiohttp import web

from bot.config.schema import is_loopback
from bot.webhooks import DynamicRoutes
from gateway.auth import Allowlist, bearer_auth
from gateway.errors import json_errors
from gateway.principals import NamedTokens, no_tokens, tokens_of
from gateway.registry import GATEWAY_KEY, OPENAPI_KEY, Route

if TYPE_CHECKING:
    from bot.config.schema import Settings
    from bot.facade import ServiceFacade
    from gateway.auth import ConsoleGate

log = logging.getLogger("gateway")

HealthFn = Callable[[], dict[str, Any]]


def api_routes() -> list[Route]:
    """Every admin API route, in mount order."""
    from gateway import openapi
    from gateway.api import (
        agents,  # DeerFlow's custom agents over the agent profiles (agent/profiles.py)
        approvals,  # tool calls waiting for a person's yes (bot/approvals.py)
        artifacts,
        audit,  # the audit trail (bot/access/audit.py)
        budgets,  # usage.budgets and their use
        channel_links,  # DeerFlow's channel providers/connections
        channels,
        config,  # configuration at run time (bot/config/live.py)
        features,  # DeerFlow's feature flags, suggestions and integrations
        mcp,
        memory,
        memory_people,
        metrics,
        models,
        people,  # people, accounts and roles (bot/access/)
        schedules,  # scheduled tasks (bot/schedules)
        skills,
        thread_feed,  # a thread's messages page and token usage
        uploads,
        usage,  # tokens and cost (bot/usage/)
        user_profile,  # DeerFlow's USER.md: a person's own profile
    )
    from gateway.langgraph import assistants, runs, threads

    modules = (
        metrics,
        openapi,
        models,
        mcp,
        usage,  # before threads: /api/threads/{id}/token-usage
        assistants,
        threads,
        thread_feed,
        runs,
        uploads,
        artifacts,
        channel_links,
        channels,
        skills,
        memory,
        memory_people,
        schedules,
        features,
        agents,
        user_profile,
        config,
        people,
        audit,
        approvals,
        budgets,
    )
    return [route for module in modules for route in module.api.routes]


def build_app(
    health: HealthFn,
    routes: DynamicRoutes,
    *,
    service: ServiceFacade | None = None,
    auth_token: str | Callable[[], str | None] | None = None,
    named_tokens: NamedTokens = no_tokens,
) -> web.Application:
    """The aiohttp app: the admin API when `service` is given, else just /health.
    `auth_token` may be a callable, asked on every request (the token then changes live)."""
    allow = Allowlist(routes)  # what passes without the token (gateway/auth.py)
    app = web.Application(
        client_max_size=64 * 1024 * 1024,
        middlewares=[json_errors, bearer_auth(auth_token, allow, named_tokens)],
    )
    if service is None:

        async def get_health(request: web.Request) -> web.Response:
            return web.json_response(health())

        app.router.add_get("/health", get_health)
    else:
        from gateway.openapi import openapi_on_demand
        from gateway.registry import Registry
        from gateway.service import Gateway

        gw = Gateway.for_service(service)
        app[GATEWAY_KEY] = gw
        from gateway.api.schedule_threads import run_in_thread

        service.schedules.scheduler.run_in_thread = run_in_thread(gw)  # Gateway threads' tasks
        registry = Registry(api_routes())
        secured = bool(auth_token() if callable(auth_token) else auth_token)
        app[OPENAPI_KEY] = openapi_on_demand(registry.routes, secured=secured)
        registry.mount(app)
        _mount_console(app, service, auth_token)
        allow.console = _console_gate()
    app.router.add_route("*", "/{tail:.*}", _fallback(routes))
    return app


def _mount_console(
    app: web.Application, service: ServiceFacade, token: str | Callable[[], str | None] | None
) -> None:
    """The web console at /console (gateway/console), on the API's token (asked per login
    and request, so it follows the live `gateway.auth_token`)."""
    from gateway.console import mount_console
    from gateway.console.services import ConsoleServices

    mount_console(
        app, ConsoleServices.for_service(service), token if callable(token) else (lambda: token)
    )


def _console_gate() -> ConsoleGate:
    from gateway.console.login_page import Gate

    return Gate()


def _fallback(routes: DynamicRoutes) -> Callable[[web.Request], Any]:
    """Channels' webhook routes; a known path asked with the wrong method answers 405."""

    async def handle(request: web.Request) -> web.StreamResponse:
        allowed: set[str] = set()
        for resource in request.app.router.resources():
            match, methods = await resource.resolve(request)
            if match is None:
                allowed |= methods
        allowed.discard("*")
        if allowed:
            raise web.HTTPMethodNotAllowed(request.method, sorted(allowed))
        return await routes.handle(request)

    return handle


class GatewayServer:
    def __init__(
        self, app: web.Application, host: str, port: int, *, has_token: bool = True
    ) -> None:
        if not has_token and not is_loopback(host):
            raise ValueError(
                f"gateway.auth_token is required to bind {host}, a non-loopback "
                "address; set it or bind 127.0.0.1"
            )
        self.app = app
        self.host = host
        self.port = port
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        self._runner = web.AppRunner(
            self.app, handle_signals=False, access_log=None, shutdown_timeout=5.0
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        bound = self._runner.addresses  # the port the system chose when `port` is 0
        if bound:
            self.port = bound[0][1]
        log.info("admin server on http://%s:%d", self.host, self.port)

    async def stop(self) -> None:
        gw = self.app.get(GATEWAY_KEY)
        if gw is not None:
            await gw.runs.shutdown()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"


class Served(Protocol):
    """What the HTTP face needs of the service it is put on (bot.app.App is one)."""

    settings: Settings
    routes: DynamicRoutes

    def health(self) -> dict[str, Any]: ...
    def facade(self) -> ServiceFacade: ...
    def current_admin_token(self) -> str | None: ...


def serve(app: Served) -> GatewayServer:
    """The HTTP face of a built service: `App(settings, front=serve)` (the entry point's choice;
    the token is asked per request, so it follows the live `gateway.auth_token`)."""
    gw = app.settings.gateway
    web_app = build_app(
        app.health,
        app.routes,
        service=app.facade(),
        auth_token=app.current_admin_token,
        named_tokens=lambda: tokens_of(app.settings.gateway),
    )
    return GatewayServer(web_app, gw.host, gw.port, has_token=bool(app.current_admin_token()))
