"""Two subagents of one answer that need approval at the same time, on every platform: one card
lists both calls (one decision for both, as for several calls of one model answer); after a
restart, Approve (pressed twice) resumes each subagent once where it stopped, both calls run
once, the card is updated in place and the lead's answer continues in it."""

from __future__ import annotations

from typing import Any

import pytest

from bot import texts
from tests.agent.test_parallel_pauses import two_deploys
from tests.channels.contract.driver import Driver
from tests.channels.contract.test_approval_contract import updated_in_place
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.harness import ServiceHarness, answered


@pytest.fixture
def service_config() -> dict[str, Any]:
    return {"access": {"approvals": {"tools": {"write_file": "always"}}}}


def responder(body: dict[str, Any]) -> Reply:
    reply = two_deploys(body)
    return Reply(text="Both deployed.") if reply.text.startswith("lead:") else reply


def written(service: ServiceHarness) -> list[str]:
    return sorted(p.read_text() for p in service.data_dir.rglob("outputs/*.txt"))


async def test_two_subagents_pausing_at_once_show_one_card_and_one_press_resumes_both(
    driver: Driver, service: ServiceHarness, fake_openai: FakeOpenAI
) -> None:
    fake_openai.responder = responder
    driver.send("two deploys", "e1")
    await answered(service, fake_openai, 3)  # the lead, then each subagent
    card = driver.shown()[-1]
    assert card.count("Approval needed") == 1
    assert "a.txt" in card
    assert "b.txt" in card
    assert driver.buttons() == [texts.APPROVE, texts.DENY]
    before = driver.shown()
    await service.restart()  # the three pauses are in the checkpoints, the request in the db
    driver.press(texts.APPROVE)
    driver.press(texts.APPROVE)  # twice: one decision
    await answered(service, fake_openai, 6)  # each subagent once more, then the lead
    await service.idle()
    assert written(service) == ["a", "b"]
    assert len(fake_openai.requests) == 6
    last = str(fake_openai.requests[-1].messages)
    assert "sub a:" in last
    assert "sub b:" in last
    updated_in_place(driver, before, "✅ Approved by", "Both deployed.")
