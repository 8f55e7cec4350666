"""Streaming replies through the real PTB Bot against the fake Bot API server."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from channels.base import Button, RateLimited, ReplyDoc
from channels.telegram.channel import TelegramChannel
from channels.telegram.stream import TelegramReply
from tests.fakes.clock import VirtualClock
from tests.fakes.recording_context import RecordingContext
from tests.fakes.telegram_server import FakeTelegram, visible_text


async def inbound(fake: FakeTelegram, ctx, chat_id: int = 555, text: str = "hello", **kw):
    fake.push_message(chat_id, text, **kw)
    count = len(ctx.published)
    await fake.wait_for(lambda: len(ctx.published) > count)
    return ctx.published[-1]


async def test_dm_streams_drafts_then_sends_the_final(fake, ctx, make_channel) -> None:
    channel = await make_channel()
    msg = await inbound(fake, ctx)
    handle = await channel.open_reply(msg, ReplyDoc())
    await channel.update_reply(handle, ReplyDoc(text="The **answer**"))
    await channel.finish_reply(handle, ReplyDoc(text="The **answer** is 42.", status="done"))
    drafts = fake.calls_of("sendMessageDraft")
    assert [d.body["text"] for d in drafts] == ["The <b>answer</b>"]
    assert {d.body["draft_id"] for d in drafts} == {handle.draft_id}
    (final,) = fake.calls_of("sendMessage")
    assert final.body["text"] == "The <b>answer</b> is 42."
    assert final.body["parse_mode"] == "HTML"
    assert final.body["reply_parameters"]["message_id"] == int(msg.message_id)
    assert fake.calls_of("sendChatAction")
    assert fake.violations == []


async def test_updates_are_coalesced_within_the_chat_interval(
    fake, ctx, make_channel, clock: VirtualClock
) -> None:
    channel = await make_channel()
    msg = await inbound(fake, ctx)
    handle = await channel.open_reply(msg, ReplyDoc())
    clock.hold()  # all 29 updates come within the interval
    for n in range(1, 30):
        await channel.update_reply(handle, ReplyDoc(text="word " * n))
        await asyncio.sleep(0.01)
    clock.release()
    await fake.wait_for(lambda: len(fake.calls_of("sendMessageDraft")) >= 2)
    await channel.finish_reply(handle, ReplyDoc(text="done", status="done"))
    drafts = fake.calls_of("sendMessageDraft")
    assert len(drafts) == 2  # the first text at once, then only the newest when the slot opened
    assert drafts[1].body["text"].count("word") == 29
    assert fake.violations == []


async def placeholder_reply(
    fake: FakeTelegram, ctx: RecordingContext, make_channel: Any, **config: Any
) -> tuple[TelegramChannel, TelegramReply]:
    """Drafts refused: the reply to a DM opens as a placeholder message the stream edits."""
    fake.drafts_supported = False
    channel = await make_channel(**config)
    msg = await inbound(fake, ctx)
    return channel, await channel.open_reply(msg, ReplyDoc())


async def test_refused_drafts_fall_back_to_an_edited_placeholder(fake, ctx, make_channel) -> None:
    channel, handle = await placeholder_reply(fake, ctx, make_channel)
    await channel.update_reply(handle, ReplyDoc(text="growing"))
    await channel.finish_reply(handle, ReplyDoc(text="grown", status="done"))
    assert [c.body["text"] for c in fake.calls_of("sendMessage")] == ["growing"]
    assert [e.body["text"] for e in fake.calls_of("editMessageText")] == ["grown"]
    assert channel.replies.drafts_ok is False
    assert fake.violations == []


async def test_a_429_blocks_every_call_until_retry_after_and_the_final_arrives(
    fake, ctx, make_channel, clock: VirtualClock
) -> None:
    channel, handle = await placeholder_reply(fake, ctx, make_channel)
    await channel.update_reply(handle, ReplyDoc(text="first"))
    fake.fail_next("editMessageText", 429, "Too Many Requests: retry after 1", retry_after=1)
    await clock.sleep(1.0)
    with pytest.raises(RateLimited) as info:
        await channel.update_reply(handle, ReplyDoc(text="mid stream"))
    assert info.value.scope == "bot"
    assert channel.sender.gate.remaining() > 0
    calls_before = len(fake.calls)
    await channel.finish_reply(handle, ReplyDoc(text="final", status="done"))  # waits it out
    assert fake.calls_of("editMessageText")[-1].body["text"] == "final"
    # nothing but polling and (once the block is over, on a slow machine) "typing…" between;
    # a call during the block itself is a violation the fake records
    assert {c.method for c in fake.calls[calls_before:-1]} <= {"getUpdates", "sendChatAction"}
    assert fake.violations == []


async def test_rejected_entities_are_resent_as_plain_text(fake, ctx, make_channel) -> None:
    channel = await make_channel()
    fake.drafts_supported = False
    msg = await inbound(fake, ctx, text="/status")
    handle = await channel.open_reply(msg, ReplyDoc())
    fake.fail_next("sendMessage", 400, "Bad Request: can't parse entities: unexpected tag")
    await channel.finish_reply(handle, ReplyDoc(text="**bold** answer", status="done"))
    sends = fake.calls_of("sendMessage")
    assert [(e.body["text"], e.body.get("parse_mode")) for e in sends] == [
        ("<b>bold</b> answer", "HTML"),
        ("bold answer", None),  # its visible text, never raw markdown
    ]


async def test_not_modified_is_not_an_error(fake, ctx, make_channel, clock: VirtualClock) -> None:
    channel, handle = await placeholder_reply(fake, ctx, make_channel, stream_interval_dm=1.0)
    await channel.update_reply(handle, ReplyDoc(text="same"))
    handle.shown = ""  # forget what was shown so the same text is sent again
    await clock.sleep(1.0)
    await channel.update_reply(handle, ReplyDoc(text="same"))  # "not modified": no error
    await channel.finish_reply(handle, ReplyDoc(text="same", status="done"))
    assert [e.body["text"] for e in fake.calls_of("editMessageText")] == ["same", "same"]
    assert handle.finished


async def test_long_final_is_split_under_4096_and_buttons_go_last(fake, ctx, make_channel) -> None:
    channel = await make_channel()
    msg = await inbound(fake, ctx, text="/models")
    handle = await channel.open_reply(msg, ReplyDoc())
    text = "**bold** <tag> & " * 400  # ~5200 visible characters, far longer as HTML
    buttons = (
        Button(label="Fast", value="/models fast"),
        Button(label="Smart", value="/models smart"),
    )
    await channel.finish_reply(handle, ReplyDoc(text=text, status="done", buttons=buttons))
    edit, *more = fake.calls_of("sendMessage")
    assert len(more) >= 1
    assert all(len(visible_text(c.body["text"], "HTML")[0]) <= 4096 for c in [edit, *more])
    assert "reply_markup" not in edit.body
    keyboard = more[-1].body["reply_markup"]["inline_keyboard"]
    assert [b["callback_data"] for row in keyboard for b in row] == [
        "\x1fv:/models fast",
        "\x1fv:/models smart",
    ]
    assert fake.violations == []


async def test_forum_topic_replies_stay_in_their_topic(fake, ctx, make_channel) -> None:
    channel = await make_channel()
    msg = await inbound(fake, ctx, chat_id=-400, text="@antler_bot hi", thread_id=11)
    assert msg.chat.topic_id == "11"
    handle = await channel.open_reply(msg, ReplyDoc())
    await channel.update_reply(handle, ReplyDoc(text="in the topic"))
    await fake.wait_for(lambda: fake.calls_of("sendChatAction"))
    sends = fake.calls_of("sendMessage", "sendChatAction")
    assert len(sends) == 2
    assert {c.body.get("message_thread_id") for c in sends} == {11}


async def test_a_refused_draft_changes_only_that_reply(fake, ctx, make_channel) -> None:
    channel = await make_channel()
    msg = await inbound(fake, ctx)
    handle = await channel.open_reply(msg, ReplyDoc())
    fake.fail_next("sendMessageDraft", 400, "Bad Request: TEXTDRAFT_PEER_INVALID")
    await channel.update_reply(handle, ReplyDoc(text="growing"))
    await channel.finish_reply(handle, ReplyDoc(text="grown", status="done"))
    assert [e.body["text"] for e in fake.calls_of("editMessageText")] == ["grown"]
    assert channel.replies.drafts_ok is True  # nothing else is switched off
    second = await channel.open_reply(await inbound(fake, ctx, text="again"), ReplyDoc())
    assert second.mode == "draft"


async def test_a_refused_final_edit_arrives_as_a_new_message(fake, ctx, make_channel) -> None:
    channel, handle = await placeholder_reply(fake, ctx, make_channel)
    await channel.update_reply(handle, ReplyDoc(text="growing"))
    fake.fail_next("editMessageText", 400, "Bad Request: message to edit not found")
    await channel.finish_reply(handle, ReplyDoc(text="**grown**", status="done"))
    assert [c.body["text"] for c in fake.calls_of("sendMessage")] == ["growing", "<b>grown</b>"]
    assert fake.violations == []


async def test_a_replys_first_message_is_known_when_its_update_returns(
    fake, ctx, make_channel
) -> None:
    """The journal keeps a reply's message id after each update; a first message sent later
    in the background (the chat's slot was taken) would be unknown to a restart after a kill,
    which would then post a second message beside the first. So the first message of an
    edited reply goes out within its update, once the chat's slot opens."""
    channel = await make_channel()
    first = await inbound(fake, ctx, chat_id=-500, text="@antler_bot one")
    second = await inbound(fake, ctx, chat_id=-500, text="@antler_bot two")
    a = await channel.open_reply(first, ReplyDoc())
    await channel.update_reply(a, ReplyDoc(text="answer one"))  # takes the chat's slot
    b = await channel.open_reply(second, ReplyDoc())
    await channel.update_reply(b, ReplyDoc(text="answer two"))
    assert channel.handle_state(b)["message_id"] is not None  # nothing awaited in between
    await channel.finish_reply(b, ReplyDoc(text="answer two, done", status="done"))
    await channel.finish_reply(a, ReplyDoc(text="answer one, done", status="done"))
    assert len(fake.calls_of("sendMessage")) == 2  # one message per reply, edited to its final
    assert fake.violations == []
