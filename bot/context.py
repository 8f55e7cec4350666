"""What each channel gets from the service: publish, webhook routes, state reporting, the store
of choices waiting for a press."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, Unpack

from bot import i18n, texts
from bot.access import AccessGate, Verdict
from bot.bus import MessageBus
from bot.webhooks import DynamicRoutes
from channels.backoff import RetryState
from channels.base import Handler, InboundMessage, MenuCommand, PublishResult, Report
from channels.choices import ChoiceStore, MemoryChoices
from channels.text import clean_input

Status = Literal["stopped", "connecting", "connected", "retrying"]


@dataclass
class ChannelState:
    """What /health and the admin API show about a channel."""

    enabled: bool = True
    running: bool = False
    connected: bool = False
    status: Status = "stopped"
    """stopped, connecting, connected, or retrying (after a failed start or connection)."""
    attempts: int = 0
    """Failed attempts in the current outage (start or connection)."""
    next_retry_at: float | None = None
    connected_since: float | None = None
    last_event_at: float | None = None
    last_error: str | None = None
    connection: str = ""
    """With several workers, for a bot allowing one receiving connection: `held` (this worker
    receives) or `standby`."""
    inbound: int = 0
    duplicates: int = 0
    reconnects: int = 0
    counters: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "counters"} | self.counters

    def retrying(self, retry: RetryState) -> None:
        self.status, self.attempts = "retrying", retry.attempts
        self.next_retry_at, self.last_error = retry.next_retry_at, retry.last_error

    def connection_is(self, role: str) -> None:
        self.connection = role

    def settled(self, status: Status) -> None:
        """Out of an outage: `status` is connecting, connected or stopped."""
        self.status, self.attempts, self.next_retry_at = status, 0, None


class ServiceContext:
    """The `ChannelContext` the service hands to one channel."""

    def __init__(
        self,
        name: str,
        *,
        bus: MessageBus,
        routes: DynamicRoutes,
        data_dir: Path,
        bot_name: str,
        gate: AccessGate | None = None,
        menu: Callable[[], tuple[MenuCommand, ...]] = tuple,
        choices: ChoiceStore | None = None,
    ) -> None:
        self.name = name
        self.choices: ChoiceStore = choices if choices is not None else MemoryChoices()
        self.bus = bus
        self.gate = gate
        self.routes = routes
        self.data_dir = data_dir / "channels" / name
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.bot_name = bot_name
        self._menu = menu
        self.language: Callable[[str], str] = lambda name: i18n.SOURCE
        """A channel's own language (its `locale:`, read live); the App sets it."""
        self.state = ChannelState()

    @property
    def choice_expired(self) -> str:
        with i18n.use(self.language(self.name)):
            return texts.CHOICE_EXPIRED

    def commands(self, language: str = "") -> tuple[MenuCommand, ...]:
        """The command registry's entries, for the channel's native menu, in `language`."""
        with i18n.use(i18n.supported(language) or self.language(self.name)):
            return self._menu()

    @property
    def languages(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(i18n.primary(loc) for loc in i18n.available()))

    async def publish(self, msg: InboundMessage) -> PublishResult:
        self.state.last_event_at = time.time()
        if msg.chat.channel != self.name:  # a platform's named bot (channels/bots.py): its
            msg = replace(msg, chat=replace(msg.chat, channel=self.name))  # own conversations
        verdict = await self.gate.screen(msg) if self.gate is not None else Verdict.admit
        if verdict is not Verdict.admit:
            return PublishResult.refused if verdict is Verdict.refuse else PublishResult.ignored
        result = await self.bus.publish(_cleaned(msg))
        if result is PublishResult.accepted:
            self.state.inbound += 1
        elif result is PublishResult.duplicate:
            self.state.duplicates += 1
        return result

    def add_route(self, method: str, path: str, handler: Handler) -> None:
        self.routes.add(method, path, handler)

    def report(self, **state: Unpack[Report]) -> None:
        connected, error, retry = state.get("connected"), state.get("error"), state.get("retry")
        if connected is not None:
            if connected and not self.state.connected:
                if self.state.connected_since is not None:
                    self.state.reconnects += 1
                    self.bus.metrics.reconnects.labels(channel=self.name).inc()
                self.state.connected_since = time.time()
            self.state.connected = connected
        if error is not None:
            self.state.last_error = error
        if retry is not None:
            self.state.retrying(retry)
        elif connected is not None:
            self.state.settled("connected" if connected else "connecting")


class RetiredContext:
    """The context of a channel instance that a fresh one replaced (bot/channel_restarts.py).
    It still sends the replies it was writing, but no longer speaks for the channel: its
    reports and routes are dropped (they would overwrite the new instance's)."""

    def __init__(self, ctx: ServiceContext) -> None:
        self._ctx = ctx
        self.data_dir = ctx.data_dir
        self.bot_name = ctx.bot_name
        self.choices = ctx.choices  # the replies it finishes may still ask a question
        self.choice_expired = ctx.choice_expired
        self.languages = ctx.languages

    async def publish(self, msg: InboundMessage) -> PublishResult:
        return await self._ctx.publish(msg)  # an event already on its way when it stopped

    def commands(self, language: str = "") -> tuple[MenuCommand, ...]:
        return self._ctx.commands(language)

    def add_route(self, method: str, path: str, handler: Handler) -> None:
        return

    def report(self, **state: Unpack[Report]) -> None:
        return


def _cleaned(msg: InboundMessage) -> InboundMessage:
    """Lone surrogates and NULs never reach the journal or the model."""
    text, quoted = clean_input(msg.text), msg.quoted_text and clean_input(msg.quoted_text)
    if text == msg.text and quoted == msg.quoted_text:
        return msg
    return replace(msg, text=text, quoted_text=quoted)
