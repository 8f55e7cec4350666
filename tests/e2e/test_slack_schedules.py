"""Scheduled runs on Slack: fake Slack ← bolt/slack_sdk ← service, scheduler on a virtual clock."""

from __future__ import annotations

import time
from pathlib import Path

from tests.channels.slack import events
from tests.channels.slack.conftest import fake_slack
from tests.channels.slack.test_e2e import bot_texts, slack_cfg
from tests.fakes.clock import VirtualClock
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.slack_server import FakeSlack
from tests.harness import ServiceHarness

__all__ = ["fake_slack"]  # the fixture, shared with the Slack end-to-end tests


async def test_a_run_is_posted_in_the_thread_where_it_was_scheduled(
    tmp_path: Path, fake_openai: FakeOpenAI, fake_slack: FakeSlack
) -> None:
    clock = VirtualClock(time.time(), sleep_moves=False)
    root = "1700000002.000100"
    async with ServiceHarness(
        tmp_path, fake_openai, {"slack": slack_cfg(fake_slack)}, schedule_clock=clock
    ) as svc:
        fake_slack.push_event(
            events.mention("/schedule every weekday 09:00 summarise the tracker", ts=root),
            event_id="Ev1",
        )
        await fake_slack.until(lambda f: bot_texts(f, root), timeout=10)
        await svc.idle()
        assert bot_texts(fake_slack, root)[0].startswith("Scheduled #1: every weekday at 09:00")
        assert svc.app is not None
        schedule = await svc.app.schedules.store.get(1)
        assert schedule is not None
        assert schedule.next_run is not None
        clock.set(schedule.next_run)
        await svc.fire_schedules()
        await svc.fire_schedules()
    texts = bot_texts(fake_slack, root)
    assert len(texts) == 2
    assert texts[1].endswith("summarise the tracker")
    assert len(fake_openai.requests) == 1


async def test_a_run_in_a_dm_is_a_new_top_level_message(
    tmp_path: Path, fake_openai: FakeOpenAI, fake_slack: FakeSlack
) -> None:
    clock = VirtualClock(time.time(), sleep_moves=False)
    async with ServiceHarness(
        tmp_path, fake_openai, {"slack": slack_cfg(fake_slack)}, schedule_clock=clock
    ) as svc:
        fake_slack.push_event(events.dm("/schedule in 2h remind me to call Ann"), event_id="Ev1")
        await fake_slack.until(lambda f: f.calls_of("chat.postMessage"), timeout=10)
        await svc.idle()
        clock.advance(7200)
        await svc.fire_schedules()
    answers = [
        m
        for m in fake_slack.messages.values()
        if m.get("bot_id") and "call Ann" in str(m.get("text")) and "echo" in str(m)
    ]
    assert len(answers) == 1
    assert answers[0].get("thread_ts") in (None, answers[0].get("ts"))
