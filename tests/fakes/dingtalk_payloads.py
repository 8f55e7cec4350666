"""DingTalk's payloads as the fake sends them (a part of `FakeDingTalk`,
tests/fakes/dingtalk_server.py)."""

from __future__ import annotations

import time
import uuid
from typing import Any


def chatbot_data(
    base: str,
    text: str = "hello",
    *,
    msg_id: str | None = None,
    group: bool = False,
    sender: str = "staff-1",
    conversation_id: str = "cid-dm-1",
    at_bot: bool = True,
    msgtype: str = "text",
    content: dict[str, Any] | None = None,
    webhook_ttl: float = 3600,
) -> dict[str, Any]:
    """A chatbot callback `data` like DingTalk sends it, with a live session webhook."""
    msg_id = msg_id or f"msg{uuid.uuid4().hex[:16]}"
    data: dict[str, Any] = {
        "conversationId": conversation_id,
        "conversationType": "2" if group else "1",
        "msgId": msg_id,
        "senderId": f"$:LWCP_v1:${sender}",
        "senderNick": sender.title(),
        "senderStaffId": sender,
        "senderCorpId": "corp-1",
        "chatbotUserId": "$:LWCP_v1:$bot",
        "chatbotCorpId": "corp-1",
        "robotCode": "robot-code",
        "isInAtList": at_bot,
        "isAdmin": False,
        "createAt": int(time.time() * 1000),
        "sessionWebhook": f"{base}/robot/sendBySession?session={msg_id}",
        "sessionWebhookExpiredTime": int((time.time() + webhook_ttl) * 1000),
        "msgtype": msgtype,
    }
    if group:
        data["conversationTitle"] = "Team"
    if msgtype == "text":
        data["text"] = {"content": text}
    else:
        data["content"] = content or {}
    return data
