"""Approvals on every platform, through its real SDK and fake server: a call the policy names
waits, its card shows native Approve / Deny buttons; Approve runs it and the answer continues,
Deny tells the model it was denied and nothing runs; an unanswered request expires; each time the
card itself is updated (the decision on it, its buttons gone, the answer continuing in it); a
second press on the answered card changes nothing; `first_use` offers "Approve for this
conversation" and does not ask again."""

from __future__ import annotations

import time
from typing import Any

import pytest

from bot import texts
from bot.access.store import AuditQuery
from tests.channels.contract.driver import Driver
from tests.channels.contract.test_contract import answered
from tests.deploy import TARGET, WRITE, deployed
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply, ToolCall
from tests.harness import ServiceHarness


async def deploy_asked(
    driver: Driver, service: ServiceHarness, fake_openai: FakeOpenAI, *then: Reply
) -> None:
    """ "deploy v7" sent and its approval card shown; once approved the model writes the file,
    then answers `then`."""
    fake_openai.script(WRITE, *then)
    driver.send("deploy v7", "e1")
    await answered(service, fake_openai, 1)


def written(svc: ServiceHarness) -> list[str]:
    return deployed(svc.data_dir)


@pytest.fixture
def service_config(request: pytest.FixtureRequest) -> dict[str, Any]:
    mode = getattr(request, "param", "always")
    return {"access": {"approvals": {"tools": {"write_file": mode}, "timeout_minutes": 5}}}


async def test_approve_runs_the_call_and_the_answer_continues(
    driver: Driver, service: ServiceHarness, fake_openai: FakeOpenAI
) -> None:
    await deploy_asked(driver, service, fake_openai, Reply(text="Deployed v7."))
    card = driver.shown()[-1]
    assert "Approval needed" in card
    assert "write_file(" in card
    assert driver.buttons() == [texts.APPROVE, texts.DENY]
    assert written(service) == []
    before = driver.shown()
    driver.press(texts.APPROVE)
    driver.press(texts.APPROVE)  # pressed twice at once (or redelivered): one decision
    await answered(service, fake_openai, 2)
    await service.idle()
    assert written(service) == ["v7"]
    updated_in_place(driver, before, "✅ Approved by", "Deployed v7.")
    assert len(fake_openai.requests) == 2
    audit = service.running.audit.store
    outcomes = [e.outcome for e in await audit.audit(AuditQuery(kind="approval"))]
    assert sorted(outcomes) == ["approve", "requested"]


async def test_deny_tells_the_model_and_nothing_runs(
    driver: Driver, service: ServiceHarness, fake_openai: FakeOpenAI
) -> None:
    await deploy_asked(driver, service, fake_openai, Reply(text="Not deployed."))
    before = driver.shown()
    driver.press(texts.DENY)
    await answered(service, fake_openai, 2)
    assert written(service) == []
    [result] = [m for m in fake_openai.requests[1].messages if m.get("role") == "tool"]
    assert "denied by" in result["content"]
    updated_in_place(driver, before, "🚫 Denied by", "Not deployed.")


async def test_an_expired_request_updates_its_card_and_nothing_runs(
    driver: Driver, service: ServiceHarness, fake_openai: FakeOpenAI
) -> None:
    await deploy_asked(driver, service, fake_openai, Reply(text="Nobody approved it in time."))
    before = driver.shown()
    approvals = service.running.approvals
    assert await approvals.expire_due() == 0  # not due yet
    approvals.clock = lambda: time.time() + 6 * 60  # its 5 minutes are over
    assert await approvals.expire_due() == 1
    await answered(service, fake_openai, 2)
    assert written(service) == []
    expired = texts.approval_decided("expired", "")
    updated_in_place(driver, before, expired, "Nobody approved it in time.", pressed=False)


def updated_in_place(
    driver: Driver, before: list[str], decision: str, answer: str, pressed: bool = True
) -> None:
    """The card itself now says what was decided, its buttons gone, the answer below it: no
    message was added (but the one line a second press gets)."""
    after = driver.shown()
    card, added = after[len(before) - 1], after[len(before) :]
    if not driver.edits_finished_replies:  # the decision and the answer in one new message
        assert after[: len(before)] == before, after
        card, added = added[0], added[1:]
    assert all(line.startswith("This request was already answered") for line in added), after
    assert "Approval needed" in card, card
    assert card.index("Approval needed") < card.index(decision) < card.index(answer), card
    assert card.endswith(answer)
    if not added and (pressed or driver.updates_unpressed_cards):
        assert driver.buttons() == []


@pytest.mark.parametrize("service_config", ["first_use"], indirect=True)
async def test_first_use_asks_once_per_conversation(
    driver: Driver, service: ServiceHarness, fake_openai: FakeOpenAI
) -> None:
    again = Reply(tool_calls=[ToolCall("write_file", {"path": TARGET, "content": "v8"}, id="w2")])
    await deploy_asked(
        driver, service, fake_openai, Reply(text="Deployed v7."), again, Reply(text="Deployed v8.")
    )
    assert driver.buttons() == [texts.APPROVE, texts.APPROVE_CONVERSATION, texts.DENY]
    driver.press(texts.APPROVE_CONVERSATION)
    await answered(service, fake_openai, 2)
    driver.send("deploy v8", "e2")
    await answered(service, fake_openai, 4)
    assert written(service) == ["v8"]
    assert driver.shown()[-1].endswith("Deployed v8.")
    assert "Approval needed" not in driver.shown()[-1]  # not asked again


async def test_a_subagents_call_pauses_and_resumes_inside_the_subagent_after_a_restart(
    driver: Driver, service: ServiceHarness, fake_openai: FakeOpenAI
) -> None:
    delegate = {"description": "deploy v7", "prompt": f"Write v7 to {TARGET}."}
    fake_openai.script(
        Reply(tool_calls=[ToolCall("task", delegate, id="t1")]),  # the lead delegates
        WRITE,  # the subagent calls write_file: it waits for approval
        Reply(text="Wrote v7."),  # the subagent, resumed after the approval
        Reply(text="The subagent deployed v7."),  # the lead, with the task's result
    )
    driver.send("deploy v7 with a subagent", "e1")
    await answered(service, fake_openai, 2)
    before = driver.shown()
    assert "write_file(" in before[-1]
    assert written(service) == []
    await service.restart()  # both pauses are in the checkpoints, the request in the database
    driver.press(texts.APPROVE)
    await answered(service, fake_openai, 4)
    assert written(service) == ["v7"]
    assert "Wrote v7." in str(fake_openai.requests[3].messages)  # the task's result
    assert len(fake_openai.requests) == 4  # the subagent resumed, never started again
    updated_in_place(driver, before, "✅ Approved by", "The subagent deployed v7.")
