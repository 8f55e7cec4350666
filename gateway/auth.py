"""Bearer-token auth for the admin API.

With `gateway.auth_token` set, every admin route (`/api/*`, `/openapi.json`, `/docs`,
`/metrics`) needs `Authorization: Bearer <token>`; the token is compared in constant time.
`/health` stays public, and so do the channels' webhook routes (they verify the platform's own
signatures). Without a token the server binds loopback only (config refuses anything else).
A callable token is asked on every request: `gateway.auth_token` changes live.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable

from aiohttp import web

from gateway.errors import error_response
from gateway.registry import Handler

PROTECTED_EXACT = frozenset({"/openapi.json", "/docs", "/metrics"})
PROTECTED_PREFIX = "/api/"


def is_protected(path: str) -> bool:
    return path.startswith(PROTECTED_PREFIX) or path in PROTECTED_EXACT or path == "/api"


def bearer_auth(token: str | Callable[[], str | None] | None) -> web.middleware:  # type: ignore[valid-type]
    current = token if callable(token) else (lambda: token)

    @web.middleware
    async def check(request: web.Request, handler: Handler) -> web.StreamResponse:
        expected = (current() or "").encode()
        if expected and is_protected(request.path) and not _authorized(request, expected):
            return error_response(
                401, "missing or invalid bearer token", {"WWW-Authenticate": "Bearer"}
            )
        return await handler(request)

    return check


def _authorized(request: web.Request, expected: bytes) -> bool:
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(given.strip().encode(), expected)
