"""Recorded-shape Feishu event payloads (as Feishu sends them) for tests."""

from __future__ import annotations

import json
import uuid
from typing import Any

BOT_OPEN_ID = "ou_bot"


def _header(event_type: str, event_id: str | None = None) -> dict[str, Any]:
    return {
        "event_id": event_id or uuid.uuid4().hex,
        "event_type": event_type,
        "create_time": "1700000000000",
        "token": "",
        "app_id": "cli_x",
        "tenant_key": "tk",
    }


def mention(key: str = "@_user_1", open_id: str = BOT_OPEN_ID, name: str = "Antler") -> dict:
    return {
        "key": key,
        "id": {"open_id": open_id, "user_id": "", "union_id": "on_x"},
        "name": name,
        "tenant_key": "tk",
    }


def message_event(
    content: dict[str, Any] | str,
    *,
    msg_type: str = "text",
    chat_id: str = "oc_dm",
    chat_type: str = "p2p",
    sender: str = "ou_alice",
    message_id: str | None = None,
    event_id: str | None = None,
    mentions: list[dict[str, Any]] | None = None,
    root_id: str | None = None,
    parent_id: str | None = None,
    thread_id: str | None = None,
    sender_type: str = "user",
) -> dict[str, Any]:
    if isinstance(content, str):
        content = {"text": content}
    message: dict[str, Any] = {
        "message_id": message_id or f"om_{uuid.uuid4().hex[:12]}",
        "chat_id": chat_id,
        "chat_type": chat_type,
        "message_type": msg_type,
        "content": json.dumps(content, ensure_ascii=False),
        "create_time": "1700000000000",
    }
    for key, value in (
        ("mentions", mentions),
        ("root_id", root_id),
        ("parent_id", parent_id),
        ("thread_id", thread_id),
    ):
        if value:
            message[key] = value
    return {
        "schema": "2.0",
        "header": _header("im.message.receive_v1", event_id),
        "event": {
            "sender": {
                "sender_id": {"open_id": sender, "user_id": "u1", "union_id": "on_1"},
                "sender_type": sender_type,
                "tenant_key": "tk",
            },
            "message": message,
        },
    }


def card_action(
    value: dict[str, Any],
    *,
    chat_id: str = "oc_dm",
    message_id: str = "om_card",
    operator: str = "ou_alice",
    event_id: str | None = None,
) -> dict[str, Any]:
    return {
        "schema": "2.0",
        "header": _header("card.action.trigger", event_id),
        "event": {
            "operator": {"open_id": operator, "tenant_key": "tk"},
            "token": "c-tok",
            "action": {"value": value, "tag": "button"},
            "host": "im_message",
            "context": {"open_message_id": message_id, "open_chat_id": chat_id},
        },
    }


def other_event(event_type: str) -> dict[str, Any]:
    return {"schema": "2.0", "header": _header(event_type), "event": {"reader": {}}}
