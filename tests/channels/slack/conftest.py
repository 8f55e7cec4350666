"""Fixtures: a fake Slack in its own thread and a recording ChannelContext."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from channels.slack.channel import SlackChannel
from channels.slack.config import SlackConfig
from tests.fakes.recording_context import RecordingContext
from tests.fakes.slack_server import APP_TOKEN, BOT_TOKEN, SIGNING_SECRET, FakeSlack
from tests.fakes.threaded import fake_fixture

fake_slack = fake_fixture(FakeSlack, "fake_slack")


def slack_config(fake: FakeSlack, **overrides: Any) -> SlackConfig:
    values: dict[str, Any] = {
        "enabled": True,
        "bot_token": BOT_TOKEN,
        "app_token": APP_TOKEN,
        "signing_secret": SIGNING_SECRET,
        "api_base": fake.api_base,
    }
    values.update(overrides)
    return SlackConfig(**values)


@pytest.fixture
async def make_channel(fake_slack: FakeSlack, tmp_path: Path) -> AsyncIterator[Any]:
    started: list[tuple[SlackChannel, RecordingContext]] = []

    async def make(**overrides: Any) -> tuple[SlackChannel, RecordingContext]:
        ctx = RecordingContext(tmp_path / "data")
        channel = SlackChannel(slack_config(fake_slack, **overrides), ctx)
        await channel.start()
        if channel.config.mode == "http":
            await ctx.serve()
        started.append((channel, ctx))
        return channel, ctx

    yield make
    for channel, ctx in started:
        await channel.stop()
        await ctx.close()


@pytest.fixture
async def socket_channel(make_channel: Any) -> tuple[SlackChannel, RecordingContext]:
    channel, ctx = await make_channel()
    return channel, ctx
