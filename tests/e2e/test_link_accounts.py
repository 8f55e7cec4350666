"""/link across two platforms, through the real SDKs: a code asked for in a Telegram DM, sent
from Slack, makes both accounts one person: the same memory (and role); wrong codes get one line
and five of them lock /link; /unlink separates the accounts again. Codes never reach a log."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent.memory.records import NewFact
from bot import texts
from bot.access.store import AuditQuery
from tests.channels.contract.driver import Driver
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.recording_channel import RecordingChannel
from tests.harness import ServiceHarness

TELEGRAM, SLACK = "telegram:42", "slack:U0001"


@pytest.fixture
async def service(
    tmp_path: Path, fake_openai: FakeOpenAI, drivers: tuple[Driver, Driver]
) -> AsyncIterator[ServiceHarness]:
    telegram, slack = drivers
    channels = {"telegram": telegram.config(), "slack": slack.config()}
    access = {"people": {TELEGRAM: "admin"}, "channels": {"slack": "guest"}}
    async with ServiceHarness(tmp_path, fake_openai, channels, access=access) as svc:
        yield svc


async def said(driver: Driver, text: str, event: str) -> str:
    """Send `text` in the DM and wait for the one new message it gets."""
    before = len(driver.shown())
    driver.send(text, event)
    for _ in range(400):
        if len(driver.shown()) > before:
            return driver.shown()[-1]
        await asyncio.sleep(0.05)
    raise TimeoutError(f"no answer to {text!r}: {driver.shown()}")


async def test_link_across_two_platforms_shares_memory_and_role(
    drivers: tuple[Driver, Driver], service: ServiceHarness, caplog: pytest.LogCaptureFixture
) -> None:
    telegram, slack = drivers
    app = service.running
    memory = app.runner.memory.store
    await memory.add_fact(TELEGRAM, NewFact("Likes green tea", "preference", 0.9), source="test")
    caplog.set_level(logging.INFO)  # the service's level (SDKs log payloads at DEBUG)

    assert await said(slack, "/models smart", "s0") == texts.command_denied(
        "/models NAME", "guest", ["admin", "member"]
    )
    answer = await said(telegram, "/link", "t1")
    code = re.search(r"Your link code: (\w+)", answer)
    assert code is not None
    assert await said(slack, f"/link {code.group(1)}", "s1") == texts.linked(TELEGRAM)

    assert "Likes green tea" in await said(slack, "/memory", "s2")  # the same memory
    assert await said(slack, "/models smart", "s3") == texts.model_switched("Smart")  # role
    assert await said(slack, f"/link {code.group(1)}", "s4") == texts.LINK_WRONG_CODE  # once
    assert code.group(1) not in caplog.text  # never in a log

    assert await said(slack, "/unlink", "s5") == texts.UNLINKED
    assert "anything about you yet" in await said(slack, "/memory", "s6")
    assert await said(telegram, "/unlink", "t2") == texts.UNLINK_NOT_LINKED
    kinds = [e.kind for e in await app.stores.access.audit(AuditQuery(person=TELEGRAM))]
    assert "link" in kinds
    assert "unlink" in kinds


async def test_five_wrong_codes_lock_link_for_the_account(
    drivers: tuple[Driver, Driver], service: ServiceHarness
) -> None:
    telegram, slack = drivers
    for i in range(4):
        assert await said(slack, "/link WRONG123", f"w{i}") == texts.LINK_WRONG_CODE
    assert await said(slack, "/link WRONG123", "w4") == texts.link_locked(15)
    code = re.search(r"code: (\w+)", await said(telegram, "/link", "t1"))
    assert code is not None
    assert await said(slack, f"/link {code.group(1)}", "w5") == texts.link_locked(15)
    assert await said(slack, "/link a b", "w6") == texts.LINK_USAGE
    assert service.running.metrics.value("antler_link_events_total", outcome="locked") == 1


@pytest.mark.usefixtures("test_channel_registered")
async def test_with_memory_off_link_says_so_and_no_memory_file_appears(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    agent = {"memory": {"enabled": False}, "title": {"enabled": False}}
    harness = ServiceHarness(tmp_path, fake_openai, {"test": {"enabled": True}}, agent=agent)
    async with harness as svc:
        ch = svc.channel("test")
        assert isinstance(ch, RecordingChannel)
        await ch.inject("/link")
        await ch.inject("/unlink")
        await ch.inject("hello")
        await svc.idle()
    assert ch.texts()[:2] == [texts.LINK_DISABLED, texts.LINK_DISABLED]
    assert not (tmp_path / "memory.db").exists()
