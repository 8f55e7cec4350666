"""Fixtures: the fake Bot API server, a recording ChannelContext, a channel factory."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from channels.telegram.channel import TelegramChannel
from channels.telegram.config import TelegramConfig
from tests.fakes.recording_context import RecordingContext
from tests.fakes.telegram_server import TOKEN, FakeTelegram


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
