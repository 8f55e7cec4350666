"""The Conversations pages' data: a stopped reply stays in the transcript, the list shows each
chat's last message, and a running reply can be watched while it streams."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

import aiohttp

from bot.stores.conversations import Conversation
from tests.console.client import Console
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.fakes.recording_channel import RecordingChannel
from tests.harness import ServiceHarness


async def _running(svc: ServiceHarness, fake_openai: FakeOpenAI, text: str) -> Conversation:
    """A reply to `text` in chat c1 that stalls after a few words, with those words shown."""
    assert svc.app is not None
    channel = svc.channel("test")
    assert isinstance(channel, RecordingChannel)
    fake_openai.script(Reply(text="partial words then more " * 20, stall_after=3))
    await channel.inject(text)
    await fake_openai.wait_requests(1)
    await channel.wait_for("update")
    conv = await svc.app.conversations.get("test:c1")
    assert conv is not None
    return conv


async def test_a_stopped_reply_stays_in_the_transcript_marked_stopped(
    admin: Console, svc: ServiceHarness, fake_openai: FakeOpenAI
) -> None:
    conv = await _running(svc, fake_openai, "tell me a long story")
    here = f"/console/conversations/{conv.thread_id}"
    _, _, resp = await admin.post(here + "/stop")
    assert "The running reply was stopped." in await admin.follow(resp)
    await svc.idle()
    channel = svc.channel("test")
    assert isinstance(channel, RecordingChannel)
    shown = channel.of("finish")[-1].text
    assert shown.startswith("partial")
    _, page, _ = await admin.get(here)
    transcript = page[page.index('class="transcript"') :]
    assert "tell me a long story" in transcript
    assert shown.strip() in transcript
    assert "msg-stopped" in transcript

    # the next turn goes on from it: the model sees what the user saw
    await channel.inject("go on")
    await channel.wait_for("finish", 2)
    await svc.idle()
    asked = [r for r in fake_openai.requests if "go on" in fake_openai.user_texts(r)]
    assert asked, "the next turn asked the model"
    said = [m["content"] for m in asked[0].messages if m["role"] == "assistant"]
    assert said == [shown]


async def test_the_list_shows_each_chats_last_message_trimmed_and_its_time(
    admin: Console, svc: ServiceHarness
) -> None:
    channel = svc.channel("test")
    assert isinstance(channel, RecordingChannel)
    await channel.inject("hello there", "c1")
    await channel.inject("word " * 40 + "THE-END", "c2")  # the echo answer is long
    await channel.wait_for("finish", 2)
    await svc.idle()
    _, page, _ = await admin.get("/console/conversations")
    rows = {chat: page[page.index(f">{chat}<") :].split("</tr>")[0] for chat in ("c1", "c2")}
    assert "assistant:</span> echo: hello there" in rows["c1"]
    assert re.search(r'class="when">\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC<', rows["c1"])
    long = rows["c2"].split("assistant:</span> ")[1].split("<br>")[0]
    assert long.endswith("…")
    assert len(long) <= 80
    assert "THE-END" not in rows["c2"]


async def _events(resp: aiohttp.ClientResponse) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """(event, data) pairs as they arrive on a server-sent event stream."""
    name = ""
    async for raw in resp.content:
        line = raw.decode().rstrip("\n")
        if line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            yield name, json.loads(line[6:])


async def test_a_running_reply_streams_live_until_it_ends(
    admin: Console, svc: ServiceHarness, fake_openai: FakeOpenAI
) -> None:
    conv = await _running(svc, fake_openai, "tell me a long story")
    url = admin.base + f"/console/conversations/{conv.thread_id}/live"
    async with admin.http.get(url, headers={"Accept-Encoding": "gzip, deflate"}) as resp:
        assert resp.status == 200
        assert resp.headers["Content-Type"].startswith("text/event-stream")
        assert resp.headers["Cache-Control"] == "no-cache, no-transform"
        assert resp.headers["X-Accel-Buffering"] == "no"
        assert "Content-Encoding" not in resp.headers
        events = _events(resp)
        name, data = await anext(events)  # at once: the reply as it is now
        assert name == "reply"
        assert data["text"].startswith("partial")
        assert data["status"] == "working"
        fake_openai.release()
        seen = [(name, data) async for name, data in events]
    assert seen[-1][0] == "end"  # the reply was written: the stream says so and closes
    assert all(name == "reply" for name, _ in seen[:-1])
    await svc.idle()
    # a conversation with nothing running ends at once; an unknown one is not found
    async with admin.http.get(url) as resp:
        assert [name async for name, _ in _events(resp)] == ["end"]
    status, _, _ = await admin.get("/console/conversations/no-such-thread/live")
    assert status == 404


async def test_the_live_stream_needs_a_console_session(
    console: Console, svc: ServiceHarness
) -> None:
    status, _, resp = await console.get("/console/conversations/whatever/live")
    assert status == 303
    assert resp.headers["Location"].startswith("/console/login")
