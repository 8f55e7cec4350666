"""Bearer-token auth for the gateway: an allowlist, everything else needs the token.

With `gateway.auth_token` set, every request needs `Authorization: Bearer <token>` (compared in
constant time; 401 otherwise), whatever its path, spelling or method, except what is listed:
`/health`, the console's login page and the static assets it needs to render, and the paths
the channels declared for their webhooks (they verify the platform's own signatures). Under
`/console` a logged-in console session stands in for the token; without one the console
answers as it does to a stranger (to its login page, or 403). Without a token the server binds
loopback only (config refuses anything else) and nothing is checked. A callable token is asked
on every request: `gateway.auth_token` changes live. Named tokens (`gateway.tokens`,
gateway/principals.py) are accepted too; a `viewer` token only reads (403 otherwise). The caller
is put on the request for the audit.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol

from aiohttp import web

from gateway.errors import error_response
from gateway.principals import PRINCIPAL_KEY, READ_METHODS, NamedTokens, identify, no_tokens
from gateway.registry import Handler

PUBLIC = frozenset({"/health", "/health/"})
CONSOLE = "/console"


class Webhooks(Protocol):
    def declares(self, path: str) -> bool: ...


class ConsoleGate(Protocol):
    """The console's side of the allowlist (gateway/console)."""

    public: frozenset[str]

    def authed(self, request: web.Request) -> bool: ...

    def refuse(self, request: web.Request) -> Awaitable[web.StreamResponse]: ...


class Allowlist:
    """What passes without the token: set `console` once the console is mounted."""

    def __init__(self, webhooks: Webhooks | None = None) -> None:
        self.webhooks = webhooks
        self.console: ConsoleGate | None = None

    def public(self, path: str) -> bool:
        if path in PUBLIC:
            return True
        if self.console is not None and path in self.console.public:
            return True
        return self.webhooks is not None and self.webhooks.declares(path)


def is_console(path: str) -> bool:
    return path == CONSOLE or path.startswith(CONSOLE + "/")


def bearer_auth(
    token: str | Callable[[], str | None] | None,
    allow: Allowlist | None = None,
    named: NamedTokens = no_tokens,
) -> web.middleware:  # type: ignore[valid-type]
    current = token if callable(token) else (lambda: token)
    allowed = allow or Allowlist()

    @web.middleware
    async def check(request: web.Request, handler: Handler) -> web.StreamResponse:
        admin, tokens = current() or "", named()
        path = request.path
        if not (admin or tokens) or allowed.public(path):
            return await handler(request)
        principal = identify(request, admin, tokens)
        if principal is not None:
            if principal.read_only and request.method not in READ_METHODS:
                return error_response(403, f"the token {principal.name!r} may only read")
            request[PRINCIPAL_KEY] = principal
            return await handler(request)
        console = allowed.console
        if console is not None and is_console(path):
            if console.authed(request):
                return await handler(request)
            return await console.refuse(request)
        return error_response(
            401, "missing or invalid bearer token", {"WWW-Authenticate": "Bearer"}
        )

    return check
