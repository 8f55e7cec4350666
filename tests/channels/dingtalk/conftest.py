"""DingTalk fixtures: the fake server in its own thread, a recording context, a started channel."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from channels.backoff import BackoffPolicy
from channels.dingtalk.channel import DingTalkChannel
from channels.dingtalk.config import DingTalkConfig
from tests.fakes.dingtalk_server import FakeDingTalk
from tests.fakes.recording_context import RecordingContext


@pytest.fixture
def fake_dingtalk() -> Iterator[FakeDingTalk]:
    with FakeDingTalk().start() as fake:
        yield fake


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
        channel = DingTalkChannel(
            dingtalk_config(fake_dingtalk, **overrides), ctx, backoff=backoff or FAST
        )
        await channel.start()
        started.append(channel)
        return channel, ctx

    yield make
    for channel in started:
        await channel.stop()
