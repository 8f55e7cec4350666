"""Slack users' locales for the language hint: users.info with include_locale through the real
slack_sdk client against the fake, remembered per user for a while, a bounded number of users,
a failed look-up remembered as no hint for a shorter while (virtual clock)."""

from __future__ import annotations

from slack_sdk.web.async_client import AsyncWebClient

from channels.slack.locales import FAILED_TTL, UserLocales
from tests.fakes.slack_server import BOT_TOKEN, FakeSlack


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_a_users_locale_is_asked_once_per_ttl(fake_slack: FakeSlack) -> None:
    fake_slack.user_locales.update({"U1": "zh-CN", "U2": "ja-JP"})
    client = AsyncWebClient(token=BOT_TOKEN, base_url=fake_slack.api_base)
    clock = Clock()
    locales = UserLocales(lambda: client, ttl=600, size=2, clock=clock)
    assert await locales.of("U1") == "zh-CN"
    assert await locales.of("U1") == "zh-CN"
    assert len(fake_slack.calls_of("users.info")) == 1
    fake_slack.user_locales["U1"] = "en-US"  # changed in Slack: seen once the entry is old
    clock.now += 599
    assert await locales.of("U1") == "zh-CN"
    clock.now += 2
    assert await locales.of("U1") == "en-US"
    assert len(fake_slack.calls_of("users.info")) == 2

    assert await locales.of("U2") == "ja-JP"
    assert await locales.of("U3") == "en-US"  # Slack's default: three users, room for two
    assert await locales.of("U1") == "en-US"  # the least recently seen was dropped: asked again
    assert [c.body["user"] for c in fake_slack.calls_of("users.info")] == [
        "U1", "U1", "U2", "U3", "U1"
    ]  # fmt: skip


async def test_a_failed_look_up_is_no_hint_and_asked_again_later(fake_slack: FakeSlack) -> None:
    client = AsyncWebClient(token=BOT_TOKEN, base_url=fake_slack.api_base)
    clock = Clock()
    locales = UserLocales(lambda: client, ttl=3600, clock=clock)
    fake_slack.fail("users.info", "missing_scope")
    assert await locales.of("U1") == ""
    assert await locales.of("U1") == ""  # not asked again at once
    assert len(fake_slack.calls_of("users.info")) == 1
    clock.now += FAILED_TTL + 1
    assert await locales.of("U1") == "en-US"
    assert await UserLocales(lambda: None).of("U1") == ""  # no client yet: no hint, no call
