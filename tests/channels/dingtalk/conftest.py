"""DingTalk fixtures: the fake server in its own thread, a recording context, a started channel."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.command_registry import CommandRegistry
from channels.backoff import BackoffPolicy, RetryState
from channels.base import Handler, InboundMessage, MenuCommand, PublishResult
from channels.dingtalk.channel import DingTalkChannel
from channels.dingtalk.config import DingTalkConfig
from tests.fakes.dingtalk_server import FakeDingTalk


class RecordingContext:
    """A ChannelContext that records what the channel publishes and reports."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.bot_name = "Antler"
        self.published: list[InboundMessage] = []
        self.reports: list[dict[str, Any]] = []
        self.routes: list[tuple[str, str, Handler]] = []
        self._seen: set[str] = set()

    async def publish(self, msg: InboundMessage) -> PublishResult:
        if msg.event_id in self._seen:
            return PublishResult.duplicate
        self._seen.add(msg.event_id)
        self.published.append(msg)
        return PublishResult.accepted

    def commands(self) -> tuple[MenuCommand, ...]:
        return CommandRegistry().menu()

    def add_route(self, method: str, path: str, handler: Handler) -> None:
        self.routes.append((method, path, handler))

    def report(self, *, connected: bool | None = None, error: str | None = None,
               retry: RetryState | None = None) -> None:
        self.reports.append({"connected": connected, "error": error, "retry": retry})


@pytest.fixture
def fake_dingtalk() -> Iterator[FakeDingTalk]:
    fake = FakeDingTalk().start()
    yield fake
    fake.stop()


def dingtalk_config(fake: FakeDingTalk, **overrides: Any) -> DingTalkConfig:
    values: dict[str, Any] = {
        "enabled": True,
        "client_id": f"ding-{uuid.uuid4().hex[:8]}",
        "client_secret": "secret",
        "robot_code": "robot-code",
        "api_base": fake.base,
        "stream_interval": 0.1,
    }
    values.update(overrides)
    return DingTalkConfig(**values)


FAST = BackoffPolicy(base=0.02, cap=0.05)
"""Reconnect delays for tests that drop the socket on real time."""

MakeChannel = Callable[..., Awaitable[tuple[DingTalkChannel, RecordingContext]]]


@pytest.fixture
async def make_channel(fake_dingtalk: FakeDingTalk, tmp_path: Path) -> AsyncIterator[MakeChannel]:
    """`await make_channel(**config)` -> a started channel and its context; stopped at the end."""
    started: list[DingTalkChannel] = []

    async def make(
        backoff: BackoffPolicy | None = None, **overrides: Any
    ) -> tuple[DingTalkChannel, RecordingContext]:
        ctx = RecordingContext(tmp_path)
        channel = DingTalkChannel(dingtalk_config(fake_dingtalk, **overrides), ctx,
                                  backoff=backoff or FAST)
        await channel.start()
        started.append(channel)
        return channel, ctx

    yield make
    for channel in started:
        await channel.stop()
