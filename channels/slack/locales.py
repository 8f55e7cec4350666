"""Slack users' languages, the hint the service answers in when a person chose none (`/lang`).

Slack's events carry no language; `users.info` with `include_locale=true` gives the user's
Slack locale (`zh-CN`, `en-US`). Each user is asked once per `ttl` seconds (a failed look-up
too: it is remembered as "no hint" for a shorter while, so a broken scope does not cost a call
per message), and at most `size` users are remembered (the least recently seen go first).
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from slack_sdk.errors import SlackApiError

log = logging.getLogger("channels.slack")

TTL = 3600.0
FAILED_TTL = 300.0
SIZE = 5000


class UserLocales:
    def __init__(
        self,
        client: Callable[[], Any],
        *,
        ttl: float = TTL,
        size: int = SIZE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client  # the Bolt app's AsyncWebClient, once there is one
        self.ttl, self.size, self.clock = ttl, size, clock
        self._known: OrderedDict[str, tuple[float, str]] = OrderedDict()  # id -> (until, locale)

    async def of(self, user_id: str) -> str:
        """The user's Slack locale, or "" when Slack does not say."""
        now = self.clock()
        found = self._known.get(user_id)
        if found is not None and found[0] > now:
            self._known.move_to_end(user_id)
            return found[1]
        locale, ttl = await self._ask(user_id)
        self._known[user_id] = (now + ttl, locale)
        self._known.move_to_end(user_id)
        while len(self._known) > self.size:
            self._known.popitem(last=False)
        return locale

    async def _ask(self, user_id: str) -> tuple[str, float]:
        client = self.client()
        if client is None:
            return "", 0.0
        try:
            resp = await client.users_info(user=user_id, include_locale=True)
        except SlackApiError as exc:
            log.info("no locale for slack user %s: %s", user_id, exc.response.get("error"))
            return "", min(self.ttl, FAILED_TTL)
        except Exception as exc:  # the network: no hint this time, ask again soon
            log.info("no locale for slack user %s: %r", user_id, exc)
            return "", min(self.ttl, FAILED_TTL)
        user = resp.get("user") or {}
        return str(user.get("locale") or ""), self.ttl
