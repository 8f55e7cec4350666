"""Replies: native streaming, chat.update fallback, 429s, buttons, files."""

from __future__ import annotations

import pytest

from channels.base import Attachment, Button, FileTooLarge, RateLimited, ReplyDoc, ToolStep
from tests.channels.slack import events
from tests.fakes.clock import START, VirtualClock


async def _mention(channel, ctx, fake_slack, text="hi", ts="1700000002.000100"):
    fake_slack.push_event(events.mention(text, ts=ts), event_id=f"Ev{ts}")
    await ctx.wait_published(len(ctx.published) + 1)
    return ctx.published[-1]


async def test_native_stream_with_status(socket_channel, fake_slack):
    channel, ctx = socket_channel
    msg = await _mention(channel, ctx, fake_slack)
    handle = await channel.open_reply(msg, ReplyDoc(status="working"))
    await channel.update_reply(handle, ReplyDoc(text="Hello"))
    tool = ToolStep(id="t1", label="web_search")
    await channel.update_reply(handle, ReplyDoc(text="Hello wor", progress=(tool,)))
    await channel.finish_reply(
        handle, ReplyDoc(text="Hello world", status="done", buttons=(Button(label="A", value="a"),))
    )
    methods = [m for m in fake_slack.methods() if m.startswith(("chat.", "assistant."))]
    assert methods == [
        "assistant.threads.setStatus",
        "chat.startStream",
        "assistant.threads.setStatus",
        "chat.appendStream",  # " wor" was too short to append alone: it went with the final
        "chat.stopStream",
    ]
    statuses = [c.body["status"] for c in fake_slack.calls_of("assistant.threads.setStatus")]
    assert statuses == ["is thinking...", "is running web_search..."]
    start = fake_slack.calls_of("chat.startStream")[0].body
    assert start["thread_ts"] == msg.chat.topic_id
    assert start["recipient_team_id"] == "T0001"
    assert start["recipient_user_id"] == "U0001"
    stream_msg = fake_slack.messages[handle.stream_ts]
    assert stream_msg["text"] == "Hello world"
    stop = fake_slack.calls_of("chat.stopStream")[0].body
    assert stop["blocks"][0]["elements"][0]["value"] == "a"


async def test_fallback_when_streaming_unavailable(socket_channel, fake_slack):
    channel, ctx = socket_channel
    fake_slack.streaming_supported = False
    msg = await _mention(channel, ctx, fake_slack)
    handle = await channel.open_reply(msg, ReplyDoc(status="working"))
    await channel.update_reply(handle, ReplyDoc(text="Hel"))
    await channel.update_reply(handle, ReplyDoc(text="Hello"))
    await channel.finish_reply(handle, ReplyDoc(text="Hello **world**", status="done"))
    chat = [m for m in fake_slack.methods() if m.startswith("chat.")]
    assert chat[:2] == ["chat.startStream", "chat.postMessage"]
    assert chat[-1] == "chat.update"
    final = fake_slack.calls_of("chat.update")[-1].body
    assert final["blocks"][0] == {"type": "markdown", "text": "Hello **world**"}
    assert final["text"] == "Hello *world*"
    # The next reply does not try to stream again.
    msg2 = await _mention(channel, ctx, fake_slack, ts="1700000003.000100")
    h2 = await channel.open_reply(msg2, ReplyDoc(status="working"))
    await channel.update_reply(h2, ReplyDoc(text="x"))
    assert len(fake_slack.calls_of("chat.startStream")) == 1


async def test_stream_expiry_continues_in_new_message(make_channel, fake_slack):
    channel, ctx = await make_channel(min_append_chars=1)  # every delta is appended
    fake_slack.expire_streams_after(1)
    msg = await _mention(channel, ctx, fake_slack)
    handle = await channel.open_reply(msg, ReplyDoc(status="working"))
    await channel.update_reply(handle, ReplyDoc(text="Part one. "))
    await channel.update_reply(handle, ReplyDoc(text="Part one. Part two. "))
    await channel.update_reply(handle, ReplyDoc(text="Part one. Part two. Part three."))
    final = ReplyDoc(text="Part one. Part two. Part three!", status="done")
    await channel.finish_reply(handle, final)
    stream_text = fake_slack.messages[handle.stream_ts]["text"]
    assert stream_text == "Part one. Part two. "
    fallback = fake_slack.messages[handle.edit_ts]
    assert fallback["text"] == "Part three!"
    assert fallback["thread_ts"] == msg.chat.topic_id


