"""The final never cuts off an update already on its way to the platform.

Cancelling `update_reply` mid-call loses the platform's answer (e.g. the Slack stream's ts) after
the platform acted on it: the channel then posts a second message and leaves the first open.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from agent.events import TextDelta
from bot.replies import ReplyStreamer
from channels.base import ChannelConfig, ReplyDoc
from tests.fakes.recording_channel import Handle, RecordingChannel
from tests.fakes.recording_context import RecordingContext


class SlowUpdates(RecordingChannel):
    """update_reply takes until `release` is set, like an HTTP call in flight."""

    def __init__(self, ctx: RecordingContext) -> None:
        super().__init__(ChannelConfig(enabled=True), ctx)
        self.started = asyncio.Event()
        self.release = asyncio.Event()

    async def update_reply(self, handle: Handle, doc: ReplyDoc) -> None:
        self.started.set()
        await self.release.wait()
        await super().update_reply(handle, doc)


async def test_finish_waits_for_the_update_in_flight(tmp_path: Path) -> None:
    channel = SlowUpdates(RecordingContext(data_dir=tmp_path))
    streamer = ReplyStreamer(channel, channel.message("hi"))
    await streamer.open()
    streamer.on_event(TextDelta(text="Which format?"))
    await asyncio.wait_for(channel.started.wait(), 2)
    finishing = asyncio.create_task(streamer.finish())
    await asyncio.sleep(0.05)
    assert not finishing.done()  # the final waits for the update to come back
    channel.release.set()
    await asyncio.wait_for(finishing, 2)
    assert [c.kind for c in channel.calls] == ["open", "update", "finish"]
