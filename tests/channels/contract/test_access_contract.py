"""Roles on every platform, through its real SDK and fake server: a denied tool is never offered
to the model, a forged call to it is refused (a tool error, counted, audited), a denied command
answers one line naming the roles that may, and /models lists only the allowed models; an
account linked from another platform shares memory."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from agent.memory.records import NewFact
from bot import texts
from bot.access.store import AuditQuery
from tests.channels.contract.driver import OUTPUTS, Driver
from tests.channels.contract.slack import SlackDriver
from tests.channels.contract.telegram import TelegramDriver
from tests.channels.contract.test_contract import answered
from tests.e2e.test_link_accounts import said
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply, ToolCall
from tests.harness import ServiceHarness

ACCOUNTS = {"telegram": "telegram:42", "slack": "slack:U0001"}  # the drivers' DM users
READER = {
    "default_role": "reader",
    "roles": {
        "reader": {
            "tools": ["ls", "read_file", "ask_clarification", "present_files"],
            "models": ["fast"],
            "commands": ["/help", "/models", "/new"],
        }
    },
}


async def shown(driver: Driver, count: int) -> None:
    """Wait until the DM shows `count` messages (commands are answered without the model)."""
    for _ in range(400):
        if len(driver.shown()) >= count:
            return
        await asyncio.sleep(0.05)
    raise TimeoutError(f"the DM shows {driver.shown()}")


@pytest.fixture
def service_config() -> dict[str, Any]:
    return {"access": READER}


async def test_a_denied_tool_is_not_offered_to_the_model(
    driver: Driver, service: ServiceHarness, fake_openai: FakeOpenAI
) -> None:
    driver.send("hello", "e1")
    await answered(service, fake_openai, 1)
    offered = fake_openai.requests[0].tool_names
    assert "read_file" in offered
    assert "write_file" not in offered
    assert "task" not in offered
    assert driver.shown() == ["echo: hello"]


async def test_a_forged_call_to_a_denied_tool_is_refused(
    driver: Driver, service: ServiceHarness, fake_openai: FakeOpenAI
) -> None:
    target = f"{OUTPUTS}/forged.txt"
    fake_openai.script(
        Reply(tool_calls=[ToolCall("write_file", {"path": target, "content": "pwned"})]),
        Reply(text="I could not write it."),
    )
    driver.send("write a file", "e1")
    await answered(service, fake_openai, 2)
    refusal = [m for m in fake_openai.requests[1].messages if m.get("role") == "tool"]
    assert len(refusal) == 1
    assert "'write_file' is not available to this user (role reader)" in refusal[0]["content"]
    assert not list(service.data_dir.rglob("forged.txt"))
    app = service.running
    assert app.metrics.value("antler_tool_calls_total", tool="write_file", outcome="denied") == 1
    await app.audit.drain()
    (entry,) = await app.stores.access.audit(AuditQuery(kind="denied"))
    assert (entry.subject, entry.outcome) == ("write_file", "tool")
    assert entry.detail["args"] == {"path": target, "content": "pwned"}
    assert driver.shown()[-1].endswith("I could not write it.")


async def test_a_denied_command_answers_one_line_naming_the_roles_that_may(
    driver: Driver, service: ServiceHarness, fake_openai: FakeOpenAI
) -> None:
    driver.send("/models smart", "e1")
    await shown(driver, 1)
    driver.send("/models", "e2")
    await shown(driver, 2)
    await service.idle(timeout=20)
    denied, listing = driver.shown()
    assert denied == texts.command_denied("/models NAME", "reader", ["admin", "member"])
    assert "fast" in listing
    assert "smart" not in listing.lower()
    assert fake_openai.requests == []
    assert service.running.metrics.value("antler_access_denied_total", kind="command") == 1


async def test_link_from_another_platform_shares_memory(
    driver: Driver, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    other: Driver = SlackDriver() if driver.name == "telegram" else TelegramDriver()
    other.start()
    try:
        channels = {driver.name: driver.config(), other.name: other.config()}
        async with ServiceHarness(tmp_path, fake_openai, channels) as svc:
            anchor = ACCOUNTS[other.name]
            fact = NewFact("Prefers tea", "preference", 0.9)
            await svc.running.runner.memory.store.add_fact(anchor, fact, source="test")
            answer = await said(other, "/link", "o1")
            code = re.search(r"Your link code: (\w+)", answer)
            assert code is not None
            assert await said(driver, f"/link {code.group(1)}", "d1") == texts.linked(anchor)
            assert "Prefers tea" in await said(driver, "/memory", "d2")
    finally:
        other.stop()
