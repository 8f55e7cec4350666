"""Slack's payloads as the fake sends them: slash commands, button presses, signed HTTP posts."""

from __future__ import annotations

import hashlib
import hmac
import time
import uuid
from typing import Any

import aiohttp

TEAM = "T0001"
BOT_USER = "UBOT"
BOT_ID = "B0001"
BOT_TOKEN = "xoxb-test"
APP_TOKEN = "xapp-test"
SIGNING_SECRET = "s3cr3t"


# ---------------------------------------------------------------------- payload builders


def command_body(
    text: str, *, channel: str, user: str, command: str = "/antler", team: str = TEAM
) -> dict[str, str]:
    return {
        "token": "verification",
        "team_id": team,
        "team_domain": "fake",
        "channel_id": channel,
        "channel_name": "directmessage",
        "user_id": user,
        "user_name": "alice",
        "command": command,
        "text": text,
        "api_app_id": "A0001",
        "response_url": "https://hooks.slack.com/commands/x",
        "trigger_id": f"trig.{uuid.uuid4().hex[:8]}",
    }


def action_body(
    value: str,
    *,
    channel: str,
    thread_ts: str | None,
    user: str,
    team: str = TEAM,
    ephemeral: bool = False,
) -> dict[str, Any]:
    msg_ts = "1700000000.999999"
    body: dict[str, Any] = {
        "type": "block_actions",
        "team": {"id": team, "domain": "fake"},
        "user": {"id": user, "username": "alice", "team_id": team},
        "api_app_id": "A0001",
        "token": "verification",
        "container": {
            "type": "message",
            "message_ts": msg_ts,
            "channel_id": channel,
            "is_ephemeral": False,
            "thread_ts": thread_ts,
        },
        "trigger_id": f"trig.{uuid.uuid4().hex[:8]}",
        "channel": {"id": channel},
        "message": {"type": "message", "ts": msg_ts, "thread_ts": thread_ts, "text": "x"},
        "actions": [
            {
                "action_id": "antler_btn_0",
                "block_id": "antler_buttons",
                "type": "button",
                "value": value,
                "text": {"type": "plain_text", "text": value},
                "action_ts": f"{time.time():.6f}",
            }
        ],
    }
    if ephemeral:  # Slack sends no `message` for ephemeral messages
        body.pop("message")
        body["container"]["is_ephemeral"] = True
    return body


def sign(
    body: bytes, *, secret: str = SIGNING_SECRET, timestamp: int | None = None
) -> dict[str, str]:
    ts = str(int(time.time()) if timestamp is None else timestamp)
    digest = hmac.new(secret.encode(), b"v0:" + ts.encode() + b":" + body, hashlib.sha256)
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": "v0=" + digest.hexdigest()}


async def signed_post(
    url: str,
    body: bytes,
    *,
    content_type: str = "application/json",
    secret: str = SIGNING_SECRET,
    timestamp: int | None = None,
    retry_num: int | None = None,
) -> tuple[int, str]:
    """Deliver an HTTP-mode request signed like Slack does; returns (status, text)."""
    headers = {"Content-Type": content_type, **sign(body, secret=secret, timestamp=timestamp)}
    if retry_num is not None:
        headers.update({"X-Slack-Retry-Num": str(retry_num), "X-Slack-Retry-Reason": "timeout"})
    async with (
        aiohttp.ClientSession() as session,
        session.post(url, data=body, headers=headers) as resp,
    ):
        return resp.status, await resp.text()
