"""WeCom callback frames -> InboundMessage (pure).

A message callback's body: `msgid`, `chattype` ("single" | "group"), `chatid` (groups),
`from.userid`, `msgtype` and its part: `text.content`, `image{url, aeskey}`,
`file{url, aeskey, filename?}`, `voice.content` (WeCom's transcript), `mixed.msg_item[]`
(text and images), and `quote` (the message replied to). Groups deliver only messages that
@-mention the bot: the mention is taken off the text. An event callback
(`msgtype: event`) carries `event.eventtype`: a template card's button press is read as the
button's value typed by the presser (channels/wecom/cards.py); other events are not messages.

A DM's chat is the person (their userid, which is also where a push goes); a group's is its
chatid. The frame's request id rides in `raw`: replies to the message are sent with it.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

from channels.base import Attachment, ChatRef, InboundMessage, UserRef
from channels.text import clean_input

CHANNEL = "wecom"
_LEADING_MENTION = re.compile(r"^\s*@\S+\s*")
_UNSUPPORTED = {"video": "a video", "location": "a location", "link": "a link"}


def chat_of(body: dict[str, Any]) -> ChatRef:
    user = str((body.get("from") or {}).get("userid") or "")
    if body.get("chattype") == "group" and body.get("chatid"):
        return ChatRef(channel=CHANNEL, chat_id=str(body["chatid"]), chat_type="group")
    return ChatRef(channel=CHANNEL, chat_id=user, chat_type="dm")


def media(kind: str, part: dict[str, Any], index: int) -> Attachment | None:
    url = str(part.get("url") or "")
    if not url:
        return None
    name = str(part.get("filename") or part.get("name") or "")
    fallback = f"image-{index}.jpg" if kind == "image" else f"file-{index}"
    ref = json.dumps({"url": url, "aeskey": str(part.get("aeskey") or "")})
    return Attachment(name=name or fallback, ref=ref, kind="image" if kind == "image" else "file")


def _parts(body: dict[str, Any]) -> tuple[str, list[Attachment], str]:
    """The text, the media and what cannot be read, of one message body."""
    kind = str(body.get("msgtype") or "")
    found = body.get(kind)
    part: dict[str, Any] = found if isinstance(found, dict) else {}
    if kind == "text":
        return str(part.get("content") or ""), [], ""
    if kind == "voice":
        return str(part.get("content") or ""), [], "" if part.get("content") else "a voice note"
    if kind in ("image", "file"):
        found = media(kind, part, 1)
        return "", [found] if found else [], ""
    if kind == "mixed":
        texts, files = [], []
        for index, item in enumerate(part.get("msg_item") or [], start=1):
            inner = item.get(item.get("msgtype")) or {}
            if item.get("msgtype") == "text":
                texts.append(str(inner.get("content") or ""))
            elif item.get("msgtype") in ("image", "file"):
                found = media(str(item["msgtype"]), inner, index)
                files += [found] if found else []
        return "\n".join(t for t in texts if t), files, ""
    return "", [], _UNSUPPORTED.get(kind, f"a {kind or 'message'} message")


def quoted(body: dict[str, Any]) -> str | None:
    quote = body.get("quote")
    if not isinstance(quote, dict):
        return None
    text, _, _ = _parts(quote)
    return text or None


class MalformedCallback(ValueError):
    """A callback body of the wrong shape (the channel logs it and drops it)."""


_SHAPE_ERRORS = (AttributeError, KeyError, TypeError, ValueError, IndexError)


def parse_message(body: dict[str, Any], req_id: str) -> InboundMessage | None:
    """None for a body that is not a person's message; MalformedCallback for a wrong shape."""
    try:
        return _message(body, req_id)
    except _SHAPE_ERRORS as exc:
        raise MalformedCallback(f"wecom callback: {exc!r}") from exc


def parse_press(body: dict[str, Any], req_id: str, value: str) -> InboundMessage | None:
    """A button press on a template card, as the button's value typed by the presser."""
    try:
        return _press(body, req_id, value)
    except _SHAPE_ERRORS as exc:
        raise MalformedCallback(f"wecom card event: {exc!r}") from exc


def _message(body: dict[str, Any], req_id: str) -> InboundMessage | None:
    user = (body.get("from") or {}).get("userid")
    msgid = body.get("msgid")
    if not user or not msgid:
        return None
    chat = chat_of(body)
    text, files, unsupported = _parts(body)
    if chat.chat_type == "group":
        text = _LEADING_MENTION.sub("", text, count=1)
    return InboundMessage(
        event_id=str(msgid),
        chat=chat,
        sender=UserRef(id=str(user)),
        text=clean_input(text.strip()),
        attachments=tuple(files),
        mentions_bot=True,  # WeCom delivers only the group messages that @-mention the bot
        quoted_text=quoted(body),
        message_id=str(msgid),
        received_at=time.time(),
        unsupported=unsupported if not text and not files else "",
        raw={"req_id": req_id},
    )


def _press(body: dict[str, Any], req_id: str, value: str) -> InboundMessage | None:
    user = (body.get("from") or {}).get("userid")
    if not user:
        return None
    event = body.get("event") or {}
    card = event.get("template_card_event") or {}
    task = str(card.get("task_id") or "")
    return InboundMessage(
        event_id=str(body.get("msgid") or f"press:{task}:{user}:{card.get('event_key')}"),
        chat=chat_of(body),
        sender=UserRef(id=str(user)),
        text=value,
        mentions_bot=True,
        message_id=task or None,
        received_at=time.time(),
        is_button=True,
        raw={"req_id": req_id, "task_id": task},
    )
