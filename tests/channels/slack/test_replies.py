"""Replies: native streaming, chat.update fallback, 429s, buttons, files."""

from __future__ import annotations

import pytest

from channels.base import Attachment, Button, FileTooLarge, RateLimited, ReplyDoc, ToolStep
from tests.channels.slack import events


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
        "chat.appendStream",
        "chat.appendStream",
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


async def test_stream_expiry_continues_in_new_message(socket_channel, fake_slack):
    channel, ctx = socket_channel
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
    fake_slack.rate_limit("chat.appendStream", retry_after=2)
    with pytest.raises(RateLimited) as info:
        await channel.update_reply(handle, ReplyDoc(text="one two "))
    assert info.value.retry_after == 2
    await channel.finish_reply(handle, ReplyDoc(text="one two three", status="done"))
    assert fake_slack.messages[handle.stream_ts]["text"] == "one two three"


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
    event = events.dm("see file", subtype="file_share", files=[{
        "id": "F1", "name": "notes.txt", "mimetype": "text/plain", "size": 10,
        "url_private_download": url,
    }])
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
