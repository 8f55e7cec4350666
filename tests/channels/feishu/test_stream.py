"""Streaming cards against the fake: CardKit, the patch fallback, rate limits, overflow."""

from __future__ import annotations

import json

import pytest

from channels.base import Button, ChatRef, InboundMessage, RateLimited, ReplyDoc, ToolStep, UserRef
from channels.feishu import render
from channels.text import split_text
from tests.fakes.feishu_server import RATE_LIMITED


def _msg(message_id: str = "om_user") -> InboundMessage:
    return InboundMessage(
        event_id=message_id,
        message_id=message_id,
        text="q",
        chat=ChatRef(channel="feishu", chat_id="oc_dm"),
        sender=UserRef(id="ou_alice"),
    )


async def test_cardkit_stream_progress_done_state(fake, make_channel):
    channel = await make_channel()
    handle = await channel.open_reply(_msg(), ReplyDoc(status="working"))
    step = ToolStep(id="t1", label="web_search")
    await channel.update_reply(handle, ReplyDoc(text="Hel", progress=(step,)))
    await channel.update_reply(
        handle,
        ReplyDoc(text="Hello", progress=(ToolStep(id="t1", label="web_search", state="done"),)),
    )
    final = ReplyDoc(
        text="Hello world", status="done", buttons=(Button(label="Smart", value="/models smart"),)
    )
    await channel.finish_reply(handle, final)

    [reply_id] = fake.replies_to("om_user", "interactive")
    content = json.loads(fake.messages[reply_id]["content"])
    assert content["type"] == "card"
    card = fake.cards[content["data"]["card_id"]]
    assert not card.streaming
    assert card.elements["answer"] == "Hello world"
    assert card.card["header"]["template"] == "green"
    assert card.card["body"]["elements"][2]["behaviors"][0]["value"]["cmd"] == "/models smart"
    ops = [c.headers["op"] for c in fake.calls if "/cardkit/" in c.path]
    assert ops[0] == "card_create"
    assert ops[-2:] == ["card_settings", "card_update"]
    contents = [c.body for c in fake.recorded("element_content")]
    assert any("⏳ web_search" in c["content"] for c in contents)
    assert any("✅ web_search" in c["content"] for c in contents)
    seqs = [
        c.body["sequence"]
        for c in fake.calls
        if c.headers["op"] in ("element_content", "card_settings", "card_update")
    ]
    assert seqs == sorted(seqs)
    assert len(set(seqs)) == len(seqs)
    assert fake.recorded("reaction")
    assert fake.violations == []


async def test_patch_fallback_when_cardkit_unavailable(fake, make_channel):
    fake.cardkit_enabled = False
    channel = await make_channel()
    handle = await channel.open_reply(_msg(), ReplyDoc(status="working"))
    for n in range(1, 8):
        await channel.update_reply(handle, ReplyDoc(text="word " * n))
    await channel.finish_reply(
        handle, ReplyDoc(text="final answer", status="failed", note="model error")
    )
    [reply_id] = fake.replies_to("om_user", "interactive")
    card = json.loads(fake.messages[reply_id]["content"])
    assert card["config"]["update_multi"] is True
    assert card["header"]["template"] == "red"
    assert "final answer" in json.dumps(card)
    assert len(fake.recorded("patch")) == 8
    assert fake.violations == []
    assert channel.streamer.mode == "patch"


async def test_rate_limit_code_mid_stream_then_resend(fake, make_channel):
    channel = await make_channel()
    handle = await channel.open_reply(_msg(), ReplyDoc(status="working"))
    fake.fail_next("element_content", RATE_LIMITED)
    with pytest.raises(RateLimited) as info:
        await channel.update_reply(handle, ReplyDoc(text="partial"))
    assert info.value.retry_after > 0
    await channel.update_reply(handle, ReplyDoc(text="partial more"))
    fake.fail_next("card_update", RATE_LIMITED)
    final = ReplyDoc(text="the end", status="done")
    with pytest.raises(RateLimited):
        await channel.finish_reply(handle, final)
    await channel.finish_reply(handle, final)  # the streamer retries the whole final
    card = fake.card_of(handle.parts[0].message_id)
    assert card.elements["answer"] == "the end"
    assert fake.violations == []


