"""Slash command, buttons, thread follow, mid-thread context, access control."""

from __future__ import annotations

import asyncio

from channels.base import ReplyDoc
from tests.channels.slack import events


async def test_slash_command_acked_and_published_as_subcommand(socket_channel, fake_slack):
    _, ctx = socket_channel
    env = fake_slack.push_command("new")
    ack = await asyncio.to_thread(fake_slack.wait_ack, env)
    assert ack["envelope_id"] == env
    env2 = fake_slack.push_command("models gpt-4o")
    fake_slack.push_command("")
    await ctx.wait_published(3)
    assert [m.text for m in ctx.published] == ["/new", "/models gpt-4o", "/help"]
    assert ctx.published[0].chat.key == "slack:T0001/D0001"
    await asyncio.to_thread(fake_slack.wait_ack, env2)


async def test_other_slash_command_not_published(socket_channel, fake_slack):
    _, ctx = socket_channel
    fake_slack.push_command("new", command="/other")
    fake_slack.push_command("status")
    [msg] = await ctx.wait_published()
    assert msg.text == "/status"


async def test_command_word_after_mention(socket_channel, fake_slack):
    _, ctx = socket_channel
    fake_slack.push_event(events.mention("new", ts="1.1"), event_id="E1")
    fake_slack.push_event(events.mention("new ideas please", ts="1.2"), event_id="E2")
    await ctx.wait_published(2)
    assert [m.text for m in ctx.published] == ["/new", "new ideas please"]


async def test_button_press_acked_and_published(socket_channel, fake_slack):
    _, ctx = socket_channel
    env = fake_slack.push_action("/models gpt-4o", channel="C0001", thread_ts="1700000002.000100")
    await asyncio.to_thread(fake_slack.wait_ack, env)
    [msg] = await ctx.wait_published()
    assert msg.is_button
    assert msg.text == "/models gpt-4o"
    assert msg.chat.topic_id == "1700000002.000100"
    assert msg.event_id.startswith("action:")


ROOT = "1700000002.000100"


async def answered_mention(channel, ctx, fake_slack) -> None:
    """A mention (event E1) starts the thread ROOT, and the bot answers in it."""
    fake_slack.push_event(events.mention("hello", ts=ROOT), event_id="E1")
    [msg] = await ctx.wait_published()
    handle = await channel.open_reply(msg, ReplyDoc(status="working"))
    await channel.finish_reply(handle, ReplyDoc(text="hi!", status="done"))


async def test_thread_follow_after_answer_survives_restart(make_channel, fake_slack):
    channel, ctx = await make_channel()
    await answered_mention(channel, ctx, fake_slack)
    fake_slack.push_event(
        events.channel_message("and more", "1700000003.000100", thread_ts=ROOT), event_id="E2"
    )
    fake_slack.push_event(
        events.channel_message("elsewhere", "1700000004.000100", thread_ts="9.9"), event_id="E3"
    )
    await ctx.wait_published(3)
    assert ctx.published[1].text == "and more"
    assert ctx.published[1].chat.key == ctx.published[0].chat.key
    # a followed thread counts as a reply to the bot; the service's gate decides from that
    assert [m.replies_to_bot for m in ctx.published] == [False, True, False]
    await channel.stop()

    _, ctx2 = await make_channel()
    fake_slack.push_event(
        events.channel_message("after restart", "1700000005.000100", thread_ts=ROOT),
        event_id="E4",
    )
    [again] = await ctx2.wait_published()
    assert again.text == "after restart"
    assert again.replies_to_bot


async def test_thread_follow_off(make_channel, fake_slack):
    channel, ctx = await make_channel(thread_follow=False)
    await answered_mention(channel, ctx, fake_slack)
    fake_slack.push_event(
        events.channel_message("more", "1700000003.000100", thread_ts=ROOT), event_id="E2"
    )
    fake_slack.push_event(
        events.mention("again", ts="1700000004.000100", thread_ts=ROOT), event_id="E3"
    )
    await ctx.wait_published(3)
    assert [(m.event_id, m.replies_to_bot) for m in ctx.published] == [
        ("E1", False),
        ("E2", False),
        ("E3", False),
    ]


async def test_mid_thread_summon_gets_earlier_messages(socket_channel, fake_slack):
    _, ctx = socket_channel
    root = fake_slack.add_message("C0001", "Our deploy failed at step 3", user="U0002")
    fake_slack.add_message("C0001", "logs say OOM", user="U0003", thread_ts=root)
    fake_slack.push_event(
        events.mention("what do you think?", ts="1700000099.000100", thread_ts=root),
        event_id="E1",
    )
    [msg] = await ctx.wait_published()
    assert msg.text == "what do you think?"
    assert msg.quoted_text is not None
    assert "<@U0002>: Our deploy failed at step 3" in msg.quoted_text
    assert "<@U0003>: logs say OOM" in msg.quoted_text
    [call] = fake_slack.calls_of("conversations.replies")
    assert call.body["ts"] == root


async def test_allowed_channels_alias(make_channel, fake_slack):
    channel, _ = await make_channel(allowed_channels=["C0001"])
    assert channel.config.allowed_chats == ["C0001"]
