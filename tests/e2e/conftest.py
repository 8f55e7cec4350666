"""The platform fakes the end-to-end tests run against, one running fake per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.channels.contract.slack import SlackDriver
from tests.channels.contract.telegram import TelegramDriver
from tests.fakes.dingtalk_server import FakeDingTalk
from tests.fakes.feishu_server import FakeFeishu
from tests.fakes.slack_server import FakeSlack
from tests.fakes.telegram_server import FakeTelegram
from tests.fakes.threaded import fake_fixture

telegram = fake_fixture(FakeTelegram, "telegram")
feishu = fake_fixture(FakeFeishu, "feishu")
dingtalk = fake_fixture(FakeDingTalk, "dingtalk")
slack = fake_fixture(FakeSlack, "slack")


@pytest.fixture
def fake_slack(slack: FakeSlack) -> FakeSlack:
    return slack


@pytest.fixture
def drivers() -> Iterator[tuple[TelegramDriver, SlackDriver]]:
    """A person's DMs on two platforms (the contract drivers), for linked accounts."""
    telegram, slack = TelegramDriver(), SlackDriver()
    telegram.start()
    slack.start()
    yield telegram, slack
    telegram.stop()
    slack.stop()
