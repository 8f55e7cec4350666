"""One conversation in Chinese on every platform, through its real SDK and fake server: the
channel's `locale: zh-CN` makes everything the service says Chinese: /help (the command
summaries too), the approval card and its buttons, a queued notice, a stopped reply and /stop's
answer, and the refusal a stranger gets."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot import i18n, texts
from tests.channels.contract.driver import OUTPUTS, Driver
from tests.channels.contract.test_access_contract import shown
from tests.channels.contract.test_contract import answered
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply, ToolCall
from tests.harness import ServiceHarness

WRITE = Reply(tool_calls=[ToolCall("write_file", {"path": f"{OUTPUTS}/a.txt", "content": "1"})])


def zh(read: object) -> str:
    """A text as a Chinese speaker gets it: `zh(lambda: texts.STOPPED)`."""
    with i18n.use("zh_CN"):
        return str(read() if callable(read) else read)


@pytest.fixture
async def service(
    tmp_path: Path, fake_openai: FakeOpenAI, driver: Driver
) -> AsyncIterator[ServiceHarness]:
    channels = {driver.name: {**driver.config(), "locale": "zh-CN"}}
    driver.speaks("zh-CN")  # a Chinese team's apps (Slack and Discord tell the service)
    access = {"approvals": {"tools": {"write_file": "always"}, "timeout_minutes": 5}}
    async with ServiceHarness(tmp_path, fake_openai, channels, access=access) as svc:
        yield svc


async def test_a_conversation_in_chinese(
    driver: Driver, service: ServiceHarness, fake_openai: FakeOpenAI
) -> None:
    driver.send("/help", "e1")
    await shown(driver, 1)
    help_text = driver.shown()[-1]
    assert zh(lambda: texts.HELP_COMMANDS) in help_text
    assert "开始新对话" in help_text  # /new's summary, from the command registry
    assert "Commands:" not in help_text

    fake_openai.script(WRITE, Reply(text="写好了。"))
    driver.send("写一个文件", "e2")
    await answered(service, fake_openai, 1)
    assert "运行前需要审批" in driver.shown()[-1]
    assert driver.buttons() == [zh(lambda: texts.APPROVE), zh(lambda: texts.DENY)]
    driver.press("批准")
    await answered(service, fake_openai, 2)
    assert any("已批准" in m for m in driver.shown()), driver.shown()

    fake_openai.script(Reply(text="慢慢地 " * 60, tokens_per_second=30))
    driver.send("讲个长故事", "e3")
    await fake_openai.wait_requests(3, timeout=20)
    driver.send("还有一个问题", "e4")  # behind the running reply: a queued notice
    driver.send("/stop", "e5")
    await answered(service, fake_openai, 4)
    assert driver.saw_queued(zh(lambda: texts.labels().queued))
    said = driver.shown()
    assert zh(lambda: texts.stopped(1)) in said, said  # /stop's answer
    assert not any("Stopped" in m or "Queued" in m for m in said), said


async def test_a_refusal_in_chinese(
    tmp_path: Path, fake_openai: FakeOpenAI, driver: Driver
) -> None:
    channels = {driver.name: {**driver.config(), "locale": "zh", "allowed_users": ["someone"]}}
    driver.speaks("zh-CN")
    async with ServiceHarness(tmp_path, fake_openai, channels) as svc:
        driver.send("你好", "e1")
        await shown(driver, 1)
        await svc.idle(timeout=20)
    assert driver.shown() == [zh(lambda: texts.NOT_ALLOWED)]
    assert fake_openai.requests == []
