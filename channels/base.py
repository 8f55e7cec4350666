"""The contract between the service and every messenger: the Channel, its context and config.

A channel turns platform events into `InboundMessage`s (handed to `ChannelContext.publish`) and
renders `ReplyDoc`s back onto the platform. It never imports `bot` or `agent`. The value types
live in `channels/types.py` and the errors in `channels/errors.py`; both are re-exported here.
"""

from __future__ import annotations

import abc
import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from channels.backoff import BackoffPolicy
from channels.bots import named_bot_configs
from channels.context import ChannelContext, Handler, PublishResult, Report
from channels.errors import ChannelError, DeliveryRefused, FileTooLarge, RateLimited
from channels.types import (
    Attachment,
    BusyPolicy,
    Button,
    Capabilities,
    ChatRef,
    ChatType,
    Edit,
    EditPolicy,
    InboundMessage,
    MenuCommand,
    RateBudget,
    ReplyDoc,
    ReplyStatus,
    Scope,
    StatusLabels,
    ToolStep,
    UserRef,
)

if TYPE_CHECKING:
    from channels.pacing import Pacer
    from channels.relay import SendRelay

__all__ = [
    "Attachment",
    "BusyPolicy",
    "Button",
    "Capabilities",
    "Channel",
    "ChannelConfig",
    "ChannelContext",
    "ChannelError",
    "ChatRef",
    "ChatType",
    "DeliveryRefused",
    "Edit",
    "EditPolicy",
    "FileTooLarge",
    "GroupTrigger",
    "Handler",
    "InboundMessage",
    "MenuCommand",
    "PublishResult",
    "RateBudget",
    "RateLimited",
    "ReplyDoc",
    "ReplyHandle",
    "ReplyStatus",
    "Report",
    "Scope",
    "StatusLabels",
    "ToolStep",
    "UserRef",
    "effective_limit",
    "handle_chat",
]

# --------------------------------------------------------------------------- config


GroupTrigger = Literal["mention", "all"]
_LIVE: dict[str, Any] = {"reload": "live"}


class ChannelConfig(BaseModel):
    """Settings every channel shares. Platform configs subclass this in `<platform>/config.py`.

    Allowlists and the group trigger are read by the service's one access gate (bot/access/gate.py);
    ids may be written as numbers or strings (`allowed_users: [1001]`).
    """

    model_config = ConfigDict(extra="forbid")

    # The access keys are read per message (the gate, the dispatcher): a change applies live.
    # Every other key of a channel's section restarts that channel (bot/config/boundary.py).
    enabled: bool = False
    allowed_users: list[str] = Field(default_factory=list, json_schema_extra=_LIVE)
    allowed_chats: list[str] = Field(default_factory=list, json_schema_extra=_LIVE)
    busy_policy: BusyPolicy | None = Field(default=None, json_schema_extra=_LIVE)
    group_trigger: GroupTrigger = Field(default="mention", json_schema_extra=_LIVE)
    edits: EditPolicy = Field(default=EditPolicy.reanswer, json_schema_extra=_LIVE)
    edit_window_minutes: float = Field(default=10.0, ge=0, le=7 * 24 * 60, json_schema_extra=_LIVE)
    # a reaction on the person's message while the agent works and when it is done (Telegram,
    # Slack, Feishu; docs/channels/README.md, "Signs of life")
    status_reactions: bool = True
    group_trigger_chats: dict[str, GroupTrigger] = Field(
        default_factory=dict, json_schema_extra=_LIVE
    )
    # the agent profile this bot talks as (`agents:`; None: lead_agent), read per message
    agent: str | None = Field(default=None, json_schema_extra=_LIVE)
    # more bots of this platform (channels/bots.py, which reads the four ClassVars below: the
    # keys each bot sets itself, never inherits, gets as `<section's>/<bot>`, keeps as is)
    bots: list[dict[str, Any]] = Field(default_factory=list)
    named_bots: ClassVar[bool] = True  # `bots:` taken (not on the console)
    credentials: ClassVar[tuple[str, ...]] = ()
    own_keys: ClassVar[tuple[str, ...]] = ()
    route_keys: ClassVar[tuple[str, ...]] = ()
    shared_keys: ClassVar[tuple[str, ...]] = ()
    _bots: dict[str, ChannelConfig] = PrivateAttr(default_factory=dict)

    @model_validator(mode="after")
    def _named_bots(self) -> ChannelConfig:
        self._bots = named_bot_configs(self)
        return self

    def bot_configs(self) -> dict[str, ChannelConfig]:
        """The section's named bots (`bots:`), each the section with its own keys on top."""
        return dict(self._bots)

    locale: str | None = Field(default=None, json_schema_extra=_LIVE)
    """The language the service speaks in this channel to people who chose none and whose
    platform gives no hint (`zh-CN`, `en`); None: `channels.locale` (bot/language.py)."""

    @property
    def role_allowlist(self) -> list[str]:
        """Roles whose members may talk to the bot besides `allowed_users` (none by default;
        a platform with roles overrides this)."""
        return []

    @property
    def workspace_allowlist(self) -> list[str]:
        """Workspaces (Discord guilds) the bot answers in; empty: any (platforms override)."""
        return []

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


