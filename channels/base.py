"""The contract between the service and every messenger: value types, capabilities, Channel.

A channel turns platform events into `InboundMessage`s (handed to `ChannelContext.publish`) and
renders `ReplyDoc`s back onto the platform. It never imports `bot` or `agent`.
"""

from __future__ import annotations

import abc
import enum
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, field_validator

from channels.backoff import RetryState

if TYPE_CHECKING:
    from channels.pacing import Pacer

ChatType = Literal["dm", "group"]
Scope = Literal["reply", "chat", "workspace", "bot"]


# --------------------------------------------------------------------------- value types


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
    """The sender. `id` is the platform's user id; `name` is for display only."""

    id: str
    name: str = ""
    is_bot: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Attachment:
    """A file that came with a message. `ref` is whatever the channel needs to fetch it."""

    name: str
    ref: str
    kind: Literal["image", "file", "audio", "video"] = "file"
    mime_type: str = ""
    size: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class InboundMessage:
    """One user message (or button press) as the platform delivered it.

    `event_id` is the platform's own id (dedupe keys on it). `raw` holds platform leftovers that
    only the originating channel reads back (e.g. a reply token). `mentions_bot` and
    `replies_to_bot` (a reply to the bot, or a message in a thread the bot answers in) are what
    the service's access gate reads to decide whether a group message is meant for the bot.
    `unsupported` names what was sent when Antler cannot read it ("a sticker"): the service
    answers with what it can read instead of running the agent.
    only the originating channel reads back (e.g. a reply token). `in_main_chat`: sent in the main
    chat of a chat whose top-level messages start their own threads (Slack channels, Feishu groups
    in per-topic mode); commands there act on the chat (`chat.with_topic(None)`), not on the
    thread the message itself starts (docs/channels/README.md, "Scope").
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


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplyDoc:
    """The whole visible state of one reply. Every update sends the whole document."""

    text: str = ""
    progress: tuple[ToolStep, ...] = ()
    status: ReplyStatus = "working"
    buttons: tuple[Button, ...] = ()
    note: str = ""

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
    """What a channel can do; the service reads this and never asks which platform it is.

    `edit_budget` holds every rate budget of the platform, each declared once (see RateBudget).
    """

    max_text_len: int = 4000
    can_edit: bool = True
    native_stream: bool = False
    cards: bool = False
    buttons: bool = False
    files_in: bool = False
    files_out: bool = False
    threads: bool = False
    markdown: str = "commonmark"
    max_file_in: int = 20 * 1024 * 1024
    edit_budget: tuple[RateBudget, ...] = ()

    def budgets_for(self, chat: ChatRef, method: str = "update") -> tuple[RateBudget, ...]:
        return tuple(
            b for b in self.edit_budget
            if b.method == method and b.chat_type in (None, chat.chat_type)
        )


# --------------------------------------------------------------------------- errors


class ChannelError(Exception):
    """A platform call failed. `retryable` says whether the same call may succeed later."""

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable


class RateLimited(ChannelError):
    """The platform said slow down. Wait `retry_after` seconds; `scope` is what is blocked
    (for `method` only, when the platform limits that method alone; "" blocks every call)."""

    def __init__(self, retry_after: float, *, scope: Scope = "chat", method: str = "") -> None:
        super().__init__(f"rate limited for {retry_after:.1f}s", retryable=True)
        self.retry_after = float(retry_after)
        self.scope = scope
        self.method = method


class DeliveryRefused(ChannelError):
    """A definitive no: the chat is gone, the bot was blocked or removed, or it may not post
    there. Retrying cannot help; `reason` is a short plain-words label for the journal."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"delivery refused: {reason}" + (f" ({detail})" if detail else ""))
        self.reason = reason


class FileTooLarge(ChannelError):
    def __init__(self, name: str, size: int, limit: int) -> None:
        mb = limit / (1024 * 1024)
        super().__init__(f"{name} is larger than the {mb:g} MB limit")
        self.name, self.size, self.limit = name, size, limit


