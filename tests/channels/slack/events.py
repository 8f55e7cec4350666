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


def file_share(text: str, name: str, url: str, size: int) -> dict:
    """A DM sharing one text file (`url`: where the fake serves it, from `add_file`)."""
    attached = {
        "id": "F1",
        "name": name,
        "mimetype": "text/plain",
        "size": size,
        "url_private_download": url,
    }
    return dm(text, subtype="file_share", files=[attached])


def mention(
    text: str, ts: str = "1700000002.000100", *, thread_ts: str | None = None, **where: Any
) -> dict:
    """An @mention of the bot in a channel (`channel`, `user` as `channel_message` takes)."""
    event = channel_message(f"<@{BOT_USER}> {text}", ts, thread_ts=thread_ts, **where)
    del event["channel_type"]  # app_mention events carry none
    return {**event, "type": "app_mention"}


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
