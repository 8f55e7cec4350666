"""Calling the Slack Web API: SlackApiError -> RateLimited / ChannelError."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, Literal

import aiohttp
from slack_sdk.errors import SlackApiError

from channels.base import ChannelError, RateLimited

Scope = Literal["reply", "chat", "workspace", "bot"]


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
    request: Awaitable[Any], *, scope: Scope = "chat", what: str = "slack call"
) -> Any:
    """Await a Web API call: 429 -> RateLimited(Retry-After, scope), errors -> ChannelError."""
    try:
        return await request
    except SlackApiError as exc:
        wait = retry_after(exc)
        if wait is not None:
            raise RateLimited(wait, scope=scope) from exc
        raise SlackCallFailed(what, error_code(exc)) from exc
    except (TimeoutError, aiohttp.ClientError) as exc:
        raise ChannelError(f"{what} failed: {exc!r}", retryable=True) from exc


class SlackCallFailed(ChannelError):
    def __init__(self, what: str, code: str) -> None:
        super().__init__(f"{what} failed: {code or 'unknown error'}")
        self.code = code
