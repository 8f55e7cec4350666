"""Group flags, dedupe of redeliveries, malformed events."""

from __future__ import annotations

import json

from channels.base import ReplyDoc
from tests.channels.feishu import payloads
from tests.channels.feishu.conftest import until


async def test_group_messages_report_mentions_and_replies_to_bot(fake, ctx, make_channel):
    """The channel only reports; the service's access gate decides (tests/bot/test_access.py)."""
    channel = await make_channel()
    g = {"chat_type": "group", "chat_id": "oc_g"}
    fake.wait_ack(fake.push_event(payloads.message_event("chatter", **g)))
    fake.wait_ack(
        fake.push_event(
            payloads.message_event(
                "@_user_1 hi bot", mentions=[payloads.mention()], message_id="om_m", **g
            )
        )
    )
    [_, mention] = await ctx.wait_published(2)
    handle = await channel.open_reply(mention, ReplyDoc(status="working"))
    card_msg = handle.parts[0].message_id
    fake.wait_ack(
        fake.push_event(payloads.message_event("thanks", parent_id=card_msg, root_id="om_m", **g))
    )
    fake.wait_ack(
        fake.push_event(
            payloads.message_event(
                "@_user_1 not me", mentions=[payloads.mention(open_id="ou_bob", name="Bob")], **g
            )
        )
    )
    await ctx.wait_published(4)
    await until(lambda: len(fake.recorded("ws_endpoint")) == 1)
    flags = [(m.text, m.mentions_bot, m.replies_to_bot) for m in ctx.published]
    assert flags == [
        ("chatter", False, False),
        ("hi bot", True, False),
        ("thanks", False, True),
        ("@Bob not me", False, False),
    ]
    assert ctx.published[2].chat.topic_id == "om_m" == ctx.published[1].chat.topic_id
    assert fake.messages[card_msg]["reply_in_thread"] is True


async def test_group_trigger_all(fake, ctx, make_channel):
    await make_channel(group_trigger="all")
    fake.push_event(payloads.message_event("chatter", chat_type="group"))
    [msg] = await ctx.wait_published()
    assert msg.text == "chatter"


async def test_redelivered_event_published_once(fake, ctx, make_channel):
    await make_channel()
    env = payloads.message_event("once", message_id="om_dup", event_id="ev_dup")
    fake.wait_ack(fake.push_event(env))
    fake.wait_ack(fake.push_event(env))
    redelivery = payloads.message_event("once", message_id="om_dup")  # new event id, same msg
    fake.wait_ack(fake.push_event(redelivery))
    fake.wait_ack(fake.push_event(payloads.message_event("next")))
    await ctx.wait_published(2)
    assert [m.text for m in ctx.published] == ["once", "next"]


async def test_malformed_and_bot_messages_skipped(fake, ctx, make_channel):
    await make_channel()
    bad = payloads.message_event("x")
    bad["event"]["message"]["content"] = "{broken"
    assert fake.wait_ack(fake.push_event(bad)).code == 200
    fake.wait_ack(fake.push_event(payloads.message_event("from a bot", sender_type="app")))
    fake.push_event(payloads.message_event("still alive"))
    [msg] = await ctx.wait_published()
    assert msg.text == "still alive"


async def test_commands_answered_with_send_text_in_topic(fake, ctx, make_channel):
    channel = await make_channel()
    fake.push_event(payloads.message_event("/help", chat_type="group", message_id="om_h"))
    [msg] = await ctx.wait_published()
    await channel.send_text(msg.chat, "**Commands**: /new")
    [mid] = fake.replies_to("om_h")
    card = json.loads(fake.messages[mid]["content"])
    assert card["elements"][0]["content"] == "**Commands**: /new"
