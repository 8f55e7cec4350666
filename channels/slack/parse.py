"""Slack payloads -> InboundMessage. Pure functions, tested with recorded payloads."""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ParamSpec

from channels.base import Attachment, ChatRef, Edit, InboundMessage, UserRef
from channels.types import edit_event_id

log = logging.getLogger(__name__)

CHANNEL = "slack"
# Message subtypes that are still a person talking to us; every other subtype is ignored.
USER_SUBTYPES = frozenset({"file_share", "thread_broadcast"})
BUTTON_PREFIX = "antler_btn_"
# The message id of a slash command: answers to it go to its sender only (chat.postEphemeral).
EPHEMERAL_PREFIX = "ephemeral:"


@dataclass(frozen=True, slots=True, kw_only=True)
class BotIdentity:
    user_id: str
    bot_id: str = ""
    team_id: str = ""


P = ParamSpec("P")


def skip_malformed(
    parse: Callable[P, InboundMessage | None],
) -> Callable[P, InboundMessage | None]:
    """None (skipped) for a payload whose values have the wrong types or keys missing."""

    @functools.wraps(parse)
    def parse_or_skip(*args: P.args, **kwargs: P.kwargs) -> InboundMessage | None:
        try:
            return parse(*args, **kwargs)
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            log.warning("malformed slack payload skipped (%s): %r", parse.__name__, exc)
            return None

    return parse_or_skip


def mention_pattern(bot_user_id: str) -> re.Pattern[str]:
    return re.compile(rf"<@{re.escape(bot_user_id)}(?:\|[^>]*)?>")


def strip_mentions(text: str, bot_user_id: str) -> str:
    """Remove leading mentions of the bot (`<@U123>` or `<@U123|antler>`)."""
    lead = re.compile(rf"^\s*(?:<@{re.escape(bot_user_id)}(?:\|[^>]*)?>[\s,:]*)+")
    return lead.sub("", text).strip()


def normalise_command(text: str, command_words: frozenset[str] = frozenset()) -> str:
    """`/new@Antler` -> `/new`; a bare command word (`new`, `models gpt-4o`) -> `/new` ...

    `command_words`: the words that act as commands when they are the whole message after a
    mention ("@Antler new"): the service's built-in commands (`ChannelContext.commands`).
    """
    if text.startswith("/"):
        head, _, rest = text.partition(" ")
        head = head.split("@", 1)[0]
        return f"{head} {rest}".strip()
    words = text.split()
    if words and words[0].lower() in command_words:
        is_model_pick = words[0].lower() == "models" and len(words) == 2
        if len(words) == 1 or is_model_pick:
            return "/" + " ".join([words[0].lower(), *words[1:]])
    return text


def is_user_message(event: Mapping[str, Any], me: BotIdentity) -> bool:
    """False for the bot's own messages, other bots and system subtypes."""
    subtype = event.get("subtype")
    if subtype is not None and subtype not in USER_SUBTYPES:
        return False
    if event.get("bot_id") or event.get("bot_profile"):
        return False
    return bool(event.get("user")) and event.get("user") != me.user_id


def chat_type_of(event: Mapping[str, Any]) -> str:
    kind = event.get("channel_type") or ""
    if kind == "im" or (not kind and str(event.get("channel", "")).startswith("D")):
        return "dm"
    return "group"


def parse_files(files: Sequence[Mapping[str, Any]] | None) -> tuple[Attachment, ...]:
    out = []
    for f in files or ():
        url = f.get("url_private_download") or f.get("url_private")
        if not url:
            continue
        mime = str(f.get("mimetype") or "")
        kind = next((k for k in ("image", "audio", "video") if mime.startswith(k + "/")), "file")
        out.append(
            Attachment(
                name=str(f.get("name") or f.get("id") or "file"),
                ref=str(url),
                kind=kind,  # type: ignore[arg-type]
                mime_type=mime,
                size=f.get("size"),
                duration=f["duration_ms"] / 1000 if f.get("duration_ms") else None,  # clips
            )
        )
    return tuple(out)


