"""Bearer-token auth for the admin API.

With `gateway.auth_token` set, every admin route (`/api/*`, `/openapi.json`, `/docs`,
`/metrics`) needs `Authorization: Bearer <token>`; the token is compared in constant time.
`/health` stays public, and so do the channels' webhook routes (they verify the platform's own
signatures). Without a token the server binds loopback only (config refuses anything else).
A callable token is asked on every request: `gateway.auth_token` changes live. Named tokens
(`gateway.tokens`, bot/gateway/principals.py) are accepted too; a `viewer` token only reads.
"""

from __future__ import annotations

from collections.abc import Callable

from aiohttp import web

from bot.gateway.errors import error_response
from bot.gateway.principals import (
    PRINCIPAL_KEY,
    READ_METHODS,
    NamedTokens,
    identify,
    no_tokens,
)
from bot.gateway.registry import Handler

PROTECTED_EXACT = frozenset({"/openapi.json", "/docs", "/metrics"})
PROTECTED_PREFIX = "/api/"


def is_protected(path: str) -> bool:
    return path.startswith(PROTECTED_PREFIX) or path in PROTECTED_EXACT or path == "/api"


def bearer_auth(
    token: str | Callable[[], str | None] | None, named: NamedTokens = no_tokens
) -> web.middleware:  # type: ignore[valid-type]
    current = token if callable(token) else (lambda: token)

    @web.middleware
    async def check(request: web.Request, handler: Handler) -> web.StreamResponse:
        admin, tokens = current() or "", named()
        if (admin or tokens) and is_protected(request.path):
            principal = identify(request, admin, tokens)
            if principal is None:
                return error_response(
                    401, "missing or invalid bearer token", {"WWW-Authenticate": "Bearer"}
                )
            if principal.read_only and request.method not in READ_METHODS:
                return error_response(403, f"the token {principal.name!r} may only read")
            request[PRINCIPAL_KEY] = principal
        return await handler(request)

    return check