async def test_overlong_answer_continues_in_second_card(fake, make_channel):
    channel = await make_channel()
    handle = await channel.open_reply(_msg(), ReplyDoc(status="working"))
    para = "长" * 3000 + "\n\n"
    text = para * 3  # ~27 KB of UTF-8: more than one card holds
    await channel.update_reply(handle, ReplyDoc(text=text[:5000]))
    await channel.update_reply(handle, ReplyDoc(text=text))
    await channel.finish_reply(handle, ReplyDoc(text=text, status="done"))
    cards = fake.replies_to("om_user", "interactive")
    assert len(cards) == 2
    first, second = (fake.card_of(m) for m in cards)
    assert not first.streaming
    assert not second.streaming
    joined = first.elements["answer"] + "\n\n" + second.elements["answer"]
    assert joined.replace("\n", "") == text.replace("\n", "")
    assert "part 2" in second.card["header"]["title"]["content"]
    assert fake.violations == []


async def test_continuation_sent_once_as_further_card(fake, make_channel):
    channel = await make_channel()
    handle = await channel.open_reply(_msg(), ReplyDoc(status="working"))
    await channel.finish_reply(handle, ReplyDoc(text="part one", status="done"))
    extra = ReplyDoc(text="part two", status="done")
    await channel.send_continuation(handle, extra)
    await channel.send_continuation(handle, extra)  # a retried continuation is not doubled
    cards = fake.replies_to("om_user", "interactive")
    assert len(cards) == 2
    assert fake.card_of(cards[1]).elements["answer"] == "part two"


async def test_rapid_updates_stay_within_card_limit(fake, make_channel):
    channel = await make_channel()
    handle = await channel.open_reply(_msg(), ReplyDoc(status="working"))
    text = ""
    for n in range(8):
        text += f"token{n} "
        steps = tuple(ToolStep(id=str(i), label=f"tool {i}") for i in range(n % 3))
        await channel.update_reply(handle, ReplyDoc(text=text, progress=steps))
    await channel.finish_reply(handle, ReplyDoc(text=text, status="done"))
    assert fake.violations == []
    assert fake.card_of(handle.parts[0].message_id).elements["answer"] == text
    stamps = [c.at for c in fake.calls if "/cardkit/" in c.path]
    assert max(sum(1 for t in stamps if s <= t < s + 1) for s in stamps) <= 10


def test_card_limits_declared(fake):
    assert render.CARD_MAX_TABLES == 5


async def test_continuation_reuses_cards_the_stream_already_opened(fake, make_channel):
    channel = await make_channel()
    handle = await channel.open_reply(_msg(), ReplyDoc(status="working"))
    text = ("长" * 2000 + "\n\n") * 6  # streamed whole, it fills three cards
    await channel.update_reply(handle, ReplyDoc(text=text))
    streamed = len(fake.replies_to("om_user", "interactive"))
    first, *rest = split_text(text, channel.capabilities.max_text_len)  # as the service does
    assert rest
    await channel.finish_reply(handle, ReplyDoc(text=first, status="done"))
    for part in rest:
        await channel.send_continuation(handle, ReplyDoc(text=part, status="done"))
    cards = [fake.card_of(m) for m in fake.replies_to("om_user", "interactive")]
    assert len(cards) == streamed  # no card posted twice
    assert not [c for c in cards if c.streaming]  # none left "working"
    shown = "".join(c.elements["answer"] for c in cards)
    assert shown.replace("\n", "") == text.replace("\n", "")
    assert fake.violations == []


async def test_a_chat_the_bot_left_refuses_the_delivery(fake, make_channel):
    from channels.base import DeliveryRefused

    channel = await make_channel()
    fake.fail_next("reply", 230002)
    with pytest.raises(DeliveryRefused) as info:
        await channel.open_reply(_msg(), ReplyDoc(status="working"))
    assert info.value.reason == "bot removed from the chat"