@skip_malformed
def parse_event(
    body: Mapping[str, Any],
    me: BotIdentity,
    *,
    received_at: float = 0.0,
    command_words: frozenset[str] = frozenset(),
) -> InboundMessage | None:
    """An `event_callback` body with a `message` or `app_mention` event -> InboundMessage
    (a `message_changed` one: an edit, see `parse_edit`)."""
    event = body.get("event") or {}
    if event.get("type") == "message" and event.get("subtype") == "message_changed":
        return parse_edit(body, me, received_at=received_at, command_words=command_words)
    if event.get("type") not in ("message", "app_mention") or not is_user_message(event, me):
        return None
    channel, ts = event.get("channel"), event.get("ts")
    if not channel or not ts:
        return None
    raw_text = str(event.get("text") or "")
    mentions = event.get("type") == "app_mention" or bool(
        mention_pattern(me.user_id).search(raw_text)
    )
    chat_type = chat_type_of(event)
    thread_ts = event.get("thread_ts")
    reply_thread = thread_ts or ts
    team = str(body.get("team_id") or event.get("team") or me.team_id)
    chat = ChatRef(
        channel=CHANNEL,
        chat_id=str(channel),
        chat_type=chat_type,  # type: ignore[arg-type]
        workspace=team,
        topic_id=None if chat_type == "dm" else str(reply_thread),
    )
    event_id = body.get("event_id") or event.get("client_msg_id") or f"{channel}:{ts}"
    return InboundMessage(
        event_id=str(event_id),
        chat=chat,
        sender=UserRef(id=str(event["user"])),
        text=normalise_command(strip_mentions(raw_text, me.user_id), command_words),
        attachments=parse_files(event.get("files")),
        mentions_bot=mentions,
        reply_to=str(thread_ts) if thread_ts and thread_ts != ts else None,
        message_id=str(ts),
        received_at=received_at,
        in_main_chat=chat_type == "group" and not (thread_ts and thread_ts != ts),
        raw={
            "event_type": event.get("type"),
            "ts": str(ts),
            "thread_ts": str(reply_thread),
            "in_thread": bool(thread_ts and thread_ts != ts),
            "team": team,
        },
    )


def parse_edit(
    body: Mapping[str, Any],
    me: BotIdentity,
    *,
    received_at: float = 0.0,
    command_words: frozenset[str] = frozenset(),
) -> InboundMessage | None:
    """A person's edit (`message_changed` whose message carries `edited`) -> the message anew,
    marked as an edit at the `edited.ts` version. Slack sends `message_changed` for unfurls and
    for the bot's own chat.update too: those are not edits and give None."""
    event = body["event"]
    message, before = event.get("message") or {}, event.get("previous_message") or {}
    edited = message.get("edited") or {}
    if not edited.get("ts") or message.get("text") == before.get("text"):
        return None
    inner = {
        **message,
        "type": "message",
        "channel": event.get("channel"),
        "channel_type": event.get("channel_type"),
    }
    inner.pop("subtype", None)
    msg = parse_event(
        {**body, "event": inner}, me, received_at=received_at, command_words=command_words
    )
    if msg is None or not msg.message_id:
        return None
    version = str(edited["ts"])
    edit = Edit(message_id=msg.message_id, version=version, sent_at=_ts(msg.message_id))
    event_id = edit_event_id(msg.chat.chat_id, msg.message_id, version)
    return replace(msg, event_id=event_id, edit=edit)


