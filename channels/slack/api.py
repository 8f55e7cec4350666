"""Calling the Slack Web API: SlackApiError -> RateLimited / ChannelError."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, Literal

import aiohttp
from slack_sdk.errors import SlackApiError

from channels.base import ChannelError, ChatRef, DeliveryRefused, RateLimited
from channels.pacing import Pacer

Scope = Literal["reply", "chat", "workspace", "bot"]
REFUSALS = {  # Slack error codes that mean the bot cannot post there, whatever it retries
    "channel_not_found": "chat not found",
    "not_in_channel": "bot removed from the chat",
    "is_archived": "chat archived",
    "account_inactive": "bot deactivated",
    "user_disabled": "user deactivated",
    "cannot_dm_bot": "forbidden",
    "restricted_action": "forbidden",
}


def error_code(exc: SlackApiError) -> str:
    try:
        return str(exc.response.get("error") or "")
    except AttributeError:
        return ""


def retry_after(exc: SlackApiError) -> float | None:
    response = exc.response
    if getattr(response, "status_code", None) != 429 and error_code(exc) != "ratelimited":
        return None
    headers = getattr(response, "headers", None) or {}
    value = headers.get("Retry-After") or headers.get("retry-after") or "1"
    if isinstance(value, list):
        value = value[0]
    try:
        return float(value)
    except ValueError:
        return 1.0


async def call(
    request: Awaitable[Any],
    *,
    scope: Scope = "chat",
    what: str = "slack call",
    pacer: tuple[Pacer, ChatRef] | None = None,
    method: str = "",
) -> Any:
    """Await a Web API call: 429 -> RateLimited(Retry-After, scope), errors -> ChannelError.

    With `pacer` the call is one the channel paces itself: Slack limits each method apart, so
    its 429 blocks only that method (`method`, default `what`) in `scope`, and the block goes
    into the pacer at once."""
    try:
        return await request
    except SlackApiError as exc:
        wait = retry_after(exc)
        if wait is not None:
            limited = RateLimited(wait, scope=scope, method=(method or what) if pacer else "")
            if pacer is not None:
                pacer[0].block_for(limited, pacer[1])
            raise limited from exc
        code = error_code(exc)
        if code in REFUSALS:
            raise DeliveryRefused(REFUSALS[code], f"{what}: {code}") from exc
        raise SlackCallFailed(what, code) from exc
    except (TimeoutError, aiohttp.ClientError) as exc:
        raise ChannelError(f"{what} failed: {exc!r}", retryable=True) from exc


class SlackCallFailed(ChannelError):
    def __init__(self, what: str, code: str) -> None:
        super().__init__(f"{what} failed: {code or 'unknown error'}")
        self.code = code
