"""Fixtures: the fake Bot API server, a recording ChannelContext, a channel factory."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from bot.command_registry import CommandRegistry
from channels.backoff import RetryState
from channels.base import InboundMessage, MenuCommand, PublishResult
from channels.telegram.channel import TelegramChannel
from channels.telegram.config import TelegramConfig
from tests.fakes.telegram_server import TOKEN, FakeTelegram


@dataclass
class RecordingContext:
    """A ChannelContext that records what the channel publishes."""

    data_dir: Path
    bot_name: str = "Antler"
    published: list[InboundMessage] = field(default_factory=list)
    routes: dict[tuple[str, str], Any] = field(default_factory=dict)
    reports: list[dict[str, Any]] = field(default_factory=list)
    result: PublishResult = PublishResult.accepted
    seen: set[str] = field(default_factory=set)
    menu: tuple[MenuCommand, ...] = field(default_factory=lambda: CommandRegistry().menu())

    async def publish(self, msg: InboundMessage) -> PublishResult:
        if self.result is not PublishResult.accepted:
            return self.result
        if msg.event_id in self.seen:
            return PublishResult.duplicate
        self.seen.add(msg.event_id)
        self.published.append(msg)
        return self.result

    def commands(self) -> tuple[MenuCommand, ...]:
        return self.menu

    def add_route(self, method: str, path: str, handler: Any) -> None:
        self.routes[(method, path)] = handler

    def report(self, *, connected: bool | None = None, error: str | None = None,
               retry: RetryState | None = None) -> None:
        self.reports.append({"connected": connected, "error": error, "retry": retry})


@pytest.fixture
def fake() -> Iterator[FakeTelegram]:
    server = FakeTelegram().start()
    yield server
    server.stop()


@pytest.fixture
def ctx(tmp_path: Path) -> RecordingContext:
    return RecordingContext(data_dir=tmp_path)


ChannelFactory = Callable[..., Any]


@pytest.fixture
async def make_channel(fake: FakeTelegram, ctx: RecordingContext) -> AsyncIterator[ChannelFactory]:
    started: list[TelegramChannel] = []

    async def factory(**overrides: Any) -> TelegramChannel:
        settings: dict[str, Any] = {
            "enabled": True,
            "bot_token": TOKEN,
            "api_base": fake.api_base,
            "poll_timeout": 1,
            **overrides,
        }
        channel = TelegramChannel(TelegramConfig(**settings), ctx)
        await channel.start()
        started.append(channel)
        return channel

    yield factory
    for channel in started:
        await channel.stop()
