"""An approval card at the end of an answer longer than one message, on every platform: the
answer is split, the card is the last message, alone, with its buttons; a press updates that
message in place (where the platform edits finished replies), the parts before it unchanged."""

from __future__ import annotations

from typing import Any

import pytest

from bot import texts
from tests.channels.contract.driver import Driver
from tests.channels.contract.test_approval_contract import WRITE, updated_in_place, written
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.harness import ServiceHarness, answered


@pytest.fixture
def service_config() -> dict[str, Any]:
    return {"access": {"approvals": {"tools": {"write_file": "always"}}}}


def long_answer(driver: Driver) -> str:
    """Words enough for more than one message on `driver`'s platform."""
    return " ".join(f"word{i}" for i in range(driver.max_part // 6))


async def test_a_split_card_is_the_last_message_with_the_buttons_and_the_press_updates_it(
    driver: Driver, service: ServiceHarness, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script(
        Reply(text=long_answer(driver), tool_calls=WRITE.tool_calls), Reply(text="Deployed v7.")
    )
    driver.send("deploy v7", "e1")
    await answered(service, fake_openai, 1)
    before = driver.shown()
    assert len(before) >= 2, before
    assert "Approval needed" in before[-1]
    assert "word" not in before[-1]  # the card alone
    assert "word0 " in before[-2] or "word0 " in before[0]
    assert driver.buttons() == [texts.APPROVE, texts.DENY]
    driver.press(texts.APPROVE)
    await answered(service, fake_openai, 2)
    await service.idle()
    assert written(service) == ["v7"]
    assert driver.shown()[: len(before) - 1] == before[:-1]  # the answer's parts unchanged
    updated_in_place(driver, before, "✅ Approved by", "Deployed v7.")
