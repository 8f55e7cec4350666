"""Who calls the admin API: the admin token (`gateway.auth_token`) or one of the named tokens
(`gateway.tokens`, each `admin` or read-only `viewer`). The auth middleware puts the caller on
the request; the audit and the config-change record say who acted by its name."""

from __future__ import annotations

import hmac
from collections.abc import Callable
from dataclasses import dataclass

from aiohttp import web

from bot.config.schema import GatewayConfig

ADMIN_TOKEN = "admin token"
READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


@dataclass(frozen=True, slots=True)
class Principal:
    name: str
    role: str  # admin, viewer

    @property
    def read_only(self) -> bool:
        return self.role == "viewer"


NamedTokens = Callable[[], list[tuple[str, str, str]]]
"""The named tokens now: (name, token, role) each (they change live)."""

PRINCIPAL_KEY: web.RequestKey[Principal] = web.RequestKey("antler_principal", Principal)


def no_tokens() -> list[tuple[str, str, str]]:
    return []


def tokens_of(gateway: GatewayConfig) -> list[tuple[str, str, str]]:
    return [(t.name, t.token.get_secret_value(), t.role) for t in gateway.tokens]


def identify(
    request: web.Request, admin: str, named: list[tuple[str, str, str]]
) -> Principal | None:
    """The caller the request's bearer token names, or None."""
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer":
        return None
    presented = given.strip().encode()
    found = None
    if admin and hmac.compare_digest(presented, admin.encode()):
        found = Principal(ADMIN_TOKEN, "admin")
    for name, token, role in named:  # every token compared: the time says nothing
        if hmac.compare_digest(presented, token.encode()) and found is None:
            found = Principal(name, role)
    return found


def principal_of(request: web.Request) -> Principal | None:
    return request.get(PRINCIPAL_KEY)
