"""Webhook routes that channels add at run time, served by the one aiohttp server."""

from __future__ import annotations

from aiohttp import web

from channels.base import Handler


class DynamicRoutes:
    """aiohttp freezes its router at start; channels may register later, so they land here."""

    def __init__(self) -> None:
        self._routes: dict[tuple[str, str], Handler] = {}

    def add(self, method: str, path: str, handler: Handler) -> None:
        self._routes[(method.upper(), path)] = handler

    def declares(self, path: str) -> bool:
        """A channel's webhook path (public: the channel checks the platform's signature)."""
        return any(p == path for _, p in self._routes)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        handler = self._routes.get((request.method, request.path))
        if handler is None:
            if self.declares(request.path):
                raise web.HTTPMethodNotAllowed(request.method, self._allowed(request.path))
            raise web.HTTPNotFound(text='{"detail": "Not Found"}', content_type="application/json")
        response: web.StreamResponse = await handler(request)
        return response

    def _allowed(self, path: str) -> list[str]:
        return [m for m, p in self._routes if p == path]