async def test_429_mid_stream_raises_rate_limited_then_resend_works(socket_channel, fake_slack):
    channel, ctx = socket_channel
    msg = await _mention(channel, ctx, fake_slack)
    handle = await channel.open_reply(msg, ReplyDoc(status="working"))
    await channel.update_reply(handle, ReplyDoc(text="one "))
    fake_slack.rate_limit("chat.appendStream", retry_after=0.3)
    two = "one " + "two " * 20
    with pytest.raises(RateLimited) as info:
        await channel.update_reply(handle, ReplyDoc(text=two))
    assert info.value.retry_after == 0.3
    calls = len(fake_slack.calls_of("chat.appendStream"))
    await channel.update_reply(handle, ReplyDoc(text=two + "three " * 20))
    assert len(fake_slack.calls_of("chat.appendStream")) == calls  # blocked: held, not sent
    await channel.finish_reply(handle, ReplyDoc(text=two + "three", status="done"))
    assert fake_slack.messages[handle.stream_ts]["text"] == two + "three"


async def test_429_on_final_update_is_retryable(make_channel, fake_slack):
    channel, ctx = await make_channel(native_stream=False)
    assert any(b.scope == "workspace" for b in channel.capabilities.edit_budget)
    msg = await _mention(channel, ctx, fake_slack)
    handle = await channel.open_reply(msg, ReplyDoc(status="working"))
    await channel.update_reply(handle, ReplyDoc(text="draft"))
    fake_slack.rate_limit("chat.update", retry_after=1)
    with pytest.raises(RateLimited) as info:
        await channel.finish_reply(handle, ReplyDoc(text="final", status="done"))
    assert info.value.scope == "workspace"
    await channel.finish_reply(handle, ReplyDoc(text="final", status="done"))
    assert fake_slack.messages[handle.edit_ts]["text"] == "final"
    assert not fake_slack.calls_of("chat.startStream")


async def test_workspace_budget_coalesces_updates(make_channel, fake_slack):
    channel, ctx = await make_channel(native_stream=False, workspace_edits_per_second=2)
    msg = await _mention(channel, ctx, fake_slack)
    handle = await channel.open_reply(msg, ReplyDoc(status="working"))
    for i in range(30):
        await channel.update_reply(handle, ReplyDoc(text="word " * (i + 1)))
    updates_now = len(fake_slack.calls_of("chat.update"))
    assert updates_now <= 3  # the burst; the rest coalesced (a token refills only every 0.5 s)
    await fake_slack.until(
        lambda f: f.messages[handle.edit_ts]["text"].strip() == ("word " * 30).strip(), timeout=5
    )
    assert len(fake_slack.calls_of("chat.update")) <= updates_now + 2
    await channel.finish_reply(handle, ReplyDoc(text="done", status="done"))
    assert fake_slack.messages[handle.edit_ts]["text"] == "done"


async def test_long_answer_continuations(socket_channel, fake_slack):
    channel, ctx = socket_channel
    msg = await _mention(channel, ctx, fake_slack)
    handle = await channel.open_reply(msg, ReplyDoc(status="working"))
    part1, part2 = "a" * 11_000, "b" * 5_000
    await channel.finish_reply(handle, ReplyDoc(text=part1, status="done"))
    await channel.send_continuation(handle, ReplyDoc(text=part2, status="done"))
    posts = fake_slack.calls_of("chat.postMessage")
    assert [p.body["blocks"][0]["text"] for p in posts] == [part1, part2]
    assert all(p.body["thread_ts"] == msg.chat.topic_id for p in posts)


async def test_queued_reaction_and_send_text(socket_channel, fake_slack):
    channel, ctx = socket_channel
    msg = await _mention(channel, ctx, fake_slack)
    handle = await channel.mark_queued(msg)
    await channel.update_reply(handle, ReplyDoc(text="go"))
    await channel.finish_reply(handle, ReplyDoc(text="go!", status="done"))
    assert fake_slack.calls_of("reactions.add")[0].body["name"] == "hourglass"
    assert len(fake_slack.calls_of("reactions.remove")) == 1
    await channel.send_text(msg.chat, "Started a new conversation.")
    last = fake_slack.calls_of("chat.postMessage")[-1].body
    assert last["thread_ts"] == msg.chat.topic_id
    assert "new conversation" in last["text"]


async def test_file_in_and_out(socket_channel, fake_slack, tmp_path):
    channel, ctx = socket_channel
    url = fake_slack.add_file("notes.txt", b"hello file")
    event = events.file_share("see file", "notes.txt", url, 10)
    fake_slack.push_event(event, event_id="EvF")
    [msg] = await ctx.wait_published()
    [att] = msg.attachments
    path = await channel.fetch_file(msg, att, tmp_path / "uploads")
    assert path.read_bytes() == b"hello file"
    assert fake_slack.downloads[0]["auth"] == "Bearer xoxb-test"

    handle = await channel.open_reply(msg, ReplyDoc(status="working"))
    out = tmp_path / "report.csv"
    out.write_text("a,b\n1,2\n")
    await channel.send_file(handle, out)
    [upload] = [u for u in fake_slack.uploads.values() if u.get("completed")]
    assert upload["data"] == b"a,b\n1,2\n"
    assert upload["thread_ts"] == msg.message_id
    assert upload["channel"] == "D0001"


