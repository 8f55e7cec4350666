"""ReplyStreamer: an update already sent to the platform is let finish before the final."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from agent.events import Final, TextDelta
from bot.replies import ReplyStreamer
from channels.base import ChannelError, ReplyDoc
from tests.fakes.clock import VirtualClock
from tests.fakes.recording_channel import Call, Handle, RecordingChannel, RecordingConfig


class SlowUpdates(RecordingChannel):
    """Records when an update starts and when it completes; completion waits for `release`."""

    def __init__(self) -> None:
        super().__init__(RecordingConfig(), ctx=None)  # type: ignore[arg-type]
        self.release = asyncio.Event()
        self.started = asyncio.Event()

    async def update_reply(self, handle: Handle, doc: ReplyDoc) -> None:
        self.started.set()
        self._record(Call("update-start", doc, doc.text, handle.chat, handle.id))
        await self.release.wait()
        self._record(Call("update-done", doc, doc.text, handle.chat, handle.id))


def kinds(channel: Any) -> list[str]:
    return [call.kind for call in channel.calls]


async def test_finish_waits_for_the_update_in_flight() -> None:
    channel = SlowUpdates()
    streamer = ReplyStreamer(channel, channel.message("hi"))
    await streamer.open()
    streamer.on_event(TextDelta("echo: "))
    await asyncio.wait_for(channel.started.wait(), 5)
    streamer.on_event(TextDelta("hi"))
    streamer.on_event(Final("echo: hi"))
    finishing = asyncio.create_task(streamer.finish())
    await asyncio.sleep(0.05)
    assert not finishing.done()  # held back by the update under way, not cancelling it
    channel.release.set()
    await asyncio.wait_for(finishing, 5)
    assert kinds(channel) == ["open", "update-start", "update-done", "finish"]
    assert channel.of("finish")[0].text == "echo: hi"


async def test_a_call_without_an_answer_is_retried_with_the_one_backoff(
    caplog: pytest.LogCaptureFixture,
) -> None:
    channel = RecordingChannel(RecordingConfig(), ctx=None)  # type: ignore[arg-type]
    lost = ChannelError("connection reset", retryable=True)  # a call that got no answer
    channel.failures["finish"] = [lost, lost]
    clock = VirtualClock()
    channel.pacer.clock, channel.pacer.sleep = clock, clock.sleep
    streamer = ReplyStreamer(channel, channel.message("hi"))
    await streamer.open()
    streamer.on_event(Final("done"))
    with caplog.at_level(logging.DEBUG, logger="bot.replies"):
        assert await streamer.finish() == "done"
    assert channel.of("finish")[0].text == "done"
    waits = [s for s in clock.sleeps if s > 0]
    assert len(waits) == 2
    assert all(0.5 <= s <= 8.0 for s in waits)
    lines = [r.getMessage() for r in caplog.records]
    # channels/backoff.py: one warning for the streak, one recovery line
    assert sum("retrying with backoff" in line for line in lines) == 1
    assert any("recovered after 2 failed attempt(s)" in line for line in lines)
