"""DingTalk chatbot callback payload -> InboundMessage (pure).

Stream mode delivers robot messages as CALLBACK frames on `/v1.0/im/bot/messages/get`; `data` is
the JSON below. `conversationType` "1" is a one-to-one chat, "2" a group. In a DM the chat id is
the sender's staff id (what the robot send API addresses); in a group it is `conversationId`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from channels.base import Attachment, ChatRef, ChatType, InboundMessage, UserRef

CHATBOT_TOPIC = "/v1.0/im/bot/messages/get"
CARD_CALLBACK_TOPIC = "/v1.0/card/instances/callback"  # card button presses (Stream mode)
_LEADING_MENTIONS = re.compile(r"^(?:\s*@\S+)+\s*")
_COMMAND_AT = re.compile(r"^(/[A-Za-z0-9_]+)@\S+")
_UNSUPPORTED = {
    "interactiveCard": "a card",
    "chatRecord": "forwarded chat records",
    "location": "a location",
    "sticker": "a sticker",
    "emotion": "a sticker",
}


class MalformedEvent(ValueError):
    """The payload lacks what every chatbot message has."""


def parse_message(data: Mapping[str, Any], *, channel: str, received_at: float) -> InboundMessage:
    """Convert one chatbot callback; raise MalformedEvent when it cannot be a message."""
    if not isinstance(data, Mapping):
        raise MalformedEvent(f"chatbot message is not an object: {type(data).__name__}")
    msg_id = _str(data.get("msgId"))
    if not msg_id:
        raise MalformedEvent("chatbot message without msgId")
    chat = _chat_of(data, channel)
    kind = _str(data.get("msgtype")) or "text"
    attachments: tuple[Attachment, ...]
    if kind in _UNSUPPORTED:
        text, attachments, unsupported = "", (), _UNSUPPORTED[kind]
    else:
        (text, attachments), unsupported = _content_of(data, msg_id), ""
    sender = UserRef(
        id=_str(data.get("senderStaffId")) or _str(data.get("senderId")),
        name=_str(data.get("senderNick")),
    )
    return InboundMessage(
        event_id=msg_id,
        chat=chat,
        sender=sender,
        text=clean_text(text),
        attachments=attachments,
        mentions_bot=bool(data.get("isInAtList")),
        unsupported=unsupported or _nothing_read(kind, text, attachments),
        message_id=msg_id,
        received_at=received_at,
        raw=dict(data),
    )


def _chat_of(data: Mapping[str, Any], channel: str) -> ChatRef:
    chat_type: ChatType
    if _str(data.get("conversationType")) == "2":
        chat_id = _str(data.get("conversationId"))
        chat_type = "group"
    else:
        chat_id = _str(data.get("senderStaffId")) or _str(data.get("senderId"))
        chat_type = "dm"
    if not chat_id:
        raise MalformedEvent("chatbot message without a conversation")
    return ChatRef(channel=channel, chat_id=chat_id, chat_type=chat_type)


def _content_of(data: Mapping[str, Any], msg_id: str) -> tuple[str, tuple[Attachment, ...]]:
    kind = _str(data.get("msgtype")) or "text"
    content = data.get("content")
    content = content if isinstance(content, Mapping) else {}
    if kind == "text":
        text = data.get("text")
        return (_str(text.get("content")) if isinstance(text, Mapping) else ""), ()
    if kind == "richText":
        return _rich_text(content, msg_id)
    if kind == "picture":
        return "", _attachment(content, "image", f"image-{msg_id[:12]}.png")
    if kind == "file":
        return "", _attachment(content, "file", _str(content.get("fileName")) or "file")
    if kind == "audio":  # its recognition text is the message (nothing to transcribe)
        name, heard = f"audio-{msg_id[:12]}.amr", _str(content.get("recognition"))
        (audio,) = _attachment(content, "audio", name)
        return heard, (replace(audio, transcript=heard),)
    if kind == "video":
        ext = _str(content.get("videoType")) or "mp4"
        return "", _attachment(content, "video", f"video-{msg_id[:12]}.{ext}")
    return "", ()  # a kind Antler does not read: reported as unsupported


def _rich_text(content: Mapping[str, Any], msg_id: str) -> tuple[str, tuple[Attachment, ...]]:
    items = content.get("richText")
    parts: list[str] = []
    files: list[Attachment] = []
    for n, item in enumerate(items if isinstance(items, list) else []):
        if not isinstance(item, Mapping):
            continue
        if "text" in item:
            parts.append(_str(item.get("text")))
        elif item.get("downloadCode"):
            files.extend(_attachment(item, "image", f"image-{msg_id[:12]}-{n}.png"))
    return "\n".join(p for p in parts if p), tuple(files)


def _attachment(content: Mapping[str, Any], kind: Any, name: str) -> tuple[Attachment, ...]:
    code = _str(content.get("downloadCode")) or _str(content.get("pictureDownloadCode"))
    if not code:
        raise MalformedEvent(f"{kind} message without downloadCode")
    return (Attachment(name=name, ref=code, kind=kind),)


def clean_text(text: str) -> str:
    """Strip leading @mentions and turn `/cmd@Bot` into `/cmd`."""
    text = _LEADING_MENTIONS.sub("", text.strip()) if text.lstrip().startswith("@") else text
    return _COMMAND_AT.sub(r"\1", text.strip())


def _nothing_read(kind: str, text: str, attachments: tuple[Attachment, ...]) -> str:
    return "" if text or attachments or kind == "text" else "this kind of message"


def webhook_of(data: Mapping[str, Any]) -> tuple[str, int]:
    """The session webhook and its expiry (epoch milliseconds); ("", 0) when absent."""
    if not isinstance(data, Mapping):
        return "", 0
    url = _str(data.get("sessionWebhook"))
    try:
        expires = int(data.get("sessionWebhookExpiredTime") or 0)
    except (TypeError, ValueError, OverflowError):  # OverflowError: Infinity
        expires = 0
    return url, expires


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(value))