@skip_malformed
def parse_slash_command(
    body: Mapping[str, Any], command_name: str, *, received_at: float = 0.0
) -> InboundMessage | None:
    """`/antler new` -> text `/new`; `/antler` alone -> `/help`."""
    if body.get("command") != command_name or not body.get("channel_id") or not body.get("user_id"):
        return None
    words = str(body.get("text") or "").split()
    text = "/help" if not words else "/" + " ".join([words[0].lstrip("/"), *words[1:]])
    channel = str(body["channel_id"])
    chat_type = "dm" if channel.startswith("D") else "group"
    chat = ChatRef(
        channel=CHANNEL,
        chat_id=channel,
        chat_type=chat_type,  # type: ignore[arg-type]
        workspace=str(body.get("team_id") or ""),
        topic_id=None,
    )
    event_id = f"cmd:{body.get('trigger_id') or body.get('response_url') or received_at}"
    return InboundMessage(
        event_id=event_id,
        chat=chat,
        sender=UserRef(id=str(body["user_id"]), name=str(body.get("user_name") or "")),
        text=text,
        mentions_bot=True,
        message_id=f"{EPHEMERAL_PREFIX}{body['user_id']}",
        received_at=received_at,
        in_main_chat=chat_type == "group",  # Slack allows no slash command inside a thread
        raw={
            "event_type": "slash_command",
            "thread_ts": None,
            "team": chat.workspace,
            "response_url": body.get("response_url"),
        },
    )


def ephemeral_user(message_id: str | None) -> str | None:
    """The user a reply to `message_id` is shown to alone (a slash command's sender)."""
    if message_id and message_id.startswith(EPHEMERAL_PREFIX):
        return message_id[len(EPHEMERAL_PREFIX) :]
    return None


@skip_malformed
def parse_block_action(
    body: Mapping[str, Any], *, received_at: float = 0.0
) -> InboundMessage | None:
    """A press on one of our buttons -> InboundMessage(is_button=True, text=value)."""
    actions = body.get("actions") or []
    ours = [a for a in actions if str(a.get("action_id", "")).startswith(BUTTON_PREFIX)]
    action = ours[0] if ours else None
    container = body.get("container") or {}
    channel = (body.get("channel") or {}).get("id") or container.get("channel_id")
    user = (body.get("user") or {}).get("id")
    if action is None or not channel or not user:
        return None
    message = body.get("message") or {}
    thread_ts = message.get("thread_ts") or container.get("thread_ts")
    thread_ts = thread_ts or message.get("ts")
    chat_type = "dm" if str(channel).startswith("D") else "group"
    team = str((body.get("team") or {}).get("id") or (body.get("user") or {}).get("team_id") or "")
    chat = ChatRef(
        channel=CHANNEL,
        chat_id=str(channel),
        chat_type=chat_type,  # type: ignore[arg-type]
        workspace=team,
        topic_id=str(thread_ts) if chat_type == "group" and thread_ts else None,
    )
    return InboundMessage(
        event_id=f"action:{action.get('action_ts') or body.get('trigger_id')}:{user}",
        chat=chat,
        sender=UserRef(id=str(user), name=str((body.get("user") or {}).get("username") or "")),
        text=str(action.get("value") or ""),
        mentions_bot=True,
        is_button=True,
        # a press on a message only its user saw (a command's answer) is answered the same way
        message_id=f"{EPHEMERAL_PREFIX}{user}" if container.get("is_ephemeral") else None,
        received_at=received_at,
        in_main_chat=chat_type == "group" and not thread_ts,
        raw={
            "event_type": "block_actions",
            "thread_ts": thread_ts,
            "team": team,
            "ephemeral": bool(container.get("is_ephemeral")),
        },
    )


def thread_context(
    replies: Sequence[Mapping[str, Any]], before_ts: str, me: BotIdentity, *, limit: int = 30
) -> str | None:
    """Earlier messages of a thread (conversations.replies) as context lines for the agent."""
    lines = []
    for m in replies:
        if _ts(m.get("ts")) >= _ts(before_ts) or m.get("subtype") not in (None, *USER_SUBTYPES):
            continue
        is_bot = m.get("user") == me.user_id or m.get("bot_id")
        who = "assistant" if is_bot else f"<@{m.get('user')}>"
        text = str(m.get("text") or "").strip()
        if text:
            lines.append(f"{who}: {text}")
    if not lines:
        return None
    return "Earlier messages in this Slack thread:\n" + "\n".join(lines[-limit:])


def _ts(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0