# --------------------------------------------------------------------------- the channel


ReplyHandle = Any
"""Whatever a channel needs to find a reply again (message id, card id, stream ts ...)."""


class Channel(abc.ABC):
    """One messenger. Subclasses live in `channels/<platform>/channel.py`."""

    name: str = "channel"
    capabilities: Capabilities = Capabilities()
    pacer: Pacer

    def __init__(
        self, config: ChannelConfig, ctx: ChannelContext, backoff: BackoffPolicy | None = None
    ) -> None:
        self.config = config
        self.ctx = ctx
        self.backoff = backoff  # how a failing connection is retried (None: the default)
        named = getattr(ctx, "name", "")
        if named.startswith(f"{self.name}."):  # one of the platform's bots (channels/bots.py)
            self.name = named
        self.log = logging.getLogger(f"channels.{self.name}")
        from channels.pacing import Pacer  # pacing builds on the types above

        self.pacer = Pacer()  # every budget and rate-limit block of this channel
        self.receiving = True
        """False while another process holds this bot's one receiving connection (see
        `exclusive_connection`): `start` then connects for sending only."""
        self.may_receive: Callable[[], bool] = lambda: True
        """Checked before each receive call on an exclusive connection, and before an event
        pushed on it is acknowledged: False once this process's hold on the connection has
        lapsed (the fencing check; an unacknowledged event is delivered again elsewhere)."""
        self.relay: SendRelay | None = None
        """Set by the cluster for a channel that can send only on its exclusive connection
        (`channels.relay`): a worker without the connection sends through its holder."""
        self.setup()

    def setup(self) -> None:  # noqa: B027 (a platform's own set-up; none by default)
        """The platform's own parts (capabilities, SDK client, senders, inbound), made after the
        shared set-up above (`config`, `ctx`, `backoff`, `name`: a named bot's, `log`, `pacer`)."""

    @abc.abstractmethod
    async def start(self) -> None:
        """Connect and begin delivering messages to `ctx.publish`. Return once connected."""

    def exclusive_connection(self) -> str | None:
        """The bot account's id when the channel receives on a long connection (Telegram's
        getUpdates, Slack Socket Mode, Feishu's long connection, DingTalk's stream): with several
        processes only one of them holds it. None when every process may receive (webhooks)."""
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

    async def fetch_file(
        self, msg: InboundMessage, att: Attachment, dest_dir: Path, *, limit: int | None = None
    ) -> Path:
        """Download an attachment of `msg` into `dest_dir`.

        The limit (the service's `max_upload_mb`, or the platform's own if lower) is enforced
        while downloading, whether or not the event declared a size: over it, the partial file
        is removed and FileTooLarge raised (the service tells the user the limit).
        """
        raise ChannelError(f"{self.name} cannot receive files")

    signs_at_acceptance: ClassVar[bool] = False
    """`sign_of_life` shows something (the first sign comes from it, not from the reply)."""

    async def sign_of_life(self, msg: InboundMessage) -> bool:
        """`msg` was just accepted (never for a redelivery): show at once that it was heard,
        before it waits for its turn, within the platform's limits. True when shown."""
        return False

    async def materialize_reply(self, handle: ReplyHandle, doc: ReplyDoc) -> None:
        """Make sure the reply exists as a message in the chat now, showing `doc`, so whatever
        is sent next (a queued notice) shows below it. Streaming continues by editing that
        message. Default: nothing, the reply's message was created when it opened."""
        return

    async def mark_queued(
        self, msg: InboundMessage, doc: ReplyDoc | None = None
    ) -> ReplyHandle | None:
        """Show that `msg` waits (behind a running reply, or for a free slot: `doc` then says
        so). Default: open a 'queued' reply."""
        return await self.open_reply(msg, doc or ReplyDoc(status="queued"))

    # ------------------------------------------------------------------ surviving a restart

    def handle_state(self, handle: ReplyHandle) -> dict[str, Any] | None:
        """The ids a new process needs to find this reply again (JSON-able), or None.

        The service writes it to the delivery journal after every call that may change it, so a
        restart continues in the message the user already sees instead of posting another.
        A reply whose final went on in continuation messages, the last with buttons (an
        approval card alone), adds `last`: that message's state, which `restore_handle` turns
        into a reply of its own (a decision updates it there).
        """
        return None

    def restore_handle(self, msg: InboundMessage, state: Mapping[str, Any]) -> ReplyHandle | None:
        """Rebuild the handle `handle_state` described, in a new process; None: start afresh."""
        return None

    def reopen_reply(self, msg: InboundMessage, state: Mapping[str, Any]) -> ReplyHandle | None:
        """A finished reply, rebuilt from its `handle_state`, that a new answer rewrites in place
        (the answer to an edited message, `msg`). None (the default): it cannot be rewritten;
        the answer goes out as a new reply."""
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
