"""Approvals in the agent: a call the policy names pauses the run with an interrupt kept in the
checkpoint (a new runner on the same data dir sees it), and the run resumes with a decision:
approved calls run, denied and expired ones get a tool error and never run; `first_use` asks
once per conversation; a subagent's call is refused, never run unasked."""

from __future__ import annotations

from typing import Any

from langchain_core.tools import tool

from agent.approval import ApprovalPolicy, ApprovalRule, decision_value
from agent.events import ApprovalRequested, Final, RunSettings, ToolFinished, Turn
from agent.middlewares.approval import ApprovalGuard
from agent.runner import AgentRunner
from tests.agent.conftest import MakeRunner, collect
from tests.fakes.openai_server import FakeOpenAI, Reply, ToolCall

RAN: list[int] = []


@tool
def deploy(version: int) -> str:
    """Deploy a version."""
    RAN.append(version)
    return f"deployed {version}"


def _providers() -> dict[str, Any]:
    return {
        "tool_providers": [lambda ctx: [deploy]],
        "middleware_providers": [lambda ctx: [ApprovalGuard()]],
    }


async def deploying(
    make_runner: MakeRunner, fake_openai: FakeOpenAI, version: int, call_id: str, *then: Reply
) -> AgentRunner:
    """A runner with the `deploy` tool behind an ApprovalGuard (RAN emptied), the model asked to
    call deploy(`version`) first, then to answer `then`."""
    RAN.clear()
    runner = await make_runner(**_providers())
    fake_openai.script(
        Reply(tool_calls=[ToolCall("deploy", {"version": version}, id=call_id)]), *then
    )
    return runner


def policy(mode: str = "always") -> ApprovalPolicy:
    return ApprovalPolicy((ApprovalRule("dep*", mode, ("admin",)),), timeout_seconds=60)  # type: ignore[arg-type]


async def resume(
    runner: AgentRunner,
    thread: str,
    asked: ApprovalRequested,
    decision: str,
    approvals: ApprovalPolicy | None = None,
) -> list[Any]:
    calls = [c["id"] for c in asked.request["calls"]]
    value = {"interrupt_id": asked.interrupt_id, "calls": calls, **decision_value(decision, "Ann")}
    turn = Turn(text="", approvals=approvals, resume=value)
    return [e async for e in runner.stream(thread, turn, RunSettings())]


async def test_a_call_waits_survives_a_restart_and_runs_once_approved(
    make_runner: MakeRunner, fake_openai: FakeOpenAI
) -> None:
    runner = await deploying(make_runner, fake_openai, 7, "c1")
    events = await collect(runner, "t", "ship it", approvals=policy(), user_id="test:u1")
    [asked] = [e for e in events if isinstance(e, ApprovalRequested)]
    assert isinstance(events[-1], Final)
    assert asked.request["calls"] == [{"id": "c1", "name": "deploy", "args": {"version": 7}}]
    assert asked.request["approvers"] == ["admin"]
    assert asked.request["requester"] == "test:u1"
    assert RAN == []
    await runner.stop()
    again = await make_runner(**_providers())  # a restart: the pause is in the checkpoint
    assert list(await again.pending_interrupts("t")) == [asked.interrupt_id]
    fake_openai.script(Reply(text="Deployed."))
    events = await resume(again, "t", asked, "approve", policy())
    assert RAN == [7]
    assert ToolFinished("c1", "deploy", True, "deployed 7") in events
    assert events[-1] == Final("Deployed.")
    assert await again.pending_interrupts("t") == {}


async def test_a_denied_call_never_runs_and_the_model_is_told(
    make_runner: MakeRunner, fake_openai: FakeOpenAI
) -> None:
    runner = await deploying(make_runner, fake_openai, 8, "c2")
    events = await collect(runner, "t", "ship it", approvals=policy())
    [asked] = [e for e in events if isinstance(e, ApprovalRequested)]
    fake_openai.script(Reply(text="Not deployed."))
    # the policy changed meanwhile (nothing asks now): the denial still stands
    events = await resume(runner, "t", asked, "deny", approvals=None)
    assert RAN == []
    [finished] = [e for e in events if isinstance(e, ToolFinished)]
    assert not finished.ok
    tool_message = fake_openai.requests[-1].messages[-1]
    assert tool_message["role"] == "tool"
    assert "denied by Ann" in tool_message["content"]
    assert events[-1] == Final("Not deployed.")


async def test_first_use_asks_once_per_conversation(
    make_runner: MakeRunner, fake_openai: FakeOpenAI
) -> None:
    runner = await deploying(make_runner, fake_openai, 1, "c3")
    events = await collect(runner, "t", "one", approvals=policy("first_use"))
    [asked] = [e for e in events if isinstance(e, ApprovalRequested)]
    assert asked.request["first_use"] is True
    fake_openai.script(Reply(text="ok"))
    await resume(runner, "t", asked, "approve_conversation", policy("first_use"))
    fake_openai.script(Reply(tool_calls=[ToolCall("deploy", {"version": 2}, id="c4")]), Reply("ok"))
    events = await collect(runner, "t", "two", approvals=policy("first_use"))
    assert not [e for e in events if isinstance(e, ApprovalRequested)]
    assert RAN == [1, 2]
    fake_openai.script(Reply(tool_calls=[ToolCall("deploy", {"version": 3}, id="c5")]))
    events = await collect(runner, "other", "three", approvals=policy("first_use"))
    assert [e for e in events if isinstance(e, ApprovalRequested)]  # another conversation


async def test_without_a_policy_nothing_waits(
    make_runner: MakeRunner, fake_openai: FakeOpenAI
) -> None:
    runner = await deploying(make_runner, fake_openai, 4, "c6", Reply("ok"))
    events = await collect(runner, "t", "go")
    assert RAN == [4]
    assert not [e for e in events if isinstance(e, ApprovalRequested)]


async def test_a_new_message_instead_of_a_decision_abandons_the_request(
    make_runner: MakeRunner, fake_openai: FakeOpenAI
) -> None:
    runner = await deploying(make_runner, fake_openai, 5, "c7")
    await collect(runner, "t", "ship it", approvals=policy())
    fake_openai.script(Reply(text="Something else then."))
    events = await collect(runner, "t", "never mind", approvals=policy())
    assert events[-1] == Final("Something else then.")
    assert RAN == []
    assert await runner.pending_interrupts("t") == {}
    tool = [m for m in fake_openai.requests[-1].messages if m.get("role") == "tool"]
    assert len(tool) == 1  # the abandoned call answered (interrupted), never run


async def test_a_run_that_cannot_pause_refuses_a_call_that_needs_approval(
    make_runner: MakeRunner, fake_openai: FakeOpenAI
) -> None:
    RAN.clear()
    guard = ApprovalGuard(can_ask=False)
    runner = await make_runner(
        tool_providers=[lambda ctx: [deploy]], middleware_providers=[lambda ctx: [guard]]
    )
    fake_openai.script(Reply(tool_calls=[ToolCall("deploy", {"version": 6}, id="c8")]), Reply("x"))
    events = await collect(runner, "t", "ship it", approvals=policy())
    assert RAN == []
    assert not [e for e in events if isinstance(e, ApprovalRequested)]
    tool = [m for m in fake_openai.requests[-1].messages if m.get("role") == "tool"]
    assert "a subagent cannot ask for here" in tool[0]["content"]
