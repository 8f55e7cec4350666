"""Fixtures: a fake Discord (REST + Gateway) in its own thread, the channel on it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from channels.discord.channel import DiscordChannel
from channels.discord.config import DiscordConfig
from tests.fakes.discord_server import TOKEN, FakeDiscord
from tests.fakes.recording_context import RecordingContext
from tests.fakes.threaded import fake_fixture

fake_discord = fake_fixture(FakeDiscord, "fake_discord")


def discord_config(fake: FakeDiscord, **overrides: Any) -> dict[str, Any]:
    return {"enabled": True, "bot_token": TOKEN, "api_base": fake.api_base, **overrides}


@pytest.fixture
async def make_channel(fake_discord: FakeDiscord, tmp_path: Path) -> AsyncIterator[Any]:
    started: list[DiscordChannel] = []

    async def make(**overrides: Any) -> tuple[DiscordChannel, RecordingContext]:
        ctx = RecordingContext(tmp_path / "data")
        channel = DiscordChannel(DiscordConfig(**discord_config(fake_discord, **overrides)), ctx)
        started.append(channel)
        await channel.start()
        return channel, ctx

    yield make
    for channel in started:
        await channel.stop()
