"""Fixtures: a fake WeCom (long connection over TLS + media) in its own thread, the channel on
it, with a fast backoff."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from channels.backoff import BackoffPolicy
from channels.wecom.channel import WeComChannel
from channels.wecom.config import WeComConfig
from tests.fakes.recording_context import RecordingContext
from tests.fakes.wecom_payloads import BOT_ID, SECRET
from tests.fakes.wecom_server import FakeWeCom

FAST = BackoffPolicy(base=0.01, cap=0.05)


@pytest.fixture
def fake_wecom() -> Iterator[FakeWeCom]:
    fake = FakeWeCom().start()
    yield fake
    fake.stop()


def wecom_config(fake: FakeWeCom, **overrides: Any) -> dict[str, Any]:
    return {
        "enabled": True,
        "bot_id": BOT_ID,
        "secret": SECRET,
        "ws_url": fake.ws_url,
        "ca_file": fake.ca_file,
        "heartbeat_seconds": 0.1,
        **overrides,
    }


Make = Callable[..., Any]


@pytest.fixture
async def make_channel(fake_wecom: FakeWeCom, tmp_path: Path) -> AsyncIterator[Make]:
    started: list[WeComChannel] = []

    async def make(
        *, start: bool = True, **overrides: Any
    ) -> tuple[WeComChannel, RecordingContext]:
        ctx = RecordingContext(tmp_path / "data")
        config = WeComConfig(**wecom_config(fake_wecom, **overrides))
        channel = WeComChannel(config, ctx, backoff=FAST)
        started.append(channel)
        if start:
            await channel.start()
        return channel, ctx

    yield make
    for channel in started:
        await channel.stop()
