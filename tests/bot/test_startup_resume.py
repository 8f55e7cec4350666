"""At start the service takes up what the LAST process left unsettled; a message a channel
receives while the service is still starting is this process's own and is answered once."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.recording_channel import RecordingChannel
from tests.harness import ServiceHarness


async def test_a_message_received_while_the_service_starts_is_answered_once(
    tmp_path: Path,
    fake_openai: FakeOpenAI,
    test_channel_registered: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    started = RecordingChannel.start

    async def start_and_receive(self: RecordingChannel) -> None:
        await started(self)
        await self.inject("hello")  # a socket channel receives as soon as it is connected

    monkeypatch.setattr(RecordingChannel, "start", start_and_receive)
    async with ServiceHarness(tmp_path, fake_openai, {"test": {"enabled": True}}) as svc:
        await svc.idle()
        channel = svc.channel("test")
        assert isinstance(channel, RecordingChannel)
        finals = [c.text for c in channel.calls if c.kind == "finish"]
    assert finals == ["echo: hello"]
    assert len(fake_openai.requests) == 1
