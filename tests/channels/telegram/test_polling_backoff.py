"""Polling that comes back: getUpdates failures (at start and later) retried with the backoff."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from channels.telegram.channel import TelegramChannel
from channels.telegram.config import TelegramConfig
from tests.fakes.recording_context import RecordingContext
from tests.fakes.telegram_server import TOKEN, FakeTelegram
from tests.fakes.virtual_time import VirtualTime


async def received(fake: FakeTelegram, ctx: RecordingContext, vt: VirtualTime, text: str) -> None:
    """A polling channel (backing off on `vt`) started, `text` sent and published, stopped."""
    config = TelegramConfig(enabled=True, bot_token=TOKEN, api_base=fake.api_base, poll_timeout=1)
    channel = TelegramChannel(config, ctx, backoff=vt.policy())
    await channel.start()
    try:
        fake.push_message(555, text)
        await fake.wait_for(lambda: ctx.published)
    finally:
        await channel.stop()


async def test_get_updates_outage_at_start_is_retried_then_recovers(
    fake: FakeTelegram, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    vt, ctx = VirtualTime(), RecordingContext(data_dir=tmp_path)
    fake.fail_next("getUpdates", 502, "Bad Gateway", times=3)
    caplog.set_level(logging.INFO, logger="channels.telegram")
    await received(fake, ctx, vt, "hello")
    assert ctx.published[0].text == "hello"
    retries = [r["retry"] for r in ctx.reports if r["retry"] is not None]
    assert [r.attempts for r in retries] == [1, 2, 3]
    assert "Bad Gateway" in retries[0].last_error
    assert len(vt.slept) == 3
    last_failure = max(i for i, r in enumerate(ctx.reports) if r["retry"] is not None)
    assert any(r["connected"] for r in ctx.reports[last_failure + 1 :])  # and back again
    ours = [r for r in caplog.records if "getUpdates" in r.getMessage()]
    assert [r.levelname for r in ours] == ["WARNING", "INFO"]  # one failure line, one recovery


async def test_get_updates_429_waits_at_least_retry_after(
    fake: FakeTelegram, tmp_path: Path
) -> None:
    vt, ctx = VirtualTime(rand=lambda: 0.0), RecordingContext(data_dir=tmp_path)
    fake.fail_next("getUpdates", 429, "Too Many Requests", retry_after=7)
    await received(fake, ctx, vt, "after the flood")
    assert vt.slept == [pytest.approx(7.1)]
