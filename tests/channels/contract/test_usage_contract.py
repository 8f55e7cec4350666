"""Usage on every platform, through its real SDK and fake server: the fake model's usage chunk
is counted for the sender, the chat and the channel, and the footer shows under the answer."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.stores.usage import Report
from tests.channels.contract.driver import Driver
from tests.channels.contract.test_contract import answered
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.harness import ServiceHarness

USAGE = {"prompt_tokens": 400, "completion_tokens": 100, "total_tokens": 500}


@pytest.fixture
def service_config() -> dict[str, Any]:
    return {"usage": {"show_usage": "tokens"}}


async def test_the_usage_chunk_is_counted_and_shown_under_the_answer(
    driver: Driver, service: ServiceHarness, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script(Reply(text="Counted answer", usage=USAGE))
    driver.send("hello", "e1")
    await answered(service, fake_openai, 1)
    gate = service.running.usage
    await gate.meter.flush()
    assert gate.meter.store is not None
    report = await gate.meter.store.report(Report(group_by=("person", "channel", "model")))
    [(key, totals)] = report
    assert key[1:] == (driver.name, "fast")
    assert key[0].startswith(f"{driver.name}:")
    assert (totals.prompt, totals.completion, totals.calls) == (400, 100, 1)
    assert "Counted answer" in driver.shown()[-1]
    footer = "500 tokens (400 in, 100 out)"
    if driver.name in ("telegram", "dingtalk"):  # shown under the text
        assert footer in driver.shown()[-1]
    else:  # Slack's note block, the Feishu card's progress element: in what was sent
        sent = json.dumps([vars(c) for c in driver.fake.calls], default=str)
        assert footer in sent
