"""Scheduled runs on Telegram: fake Bot API ← PTB ← service, scheduler on a virtual clock."""

from __future__ import annotations

import time
from pathlib import Path

from tests.channels.telegram.served import telegram_service
from tests.fakes.clock import VirtualClock
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.telegram_server import FakeTelegram
from tests.harness import ServiceHarness


def service(
    tmp_path: Path, fake_openai: FakeOpenAI, fake: FakeTelegram, clock: VirtualClock
) -> ServiceHarness:
    return telegram_service(tmp_path, fake_openai, fake, harness={"schedule_clock": clock})


async def test_a_run_posts_a_new_message_in_the_forum_topic(tmp_path, fake_openai, fake) -> None:
    clock = VirtualClock(time.time(), sleep_moves=False)
    async with service(tmp_path, fake_openai, fake, clock) as svc:
        fake.push_message(-200, "/schedule in 30m post the on-call handover", thread_id=7)
        await fake.wait_for(lambda: fake.sent_texts(-200), timeout=10)
        await svc.idle()
        assert fake.sent_texts(-200)[0].startswith("Scheduled #1: once, ")
        clock.advance(1800)
        await svc.fire_schedules()
        await svc.fire_schedules()
    sends = fake.calls_of("sendMessage")
    assert len(sends) == 2
    run = sends[1].body
    assert run["message_thread_id"] == 7
    assert run.get("reply_to_message_id") is None  # a new message, not a reply
    shown = fake.shown_texts(-200)
    assert shown[-1].endswith("post the on-call handover")
    assert len(fake_openai.requests) == 1
    assert fake.violations == []


async def test_a_chat_that_blocked_the_bot_pauses_the_schedule(tmp_path, fake_openai, fake) -> None:
    clock = VirtualClock(time.time(), sleep_moves=False)
    async with service(tmp_path, fake_openai, fake, clock) as svc:
        fake.push_message(556, "/schedule every hour status")
        await fake.wait_for(lambda: fake.sent_texts(556), timeout=10)
        await svc.idle()
        for method in ("sendMessage", "sendMessageDraft", "sendChatAction"):
            fake.fail_next(method, 403, "Forbidden: bot was blocked by the user", times=5)
        clock.advance(3600)
        await svc.fire_schedules()
        await svc.fire_schedules()
        assert svc.app is not None
        schedule = await svc.app.schedules.store.get(1)
    assert schedule is not None
    assert schedule.state == "paused"
    assert "blocked by the user" in schedule.reason
