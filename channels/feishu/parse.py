"""Feishu event payloads -> InboundMessage. Pure: no network, no SDK objects, only dicts."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from channels.base import Attachment, ChatRef, ChatType, InboundMessage, UserRef

MESSAGE_EVENT = "im.message.receive_v1"
_FILE_KINDS: dict[str, Literal["file", "audio", "video"]] = {
    "file": "file",
    "audio": "audio",
    "media": "video",
}
CARD_ACTION_EVENT = "card.action.trigger"
_COMMAND_AT = re.compile(r"^(/[A-Za-z0-9_]+)@\S+")
_LEADING_AT = re.compile(r"^(\s*@_user_\d+\s*)+")


class MalformedEvent(ValueError):
    """The payload is not a Feishu event we understand (logged and skipped by the channel)."""


@dataclass(frozen=True, slots=True)
class BotIdentity:
    """Who the bot is, to recognise @mentions of it. Empty open_id: match by name only."""

    open_id: str = ""
    name: str = ""


def _dig(data: Mapping[str, Any], *keys: str) -> Any:
    cur: Any = data
    for key in keys:
        if not isinstance(cur, Mapping):
            return None
        cur = cur.get(key)
    return cur


def event_type(envelope: Mapping[str, Any]) -> str:
    return str(_dig(envelope, "header", "event_type") or "")


def _is_bot_mention(mention: Mapping[str, Any], bot: BotIdentity) -> bool:
    open_id = _dig(mention, "id", "open_id")
    if bot.open_id:
        return bool(open_id) and open_id == bot.open_id
    return bool(bot.name) and mention.get("name") == bot.name


def _content(message: Mapping[str, Any]) -> dict[str, Any]:
    raw = message.get("content") or "{}"
    try:
        content = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError as exc:
        raise MalformedEvent(f"message content is not JSON: {exc}") from None
    if not isinstance(content, dict):
        raise MalformedEvent("message content is not an object")
    return content


def _post_paragraphs(content: Mapping[str, Any]) -> tuple[str, list[list[Mapping[str, Any]]]]:
    """A post is {title, content: [[element, ...], ...]}, sometimes wrapped in a locale key."""
    if "content" not in content:
        wrapped = next((v for v in content.values() if isinstance(v, Mapping)), {})
        content = wrapped
    paragraphs = content.get("content") or []
    if not isinstance(paragraphs, list):
        raise MalformedEvent("post content is not a list of paragraphs")
    return str(content.get("title") or ""), [p for p in paragraphs if isinstance(p, list)]


def _post_text(content: Mapping[str, Any]) -> tuple[str, list[Attachment]]:
    title, paragraphs = _post_paragraphs(content)
    lines: list[str] = [title] if title else []
    files: list[Attachment] = []
    for paragraph in paragraphs:
        parts: list[str] = []
        for el in paragraph:
            tag = el.get("tag")
            if tag == "text":
                parts.append(str(el.get("text", "")))
            elif tag == "a":
                parts.append(f"[{el.get('text') or el.get('href')}]({el.get('href', '')})")
            elif tag == "at":
                parts.append(
                    str(el.get("user_id", ""))
                    if str(el.get("user_id", "")).startswith("@_user_")
                    else f"@{el.get('user_name', '')}"
                )
            elif tag == "code_block":
                parts.append(f"\n```{el.get('language', '').lower()}\n{el.get('text', '')}\n```\n")
            elif tag == "img" and el.get("image_key"):
                files.append(_image(str(el["image_key"])))
            elif tag == "media" and el.get("file_key"):
                files.append(
                    Attachment(name=str(el["file_key"]), ref=f"file:{el['file_key']}", kind="video")
                )
        lines.append("".join(parts))
    return "\n".join(lines).strip(), files


def _image(key: str) -> Attachment:
    return Attachment(name=f"{key}.png", ref=f"image:{key}", kind="image", mime_type="image/png")


def _body(msg_type: str, content: Mapping[str, Any]) -> tuple[str, list[Attachment]]:
    if msg_type == "text":
        return str(content.get("text", "")), []
    if msg_type == "post":
        return _post_text(content)
    if msg_type == "image" and content.get("image_key"):
        return "", [_image(str(content["image_key"]))]
    if msg_type in ("file", "audio", "media") and content.get("file_key"):
        kind = _FILE_KINDS[msg_type]
        name = str(content.get("file_name") or content["file_key"])
        ms = content.get("duration")  # audio and media: milliseconds
        seconds = ms / 1000 if isinstance(ms, int | float) and ms > 0 else None
        ref = f"file:{content['file_key']}"
        return "", [Attachment(name=name, ref=ref, kind=kind, duration=seconds)]
    return "", []


_LABELS = {
    "sticker": "a sticker",
    "location": "a location",
    "share_chat": "a shared chat",
    "share_user": "a contact card",
    "merge_forward": "forwarded messages",
    "interactive": "a card",
    "todo": "a task",
    "vote": "a poll",
    "hongbao": "a red packet",
}


def _label(msg_type: str) -> str:
    return _LABELS.get(msg_type, "this kind of message")


def _resolve_mentions(
    text: str, mentions: list[Mapping[str, Any]], bot: BotIdentity
) -> tuple[str, bool]:
    """Drop leading @bot placeholders, spell out the others; say whether the bot was mentioned."""
    bot_keys = {m.get("key") for m in mentions if _is_bot_mention(m, bot)}
    lead = _LEADING_AT.match(text)
    if lead:
        kept = [k for k in re.findall(r"@_user_\d+", lead.group(0)) if k not in bot_keys]
        text = " ".join(kept) + (" " if kept else "") + text[lead.end() :]
    for m in mentions:
        key = str(m.get("key") or "")
        if key:
            text = text.replace(key, "" if key in bot_keys else f"@{m.get('name', '')}")
    text = _COMMAND_AT.sub(r"\1", text.strip())
    return text.strip(), bool(bot_keys)


def _chat_ref(message: Mapping[str, Any], channel: str, group_scope: str) -> ChatRef:
    chat_id = message.get("chat_id")
    if not chat_id:
        raise MalformedEvent("message has no chat_id")
    is_group = message.get("chat_type") in ("group", "topic_group")
    topic = None
    if is_group and group_scope == "topic":
        topic = message.get("root_id") or message.get("thread_id") or message.get("message_id")
    return ChatRef(
        channel=channel,
        chat_id=str(chat_id),
        chat_type="group" if is_group else "dm",
        topic_id=str(topic) if topic else None,
    )


def _starts_topic(message: Mapping[str, Any], group_scope: str) -> bool:
    """A top-level message of a group in per-topic mode: it starts a topic of its own."""
    is_group = message.get("chat_type") in ("group", "topic_group")
    in_topic = message.get("root_id") or message.get("thread_id")
    return is_group and group_scope == "topic" and not in_topic


def parse_message(
    envelope: Mapping[str, Any],
    *,
    bot: BotIdentity,
    channel: str = "feishu",
    group_scope: str = "topic",
    received_at: float = 0.0,
) -> InboundMessage | None:
    """An `im.message.receive_v1` envelope -> InboundMessage (None: nothing usable in it)."""
    message = _dig(envelope, "event", "message")
    if not isinstance(message, Mapping) or not message.get("message_id"):
        raise MalformedEvent("event has no message")
    sender = _dig(envelope, "event", "sender") or {}
    sender_id = _dig(sender, "sender_id", "open_id") or _dig(sender, "sender_id", "user_id")
    if not sender_id:
        raise MalformedEvent("message has no sender")
    msg_type = str(message.get("message_type", ""))
    text, files = _body(msg_type, _content(message))
    mentions = [m for m in message.get("mentions") or [] if isinstance(m, Mapping)]
    text, mentioned = _resolve_mentions(text, mentions, bot)
    unsupported = "" if text or files or msg_type in ("text", "post") else _label(msg_type)
    if not text and not files and not unsupported:
        return None
    return InboundMessage(
        event_id=str(message["message_id"]),
        chat=_chat_ref(message, channel, group_scope),
        sender=UserRef(id=str(sender_id), is_bot=sender.get("sender_type") == "app"),
        text=text,
        attachments=tuple(files),
        mentions_bot=mentioned,
        unsupported=unsupported,
        reply_to=message.get("parent_id") or None,
        message_id=str(message["message_id"]),
        received_at=received_at,
        in_main_chat=_starts_topic(message, group_scope),
        raw={k: message.get(k) for k in ("root_id", "parent_id", "thread_id", "chat_type")}
        | {"event_id": _dig(envelope, "header", "event_id")},
    )


def parse_card_action(
    envelope: Mapping[str, Any], *, channel: str = "feishu", received_at: float = 0.0
) -> InboundMessage:
    """A `card.action.trigger` callback on one of our buttons -> a button-press InboundMessage."""
    event = envelope.get("event") if isinstance(envelope, Mapping) else None
    value = _dig(event or {}, "action", "value")
    chat_id = _dig(event or {}, "context", "open_chat_id")
    user = _dig(event or {}, "operator", "open_id")
    if not isinstance(value, Mapping) or not value.get("cmd") or not chat_id or not user:
        raise MalformedEvent("card action without our button value, chat or operator")
    event_id = _dig(envelope, "header", "event_id") or _dig(event or {}, "token")
    if not event_id:
        raise MalformedEvent("card action without an event id")
    chat_type: ChatType = "group" if value.get("chat_type") == "group" else "dm"
    return InboundMessage(
        event_id=str(event_id),
        chat=ChatRef(
            channel=channel,
            chat_id=str(chat_id),
            chat_type=chat_type,
            topic_id=value.get("topic") or None,
        ),
        sender=UserRef(id=str(user)),
        text=str(value["cmd"]),
        is_button=True,
        mentions_bot=True,
        message_id=_dig(event or {}, "context", "open_message_id"),
        received_at=received_at,
        in_main_chat=bool(value.get("main")),
        raw={"reply_to": value.get("reply_to"), "root_id": value.get("topic")},
    )
