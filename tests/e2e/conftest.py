"""The platform fakes the end-to-end tests run against, one running fake per test."""

from __future__ import annotations

import pytest

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
