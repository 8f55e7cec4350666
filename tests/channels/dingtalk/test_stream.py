"""Stream mode through the real dingtalk-stream SDK against the fake gateway."""

from __future__ import annotations

import json
import logging
import threading

import pytest

from tests.channels.dingtalk.conftest import MakeChannel
from tests.fakes.dingtalk_server import CARD_CALLBACK_TOPIC, CHATBOT_TOPIC, FakeDingTalk
from tests.fakes.recording_context import RecordingContext
from tests.fakes.virtual_time import VirtualTime


def _stream_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "dingtalk-stream"]


@pytest.fixture
async def ctx(make_channel: MakeChannel) -> RecordingContext:
    """The context of a started channel (what it published and reported)."""
    _, started = await make_channel()
    return started


async def test_start_opens_the_gateway_and_connects(
    make_channel: MakeChannel, fake_dingtalk: FakeDingTalk
) -> None:
    channel, ctx = await make_channel()
    [opened] = fake_dingtalk.requests("POST", "/v1.0/gateway/connections/open")
    assert opened.body["clientId"] == channel.config.client_id
    assert opened.body["clientSecret"] == "secret"
    assert opened.body["subscriptions"] == [
        {"type": "CALLBACK", "topic": CHATBOT_TOPIC},
        {"type": "CALLBACK", "topic": CARD_CALLBACK_TOPIC},  # card button presses
    ]
    assert fake_dingtalk.connections == 1
    connected = {"connected": True, "error": None, "retry": None}
    await fake_dingtalk.until(lambda: connected in ctx.reports)


async def test_callback_is_acked_and_published(
    ctx: RecordingContext, fake_dingtalk: FakeDingTalk
) -> None:
    data = fake_dingtalk.chatbot_data("hello there", msg_id="m-1")
    frame_id = fake_dingtalk.push_message(data)
    ack = await fake_dingtalk.until(lambda: fake_dingtalk.ack_for(frame_id))
    assert ack["code"] == 200
    assert json.loads(ack["data"]) == {"response": "OK"}
    [msg] = await fake_dingtalk.until(lambda: ctx.published)
    assert msg.event_id == "m-1"
    assert msg.text == "hello there"
    assert (msg.chat.chat_type, msg.chat.chat_id) == ("dm", "staff-1")
    assert msg.sender.id == "staff-1"


async def test_group_mention_is_published_with_mentions_stripped(
    ctx: RecordingContext, fake_dingtalk: FakeDingTalk
) -> None:
    quiet = fake_dingtalk.chatbot_data(
        "just chatting", group=True, at_bot=False, conversation_id="cid-group"
    )
    quiet_frame = fake_dingtalk.push_message(quiet)
    asked = fake_dingtalk.chatbot_data(
        " @Antler /models@Antler gpt-4o", group=True, conversation_id="cid-group"
    )
    fake_dingtalk.push_message(asked)
    await fake_dingtalk.until(lambda: len(ctx.published) == 2)
    quiet_msg, msg = sorted(ctx.published, key=lambda m: m.mentions_bot)
    assert msg.text == "/models gpt-4o"
    assert (msg.chat.chat_type, msg.chat.chat_id) == ("group", "cid-group")
    assert (fake_dingtalk.ack_for(quiet_frame) or {}).get("code") == 200
    # the service's access gate decides on the group trigger from what the channel reports
    assert (quiet_msg.mentions_bot, quiet_msg.chat.chat_type) == (False, "group")


async def test_redelivered_message_is_acked_again_and_published_once(
    ctx: RecordingContext, fake_dingtalk: FakeDingTalk
) -> None:
    data = fake_dingtalk.chatbot_data("once", msg_id="m-dup")
    first = fake_dingtalk.push_message(data)
    second = fake_dingtalk.push_message(data)
    await fake_dingtalk.until(
        lambda: fake_dingtalk.ack_for(first) and fake_dingtalk.ack_for(second)
    )
    await fake_dingtalk.until(lambda: ctx.published)
    assert [m.event_id for m in ctx.published] == ["m-dup"]


