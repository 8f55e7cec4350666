"""Subagents, the loop guard and clarification through the whole service."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent.middlewares.loop_guard import STOP, WARNING
from tests.e2e.hands_helpers import chan, outputs, service, system_text, tool_results
from tests.fakes.openai_server import FakeOpenAI, Reply, ToolCall, text_of
from tests.fakes.recording_channel import RecordingChannel

pytestmark = pytest.mark.usefixtures("test_channel_registered")


def subagent_responder(body: dict[str, Any]) -> Reply:
    messages = body["messages"]
    system = text_of(messages[0].get("content"))
    done = any(m.get("role") == "tool" for m in messages)
    if "You are a subagent" in system:
        job = FakeOpenAI.user_texts(body)[-1]
        if not done:
            path = f"/mnt/user-data/workspace/{job}.txt"
            return Reply(tool_calls=[ToolCall("write_file", {"path": path, "content": job})])
        return Reply(text=f"report {job}")
    if not done:
        return Reply(
            tool_calls=[
                ToolCall("task", {"description": f"job {i}", "prompt": f"job{i}"}) for i in range(4)
            ]
        )
    return Reply(text="All jobs done.")


async def test_subagents_run_in_parallel_with_progress(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.responder = subagent_responder
    async with service(tmp_path, fake_openai) as svc:
        ch = chan(svc)
        await ch.inject("do four jobs")
        await svc.idle()
    workspace = outputs(tmp_path).parent / "workspace"
    assert sorted(p.name for p in workspace.iterdir()) == ["job0.txt", "job1.txt", "job2.txt"]
    lead_last = fake_openai.requests[-1]
    results = tool_results(lead_last)
    assert sorted(r for r in results if r.startswith("report")) == [
        "report job0",
        "report job1",
        "report job2",
    ]
    assert any("at most 3 subagents" in r for r in results)
    sub = next(r for r in fake_openai.requests if "You are a subagent" in system_text(r))
    assert "write_file" in sub.tool_names
    assert not {"task", "ask_clarification", "present_files"} & set(sub.tool_names)
    final = ch.of("finish")[0]
    assert final.text == "All jobs done."
    assert final.doc is not None
    labels = {s.label: s.state for s in final.doc.progress}
    assert labels["Subagent: job 0"] == "done"
    assert any("↳ write_file" in label for label in labels)
    assert "task(description='job 3', prompt='job3')" in labels  # shown, not run


async def test_repeated_tool_call_is_warned_then_stopped(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    same = Reply(tool_calls=[ToolCall("ls", {"path": "/mnt/user-data/workspace"})])
    fake_openai.script(*[same] * 5, Reply(text="Here is what I found."))
    async with service(tmp_path, fake_openai) as svc:
        ch = chan(svc)
        await ch.inject("look around")
        await svc.idle()
    requests = fake_openai.requests
    assert len(requests) == 6

    def notes(i: int) -> list[str]:
        return [t for t in FakeOpenAI.user_texts(requests[i]) if t.startswith("[note")]

    assert notes(2) == []
    assert notes(3) == [WARNING]  # the 4th call follows three identical ones
    assert notes(5) == [STOP]
    assert requests[5].tools == []
    assert len(tool_results(requests[5])) == 4  # the 5th call never ran
    assert ch.texts() == ["Here is what I found."]


def clarify() -> Reply:
    return Reply(
        tool_calls=[
            ToolCall(
                "ask_clarification", {"question": "Which format?", "options": ["CSV", "Excel"]}
            )
        ]
    )


async def test_clarification_answered_by_button_continues_thread(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script(clarify())
    async with service(tmp_path, fake_openai) as svc:
        ch = chan(svc)
        await ch.inject("export the data")
        await svc.idle()
        asked = ch.of("finish")[0]
        assert asked.doc is not None
        assert asked.text == "Which format?"
        assert [(b.label, b.value) for b in asked.doc.buttons] == [
            ("CSV", "CSV"),
            ("Excel", "Excel"),
        ]
        await ch.inject("Excel", is_button=True)
        await svc.idle()
    assert len(fake_openai.requests) == 2  # the run ended at the question
    answer = fake_openai.requests[1]
    assert FakeOpenAI.user_texts(answer) == ["export the data", "Excel"]
    assert tool_results(answer) == ["Which format?\n1. CSV\n2. Excel"]
    assert ch.texts()[-1] == "echo: Excel"


async def test_clarification_numbered_without_buttons(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script(clarify())
    async with service(tmp_path, fake_openai) as svc:
        ch = chan(svc)
        assert isinstance(ch, RecordingChannel)
        ch.capabilities = ch.capabilities.__class__(max_text_len=1000, buttons=False)
        await ch.inject("export the data")
        await svc.idle()
        await ch.inject("2")
        await svc.idle()
    asked = ch.of("finish")[0]
    assert asked.text == "Which format?\n\n1. CSV\n2. Excel"
    assert asked.doc is not None
    assert asked.doc.buttons == ()
    assert 'The user\'s answer "2" means option 2: "Excel".' in system_text(fake_openai.requests[1])
