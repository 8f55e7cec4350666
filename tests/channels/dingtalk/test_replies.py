"""Replies: AI-card streaming, markdown fallback, robot send API, rate limits, tokens."""

from __future__ import annotations

import asyncio
import itertools
import json

import pytest

from bot.stores.journal import dump_message, load_message
from channels.base import Button, RateLimited, ReplyDoc, ToolStep
from channels.dingtalk.channel import DingTalkChannel
from channels.dingtalk.parse import parse_message
from tests.channels.dingtalk.conftest import MakeChannel, reply_to_dm
from tests.fakes.dingtalk_server import FakeDingTalk
from tests.fakes.recording_context import RecordingContext


async def _inbound(
    channel: DingTalkChannel, ctx: RecordingContext, fake: FakeDingTalk, **kw: object
):
    count = len(ctx.published)
    fake.push_message(fake.chatbot_data(**kw))  # type: ignore[arg-type]
    await fake.until(lambda: len(ctx.published) > count)
    return ctx.published[-1]


WORKING = ReplyDoc(status="working")


async def test_card_streams_coalesced_and_finalises(
    make_channel: MakeChannel, fake_dingtalk: FakeDingTalk
) -> None:
    channel, handle = await reply_to_dm(
        make_channel, fake_dingtalk, "write", WORKING, card_template_id="tpl-1", stream_interval=0.1
    )
    [created] = fake_dingtalk.requests("POST", "/v1.0/card/instances")
    card_id = created.body["outTrackId"]
    assert created.body["cardTemplateId"] == "tpl-1"
    assert created.body["cardData"]["cardParamMap"]["flowStatus"] == "1"
    [delivered] = fake_dingtalk.requests("POST", "/v1.0/card/instances/deliver")
    assert delivered.body["openSpaceId"] == "dtv1.card//IM_ROBOT.staff-1"
    assert created.headers["x-acs-dingtalk-access-token"] in fake_dingtalk.tokens

    text = ""
    for word in ["the", "quick", "brown", "fox", "jumps", "over", "the", "lazy", "dog"]:
        text += word + " "
        await channel.update_reply(handle, ReplyDoc(text=text))
        await asyncio.sleep(0.03)
    await channel.finish_reply(handle, ReplyDoc(text=text.strip(), status="done"))

    puts = fake_dingtalk.requests("PUT", "/v1.0/card/streaming")
    assert 2 <= len(puts) < 9
    assert all(p.body["isFull"] and p.body["outTrackId"] == card_id for p in puts)
    assert [p.body["isFinalize"] for p in puts] == [False] * (len(puts) - 1) + [True]
    assert puts[-1].body["content"] == "the quick brown fox jumps over the lazy dog"
    assert puts[-1].body["key"] == "content"
    gaps = [b.at - a.at for a, b in itertools.pairwise(puts[:-1])]
    assert all(g >= 0.09 for g in gaps)
    [state] = fake_dingtalk.requests("PUT", "/v1.0/card/instances")
    assert state.body["cardData"]["cardParamMap"]["flowStatus"] == "3"
    assert state.at > puts[-1].at
    assert fake_dingtalk.webhook_messages() == []
    assert len(fake_dingtalk.requests("POST", "/v1.0/oauth2/accessToken")) == 1


async def test_failed_reply_streams_with_is_error(
    make_channel: MakeChannel, fake_dingtalk: FakeDingTalk
) -> None:
    channel, ctx = await make_channel(card_template_id="tpl-1")
    msg = await _inbound(
        channel, ctx, fake_dingtalk, text="boom", group=True, conversation_id="cid-g"
    )
    handle = await channel.open_reply(msg, ReplyDoc())
    [delivered] = fake_dingtalk.requests("POST", "/v1.0/card/instances/deliver")
    assert delivered.body["openSpaceId"] == "dtv1.card//IM_GROUP.cid-g"
    assert delivered.body["imGroupOpenDeliverModel"]["robotCode"] == "robot-code"
    await channel.finish_reply(handle, ReplyDoc(text="partial", status="failed"))
    [final] = fake_dingtalk.streams()
    assert final["isError"]
    assert final["isFinalize"]
    [state] = fake_dingtalk.requests("PUT", "/v1.0/card/instances")
    assert state.body["cardData"]["cardParamMap"]["flowStatus"] == "5"


async def test_card_creation_failure_falls_back_to_one_markdown_reply(
    make_channel: MakeChannel, fake_dingtalk: FakeDingTalk
) -> None:
    channel, ctx = await make_channel(card_template_id="tpl-1")
    fake_dingtalk.fail(
        "POST",
        "/v1.0/card/instances",
        400,
        {"code": "param.invalid", "message": "template not found"},
    )
    msg = await _inbound(channel, ctx, fake_dingtalk, text="hi")
    handle = await channel.open_reply(msg, ReplyDoc())
    await channel.update_reply(handle, ReplyDoc(text="partial"))
    await channel.finish_reply(
        handle, ReplyDoc(text="## Answer\n\n```py\nx = 1\n```", status="done")
    )
    assert fake_dingtalk.streams() == []
    [reply] = fake_dingtalk.webhook_messages()
    assert reply["msgtype"] == "markdown"
    assert reply["markdown"]["text"] == "## Answer\n\n> **py**\n> x = 1"
    assert reply["markdown"]["title"] == "Answer"


