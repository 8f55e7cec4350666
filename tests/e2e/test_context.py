"""Titles, summarization, documents, images, plan mode and thinking, end to end through the
recording channel and the fake OpenAI server."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from channels.base import Attachment
from tests.fakes.documents import PNG_PIXEL, make_docx, make_pdf
from tests.fakes.openai_server import ChatRequest, FakeOpenAI, echo_responder, text_of
from tests.fakes.openai_wire import Reply, ToolCall
from tests.fakes.recording_channel import RecordingChannel
from tests.harness import ServiceHarness

pytestmark = pytest.mark.usefixtures("test_channel_registered")

SUMMARY_MARK = "Context Extraction Assistant"


def harness(tmp_path: Path, fake: FakeOpenAI, **extra: Any) -> ServiceHarness:
    return ServiceHarness(tmp_path, fake, {"test": {"enabled": True}}, **extra)


def chan(svc: ServiceHarness) -> RecordingChannel:
    channel = svc.channel("test")
    assert isinstance(channel, RecordingChannel)
    return channel


def models(fake: FakeOpenAI, **fast: Any) -> list[dict[str, Any]]:
    base = {"api_key": "sk-test", "base_url": fake.base_url, "max_retries": 0}
    return [
        {"name": "fast", "model": "fake-fast", **base, **fast},
        {"name": "smart", "model": "fake-smart", **base},
    ]


def last_user(request: ChatRequest) -> Any:
    return [m for m in request.messages if m["role"] == "user"][-1]["content"]


def system_of(request: ChatRequest) -> str:
    return text_of(request.messages[0]["content"])


async def test_title_is_made_once_and_shown_by_status(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    def respond(body: dict[str, Any]) -> Reply:
        if text_of(body["messages"][0]["content"]).startswith("Write a title"):
            return Reply(text='"Growing kumquats on a sunny balcony, successfully."')
        return echo_responder(body)

    fake_openai.responder = respond
    async with harness(tmp_path, fake_openai, agent={"title": {"enabled": True}}) as svc:
        ch = chan(svc)
        await ch.say("/status", "how do I grow kumquats on my balcony?", "and in winter?")
        await svc.idle()
        # the title is written beside the reply, after it (agent/after_answer.py): wait for it
        # (bounded) before asking /status again
        for _ in range(500):
            if any(c.title for c in await svc.running.conversations.all()):
                break
            await asyncio.sleep(0.02)
        await ch.inject("/status")  # /status answers at once: wait for the turns first
        await svc.idle()
    titles = [r for r in fake_openai.requests if system_of(r).startswith("Write a title")]
    assert len(titles) == 1
    assert "how do I grow kumquats" in FakeOpenAI.user_texts(titles[0])[-1]
    status_before, status_after = (t for t in ch.texts() if t.startswith("Thread:"))
    assert "Title: (none yet)" in status_before
    assert "Title: Growing kumquats on a sunny balcony\n" in status_after  # 6 words, no quotes


async def test_summarization_triggers_at_threshold_and_keeps_recent(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    def respond(body: dict[str, Any]) -> Reply:
        # no usage reported: the middleware counts the messages itself (with usage it compares
        # the provider's total, system prompt included, which the fake estimates high)
        if any(SUMMARY_MARK in t for t in FakeOpenAI.user_texts(body)):
            return Reply(text="SUMMARY: the user listed fruits.", no_usage=True)
        return Reply(text="noted", no_usage=True)

    fake_openai.responder = respond
    agent = {
        "title": {"enabled": False},
        "summarization": {"trigger_tokens": 300, "keep_messages": 2},
    }
    filler = " lorem" * 60  # ~90 tokens per message
    async with harness(tmp_path, fake_openai, agent=agent) as svc:
        ch = chan(svc)
        for word in ("apple", "banana", "cherry"):
            await ch.inject(f"fruit {word}{filler}")
            await svc.idle()
    summaries = [
        i
        for i, r in enumerate(fake_openai.requests)
        if any(SUMMARY_MARK in t for t in FakeOpenAI.user_texts(r))
    ]
    assert summaries, "no summarization request"
    first = summaries[0]
    assert first >= 2  # not before the thread approached the budget
    summarized = FakeOpenAI.user_texts(fake_openai.requests[first])[-1]
    assert "fruit apple" in summarized
    after = fake_openai.requests[first + 1]
    texts = FakeOpenAI.user_texts(after)
    assert "SUMMARY: the user listed fruits." in texts[0]
    assert not any("fruit apple" in t for t in texts)  # old message replaced by the summary
    assert "fruit cherry" in texts[-1]  # the recent messages are kept as they were
    assert len(after.messages) <= 1 + 1 + 2  # system, summary, the kept messages


async def test_pdf_and_docx_become_markdown(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    async with harness(tmp_path, fake_openai) as svc:
        ch = chan(svc)
        ch.files["p"] = make_pdf(["Quarterly report", "Revenue grew 42 percent"])
        ch.files["d"] = make_docx("Project Falcon", ["The launch is on Friday."])
        await ch.inject(
            "summarise these",
            attachments=(
                Attachment(name="report.pdf", ref="p"),
                Attachment(name="plan.docx", ref="d"),
            ),
        )
        await svc.idle()
        assert svc.app is not None
        conv = await svc.app.conversations.get(ch.message("x").chat.key)
        assert conv is not None
        uploads = svc.app.runner.thread_dirs(conv.thread_id).uploads
    pdf_md = (uploads / "report.pdf.md").read_text()
    docx_md = (uploads / "plan.docx.md").read_text()
    assert "Revenue grew 42 percent" in pdf_md
    assert "# Project Falcon" in docx_md
    assert "The launch is on Friday." in docx_md
    text = text_of(last_user(fake_openai.requests[0]))
    assert "/mnt/user-data/uploads/report.pdf.md" in text
    assert "Revenue grew 42 percent" in text
    assert "The launch is on Friday." in text


async def test_image_reaches_a_vision_model_only(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    async with harness(
        tmp_path, fake_openai, models=models(fake_openai, supports_vision=True)
    ) as svc:
        ch = chan(svc)
        ch.files["img"] = PNG_PIXEL
        await ch.inject("what is this?", attachments=(Attachment(name="dot.png", ref="img"),))
        await svc.idle()
        await ch.inject("/models smart")
        await ch.inject("and this?", attachments=(Attachment(name="dot2.png", ref="img"),))
        await svc.idle()
    vision, blind = fake_openai.requests
    parts = last_user(vision)
    assert isinstance(parts, list)
    images = [p for p in parts if p.get("type") == "image_url"]
    assert len(images) == 1
    assert images[0]["image_url"]["url"].startswith("data:image/png;base64,iVBORw0KGgo")
    assert blind.model == "fake-smart"
    blind_text = text_of(last_user(blind))
    assert "cannot see images" in blind_text
    assert "image_url" not in str(blind.messages)


async def test_plan_mode_shows_todo_progress(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    def todos(*states: str) -> ToolCall:
        items = [{"content": f"Step {i}", "status": s} for i, s in enumerate(states, start=1)]
        return ToolCall("write_todos", {"todos": items})

    fake_openai.script(
        Reply(text="plain"),
        Reply(tool_calls=[todos("in_progress", "in_progress")]),  # refused: one at a time
        Reply(tool_calls=[todos("in_progress", "pending")]),
        Reply(tool_calls=[todos("completed", "in_progress")]),
        Reply(tool_calls=[todos("completed", "completed")]),
        Reply(text="Both steps done."),
    )
    async with harness(tmp_path, fake_openai) as svc:
        ch = chan(svc)
        await ch.say("no plan yet", "/plan on", "do the two-step thing")
        await svc.idle()
        await ch.inject("/status")
        await svc.idle()
    assert "write_todos" not in fake_openai.requests[0].tool_names
    assert "write_todos" in fake_openai.requests[1].tool_names
    refusal = [m for m in fake_openai.requests[2].messages if m["role"] == "tool"][-1]
    assert "exactly one may be" in text_of(refusal["content"])
    assert "Plan mode on for this conversation." in ch.texts()
    assert any("Plan mode: on" in t for t in ch.texts())
    docs = [c.doc for c in ch.of("update") + ch.of("finish") if c.doc is not None]
    seen = {(s.label, s.state) for d in docs for s in d.progress}
    assert ("Step 1", "running") in seen
    assert ("Step 2", "running") in seen
    final = ch.of("finish")[-1].doc
    assert final is not None
    assert final.text == "Both steps done."
    assert [(s.label, s.state) for s in final.progress] == [("Step 1", "done"), ("Step 2", "done")]
    assert all("write_todos" not in s.label for d in docs for s in d.progress)
    running = [sum(s.state == "running" for s in d.progress) for d in docs]
    assert max(running) == 1


async def test_think_on_changes_the_request(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    thinking = {"extra_body": {"thinking": {"type": "enabled", "budget_tokens": 2048}}}
    fast = models(fake_openai, supports_thinking=True, when_thinking_enabled=thinking)
    async with harness(tmp_path, fake_openai, models=fast) as svc:
        ch = chan(svc)
        await ch.say("before", "/think on", "during")
        await svc.idle()
        await ch.say("/status", "/think off", "after")
        await svc.idle()
    by_text = {FakeOpenAI.user_texts(r)[-1]: r for r in fake_openai.requests}
    assert "thinking" not in by_text["before"].body
    assert by_text["during"].body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert "thinking" not in by_text["after"].body
    assert any("Thinking: on" in t for t in ch.texts())