# --------------------------------------------------------------------------- config


class BusyPolicy(enum.StrEnum):
    queue = "queue"
    interrupt = "interrupt"


GroupTrigger = Literal["mention", "all"]


class ChannelConfig(BaseModel):
    """Settings every channel shares. Platform configs subclass this in `<platform>/config.py`.

    Allowlists and the group trigger are read by the service's one access gate (bot/access.py);
    ids may be written as numbers or strings (`allowed_users: [1001]`).
    """

    model_config = ConfigDict(extra="forbid")

    enabled: bool = False
    allowed_users: list[str] = Field(default_factory=list)
    allowed_chats: list[str] = Field(default_factory=list)
    busy_policy: BusyPolicy | None = None
    group_trigger: GroupTrigger = "mention"
    group_trigger_chats: dict[str, GroupTrigger] = Field(default_factory=dict)

    @field_validator("allowed_users", "allowed_chats", mode="before")
    @classmethod
    def _ids_as_text(cls, value: object) -> object:
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            value = [value]  # a single id written without brackets
        if isinstance(value, list):
            return [_id_text(v) for v in value]
        return value

    @field_validator("group_trigger_chats", mode="before")
    @classmethod
    def _chat_keys_as_text(cls, value: object) -> object:
        if isinstance(value, dict):
            return {_id_text(k): v for k, v in value.items()}
        return value


def _id_text(value: object) -> object:
    """Platform ids are text; YAML reads `1001` and `-100123` as numbers."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value


# --------------------------------------------------------------------------- context


class PublishResult(enum.StrEnum):
    """What became of a published message. `accepted` means it is durably recorded.

    `refused`: the sender or chat is not allowed (the service told them); `ignored`: a group
    message not addressed to the bot. Either way the channel is done with the event.
    """

    accepted = "accepted"
    duplicate = "duplicate"
    busy = "busy"
    refused = "refused"
    ignored = "ignored"
    closed = "closed"


Handler = Callable[..., Awaitable[Any]]


class ChannelContext(Protocol):
    """What the service gives each channel."""

    data_dir: Path
    bot_name: str

    async def publish(self, msg: InboundMessage) -> PublishResult:
        """Hand a message to the service. Returns once it is durably accepted (or not)."""
        ...

    def add_route(self, method: str, path: str, handler: Handler) -> None:
        """Serve a webhook route on the service's HTTP server (aiohttp handler)."""
        ...

    def report(self, *, connected: bool | None = None, error: str | None = None,
               retry: RetryState | None = None) -> None:
        """Report connection state and errors for /health and the admin API; `retry` while a
        connection is failing (attempts, last error, next retry)."""
        ...


# --------------------------------------------------------------------------- the channel


ReplyHandle = Any
"""Whatever a channel needs to find a reply again (message id, card id, stream ts ...)."""


