"""The first sign of life goes out at acceptance, beside the queue (bot/signs.py, issue 34):
"typing…" reaches the chat while the message still waits for a run slot and its queued notice
is held up, never while a 429 blocks the bot, and never again for a redelivered update. Real
python-telegram-bot against the fake Bot API, on a virtual clock."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from telegram.error import RetryAfter

from channels.telegram.pacing import FloodGate
from tests.channels.telegram.test_signs_of_life import DM, OTHER, SLOW, service
from tests.fakes.clock import VirtualClock
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.fakes.telegram_server import FakeTelegram
from tests.harness import ServiceHarness


def typing_in(fake: FakeTelegram, chat: int) -> int:
    return sum(int(c.body["chat_id"]) == chat for c in fake.calls_of("sendChatAction"))


async def accepted(svc: ServiceHarness, published: int) -> None:
    """Until the bus has accepted `published` messages, then a few turns of the loop."""
    for _ in range(2000):
        if svc.running.bus.counters.published >= published:
            break
        await asyncio.sleep(0.005)
    for _ in range(20):
        await asyncio.sleep(0.005)


async def test_typing_shows_while_the_message_waits_for_a_run_slot_and_its_notice(
    tmp_path: Path, fake_openai: FakeOpenAI, fake: FakeTelegram
) -> None:
    fake_openai.script(Reply(text=SLOW, tokens_per_second=5))
    notice = fake.hold("sendMessage", lambda body: int(body["chat_id"]) == OTHER, act=False)
    async with service(tmp_path, fake_openai, fake, runs=1) as svc:
        fake.push_message(DM, "first")
        await fake_openai.wait_requests(1, timeout=20)
        fake.push_message(OTHER, "second")  # the one run slot is taken: it waits
        await fake.wait_for(lambda: typing_in(fake, OTHER) == 1, 10)
        assert svc.running.dispatcher.waiting == 1  # not admitted to a run yet
        assert len(fake_openai.requests) == 1
        assert fake.shown_texts(OTHER) == []  # typing alone: its notice is held up
        notice.release()
        await fake_openai.wait_requests(2, timeout=20)
        await svc.idle(timeout=20)
    assert fake.shown_texts(OTHER) == ["echo: second"]
    assert fake.violations == []


async def test_no_sign_goes_out_while_a_429_blocks_the_bot(
    tmp_path: Path, fake_openai: FakeOpenAI, fake: FakeTelegram, clock: VirtualClock
) -> None:
    fake.fail_next("sendChatAction", 429, "Too Many Requests: retry after 30", retry_after=30)
    async with service(tmp_path, fake_openai, fake) as svc:
        clock.hold()  # the block cannot pass meanwhile: no sleep ends
        fake.push_message(DM, "first")  # its typing is answered with the 429
        await fake.wait_for(lambda: typing_in(fake, DM) >= 1, 10)
        gate = FloodGate(svc.channel("telegram").pacer)
        await fake.wait_for(lambda: gate.remaining() > 0, 10)
        fake.push_message(OTHER, "second")
        await accepted(svc, 2)
        assert typing_in(fake, OTHER) == 0  # blocked: the sign is left out, not queued
        clock.release()
        await fake_openai.wait_requests(2, timeout=20)
        await svc.idle(timeout=20)
    assert fake.shown_texts(DM) == ["echo: first"]
    assert fake.shown_texts(OTHER) == ["echo: second"]
    assert fake.violations == []


async def test_a_redelivered_update_sends_no_second_sign(
    tmp_path: Path, fake_openai: FakeOpenAI, fake: FakeTelegram
) -> None:
    async with service(tmp_path, fake_openai, fake) as svc:
        update = fake.push_message(DM, "hello")
        await fake_openai.wait_requests(1, timeout=20)
        await svc.idle(timeout=20)
        await fake.wait_for(lambda: fake.shown_texts(DM) == ["echo: hello"])
        typed = typing_in(fake, DM)
        fake.push_update({"message": dict(update["message"])})  # Telegram sends it again
        for _ in range(2000):
            if svc.running.bus.counters.duplicates == 1:
                break
            await asyncio.sleep(0.005)
        await accepted(svc, 1)
        await svc.idle(timeout=20)
    assert typed == 1  # the sign at acceptance; the reply's own typing saw it was fresh
    assert typing_in(fake, DM) == typed
    assert fake.shown_texts(DM) == ["echo: hello"]
    assert len(fake_openai.requests) == 1


async def test_the_typing_lane_stops_at_a_429_before_the_service_loop_has_blocked_the_bot(
    make_channel: Any, fake: FakeTelegram
) -> None:
    """The lane's own note of a 429: the next action is not sent even though the Pacer has not
    been told yet (api.guarded does that on the service loop, after the answer came back)."""
    fake.fail_next("sendChatAction", 429, "Too Many Requests: retry after 30", retry_after=30)
    channel = await make_channel()
    with pytest.raises(RetryAfter):
        await channel.actions.typing({"chat_id": DM})
    assert channel.sender.gate.remaining() == 0  # nobody blocked the Pacer
    assert await channel.actions.typing({"chat_id": OTHER}) is False
    assert typing_in(fake, OTHER) == 0
    assert fake.violations == []