async def test_ping_is_answered_with_its_opaque(
    make_channel: MakeChannel, fake_dingtalk: FakeDingTalk
) -> None:
    await make_channel()
    frame = fake_dingtalk.push_ping("op-123")
    ack = await fake_dingtalk.until(lambda: fake_dingtalk.ack_for(frame))
    assert json.loads(ack["data"]) == {"opaque": "op-123"}


async def test_disconnect_frame_reconnects(
    make_channel: MakeChannel, fake_dingtalk: FakeDingTalk
) -> None:
    channel, ctx = await make_channel()
    fake_dingtalk.push_disconnect()
    await fake_dingtalk.until(lambda: fake_dingtalk.connections == 2)
    fake_dingtalk.push_message(fake_dingtalk.chatbot_data("after reconnect"))
    [msg] = await fake_dingtalk.until(lambda: ctx.published)
    assert msg.text == "after reconnect"
    assert len(fake_dingtalk.requests("POST", "/v1.0/gateway/connections/open")) == 2
    assert channel.link.connections == 2


async def test_dropped_socket_and_failed_open_reconnect(
    ctx: RecordingContext, fake_dingtalk: FakeDingTalk
) -> None:
    fake_dingtalk.fail("POST", "/v1.0/gateway/connections/open", 503)
    fake_dingtalk.drop()
    await fake_dingtalk.until(lambda: fake_dingtalk.connections == 2)
    assert len(fake_dingtalk.requests("POST", "/v1.0/gateway/connections/open")) == 3
    assert any(r["connected"] is False and r["error"] for r in ctx.reports)
    fake_dingtalk.push_message(fake_dingtalk.chatbot_data("still here"))
    await fake_dingtalk.until(lambda: ctx.published)


async def test_malformed_frames_and_messages_are_skipped(
    ctx: RecordingContext, fake_dingtalk: FakeDingTalk
) -> None:
    fake_dingtalk.push_raw("this is not json")
    broken = fake_dingtalk.push_message({"conversationType": "1", "text": {"content": "x"}})
    odd = fake_dingtalk.chatbot_data(msgtype="hologram", content={"x": 1}, msg_id="m-odd")
    odd_frame = fake_dingtalk.push_message(odd)
    await fake_dingtalk.until(
        lambda: fake_dingtalk.ack_for(broken) and fake_dingtalk.ack_for(odd_frame)
    )
    fake_dingtalk.push_message(fake_dingtalk.chatbot_data("fine", msg_id="m-ok"))
    await fake_dingtalk.until(lambda: len(ctx.published) == 2)
    odd_msg, msg = ctx.published
    assert msg.event_id == "m-ok"
    assert odd_msg.unsupported == "this kind of message"  # answered by the service, not dropped


async def test_stop_leaves_no_thread_behind(
    make_channel: MakeChannel, fake_dingtalk: FakeDingTalk
) -> None:
    before = set(threading.enumerate())
    channel, _ = await make_channel()
    assert _stream_threads()
    await channel.stop()
    assert _stream_threads() == []
    assert set(threading.enumerate()) - before == set()
    assert not channel.link.connected


async def test_start_outage_is_retried_until_the_gateway_recovers(
    make_channel: MakeChannel, fake_dingtalk: FakeDingTalk, caplog: pytest.LogCaptureFixture
) -> None:
    vt = VirtualTime()
    opens = "/v1.0/gateway/connections/open"
    fake_dingtalk.fail("POST", opens, 503, times=3)
    caplog.set_level(logging.INFO, logger="channels.dingtalk.stream")
    channel, ctx = await make_channel(backoff=vt.policy())
    await fake_dingtalk.until(lambda: fake_dingtalk.connections == 1)
    fake_dingtalk.push_message(fake_dingtalk.chatbot_data("after the outage"))
    [msg] = await fake_dingtalk.until(lambda: ctx.published)
    assert msg.text == "after the outage"
    assert len(fake_dingtalk.requests("POST", opens)) == 4
    retries = [r["retry"] for r in ctx.reports if r["retry"] is not None]
    assert [r.attempts for r in retries] == [1, 2, 3]
    assert "HTTP 503" in retries[0].last_error
    assert len(vt.slept) == 3
    ours = [r for r in caplog.records if r.name == "channels.dingtalk.stream"]
    assert [r.levelname for r in ours] == ["WARNING", "INFO"]  # one failure line, one recovery
    assert channel.link.connected