async def test_final_stream_failure_falls_back_to_markdown(
    make_channel: MakeChannel, fake_dingtalk: FakeDingTalk
) -> None:
    channel, handle = await reply_to_dm(make_channel, fake_dingtalk, card_template_id="tpl-1")
    fake_dingtalk.fail("PUT", "/v1.0/card/streaming", 500)
    await channel.finish_reply(handle, ReplyDoc(text="the answer", status="done"))
    [reply] = fake_dingtalk.webhook_messages()
    assert reply["markdown"]["text"] == "the answer"


async def test_rate_limited_final_raises_then_succeeds(
    make_channel: MakeChannel, fake_dingtalk: FakeDingTalk
) -> None:
    channel, handle = await reply_to_dm(make_channel, fake_dingtalk, card_template_id="tpl-1")
    fake_dingtalk.rate_limit("PUT", "/v1.0/card/streaming", retry_after=0.3)
    done = ReplyDoc(text="final words", status="done")
    with pytest.raises(RateLimited) as info:
        await channel.finish_reply(handle, done)
    assert info.value.retry_after == pytest.approx(0.3)
    await channel.finish_reply(handle, done)
    assert fake_dingtalk.streams()[-1]["content"] == "final words"
    assert fake_dingtalk.streams()[-1]["isFinalize"]
    assert fake_dingtalk.webhook_messages() == []


async def test_markdown_mode_sends_one_reply(
    make_channel: MakeChannel, fake_dingtalk: FakeDingTalk
) -> None:
    channel, ctx = await make_channel()
    msg = await _inbound(channel, ctx, fake_dingtalk, text="hi")
    handle = await channel.open_reply(msg, ReplyDoc())
    await channel.update_reply(handle, ReplyDoc(text="par"))
    doc = ReplyDoc(
        text="| a | b |\n|---|---|\n| 1 | 2 |\n\n---\nend",
        progress=(ToolStep(id="1", label="search", state="done"),),
        buttons=(Button(label="GPT-4o", value="/models gpt-4o"),),
        status="done",
    )
    fake_dingtalk.fail(
        "POST",
        "/v1.0/card/instances",
        400,
        {"code": "param.invalid", "message": "template not available"},
    )
    await channel.finish_reply(handle, doc)
    [reply] = fake_dingtalk.webhook_messages()
    text = reply["markdown"]["text"]
    assert "- ✅ search" in text
    assert "- **a**: 1\n- **b**: 2" in text
    assert "———" in text
    assert "|" not in text
    assert "dtmd://dingtalkclient/sendMessage?content=%2Fmodels%20gpt-4o" in text
    # the buttons went on a card first; DingTalk refused it, so they came as links
    [refused] = fake_dingtalk.requests("POST", "/v1.0/card/instances")
    assert refused.body["cardTemplateId"].endswith(".schema")


async def test_expired_webhook_uses_the_robot_send_api(
    make_channel: MakeChannel, fake_dingtalk: FakeDingTalk
) -> None:
    channel, ctx = await make_channel()
    dm = await _inbound(channel, ctx, fake_dingtalk, text="hi", webhook_ttl=-1)
    await channel.finish_reply(
        await channel.open_reply(dm, ReplyDoc()), ReplyDoc(text="dm answer", status="done")
    )
    group = await _inbound(
        channel, ctx, fake_dingtalk, text="hi", group=True, conversation_id="cid-g", webhook_ttl=-1
    )
    await channel.send_text(group.chat, "group notice")
    assert fake_dingtalk.webhook_messages() == []
    one, two = fake_dingtalk.robot_messages()
    assert one["userIds"] == ["staff-1"]
    assert one["msgKey"] == "sampleMarkdown"
    assert json.loads(one["msgParam"])["text"] == "dm answer"
    assert one["robotCode"] == "robot-code"
    assert two["openConversationId"] == "cid-g"
    assert json.loads(two["msgParam"])["text"] == "group notice"


