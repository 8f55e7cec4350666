"""The console's sessions: the admin token buys an HttpOnly, SameSite=Strict cookie; every change
carries the session's CSRF token and, when the browser sends one, a same-origin `Origin`.

- With `gateway.auth_token` set, `/console` needs a logged-in session (the login page takes the
  token, compared in constant time; a new session id is issued on login, so a planted cookie is
  worth nothing). Without a token (the server then binds loopback only, like the API) every
  visitor gets a logged-in session at once. The token is read live (it changes at run time,
  bot/config/apply.py): a change ends every session.
- Every POST needs the session's CSRF token (form field `csrf` or header `X-CSRF-Token`),
  compared in constant time, and is refused when `Origin` (or, without it, `Referer`) names
  another origin. SameSite=Strict keeps the cookie off cross-site requests in the first place.
- Sessions live in memory (a restart logs everyone out), expire after 12 idle hours, and at
  most 1,000 are kept (the oldest go first).
- After 10 wrong tokens from one address within 5 minutes, logins from it are refused (429)
  until the oldest of them is 5 minutes old.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from aiohttp import web

COOKIE = "antler_console"
PATH = "/console"
IDLE_SECONDS = 12 * 3600
MAX_SESSIONS = 1000
MAX_FAILURES = 10
FAILURE_WINDOW = 300.0
Page = Callable[[web.Request], Awaitable[web.StreamResponse]]
SESSION_KEY = "console_session"


@dataclass
class Session:
    sid: str
    csrf: str
    authed: bool
    seen: float
    flash: list[tuple[str, str]] = field(default_factory=list)

    def say(self, text: str, kind: str = "ok") -> None:
        """A message for the next page shown (after a redirect)."""
        self.flash.append((kind, text))

    def take_flash(self) -> list[tuple[str, str]]:
        out, self.flash = self.flash, []
        return out


class Sessions:
    """`token` is asked on every use: `gateway.auth_token` changes at run time. When it changes,
    every session ends (a login under the old token is worth nothing), and an emptied token
    opens the console as it opens the API."""

    def __init__(
        self, token: Callable[[], str | None], *, clock: Callable[[], float] = time.time
    ) -> None:
        self._token_now = token
        self._token = (token() or "").encode()
        self.clock = clock
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        self._failures: dict[str, deque[float]] = {}

    @property
    def token(self) -> bytes:
        """The token now; a change ends every session."""
        current = (self._token_now() or "").encode()
        if not hmac.compare_digest(current, self._token):
            self._token = current
            self._sessions.clear()
        return current

    @property
    def open(self) -> bool:
        """No token: the console is open, as the API is (loopback only)."""
        return not self.token

    def find(self, request: web.Request) -> Session | None:
        sid = request.cookies.get(COOKIE, "")
        _ = self.token  # ends the sessions of a token that changed
        session = self._sessions.get(sid)
        if session is None:
            return None
        now = self.clock()
        if now - session.seen > IDLE_SECONDS:
            del self._sessions[sid]
            return None
        session.seen = now
        self._sessions.move_to_end(sid)
        return session

    def new(self, *, authed: bool) -> Session:
        session = Session(
            sid=secrets.token_urlsafe(32),
            csrf=secrets.token_urlsafe(32),
            authed=authed or self.open,
            seen=self.clock(),
        )
        self._sessions[session.sid] = session
        while len(self._sessions) > MAX_SESSIONS:
            self._sessions.popitem(last=False)
        return session

    def throttled(self, remote: str) -> bool:
        """Too many wrong tokens from `remote` lately."""
        failures = self._failures.get(remote)
        now = self.clock()
        while failures and now - failures[0] > FAILURE_WINDOW:
            failures.popleft()
        if failures is not None and not failures:
            del self._failures[remote]
        return failures is not None and len(failures) >= MAX_FAILURES

    def login(self, old: Session | None, given: str, remote: str = "") -> Session | None:
        """A fresh authenticated session for the right token; None otherwise."""
        token = self.token
        if token and not hmac.compare_digest(given.strip().encode(), token):
            self._failures.setdefault(remote, deque()).append(self.clock())
            while len(self._failures) > MAX_SESSIONS:
                self._failures.pop(next(iter(self._failures)))
            return None
        if old is not None:
            self._sessions.pop(old.sid, None)
        return self.new(authed=True)

    def end(self, session: Session) -> None:
        self._sessions.pop(session.sid, None)


def set_cookie(request: web.Request, response: web.StreamResponse, session: Session) -> None:
    response.set_cookie(
        COOKIE,
        session.sid,
        path=PATH,
        httponly=True,
        samesite="Strict",
        secure=request.secure,
        max_age=IDLE_SECONDS,
    )


def same_origin(request: web.Request) -> bool:
    """False when the browser says the request comes from another origin."""
    source = request.headers.get("Origin") or request.headers.get("Referer")
    if not source or source == "null":
        return source != "null"
    parts = urlsplit(source)
    return parts.scheme in ("http", "https") and parts.netloc == request.host


async def csrf_ok(request: web.Request, session: Session) -> bool:
    if not same_origin(request):
        return False
    given = request.headers.get("X-CSRF-Token", "")
    if not given and request.content_type in (
        "application/x-www-form-urlencoded",
        "multipart/form-data",
    ):
        value = (await request.post()).get("csrf", "")
        given = value if isinstance(value, str) else ""
    return bool(given) and hmac.compare_digest(given.encode(), session.csrf.encode())
