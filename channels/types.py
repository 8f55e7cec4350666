"""The value types the service and every channel share: chats, messages, reply documents,
rate budgets, what a channel can do, and the command menu it may show."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal


class BusyPolicy(enum.StrEnum):
    queue = "queue"
    interrupt = "interrupt"


class EditPolicy(enum.StrEnum):
    """What an edited message does (bot/edits.py): answered again in place (`reanswer`), answered
    as a new message (`requeue`), or nothing (`ignore`)."""

    reanswer = "reanswer"
    requeue = "requeue"
    ignore = "ignore"


ChatType = Literal["dm", "group"]
Scope = Literal["reply", "chat", "workspace", "bot"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ChatRef:
    """Where a message lives. `topic_id`: a thread/topic inside the chat (None: the whole chat)."""

    channel: str
    chat_id: str
    chat_type: ChatType = "dm"
    workspace: str = ""
    topic_id: str | None = None

    @property
    def key(self) -> str:
        """The conversation key: `channel:[workspace/]chat_id[:topic_id]`."""
        chat = f"{self.workspace}/{self.chat_id}" if self.workspace else self.chat_id
        return f"{self.channel}:{chat}" + (f":{self.topic_id}" if self.topic_id else "")

    def with_topic(self, topic_id: str | None) -> ChatRef:
        return replace(self, topic_id=topic_id)


@dataclass(frozen=True, slots=True, kw_only=True)
class UserRef:
    """The sender. `id` is the platform's user id; `name` is for display only; `roles`: the
    sender's roles where the platform has them (Discord), for a role allowlist; `locale`: the
    language of the sender's app where the platform says (Telegram's `language_code`), a hint
    for the language the service answers in."""

    id: str
    name: str = ""
    is_bot: bool = False
    roles: tuple[str, ...] = ()
    locale: str = ""

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> UserRef:
        """A sender as stored in JSON (the roles a list there)."""
        return cls(**{**data, "roles": tuple(data.get("roles") or ())})


@dataclass(frozen=True, slots=True, kw_only=True)
class Attachment:
    """A file that came with a message. `ref` is whatever the channel needs to fetch it."""

    name: str
    ref: str
    kind: Literal["image", "file", "audio", "video"] = "file"
    mime_type: str = ""
    size: int | None = None
    duration: float | None = None  # seconds, for audio and video where the platform tells
    transcript: str = ""  # the platform's own speech recognition of an audio (DingTalk)


@dataclass(frozen=True, slots=True, kw_only=True)
class Edit:
    """What makes a message an edit of an earlier one.

    `message_id`: the platform's id of the edited message; `version`: the platform's mark of this
    edit (Telegram's edit_date, Slack's edited ts, Feishu's update time), part of the edit's
    `event_id`, so a redelivered edit is one edit and a second edit another; `sent_at`: when the
    edited message was first sent (seconds); `original_event_id`: the original's `event_id` where
    the channel can tell it from the edit (empty: the service knows it only from memory).
    """

    message_id: str
    version: str
    sent_at: float = 0.0
    original_event_id: str = ""


def edit_event_id(chat_id: str, message_id: str, version: str) -> str:
    """The `event_id` of an edit: the message and the edit's version (one per edit)."""
    return f"edit:{chat_id}:{message_id}:{version}"


@dataclass(frozen=True, slots=True, kw_only=True)
class InboundMessage:
    """One user message (or button press) as the platform delivered it.

    `event_id` is the platform's own id (dedupe keys on it). `raw` holds platform leftovers that
    only the originating channel reads back (e.g. a reply token). `mentions_bot` and
    `replies_to_bot` (a reply to the bot, or a message in a thread the bot answers in) are what
    the service's access gate reads to decide whether a group message is meant for the bot.
    `unsupported` names what was sent when Antler cannot read it ("a sticker"): the service
    answers with what it can read instead of running the agent. `in_main_chat`: sent in the main
    chat of a chat whose top-level messages start their own threads (Slack channels, Feishu groups
    in per-topic mode); commands there act on the chat (`chat.with_topic(None)`), not on the
    thread the message itself starts (docs/channels/README.md, "Scope"). `edit`: set when the
    person edited a message they had sent (the text is the new one; bot/edits.py).
    """

    event_id: str
    chat: ChatRef
    sender: UserRef
    text: str
    attachments: tuple[Attachment, ...] = ()
    mentions_bot: bool = False
    replies_to_bot: bool = False
    reply_to: str | None = None
    quoted_text: str | None = None
    message_id: str | None = None
    received_at: float = 0.0
    is_button: bool = False
    unsupported: str = ""
    in_main_chat: bool = False
    edit: Edit | None = None
    raw: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolStep:
    """One line of tool progress shown while the agent works."""

    id: str
    label: str
    state: Literal["running", "done", "failed"] = "running"


@dataclass(frozen=True, slots=True, kw_only=True)
class Button:
    """A button; pressing it sends `value` back as if the user had typed it."""

    label: str
    value: str


ReplyStatus = Literal["queued", "working", "done", "failed", "cancelled"]
_STATUSES: tuple[ReplyStatus, ...] = ("queued", "working", "done", "failed", "cancelled")


@dataclass(frozen=True, slots=True, kw_only=True)
class StatusLabels:
    """The words a channel shows for a reply's state (card headers, status lines), in the
    language of the person it answers: the service fills them in (bot/texts), channels add
    only their platform's marks (emoji, colours). `part` holds `{number}`, `running_status`
    `{tool}` (Slack's assistant status: "Antler is running web_search...")."""

    queued: str = "Queued"
    queued_line: str = "Queued: I'll answer after the current reply."
    working: str = "Thinking…"
    working_line: str = "Working on it…"
    done: str = "Done"
    failed: str = "Failed"
    failed_line: str = "Something went wrong."
    stopped: str = "Stopped"
    stopped_line: str = "Stopped."
    part: str = "part {number}"
    thinking_status: str = "is thinking..."
    running_status: str = "is running {tool}..."

    def title(self, status: ReplyStatus) -> str:
        """A header's word for `status` (`Stopped`)."""
        titles = (self.queued, self.working, self.done, self.failed, self.stopped)
        return dict(zip(_STATUSES, titles, strict=True))[status]

    def line(self, status: ReplyStatus) -> str:
        """A sentence for `status` (`Stopped.`), shown where the reply has no text yet."""
        lines = (self.queued_line, self.working_line, "", self.failed_line, self.stopped_line)
        return dict(zip(_STATUSES, lines, strict=True))[status]


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplyDoc:
    """The whole visible state of one reply. Every update sends the whole document."""

    text: str = ""
    progress: tuple[ToolStep, ...] = ()
    status: ReplyStatus = "working"
    buttons: tuple[Button, ...] = ()
    note: str = ""
    labels: StatusLabels = StatusLabels()

    @property
    def final(self) -> bool:
        return self.status in ("done", "failed", "cancelled")


@dataclass(frozen=True, slots=True, kw_only=True)
class RateBudget:
    """A token bucket the platform imposes on one kind of call; `channels.pacing` enforces it.

    `scope` says what the bucket is shared by: one reply, one chat, one workspace or the whole
    bot. `method` names the calls it counts: "update" is the service's reply updates (and the
    final), anything else a platform call the channel paces itself ("chat.update", "draft").
    `chat_type` limits the bucket to DMs or groups (None: both). `serial`: calls run one at a
    time and the interval counts from the end of the previous call.
    """

    scope: Scope
    per_second: float
    burst: int = 1
    method: str = "update"
    chat_type: ChatType | None = None
    serial: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Capabilities:
    """What the service needs to know of a channel; it never asks which platform it is.

    Every field is read by the service (how a channel streams, edits or renders is its own
    business, behind the reply verbs):
    `max_text_len`: the longest text one reply part may hold (the final is split to fit);
    `buttons`: buttons can be shown (else command answers go as plain text and a clarification
    lists its options in the text); `max_file_in`: the largest attachment the platform lets the
    bot download (the service applies the lower of it and `max_upload_mb`, and names that limit
    when it refuses a file); `edit_budget`: every rate budget of the platform, each declared
    once (see RateBudget).
    """

    max_text_len: int = 4000
    buttons: bool = False
    max_file_in: int = 20 * 1024 * 1024
    edit_budget: tuple[RateBudget, ...] = ()

    def budgets_for(self, chat: ChatRef, method: str = "update") -> tuple[RateBudget, ...]:
        return tuple(
            b
            for b in self.edit_budget
            if b.method == method and b.chat_type in (None, chat.chat_type)
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class MenuCommand:
    """One entry of the service's command registry, as a channel's native menu shows it
    (Telegram's command list, Slack's bare command words). `skill`: the command runs a skill
    (`/name TASK`), answered by the agent; otherwise a built-in command."""

    name: str
    summary: str
    usage: str = ""
    skill: bool = False
