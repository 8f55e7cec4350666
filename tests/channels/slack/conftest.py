"""Fixtures: a fake Slack in its own thread and a recording ChannelContext."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from bot.command_registry import CommandRegistry
from channels.base import InboundMessage, MenuCommand, PublishResult
from channels.slack.channel import SlackChannel
from channels.slack.config import SlackConfig
from tests.fakes.slack_server import APP_TOKEN, BOT_TOKEN, SIGNING_SECRET, FakeSlack


class RecordingContext:
    """A ChannelContext that records publishes and serves added routes on 127.0.0.1."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.bot_name = "Antler"
        self.published: list[InboundMessage] = []
        self.seen: set[str] = set()
        self.reports: list[dict[str, Any]] = []
        self.web = web.Application()
        self.runner: web.AppRunner | None = None
        self.url = ""
        self._arrived = asyncio.Event()

    async def publish(self, msg: InboundMessage) -> PublishResult:
        if msg.event_id in self.seen:
            return PublishResult.duplicate
        self.seen.add(msg.event_id)
        self.published.append(msg)
        self._arrived.set()
        return PublishResult.accepted

    def commands(self) -> tuple[MenuCommand, ...]:
        return CommandRegistry().menu()

    def add_route(self, method: str, path: str, handler: Any) -> None:
        self.web.router.add_route(method, path, handler)

    def report(self, *, connected: bool | None = None, error: str | None = None) -> None:
        self.reports.append({"connected": connected, "error": error})

    async def serve(self) -> None:
        self.runner = web.AppRunner(self.web, access_log=None)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"

    async def wait_published(self, n: int = 1, timeout: float = 5.0) -> list[InboundMessage]:
        async with asyncio.timeout(timeout):
            while len(self.published) < n:
                self._arrived.clear()
                await self._arrived.wait()
        return self.published


@pytest.fixture
def fake_slack() -> Iterator[FakeSlack]:
    fake = FakeSlack().start()
    yield fake
    fake.stop()


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
async def make_channel(
    fake_slack: FakeSlack, tmp_path: Path
) -> AsyncIterator[Any]:
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
        if ctx.runner is not None:
            await ctx.runner.cleanup()


@pytest.fixture
async def socket_channel(make_channel: Any) -> tuple[SlackChannel, RecordingContext]:
    channel, ctx = await make_channel()
    return channel, ctx
