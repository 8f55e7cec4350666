"""Rate limits never lose a final; only a definitive refusal ends a delivery.

The real python-telegram-bot against the fake Bot API: during a storm every send, edit, draft
and chat action answers 429 with retry_after 1-3 s and blocks the whole bot; the fake records
any call that arrives before the retry_after it announced has passed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent.events import Final, TextDelta
from bot.metrics import Metrics
from bot.replies import ReplyStreamer
from channels.base import DeliveryRefused, ReplyDoc
from channels.telegram.channel import TelegramChannel
from tests.channels.telegram.test_e2e import service
from tests.fakes.openai_server import FakeOpenAI, text_of
from tests.fakes.openai_wire import Reply
from tests.fakes.recording_context import RecordingContext
from tests.fakes.telegram_server import FakeTelegram

CHATS = 20


def slow_answer(body: dict[str, Any]) -> Reply:
    last = text_of(body["messages"][-1].get("content"))
    return Reply(text=f"answer to {last}: " + "word " * 20, tokens_per_second=40)


async def test_twenty_chats_under_a_429_storm_all_get_their_final(
    tmp_path: Path, fake_openai: FakeOpenAI, fake: FakeTelegram
) -> None:
    fake_openai.responder = slow_answer
    async with service(tmp_path, fake_openai, fake) as svc:
        fake.storm(4.0)
        for i in range(CHATS):
            fake.push_message(1000 + i, f"question {i}")
        await fake.wait_for(
            lambda: all(fake.shown_texts(1000 + i) for i in range(CHATS)), timeout=90
        )
        await svc.idle()
    assert fake.storm_429s > 0  # the storm did answer 429s
    for i in range(CHATS):
        (final,) = fake.shown_texts(1000 + i)  # one message, edited or sent
        assert final.startswith(f"answer to question {i}:")
    assert fake.violations == []  # nothing reached Telegram before a retry_after had passed


async def said_hello(
    make_channel: Any, fake: FakeTelegram, ctx: RecordingContext, chat: int
) -> TelegramChannel:
    """A started channel, once `chat`'s "hello" is published."""
    channel: TelegramChannel = await make_channel()
    fake.push_message(chat, "hello")
    await fake.wait_for(lambda: ctx.published)
    return channel


async def test_a_blocked_bot_ends_the_delivery_with_the_reason(
    fake: FakeTelegram, ctx: RecordingContext, make_channel: Any
) -> None:
    channel = await said_hello(make_channel, fake, ctx, 555)
    metrics = Metrics()
    streamer = ReplyStreamer(channel, ctx.published[0], metrics=metrics)
    await streamer.open()
    streamer.on_event(TextDelta(text="never seen"))
    streamer.on_event(Final(text="never seen"))
    fake.fail_next("sendMessage", 403, "Forbidden: bot was blocked by the user", times=3)
    with pytest.raises(DeliveryRefused) as info:
        await streamer.finish()
    assert info.value.reason == "bot blocked by the user"
    assert len(fake.calls_of("sendMessage")) == 1  # a definitive no is not retried
    assert (
        metrics.value(
            "antler_deliveries_given_up_total", channel="telegram", reason="bot blocked by the user"
        )
        == 1
    )


async def test_a_rate_limit_is_not_a_refusal(
    fake: FakeTelegram, ctx: RecordingContext, make_channel: Any
) -> None:
    fake.drafts_supported = False
    channel = await said_hello(make_channel, fake, ctx, 556)
    metrics = Metrics()
    streamer = ReplyStreamer(channel, ctx.published[0], metrics=metrics)
    await streamer.open()
    for _ in range(8):  # more 429s in a row than any attempt limit used to allow
        fake.fail_next("sendMessage", 429, "Too Many Requests: retry after 1", retry_after=1)
    fake.storm(0)  # only the scripted ones
    streamer.doc = ReplyDoc(text="patience")
    await streamer.finish()
    assert fake.shown_texts(556) == ["patience"]
    assert metrics.value("antler_rate_limited_total", channel="telegram") == 8
    assert "antler_deliveries_given_up_total{" not in metrics.render()
    assert fake.violations == []


async def test_a_refused_draft_of_a_blocked_bot_does_not_switch_drafts_off(
    fake: FakeTelegram, ctx: RecordingContext, make_channel: Any
) -> None:
    channel = await said_hello(make_channel, fake, ctx, 557)
    handle = await channel.open_reply(ctx.published[0], ReplyDoc())
    fake.fail_next("sendMessageDraft", 403, "Forbidden: bot was blocked by the user")
    with pytest.raises(DeliveryRefused) as info:
        await channel.update_reply(handle, ReplyDoc(text="a draft"))
    assert info.value.reason == "bot blocked by the user"
    assert channel.replies.drafts_ok  # other chats keep their drafts
