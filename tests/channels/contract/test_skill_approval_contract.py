"""Skills that wait for approval, on every platform through its real SDK and fake server: the
agent reading a skill the policy names (`skill:data-*`) waits, the card names the skill and the
call; Approve lets it read the skill, Deny tells the model and nothing is read; either way the
card is updated and the answer continues in it."""

from __future__ import annotations

from typing import Any

import pytest

from bot import texts
from tests.channels.contract.driver import Driver
from tests.channels.contract.test_approval_contract import updated_in_place
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply, ToolCall
from tests.harness import ServiceHarness, answered

SKILL_MD = "/mnt/skills/public/data-to-chart/SKILL.md"  # a skill the project ships
READ = Reply(tool_calls=[ToolCall("read_file", {"path": SKILL_MD}, id="r1")])


@pytest.fixture
def service_config() -> dict[str, Any]:
    return {"access": {"approvals": {"tools": {"skill:data-*": "always"}}}}


def tool_result(fake_openai: FakeOpenAI) -> str:
    [result] = [m for m in fake_openai.requests[1].messages if m.get("role") == "tool"]
    return str(result["content"])


@pytest.mark.parametrize(
    ("press", "decided", "answer"),
    [
        (texts.APPROVE, "✅ Approved by", "Charted with the skill."),
        (texts.DENY, "🚫 Denied by", "I may not use that skill."),
    ],
)
async def test_a_skill_waits_its_card_names_it_and_the_decision_stands(
    driver: Driver,
    service: ServiceHarness,
    fake_openai: FakeOpenAI,
    press: str,
    decided: str,
    answer: str,
) -> None:
    fake_openai.script(READ, Reply(text=answer))
    driver.send("chart my numbers", "e1")
    await answered(service, fake_openai, 1)
    card = driver.shown()[-1]
    assert "Approval needed" in card
    assert "/data-to-chart" in card
    assert "read_file(" in card
    assert driver.buttons() == [texts.APPROVE, texts.DENY]
    before = driver.shown()
    driver.press(press)
    await answered(service, fake_openai, 2)
    read = "# Data to chart" in tool_result(fake_openai)  # the skill, read once approved
    assert read == (press == texts.APPROVE)
    assert ("denied by" in tool_result(fake_openai)) == (press == texts.DENY)
    updated_in_place(driver, before, decided, answer)
