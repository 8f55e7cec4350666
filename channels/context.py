"""What the service gives each channel (`ChannelContext`) and what becomes of a message a
channel hands over (`PublishResult`); re-exported by channels/base.py."""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol, TypedDict, Unpack

from channels.backoff import RetryState
from channels.choices import ChoiceStore
from channels.types import InboundMessage, MenuCommand


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

    @property
    def done(self) -> bool:
        """The channel is done with the event (not `busy` or `closed`)."""
        return self not in (PublishResult.busy, PublishResult.closed)


Handler = Callable[..., Awaitable[Any]]


class Report(TypedDict, total=False):
    """What a channel reports about its connection (`ChannelContext.report`); None or left out:
    unchanged."""

    connected: bool | None
    error: str | None
    retry: RetryState | None


class ChannelContext(Protocol):
    """What the service gives each channel."""

    data_dir: Path
    bot_name: str

    @property
    def choice_expired(self) -> str:
        """The answer to a press on a button the service no longer knows (the text is the
        service's, in the channel's language: bot/texts)."""
        ...

    @property
    def choices(self) -> ChoiceStore:
        """Choices waiting for a press (buttons whose presses name only a card), kept by the
        service (channels/choices.py)."""
        ...

    async def publish(self, msg: InboundMessage) -> PublishResult:
        """Hand a message to the service. Returns once it is durably accepted (or not)."""
        ...

    def commands(self, language: str = "") -> tuple[MenuCommand, ...]:
        """The service's chat commands (built-ins, then enabled skills), for a native menu,
        described in `language` (a tag such as `zh`; "": the channel's own language)."""
        ...

    @property
    def languages(self) -> tuple[str, ...]:
        """The languages the service speaks besides the channel's own (tags: `en`, `zh`), for a
        native menu per language."""
        ...

    def add_route(self, method: str, path: str, handler: Handler) -> None:
        """Serve a webhook route on the service's HTTP server (aiohttp handler)."""
        ...

    def report(self, **state: Unpack[Report]) -> None:
        """Report connection state and errors for /health and the admin API; `retry` while a
        connection is failing (attempts, last error, next retry)."""
        ...
