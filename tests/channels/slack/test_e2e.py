"""End to end: fake Slack → real bolt/slack_sdk → service → agent (fake OpenAI) → fake Slack."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.channels.slack import events
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply, ToolCall
from tests.fakes.slack_server import (
    APP_TOKEN,
    BOT_TOKEN,
    SIGNING_SECRET,
    FakeSlack,
    signed_post,
)
from tests.harness import ServiceHarness


def slack_cfg(fake: FakeSlack, **extra: Any) -> dict[str, Any]:
    return {
        "enabled": True,
        "bot_token": BOT_TOKEN,
        "app_token": APP_TOKEN,
        "signing_secret": SIGNING_SECRET,
        "api_base": fake.api_base,
        **extra,
    }


@pytest.fixture
async def svc(
    tmp_path: Path, fake_openai: FakeOpenAI, fake_slack: FakeSlack
) -> AsyncIterator[ServiceHarness]:
    async with ServiceHarness(tmp_path, fake_openai, {"slack": slack_cfg(fake_slack)}) as s:
        yield s


def visible(message: dict[str, Any]) -> str:
    """What a user sees: the markdown block when there is one, else the (streamed) text."""
    blocks = message.get("blocks") or []
    if blocks and blocks[0].get("type") == "markdown":
        return str(blocks[0]["text"])
    return str(message["text"])


def bot_texts(fake: FakeSlack, thread_ts: str) -> list[str]:
    return [visible(m) for m in fake.thread_messages("C0001", thread_ts) if m.get("bot_id")]


async def test_mention_answered_in_thread_then_followed(svc, fake_slack):
    root = "1700000002.000100"
    fake_slack.push_event(events.mention("first", ts=root), event_id="Ev1")
    await fake_slack.until(lambda f: len(f.calls_of("chat.stopStream")) == 1, timeout=10)
    await svc.idle()
    fake_slack.push_event(
        events.channel_message("second", "1700000003.000100", thread_ts=root), event_id="Ev2"
    )
    await fake_slack.until(lambda f: len(f.calls_of("chat.stopStream")) == 2, timeout=10)
    await svc.idle()
    assert bot_texts(fake_slack, root) == ["echo: first", "echo: second"]


async def test_slash_command_new(svc, fake_slack):
    env = fake_slack.push_command("new")
    await asyncio.to_thread(fake_slack.wait_ack, env)
    await fake_slack.until(lambda f: f.calls_of("chat.postEphemeral"), timeout=10)
    await svc.idle()
    texts = [c.body["text"] for c in fake_slack.calls_of("chat.postEphemeral")]
    assert any("New conversation" in t for t in texts)  # to its sender only
    assert not fake_slack.calls_of("chat.startStream")
    assert not fake_slack.calls_of("chat.postMessage")


async def test_429_mid_stream_final_intact(tmp_path, fake_openai, fake_slack):
    text = "alpha beta gamma delta epsilon zeta eta theta iota kappa " * 4
    fake_openai.script(Reply(text=text, tokens_per_second=100))
    fake_slack.rate_limit("chat.appendStream", retry_after=1)
    async with ServiceHarness(tmp_path, fake_openai, {"slack": slack_cfg(fake_slack)}) as s:
        fake_slack.push_event(events.dm("go"), event_id="Ev1")
        await fake_slack.until(lambda f: f.calls_of("chat.stopStream"), timeout=15)
        await s.idle()
    stop = fake_slack.calls_of("chat.stopStream")[0].body
    assert fake_slack.messages[stop["ts"]]["text"] == text
    assert len(fake_slack.calls_of("chat.appendStream")) >= 2


async def test_stream_unavailable_falls_back_to_update(tmp_path, fake_openai, fake_slack):
    fake_slack.streaming_supported = False
    fake_openai.script(Reply(text="plain " * 30, tokens_per_second=150))
    async with ServiceHarness(tmp_path, fake_openai, {"slack": slack_cfg(fake_slack)}) as s:
        fake_slack.push_event(events.mention("hi", ts="1700000002.000100"), event_id="Ev1")
        await s.idle(timeout=15)
        await fake_slack.until(lambda f: f.calls_of("chat.update"), timeout=10)
        await s.idle()
    assert len(fake_slack.calls_of("chat.postMessage")) == 1
    final = fake_slack.messages[fake_slack.calls_of("chat.update")[-1].body["ts"]]
    assert visible(final).strip() == ("plain " * 30).strip()


async def test_file_in_downloaded_with_bot_token(svc, fake_slack, fake_openai):
    url = fake_slack.add_file("notes.txt", b"secret notes")
    event = events.file_share("read this", "notes.txt", url, 12)
    fake_slack.push_event(event, event_id="EvF")
    await fake_slack.until(lambda f: f.calls_of("chat.stopStream"), timeout=10)
    await svc.idle()
    assert fake_slack.downloads == [
        {"path": "/files/F0001/notes.txt", "auth": f"Bearer {BOT_TOKEN}"}
    ]
    assert "notes.txt" in json.dumps(fake_openai.requests[-1].body)


async def test_http_mode_signatures(tmp_path, fake_openai, fake_slack):
    cfg = slack_cfg(fake_slack, mode="http", app_token=None)
    async with ServiceHarness(tmp_path, fake_openai, {"slack": cfg}) as s:
        url = s.gateway_url + "/slack/events"
        body = json.dumps(fake_slack.event_body(events.dm("via http"), event_id="EvH")).encode()
        assert (await signed_post(url, body, secret="nope"))[0] == 401
        stale = int(time.time()) - 400
        assert (await signed_post(url, body, timestamp=stale))[0] == 401
        assert (await signed_post(url, body))[0] == 200
        await fake_slack.until(lambda f: f.calls_of("chat.stopStream"), timeout=10)
        await s.idle()
    assert len(fake_slack.calls_of("chat.startStream")) == 1


OUTPUTS = "/mnt/user-data/outputs"


async def test_presented_file_is_uploaded_into_the_thread_after_the_answer(
    svc, fake_slack, fake_openai
):
    root, report = "1700000004.000100", f"{OUTPUTS}/report.md"
    fake_openai.script(
        Reply(tool_calls=[ToolCall("write_file", {"path": report, "content": "# Report\nok"})]),
        Reply(tool_calls=[ToolCall("present_files", {"filepaths": [report]})]),
        Reply(text="Here is your report."),
    )
    fake_slack.push_event(events.mention("write a report", ts=root), event_id="EvR")
    await fake_slack.until(lambda f: f.calls_of("files.completeUploadExternal"), timeout=10)
    await svc.idle()
    final = [c for c in fake_slack.calls if c.method.startswith("chat.")][-1]
    [get_url] = fake_slack.calls_of("files.getUploadURLExternal")
    [upload] = fake_slack.calls_of("upload")
    [complete] = fake_slack.calls_of("files.completeUploadExternal")
    assert final.at < get_url.at < upload.at < complete.at
    assert bot_texts(fake_slack, root) == ["Here is your report."]
    [sent] = fake_slack.uploads.values()
    assert sent["name"] == "report.md"
    assert sent["data"] == b"# Report\nok"
    assert (sent["completed"], sent["channel"], sent["thread_ts"]) == (True, "C0001", root)


async def test_clarification_answered_with_a_block_action(svc, fake_slack, fake_openai):
    root = "1700000005.000100"
    fake_openai.script(
        Reply(
            tool_calls=[
                ToolCall(
                    "ask_clarification", {"question": "Which format?", "options": ["CSV", "Excel"]}
                )
            ]
        )
    )
    fake_slack.push_event(events.mention("export the data", ts=root), event_id="EvQ")
    await fake_slack.until(lambda f: f.calls_of("chat.stopStream"), timeout=10)
    await svc.idle()
    [stop] = fake_slack.calls_of("chat.stopStream")
    [actions] = [b for b in stop.body["blocks"] if b["type"] == "actions"]
    buttons = {e["text"]["text"]: e["value"] for e in actions["elements"]}
    assert list(buttons) == ["CSV", "Excel"]
    env = fake_slack.push_action(buttons["Excel"], channel="C0001", thread_ts=root)
    await asyncio.to_thread(fake_slack.wait_ack, env)
    await fake_slack.until(lambda f: len(f.calls_of("chat.stopStream")) == 2, timeout=10)
    await svc.idle()
    assert len(fake_openai.requests) == 2
    first, answer = FakeOpenAI.user_texts(fake_openai.requests[1])
    assert first == "export the data"
    assert answer.endswith("Excel")  # "alice wrote:\nExcel": a group thread names the sender
    texts = bot_texts(fake_slack, root)
    assert len(texts) == 2  # one question (its stream stopped with the buttons), one answer
    assert texts[0].endswith("Which format?")
    assert texts[-1] == f"echo: {answer}"  # the answer, in the same thread


async def test_stop_as_a_slash_command_in_a_channel_stops_the_senders_thread_reply(
    svc, fake_slack, fake_openai
):
    """`/antler stop` in a channel (Slack allows no slash command inside a thread) acts on the
    channel: the sender's reply being written in one of its threads stops, said to them only."""
    fake_openai.responder = lambda body: Reply(text="thinking hard " * 30, stall_after=2)
    root = "1700000009.000100"
    fake_slack.push_event(events.mention("long job", ts=root), event_id="Ev9")
    await fake_slack.until(lambda f: f.calls_of("chat.startStream"), timeout=10)
    env = fake_slack.push_command("stop", channel="C0001")
    await asyncio.to_thread(fake_slack.wait_ack, env)
    await fake_slack.until(lambda f: f.calls_of("chat.postEphemeral"), timeout=10)
    fake_openai.release()
    await svc.idle()
    said = [c.body["text"] for c in fake_slack.calls_of("chat.postEphemeral")]
    assert said == ["Stopped the running reply."]
    assert svc.running.dispatcher.active_runs == 0
    [reply] = [m for m in fake_slack.thread_messages("C0001", root) if m.get("bot_id")]
    assert not visible(reply).startswith("thinking hard " * 30)  # cut short, not finished
    assert "Stopped" in json.dumps(reply["stop_blocks"])  # and says so under the text
    assert len(fake_openai.requests) == 1
