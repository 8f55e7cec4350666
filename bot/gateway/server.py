"""The admin HTTP server (aiohttp): /health now, the admin API and channel webhooks on it."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from aiohttp import web

from bot.gateway.routes import DynamicRoutes

log = logging.getLogger("bot.gateway")

HealthFn = Callable[[], dict[str, Any]]


def build_app(health: HealthFn, routes: DynamicRoutes) -> web.Application:
    app = web.Application(client_max_size=64 * 1024 * 1024)

    async def get_health(request: web.Request) -> web.Response:
        return web.json_response(health())

    app.router.add_get("/health", get_health)
    app.router.add_route("*", "/{tail:.*}", routes.handle)
    return app


class GatewayServer:
    def __init__(self, app: web.Application, host: str, port: int) -> None:
        self.app = app
        self.host = host
        self.port = port
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        self._runner = web.AppRunner(self.app, handle_signals=False, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        server = site._server
        if server is not None and server.sockets:
            self.port = server.sockets[0].getsockname()[1]
        log.info("admin server on http://%s:%d", self.host, self.port)

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"
