"""Socket Mode inbound through the real bolt + slack_sdk against the fake Slack."""

from __future__ import annotations

import asyncio

from tests.channels.slack import events
from tests.fakes.slack_server import BOT_ID, BOT_USER


async def test_dm_is_acked_and_published(socket_channel, fake_slack):
    _, ctx = socket_channel
    env = fake_slack.push_event(events.dm("hello there"), event_id="Ev1")
    ack = await asyncio.to_thread(fake_slack.wait_ack, env)
    assert ack["envelope_id"] == env
    [msg] = await ctx.wait_published()
    assert msg.event_id == "Ev1"
    assert msg.text == "hello there"
    assert msg.chat.chat_type == "dm"
    assert msg.chat.topic_id is None
    assert msg.chat.key == "slack:T0001/D0001"
    assert "auth.test" in fake_slack.methods()
    assert "apps.connections.open" in fake_slack.methods()


async def test_redelivered_event_is_published_once(socket_channel, fake_slack):
    _, ctx = socket_channel
    fake_slack.push_event(events.dm("hi"), event_id="EvSame")
    fake_slack.push_event(events.dm("hi"), event_id="EvSame", retry_attempt=1)
    env = fake_slack.push_event(events.dm("next", ts="1700000009.000100"), event_id="EvNext")
    await asyncio.to_thread(fake_slack.wait_ack, env)
    await ctx.wait_published(2)
    await asyncio.sleep(0.05)
    assert [m.event_id for m in ctx.published] == ["EvSame", "EvNext"]


async def test_mention_in_channel_opens_thread_conversation(socket_channel, fake_slack):
    _, ctx = socket_channel
    fake_slack.push_event(events.mention("/new@Antler"), event_id="EvM")
    [msg] = await ctx.wait_published()
    assert msg.text == "/new"
    assert msg.mentions_bot
    assert msg.chat.chat_type == "group"
    assert msg.chat.topic_id == "1700000002.000100"


async def test_own_and_bot_messages_and_subtypes_ignored(socket_channel, fake_slack):
    _, ctx = socket_channel
    fake_slack.push_event(events.dm("mine", user=BOT_USER), event_id="E1")
    fake_slack.push_event(events.dm("bot", bot_id=BOT_ID, ts="1.1"), event_id="E2")
    fake_slack.push_event(events.dm("edit", subtype="message_changed", ts="1.2"), event_id="E3")
    fake_slack.push_event(events.dm("joined", subtype="channel_join", ts="1.3"), event_id="E4")
    fake_slack.push_event(events.dm("plain", ts="1.4"), event_id="E5")
    await ctx.wait_published()
    await asyncio.sleep(0.1)
    assert [m.event_id for m in ctx.published] == ["E5"]


async def test_channel_message_reported_once_with_its_mention_flag(socket_channel, fake_slack):
    _, ctx = socket_channel
    fake_slack.push_event(events.channel_message("chatter", "1.1"), event_id="E1")
    # The message event of a mention is dropped: its app_mention twin is the one published.
    fake_slack.push_event(events.channel_message(f"<@{BOT_USER}> hi", "1.2"), event_id="E2")
    fake_slack.push_event(events.mention("hi", ts="1.2"), event_id="E3")
    await ctx.wait_published(2)
    await asyncio.sleep(0.1)
    assert [(m.event_id, m.mentions_bot) for m in ctx.published] == [("E1", False), ("E3", True)]
