"""Fixtures: the fake Bot API server, a recording ChannelContext, a channel factory."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from channels.telegram.channel import TelegramChannel
from channels.telegram.config import TelegramConfig
from tests.fakes.clock import VirtualClock
from tests.fakes.recording_context import RecordingContext
from tests.fakes.telegram_server import FakeTelegram


@pytest.fixture
def clock() -> VirtualClock:
    """Virtual time for the channel's pacer and the fake server's limit checks: Telegram's 1 s
    and 3 s intervals and retry-afters pass without waiting."""
    return VirtualClock()


@pytest.fixture
def fake(clock: VirtualClock) -> Iterator[FakeTelegram]:
    with FakeTelegram(clock=clock).start() as server:
        yield server


@pytest.fixture
def ctx(tmp_path: Path) -> RecordingContext:
    return RecordingContext(data_dir=tmp_path)


ChannelFactory = Callable[..., Any]


@pytest.fixture
async def make_channel(
    fake: FakeTelegram, ctx: RecordingContext, clock: VirtualClock
) -> AsyncIterator[ChannelFactory]:
    started: list[TelegramChannel] = []

    async def factory(**overrides: Any) -> TelegramChannel:
        settings: dict[str, Any] = fake.channel_config(**overrides)
        channel = TelegramChannel(TelegramConfig(**settings), ctx)
        channel.pacer.clock, channel.pacer.sleep = clock, clock.sleep
        await channel.start()
        started.append(channel)
        return channel

    yield factory
    for channel in started:
        await channel.stop()
