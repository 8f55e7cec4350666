"""Recorded-shape Slack events for tests."""

from __future__ import annotations

from typing import Any

from tests.fakes.slack_server import BOT_USER, TEAM


def dm(text: str, ts: str = "1700000001.000100", *, user: str = "U0001", **extra: Any) -> dict:
    return {
        "type": "message",
        "channel": "D0001",
        "channel_type": "im",
        "user": user,
        "text": text,
        "ts": ts,
        "team": TEAM,
        "client_msg_id": f"c-{ts}",
        **extra,
    }


def mention(
    text: str,
    ts: str = "1700000002.000100",
    *,
    thread_ts: str | None = None,
    channel: str = "C0001",
    user: str = "U0001",
) -> dict:
    event = {
        "type": "app_mention",
        "channel": channel,
        "user": user,
        "text": f"<@{BOT_USER}> {text}",
        "ts": ts,
        "team": TEAM,
    }
    if thread_ts:
        event["thread_ts"] = thread_ts
    return event


def channel_message(
    text: str,
    ts: str,
    *,
    thread_ts: str | None = None,
    channel: str = "C0001",
    user: str = "U0001",
    **extra: Any,
) -> dict:
    event = {
        "type": "message",
        "channel": channel,
        "channel_type": "channel",
        "user": user,
        "text": text,
        "ts": ts,
        "team": TEAM,
        **extra,
    }
    if thread_ts:
        event["thread_ts"] = thread_ts
    return event
