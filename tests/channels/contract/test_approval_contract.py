"""Approvals on every platform, through its real SDK and fake server: a call the policy names
waits, its card shows native Approve / Deny buttons; Approve runs it and the answer continues,
Deny tells the model it was denied and nothing runs; a second press on the answered card changes
nothing; `first_use` offers "Approve for this conversation" and does not ask again."""

from __future__ import annotations

from typing import Any

import pytest

from bot import texts
from bot.access.store import AuditQuery
from tests.channels.contract.driver import OUTPUTS, Driver
from tests.channels.contract.test_contract import answered
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply, ToolCall
from tests.harness import ServiceHarness

TARGET = f"{OUTPUTS}/deploy.txt"
WRITE = Reply(tool_calls=[ToolCall("write_file", {"path": TARGET, "content": "v7"}, id="w1")])


def written(svc: ServiceHarness) -> list[str]:
    return [p.read_text() for p in svc.data_dir.rglob("deploy.txt") if "outputs" in p.parts]


@pytest.fixture
def service_config(request: pytest.FixtureRequest) -> dict[str, Any]:
    mode = getattr(request, "param", "always")
    return {"access": {"approvals": {"tools": {"write_file": mode}, "timeout_minutes": 5}}}


async def test_approve_runs_the_call_and_the_answer_continues(
    driver: Driver, service: ServiceHarness, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script(WRITE, Reply(text="Deployed v7."))
    driver.send("deploy v7", "e1")
    await answered(service, fake_openai, 1)
    card = driver.shown()[-1]
    assert "Approval needed" in card
    assert "write_file(" in card
    assert driver.buttons() == [texts.APPROVE, texts.DENY]
    assert written(service) == []
    driver.press(texts.APPROVE)
    driver.press(texts.APPROVE)  # pressed twice at once (or redelivered): one decision
    await answered(service, fake_openai, 2)
    await service.idle()
    assert written(service) == ["v7"]
    replies = [m for m in driver.shown() if "Approved by" in m]
    assert len(replies) == 1, driver.shown()
    reply = replies[0]
    assert reply.endswith("Deployed v7.")
    assert len(fake_openai.requests) == 2
    audit = service.running.audit.store
    outcomes = [e.outcome for e in await audit.audit(AuditQuery(kind="approval"))]
    assert sorted(outcomes) == ["approve", "requested"]


async def test_deny_tells_the_model_and_nothing_runs(
    driver: Driver, service: ServiceHarness, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script(WRITE, Reply(text="Not deployed."))
    driver.send("deploy v7", "e1")
    await answered(service, fake_openai, 1)
    driver.press(texts.DENY)
    await answered(service, fake_openai, 2)
    assert written(service) == []
    [result] = [m for m in fake_openai.requests[1].messages if m.get("role") == "tool"]
    assert "denied by" in result["content"]
    assert driver.shown()[-1].startswith("🚫 Denied by")
    assert driver.shown()[-1].endswith("Not deployed.")


@pytest.mark.parametrize("service_config", ["first_use"], indirect=True)
async def test_first_use_asks_once_per_conversation(
    driver: Driver, service: ServiceHarness, fake_openai: FakeOpenAI
) -> None:
    again = Reply(tool_calls=[ToolCall("write_file", {"path": TARGET, "content": "v8"}, id="w2")])
    fake_openai.script(WRITE, Reply(text="Deployed v7."), again, Reply(text="Deployed v8."))
    driver.send("deploy v7", "e1")
    await answered(service, fake_openai, 1)
    assert driver.buttons() == [texts.APPROVE, texts.APPROVE_CONVERSATION, texts.DENY]
    driver.press(texts.APPROVE_CONVERSATION)
    await answered(service, fake_openai, 2)
    driver.send("deploy v8", "e2")
    await answered(service, fake_openai, 4)
    assert written(service) == ["v8"]
    assert driver.shown()[-1].endswith("Deployed v8.")
    assert "Approval needed" not in driver.shown()[-1]  # not asked again
