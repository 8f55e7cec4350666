"""The contract suite runs every test once per platform, each through its real SDK."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.channels.contract.dingtalk import DingTalkDriver
from tests.channels.contract.discord import DiscordDriver
from tests.channels.contract.driver import Driver
from tests.channels.contract.feishu import FeishuDriver
from tests.channels.contract.slack import SlackDriver
from tests.channels.contract.telegram import TelegramDriver
from tests.channels.contract.wecom import WeComDriver
from tests.fakes.openai_server import FakeOpenAI
from tests.harness import ServiceHarness

DRIVERS: dict[str, Callable[[], Driver]] = {
    "dingtalk": DingTalkDriver,
    "discord": DiscordDriver,
    "feishu": FeishuDriver,
    "slack": SlackDriver,
    "telegram": TelegramDriver,
    "wecom": WeComDriver,
}


@pytest.fixture(params=sorted(DRIVERS))
def driver(request: pytest.FixtureRequest) -> Iterator[Driver]:
    platform = DRIVERS[request.param]()
    platform.start()
    yield platform
    platform.stop()


@pytest.fixture
def service_config() -> dict[str, Any]:
    """More of the service's configuration (`access`, `usage` ...); a test module overrides it."""
    return {}


@pytest.fixture
async def service(
    tmp_path: Path, fake_openai: FakeOpenAI, driver: Driver, service_config: dict[str, Any]
) -> AsyncIterator[ServiceHarness]:
    speech = {"model": "whisper-1", "base_url": fake_openai.base_url}  # audio is transcribed
    channels = {driver.name: driver.config()}
    async with ServiceHarness(
        tmp_path, fake_openai, channels, speech=speech, **service_config
    ) as svc:
        yield svc
