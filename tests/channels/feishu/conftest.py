"""Fixtures: a fake Feishu in its own thread, a recording ChannelContext, channel factory."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from channels.backoff import BackoffPolicy
from channels.feishu.config import FeishuConfig
from tests.fakes.feishu_server import FakeFeishu
from tests.fakes.recording_context import RecordingContext
from tests.fakes.threaded import fake_fixture

if TYPE_CHECKING:  # lark-oapi (11,000 modules) loads when a test makes a channel, not at collection
    from channels.feishu.channel import FeishuChannel


fake = fake_fixture(FakeFeishu, "fake")


@pytest.fixture
def ctx(tmp_path: Path) -> RecordingContext:
    return RecordingContext(data_dir=tmp_path)


def feishu_config(fake: FakeFeishu, **overrides: Any) -> FeishuConfig:
    """A config pointing at `fake`, with a unique app_id (lark's token cache is per app_id)."""
    values: dict[str, Any] = {
        "enabled": True,
        "app_id": f"cli_{uuid.uuid4().hex[:12]}",
        "app_secret": "sec",
        "domain": fake.base,
    }
    return FeishuConfig(**(values | overrides))


@pytest.fixture
async def make_channel(
    fake: FakeFeishu, ctx: RecordingContext
) -> AsyncIterator[Callable[..., Any]]:
    from channels.feishu.channel import FeishuChannel

    channels: list[FeishuChannel] = []

    async def make(
        start: bool = True, backoff: BackoffPolicy | None = None, **overrides: Any
    ) -> FeishuChannel:
        channel = FeishuChannel(feishu_config(fake, **overrides), ctx, backoff=backoff)
        channels.append(channel)
        if start:
            await channel.start()
        return channel

    yield make
    for channel in channels:
        await channel.stop()


async def until(predicate: Callable[[], Any], timeout: float = 5.0) -> Any:
    """Poll `predicate` until truthy (cross-thread waits without long sleeps)."""
    end = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > end:
            raise TimeoutError("condition not met in time")
        await asyncio.sleep(0.01)
