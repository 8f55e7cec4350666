"""Bot API update (JSON dict) -> InboundMessage (pure).

The same function serves polling (PTB's `Update.to_dict()`) and webhooks (the posted JSON), so
recorded payloads test it without any network.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from channels.base import Attachment, ChatRef, ChatType, Edit, InboundMessage, UserRef
from channels.types import edit_event_id

_CHAT_TYPES: dict[str, ChatType] = {"private": "dm", "group": "group", "supergroup": "group"}
_COMMAND = re.compile(r"^/([A-Za-z0-9_]{1,32})(?:@([A-Za-z0-9_]+))?(?=\s|$)")


class MalformedUpdate(ValueError):
    """An update that lacks what the Bot API promises (logged and skipped)."""


@dataclass(frozen=True, slots=True)
class BotIdentity:
    """Who the bot is, from getMe: mentions and replies are matched against it."""

    id: int
    username: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Parsed:
    """A parsed update. `addressed`: a DM, an @mention, a reply to the bot or a command for us.

    `command` is the normalised command name ("start", "new", ...), `callback_id` the id of a
    callback query to answer, `for_other_bot` a `/cmd@OtherBot` that is not ours.
    """

    msg: InboundMessage
    addressed: bool
    command: str | None = None
    callback_id: str | None = None
    for_other_bot: bool = False


def parse_update(
    update: Mapping[str, Any], bot: BotIdentity, *, channel: str = "telegram", now: float = 0.0
) -> Parsed | None:
    """Parse one update. None: a kind of update the bot does not act on (joins, ...)."""
    if not isinstance(update, Mapping):
        raise MalformedUpdate(f"update is not an object: {type(update).__name__}")
    try:
        if "message" in update:
            return _parse_message(update, update["message"], bot, channel, now)
        if "edited_message" in update:
            return _parse_edit(update, update["edited_message"], bot, channel, now)
        if "callback_query" in update:
            return _parse_callback(update["callback_query"], bot, channel, now)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:  # a value of a wrong type
        raise MalformedUpdate(f"update {update.get('update_id')}: {exc!r}") from exc
    return None


def _parse_message(
    update: Mapping[str, Any],
    message: Mapping[str, Any],
    bot: BotIdentity,
    channel: str,
    now: float,
) -> Parsed | None:
    chat = chat_ref(message, channel)
    if chat is None:
        return None
    text = message.get("text") or message.get("caption") or ""
    attachments = tuple(_attachments(message))
    unsupported = "" if text or attachments else _unsupported_kind(message)
    if not text and not attachments and not unsupported:
        return None  # service messages: joins, pins, title changes ...
    mentions = _mentions(text, bot)
    command, target = _command(text)
    for_other = bool(target) and target.lower() != bot.username.lower()
    reply = _real_reply(message)
    replied_to_bot = reply is not None and reply.get("from", {}).get("id") == bot.id
    msg = InboundMessage(
        event_id=f"{message['chat']['id']}:{message['message_id']}",
        chat=chat,
        sender=_user(message),
        text=_clean_text(text, bot, command),
        attachments=attachments,
        mentions_bot=mentions,
        replies_to_bot=replied_to_bot,
        unsupported=unsupported,
        reply_to=str(reply["message_id"]) if reply else None,
        quoted_text=_quoted(message, reply),
        message_id=str(message["message_id"]),
        received_at=now,
        raw={"update_id": update.get("update_id"), "message_id": message["message_id"]},
    )
    addressed = chat.chat_type == "dm" or mentions or replied_to_bot or (command and not for_other)
    return Parsed(msg=msg, addressed=bool(addressed), command=command, for_other_bot=for_other)


def _parse_edit(
    update: Mapping[str, Any],
    message: Mapping[str, Any],
    bot: BotIdentity,
    channel: str,
    now: float,
) -> Parsed | None:
    """An edited message: the message parsed anew, marked as an edit of `message_id` at its
    `edit_date` (the edit's version)."""
    parsed = _parse_message(update, message, bot, channel, now)
    if parsed is None:
        return None
    chat_id, message_id = str(message["chat"]["id"]), str(message["message_id"])
    version = str(message.get("edit_date") or update.get("update_id"))
    edit = Edit(
        message_id=message_id,
        version=version,
        sent_at=float(message.get("date") or 0),
        original_event_id=parsed.msg.event_id,
    )
    msg = replace(parsed.msg, event_id=edit_event_id(chat_id, message_id, version), edit=edit)
    return replace(parsed, msg=msg)


def _parse_callback(
    query: Mapping[str, Any], bot: BotIdentity, channel: str, now: float
) -> Parsed | None:
    message = query.get("message")
    data = query.get("data") or ""  # no data: answered as an expired button
    if not message:
        return None
    chat = chat_ref(message, channel)
    if chat is None:
        return None
    msg = InboundMessage(
        event_id=f"cb:{query['id']}",
        chat=chat,
        sender=_user(query),
        text=str(data),
        message_id=str(message["message_id"]),
        received_at=now,
        is_button=True,
        raw={"callback_id": query["id"], "message_id": message["message_id"]},
    )
    return Parsed(msg=msg, addressed=True, callback_id=str(query["id"]))


def chat_ref(message: Mapping[str, Any], channel: str = "telegram") -> ChatRef | None:
    """The conversation of a message: the chat, or the forum topic inside it."""
    chat = message["chat"]
    if not isinstance(chat["id"], int) or isinstance(chat["id"], bool):
        raise ValueError(f"chat id {chat['id']!r} is not a number")
    chat_type = _CHAT_TYPES.get(chat["type"])
    if chat_type is None:
        return None
    topic = None
    if message.get("is_topic_message") and message.get("message_thread_id"):
        topic = str(message["message_thread_id"])
    return ChatRef(channel=channel, chat_id=str(chat["id"]), chat_type=chat_type, topic_id=topic)


def _user(holder: Mapping[str, Any]) -> UserRef:
    user = holder.get("from")
    if user is None:  # anonymous group admin: the group speaks
        sender_chat = holder["sender_chat"]
        return UserRef(id=str(sender_chat["id"]), name=sender_chat.get("title", ""))
    name = " ".join(p for p in (user.get("first_name"), user.get("last_name")) if p)
    return UserRef(
        id=str(user["id"]),
        name=name or user.get("username", ""),
        is_bot=user["is_bot"],
        locale=str(user.get("language_code") or ""),
    )


def _real_reply(message: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The replied-to message, unless it is only the forum topic's root (implicit in topics)."""
    reply = message.get("reply_to_message")
    if not reply:
        return None
    if message.get("is_topic_message") and reply["message_id"] == message.get("message_thread_id"):
        return None
    return reply


def _quoted(message: Mapping[str, Any], reply: Mapping[str, Any] | None) -> str | None:
    quote = message.get("quote")
    if quote and quote.get("text"):
        return str(quote["text"])
    if reply:
        return reply.get("text") or reply.get("caption") or None
    return None


def _mentions(text: str, bot: BotIdentity) -> bool:
    return bool(re.search(rf"(?<!\w)@{re.escape(bot.username)}\b", text, re.IGNORECASE))


def _command(text: str) -> tuple[str | None, str]:
    match = _COMMAND.match(text)
    if not match:
        return None, ""
    return match.group(1).lower(), match.group(2) or ""


def _clean_text(text: str, bot: BotIdentity, command: str | None) -> str:
    """Strip leading @mentions of the bot; `/cmd@BotName args` becomes `/cmd args`."""
    text = re.sub(rf"^(\s*@{re.escape(bot.username)}\b[\s,:]*)+", "", text, flags=re.IGNORECASE)
    if command:
        text = _COMMAND.sub(f"/{command}", text, count=1)
    return text.strip()


def _attachments(message: Mapping[str, Any]) -> list[Attachment]:
    found: list[Attachment] = []
    photos = message.get("photo") or []
    if photos:
        best = max(photos, key=lambda p: (p["width"] * p["height"], p.get("file_size", 0)))
        found.append(
            Attachment(
                name=f"photo-{best['file_unique_id']}.jpg",
                ref=best["file_id"],
                kind="image",
                mime_type="image/jpeg",
                size=best.get("file_size"),
            )
        )
    for key, kind in (
        ("document", "file"),
        ("video", "video"),
        ("audio", "audio"),
        ("voice", "audio"),
    ):
        item = message.get(key)
        if item:
            found.append(_file_attachment(item, kind, key))
    return found


_UNSUPPORTED = {
    "sticker": "a sticker",
    "location": "a location",
    "venue": "a location",
    "poll": "a poll",
    "contact": "a contact",
    "dice": "a dice roll",
    "animation": "an animation",
    "video_note": "a video message",
    "game": "a game",
    "story": "a story",
}


def _unsupported_kind(message: Mapping[str, Any]) -> str:
    """What a user sent that Antler cannot read (empty: a service message, not for anyone)."""
    for key, label in _UNSUPPORTED.items():
        if key in message:
            return label
    return ""


def _file_attachment(item: Mapping[str, Any], kind: Any, key: str) -> Attachment:
    name = item.get("file_name") or f"{key}-{item['file_unique_id']}"
    mime = item.get("mime_type", "")
    if kind == "file" and mime.startswith("image/"):
        kind = "image"
    duration = item.get("duration")  # voice, audio and video: seconds
    return Attachment(
        name=name,
        ref=item["file_id"],
        kind=kind,
        mime_type=mime,
        size=item.get("file_size"),
        duration=float(duration) if isinstance(duration, int | float) else None,
    )
