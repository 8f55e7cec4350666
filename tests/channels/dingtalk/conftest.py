"""DingTalk fixtures: the fake server in its own thread, a recording context, a started channel."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from channels.backoff import BackoffPolicy
from channels.base import ReplyDoc
from channels.dingtalk.channel import DingTalkChannel
from channels.dingtalk.config import DingTalkConfig
from tests.fakes.dingtalk_server import FakeDingTalk
from tests.fakes.recording_context import RecordingContext
from tests.fakes.threaded import fake_fixture

fake_dingtalk = fake_fixture(FakeDingTalk, "fake_dingtalk")


def dingtalk_config(fake: FakeDingTalk, **overrides: Any) -> DingTalkConfig:
    values: dict[str, Any] = fake.channel_config(f"ding-{uuid.uuid4().hex[:8]}")
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


async def reply_to_dm(
    make_channel: MakeChannel,
    fake: FakeDingTalk,
    text: str = "hi",
    doc: ReplyDoc | None = None,
    **config: Any,
) -> tuple[DingTalkChannel, Any]:
    """A channel (`config` over the defaults) and its reply (showing `doc`) opened to a DM
    saying `text`."""
    channel, ctx = await make_channel(**config)
    fake.push_message(fake.chatbot_data(text))
    [msg] = await fake.until(lambda: ctx.published)
    return channel, await channel.open_reply(msg, doc or ReplyDoc())
