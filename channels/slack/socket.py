"""Socket Mode: bolt's handler, fenced, and the app id that names the bot's one connection.

With several workers one of them holds the app's Socket Mode connection (a lease in the service).
A holder paused past its lease may still have its socket open for a moment: an envelope arriving
then is neither handled nor acknowledged, so Slack delivers it again (to the connection of the
worker that holds the lease now) instead of two workers answering it.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Callable

from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.socket_mode.aiohttp import SocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest

log = logging.getLogger("channels.slack")
_APP_TOKEN = re.compile(r"^xapp-\d+-(A[A-Z0-9]+)-")


def app_id(app_token: str) -> str:
    """The app id inside an app-level token (`xapp-1-A0123ABC-...`): not secret. A token of
    another shape is named by a short digest of it instead (never the token itself)."""
    found = _APP_TOKEN.match(app_token)
    if found:
        return found.group(1)
    return "app-" + hashlib.sha256(app_token.encode()).hexdigest()[:12]


class FencedSocketHandler(AsyncSocketModeHandler):
    """Bolt's Socket Mode handler that leaves envelopes alone while `may_receive()` is False."""

    def __init__(self, app: AsyncApp, app_token: str, may_receive: Callable[[], bool]) -> None:
        super().__init__(app, app_token=app_token)
        self.may_receive = may_receive

    async def handle(self, client: SocketModeClient, req: SocketModeRequest) -> None:  # type: ignore[override]
        if not self.may_receive():
            log.warning("slack: this worker's hold on the connection lapsed; envelope left unacked")
            return
        await super().handle(client, req)
