"""Two subagents of one answer that need approval at the same time: LangGraph raises two
interrupts in one step; the run shows one request listing both calls (one card, one decision),
and the decision resumes each subagent where it stopped, once, also after a restart; a
LangGraph client's `command.resume` answers both the same way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent.approval import ApprovalPolicy, ApprovalRule, api_resume, decision_value
from agent.config import AgentConfig
from agent.events import ApprovalRequested, Final, RunSettings, Turn
from agent.hands import Hands
from agent.runner import AgentRunner
from tests.agent.conftest import MakeRunner, collect
from tests.fakes.openai_server import FakeOpenAI, Reply, ToolCall, text_of

OUT = "/mnt/user-data/outputs"
RULES = ApprovalPolicy((ApprovalRule("write_file", "always", ("ops",)),), timeout_seconds=60)


def two_deploys(body: dict[str, Any]) -> Reply:
    """The lead delegates two deploys at once; each subagent writes its file, then reports."""
    messages = body.get("messages", [])
    first = text_of(next(m for m in messages if m.get("role") == "user").get("content"))
    results = [text_of(m["content"]) for m in messages if m.get("role") == "tool"]
    if "two deploys" in first:
        if results:
            return Reply(text="lead: " + " | ".join(sorted(results)))
        return Reply(tool_calls=[
            ToolCall("task", {"description": "deploy a", "prompt": "deploy a"}, id="ta"),
            ToolCall("task", {"description": "deploy b", "prompt": "deploy b"}, id="tb"),
        ])  # fmt: skip
    name = "a" if "deploy a" in first else "b"
    if results:
        return Reply(text=f"sub {name}: {results[-1][:80]}")
    write = {"path": f"{OUT}/{name}.txt", "content": name}
    return Reply(tool_calls=[ToolCall("write_file", write, id=f"w{name}")])


async def hands_runner(make_runner: MakeRunner) -> AgentRunner:
    config = AgentConfig(max_retries=0, request_timeout_seconds=10, title={"enabled": False})
    hands = Hands(config)
    return await make_runner(
        config=config, tool_providers=[hands.tools], middleware_providers=[hands.middlewares]
    )


def written(tmp_path: Path) -> list[str]:
    return sorted(p.read_text() for p in tmp_path.rglob("outputs/*.txt"))


async def paused(make_runner: MakeRunner, fake_openai: FakeOpenAI) -> ApprovalRequested:
    runner = await hands_runner(make_runner)
    fake_openai.responder = two_deploys
    events = await collect(runner, "t", "two deploys", approvals=RULES)
    [asked] = [e for e in events if isinstance(e, ApprovalRequested)]  # one request for both
    assert sorted(c["id"] for c in asked.request["calls"]) == ["wa", "wb"]
    assert len(asked.request["interrupts"]) == 2
    assert asked.interrupt_id in asked.request["interrupts"]
    assert asked.request["approvers"] == ["ops"]
    assert set(await runner.pending_interrupts("t")) == set(asked.request["interrupts"])
    await runner.stop()
    return asked


async def resumed(runner: AgentRunner, asked: ApprovalRequested, decision: str) -> list[Any]:
    calls = [c["id"] for c in asked.request["calls"]]
    value = {
        "interrupt_id": asked.interrupt_id,
        "interrupts": asked.request["interrupts"],
        "calls": calls,
        **decision_value(decision, "Ann"),
    }
    turn = Turn(text="", approvals=RULES, resume=value)
    return [e async for e in runner.stream("t", turn, RunSettings())]


async def test_one_decision_resumes_both_subagents_once_after_a_restart(
    make_runner: MakeRunner, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    asked = await paused(make_runner, fake_openai)
    assert written(tmp_path) == []
    asked_before = len(fake_openai.requests)  # the lead once, each subagent once
    runner = await hands_runner(make_runner)  # a restart: both pauses are in the checkpoints
    events = await resumed(runner, asked, "approve")
    assert written(tmp_path) == ["a", "b"]
    assert isinstance(events[-1], Final)
    assert events[-1].text.startswith("lead: sub a:")
    assert "sub b:" in events[-1].text
    assert not [e for e in events if isinstance(e, ApprovalRequested)]  # nothing asks again
    assert len(fake_openai.requests) == asked_before + 3  # each subagent once more, the lead
    assert await runner.pending_interrupts("t") == {}


async def test_one_denial_denies_both(
    make_runner: MakeRunner, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    asked = await paused(make_runner, fake_openai)
    runner = await hands_runner(make_runner)
    events = await resumed(runner, asked, "deny")
    assert written(tmp_path) == []
    assert isinstance(events[-1], Final)
    assert events[-1].text.count("denied by Ann") == 2


def test_a_langgraph_clients_resume_answers_every_waiting_interrupt() -> None:
    pending = {
        "i1": {"type": "approval", "calls": [{"id": "wa"}]},
        "i2": {"type": "approval", "calls": [{"id": "wb"}]},
    }
    resume = api_resume(pending, "approve")
    assert resume["interrupts"] == ["i1", "i2"]
    assert resume["calls"] == ["wa", "wb"]
    with pytest.raises(ValueError, match="decision"):
        api_resume(pending, "maybe")
