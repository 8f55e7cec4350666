"""Schedules with two Antler processes (two whole Apps) on one PostgreSQL database, the
schedulers on one virtual clock: a schedule made in one fires once, whichever process claims
it, and every process lists it."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from tests.fakes.clock import VirtualClock
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.recording_channel import RecordingChannel
from tests.harness import ServiceHarness

pytestmark = pytest.mark.usefixtures("test_channel_registered")


def process(tmp_path: Path, fake: FakeOpenAI, dsn: str, clock: VirtualClock) -> ServiceHarness:
    return ServiceHarness(
        tmp_path,
        fake,
        {"test": {"enabled": True}},
        schedule_clock=clock,
        storage={"backend": "postgres", "postgres": {"dsn": dsn}},
        schedules={"default_timezone": "UTC"},
    )


def chan(svc: ServiceHarness) -> RecordingChannel:
    channel = svc.channel("test")
    assert isinstance(channel, RecordingChannel)
    return channel


async def tick_both(one: ServiceHarness, two: ServiceHarness) -> None:
    """Both schedulers look at the same moment, then both services settle."""
    assert one.app is not None
    assert two.app is not None
    await asyncio.gather(one.app.schedules.scheduler.tick(), two.app.schedules.scheduler.tick())
    await asyncio.gather(one.idle(), two.idle())


async def test_two_apps_fire_a_due_schedule_once(
    tmp_path: Path, fake_openai: FakeOpenAI, pg_dsn: str
) -> None:
    clock = VirtualClock(time.time(), sleep_moves=False)
    async with (
        process(tmp_path, fake_openai, pg_dsn, clock) as one,
        process(tmp_path, fake_openai, pg_dsn, clock) as two,
    ):
        a, b = chan(one), chan(two)
        await a.inject("/schedule every hour stand-up notes", event_id="p1-1")
        await one.idle()
        assert a.texts()[0].startswith("Scheduled #1: every hour")
        await b.inject("/schedule list", event_id="p2-1")  # the other process lists it too
        await two.idle()
        assert "#1" in b.texts()[-1]
        assert "stand-up notes" in b.texts()[-1]
        for hour in range(1, 4):
            clock.advance(3600)
            await tick_both(one, two)
            await tick_both(one, two)  # a second look finds nothing more to fire
            assert len(fake_openai.requests) == hour
        answers = [
            f.text for f in a.of("finish") + b.of("finish") if "scheduled task #1" in f.text
        ]  # (the commands' replies left out)
    assert len(answers) == 3
    assert all(text.endswith("stand-up notes") for text in answers)
    prompts = [FakeOpenAI.user_texts(r)[-1] for r in fake_openai.requests]
    assert all(p.endswith("stand-up notes") for p in prompts)