async def test_file_too_large(make_channel, fake_slack, tmp_path):
    channel, _ = await make_channel(max_file_mb=0.0001)  # ~104 bytes
    url = fake_slack.add_file("big.bin", b"x" * 500)
    big = Attachment(name="big.bin", ref=url, size=500)
    with pytest.raises(FileTooLarge):
        await channel.fetch_file(None, big, tmp_path)
    unknown_size = Attachment(name="big.bin", ref=url)
    with pytest.raises(FileTooLarge):
        await channel.fetch_file(None, unknown_size, tmp_path)
    assert not (tmp_path / "big.bin").exists()


async def test_the_service_limit_applies_while_downloading(make_channel, fake_slack, tmp_path):
    channel, _ = await make_channel()  # the channel's own limit: 20 MB
    url = fake_slack.add_file("mid.bin", b"x" * 5000)
    with pytest.raises(FileTooLarge):
        await channel.fetch_file(
            None, Attachment(name="mid.bin", ref=url), tmp_path / "up", limit=1024
        )
    assert list((tmp_path / "up").iterdir()) == []


async def test_appends_are_coalesced_within_the_workspace_budget(make_channel, fake_slack):
    channel, ctx = await make_channel()
    clock = VirtualClock()
    channel.pacer.clock, channel.pacer.sleep = clock, clock.sleep
    msgs = [
        await _mention(channel, ctx, fake_slack, ts=f"17000000{10 + i}.000100") for i in range(4)
    ]
    handles = [await channel.open_reply(m, ReplyDoc(status="working")) for m in msgs]
    texts = [""] * 4
    for _ in range(40):  # 4 answers, 4 updates a second each, a few characters per update
        for i, handle in enumerate(handles):
            texts[i] += "tok "
            await channel.update_reply(handle, ReplyDoc(text=texts[i]))
        clock.advance(0.25)
    for i, handle in enumerate(handles):
        await channel.finish_reply(handle, ReplyDoc(text=texts[i], status="done"))
    streamed = fake_slack.calls_of("chat.startStream") + fake_slack.calls_of("chat.appendStream")
    budget = channel.capabilities.budgets_for(msgs[0].chat, "chat.appendStream")[0]
    elapsed = clock.now() - START
    assert len(streamed) <= budget.burst + budget.per_second * elapsed + 1e-6  # of 160 updates
    for i, handle in enumerate(handles):
        assert fake_slack.messages[handle.stream_ts]["text"] == texts[i]


async def test_short_deltas_wait_for_a_minimum_chunk(make_channel, fake_slack):
    channel, ctx = await make_channel(min_append_chars=40)
    clock = VirtualClock()
    channel.pacer.clock, channel.pacer.sleep = clock, clock.sleep
    msg = await _mention(channel, ctx, fake_slack)
    handle = await channel.open_reply(msg, ReplyDoc(status="working"))
    text = "start "
    await channel.update_reply(handle, ReplyDoc(text=text))  # the first text at once
    for _ in range(9):
        text += "tok "  # 36 characters in all: not yet worth a call
        await channel.update_reply(handle, ReplyDoc(text=text))
    assert len(fake_slack.calls_of("chat.appendStream")) == 0
    text += "tok "
    await channel.update_reply(handle, ReplyDoc(text=text))
    assert [c.body["chunks"][0]["text"] for c in fake_slack.calls_of("chat.appendStream")] == [
        "tok " * 10
    ]
    text += "end"
    clock.advance(2.5)  # a short delta still goes out once it has waited long enough
    await channel.update_reply(handle, ReplyDoc(text=text))
    assert len(fake_slack.calls_of("chat.appendStream")) == 2
    await channel.finish_reply(handle, ReplyDoc(text=text, status="done"))
    assert fake_slack.messages[handle.stream_ts]["text"] == text


async def test_a_channel_the_bot_was_removed_from_refuses_the_delivery(make_channel, fake_slack):
    from bot.metrics import Metrics
    from bot.replies import ReplyStreamer
    from channels.base import DeliveryRefused

    channel, ctx = await make_channel(native_stream=False)
    msg = await _mention(channel, ctx, fake_slack)
    metrics = Metrics()
    streamer = ReplyStreamer(channel, msg, metrics=metrics)
    await streamer.open()
    streamer.doc = ReplyDoc(text="never seen")
    fake_slack.fail("chat.postMessage", "not_in_channel", times=3)
    with pytest.raises(DeliveryRefused) as info:
        await streamer.finish()
    assert info.value.reason == "bot removed from the chat"
    assert len(fake_slack.calls_of("chat.postMessage")) == 1  # not retried
    assert (
        metrics.value(
            "antler_deliveries_given_up_total", channel="slack", reason="bot removed from the chat"
        )
        == 1
    )