class Channel(abc.ABC):
    """One messenger. Subclasses live in `channels/<platform>/channel.py`."""

    name: str = "channel"
    capabilities: Capabilities = Capabilities()
    pacer: Pacer

    def __init__(self, config: ChannelConfig, ctx: ChannelContext) -> None:
        self.config = config
        self.ctx = ctx
        self.log = logging.getLogger(f"channels.{self.name}")
        from channels.pacing import Pacer  # pacing builds on the types above

        self.pacer = Pacer()  # every budget and rate-limit block of this channel
        self.receiving = True
        """False while another process holds this bot's one receiving connection (see
        `exclusive_connection`): `start` then connects for sending only."""
        self.may_receive: Callable[[], bool] = lambda: True
        """Checked before each receive call on an exclusive connection: False once this
        process's hold on the connection has lapsed (the fencing check)."""

    @abc.abstractmethod
    async def start(self) -> None:
        """Connect and begin delivering messages to `ctx.publish`. Return once connected."""

    def exclusive_connection(self) -> str | None:
        """The bot account's id when the platform allows one receiving connection per bot at a
        time (Telegram's getUpdates); None when every process may receive (webhooks, and
        connections among which the platform spreads the events itself)."""
        return None

    async def start_receiving(self) -> None:
        """Begin receiving on an exclusive connection (started with `receiving` False)."""
        raise NotImplementedError(f"{self.name} has no exclusive connection")

    async def stop_receiving(self) -> None:
        """Stop receiving on an exclusive connection; keep sending."""
        raise NotImplementedError(f"{self.name} has no exclusive connection")

    @abc.abstractmethod
    async def stop(self) -> None:
        """Disconnect; leave no task, thread or connection behind."""

    @abc.abstractmethod
    async def open_reply(self, msg: InboundMessage, doc: ReplyDoc) -> ReplyHandle:
        """Show the beginning of a reply to `msg` (placeholder, typing, draft, card)."""

    @abc.abstractmethod
    async def update_reply(self, handle: ReplyHandle, doc: ReplyDoc) -> None:
        """Replace the reply's visible content with `doc` (not final)."""

    @abc.abstractmethod
    async def finish_reply(self, handle: ReplyHandle, doc: ReplyDoc) -> None:
        """Deliver the final state of the reply. `doc.text` fits `max_text_len`."""

    async def send_continuation(self, handle: ReplyHandle, doc: ReplyDoc) -> None:
        """Send one more part of a long final answer after `finish_reply`."""
        await self.send_text(handle_chat(handle), doc.text, reply_to=None)

    @abc.abstractmethod
    async def send_text(self, chat: ChatRef, text: str, *, reply_to: str | None = None) -> None:
        """Send a plain one-off message (command answers, notices)."""

    async def send_file(self, handle: ReplyHandle, path: Path) -> None:
        """Send a file the agent produced, after the reply's text."""
        raise ChannelError(f"{self.name} cannot send files")

    async def fetch_file(self, msg: InboundMessage, att: Attachment, dest_dir: Path, *,
                         limit: int | None = None) -> Path:
        """Download an attachment of `msg` into `dest_dir`.

        The limit (the service's `max_upload_mb`, or the platform's own if lower) is enforced
        while downloading, whether or not the event declared a size: over it, the partial file
        is removed and FileTooLarge raised (the service tells the user the limit).
        """
        raise ChannelError(f"{self.name} cannot receive files")

    async def mark_queued(self, msg: InboundMessage,
                          doc: ReplyDoc | None = None) -> ReplyHandle | None:
        """Show that `msg` waits (behind a running reply, or for a free slot: `doc` then says
        so). Default: open a 'queued' reply."""
        return await self.open_reply(msg, doc or ReplyDoc(status="queued"))

    # ------------------------------------------------------------------ surviving a restart

    def handle_state(self, handle: ReplyHandle) -> dict[str, Any] | None:
        """The ids a new process needs to find this reply again (JSON-able), or None.

        The service writes it to the delivery journal after every call that may change it, so a
        restart continues in the message the user already sees instead of posting another.
        """
        return None

    def restore_handle(self, msg: InboundMessage, state: Mapping[str, Any]) -> ReplyHandle | None:
        """Rebuild the handle `handle_state` described, in a new process; None: start afresh."""
        return None

    def finish_is_replayable(self, handle: ReplyHandle) -> bool:
        """True when `finish_reply` on `handle` rewrites what is already shown (an edit), so
        repeating an interrupted final cannot show the answer twice. Default False: a final
        whose send was interrupted is assumed delivered (at most once)."""
        return False


def effective_limit(own: int, limit: int | None) -> int:
    """The lower of a channel's own download limit and the service's."""
    return own if limit is None else min(own, limit)


def handle_chat(handle: ReplyHandle) -> ChatRef:
    """Channels whose handles carry `.chat` get the default `send_continuation` for free."""
    chat = getattr(handle, "chat", None)
    if not isinstance(chat, ChatRef):
        raise TypeError("reply handle has no chat; override send_continuation")
    return chat