async def test_robot_send_errors_are_raised(
    make_channel: MakeChannel, fake_dingtalk: FakeDingTalk
) -> None:
    channel, ctx = await make_channel()
    msg = await _inbound(channel, ctx, fake_dingtalk, text="hi", webhook_ttl=-1)
    fake_dingtalk.rate_limit("POST", "/v1.0/robot/oToMessages/batchSend", retry_after=2)
    with pytest.raises(RateLimited):
        await channel.send_text(msg.chat, "x")
    fake_dingtalk.webhook_error(130101)  # a throttled webhook is waited out, not bypassed
    fresh = await _inbound(channel, ctx, fake_dingtalk, text="again")
    with pytest.raises(RateLimited):
        await channel.send_text(fresh.chat, "x")
    assert len(fake_dingtalk.robot_messages()) == 1  # only the first, rate-limited call


@pytest.mark.parametrize(("errcode", "status"), [(300001, 200), (310000, 200), (0, 500)])
async def test_failing_webhook_falls_back_to_the_robot_send_api(
    make_channel: MakeChannel, fake_dingtalk: FakeDingTalk, errcode: int, status: int
) -> None:
    channel, ctx = await make_channel()
    msg = await _inbound(channel, ctx, fake_dingtalk, text="hi")
    if errcode:
        fake_dingtalk.webhook_error(errcode, status=status)
    else:
        fake_dingtalk.fail("POST", "/robot/sendBySession", status)
    await channel.finish_reply(
        await channel.open_reply(msg, ReplyDoc()), ReplyDoc(text="the answer", status="done")
    )
    assert len(fake_dingtalk.webhook_messages()) == 1  # tried once
    [sent] = fake_dingtalk.robot_messages()
    assert sent["userIds"] == ["staff-1"]
    assert json.loads(sent["msgParam"])["text"] == "the answer"
    await channel.send_text(msg.chat, "later notice")  # the failed webhook is not tried again
    assert len(fake_dingtalk.webhook_messages()) == 1
    assert len(fake_dingtalk.robot_messages()) == 2
    fresh = await _inbound(channel, ctx, fake_dingtalk, text="new message, new webhook")
    await channel.send_text(fresh.chat, "via the new webhook")
    assert len(fake_dingtalk.webhook_messages()) == 2
    assert len(fake_dingtalk.robot_messages()) == 2


async def test_token_refreshes_after_401(
    make_channel: MakeChannel, fake_dingtalk: FakeDingTalk
) -> None:
    channel, ctx = await make_channel(card_template_id="tpl-1")
    msg = await _inbound(channel, ctx, fake_dingtalk, text="hi")
    await channel.open_reply(msg, ReplyDoc())
    fake_dingtalk.tokens.clear()
    await channel.open_reply(msg, ReplyDoc())
    assert len(fake_dingtalk.requests("POST", "/v1.0/oauth2/accessToken")) == 2
    assert len(fake_dingtalk.requests("POST", "/v1.0/card/instances/deliver")) == 2


async def test_card_updates_wait_out_a_429_window_then_show_the_newest_text(
    make_channel: MakeChannel, fake_dingtalk: FakeDingTalk
) -> None:
    channel, handle = await reply_to_dm(
        make_channel,
        fake_dingtalk,
        "write",
        WORKING,
        card_template_id="tpl-1",
        stream_interval=0.05,
    )
    await channel.update_reply(handle, ReplyDoc(text="one"))
    await fake_dingtalk.until(lambda: fake_dingtalk.streams())
    fake_dingtalk.rate_limit("PUT", "/v1.0/card/streaming", retry_after=0.5)
    await asyncio.sleep(0.06)  # the card's interval has passed: the next update goes at once
    with pytest.raises(RateLimited):
        await channel.update_reply(handle, ReplyDoc(text="one two"))
    await channel.update_reply(handle, ReplyDoc(text="one two three"))  # inside the window:
    await channel.update_reply(handle, ReplyDoc(text="one two three four"))  # held, coalesced
    newest = "one two three four"
    await fake_dingtalk.until(lambda: fake_dingtalk.streams()[-1]["content"] == newest)
    await channel.finish_reply(handle, ReplyDoc(text="one two three four five", status="done"))
    contents = [s["content"] for s in fake_dingtalk.streams()]
    assert contents == ["one", "one two", newest, "one two three four five"]
    assert fake_dingtalk.violations == []  # nothing inside the Retry-After window


async def test_a_message_received_by_another_worker_is_answered_through_its_session_webhook(
    make_channel: MakeChannel, fake_dingtalk: FakeDingTalk
) -> None:
    """With several workers the one answering (the partition's owner) is often not the one
    holding the Stream connection: the message carries its session webhook there."""
    answering, _ = await make_channel()
    data = fake_dingtalk.chatbot_data("asked elsewhere")
    received = parse_message(data, channel=answering.name, received_at=0.0)
    msg = load_message(dump_message(received))  # as the bus carries it between workers
    handle = await answering.open_reply(msg, ReplyDoc())
    await answering.finish_reply(handle, ReplyDoc(text="answered here", status="done"))
    [sent] = fake_dingtalk.webhook_messages()
    assert sent["markdown"]["text"] == "answered here"
    assert fake_dingtalk.robot_messages() == []
