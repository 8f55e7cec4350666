"""Several bots per platform beyond Telegram: on Slack, Feishu, DingTalk, Discord and WeCom, the
section's bot and a named bot (a second app with credentials of its own, served as the platform
serves a second app: `Driver.named_bot`) run in one process through the real SDK, bound to
different agent profiles. The same person in the same DM of each bot is two conversations, each
answered by its bot's agent; `/api/channels` and the metrics show each bot."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.channels.contract.conftest import DRIVERS
from tests.channels.contract.driver import Driver
from tests.channels.slack import events
from tests.e2e.hands_helpers import system_text
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.fakes.slack_payloads import signed_post
from tests.fakes.slack_server import BOT_TOKEN, SIGNING_SECRET, FakeSlack
from tests.harness import ServiceHarness, answered

AGENTS = [
    {"name": "eng", "display_name": "Engineering", "system_prompt": "You are the eng agent."},
    {"name": "support", "display_name": "Support desk", "system_prompt": "You are support."},
]
PLATFORMS = ["dingtalk", "discord", "feishu", "slack", "wecom"]


@pytest.fixture(params=PLATFORMS)
def bots(request: pytest.FixtureRequest) -> Iterator[tuple[Driver[Any], Driver[Any]]]:
    section = DRIVERS[request.param]()
    section.start()
    support = section.named_bot()
    yield section, support
    support.stop()
    section.stop()


async def test_two_bots_of_a_platform_talk_as_their_own_agents(
    tmp_path: Path, fake_openai: FakeOpenAI, bots: tuple[Driver[Any], Driver[Any]]
) -> None:
    section, support = bots
    platform = section.name
    agents = {"": "eng", "support": "support"}
    channels = {platform: section.as_section({"support": support}, agents)}
    fake_openai.script(Reply(text="Eng here."), Reply(text="Support here."))
    agent = {"title": {"enabled": False}}
    async with ServiceHarness(
        tmp_path / "data", fake_openai, channels, agent=agent, agents=AGENTS
    ) as svc:
        app = svc.running
        section.send("hello eng", "e1")
        await answered(svc, fake_openai, 1)
        support.send("hello support", "e1")  # the same person, the same DM id, the other bot
        await answered(svc, fake_openai, 2)
        assert section.shown() == ["Eng here."]
        assert support.shown() == ["Support here."]
        keys = [c.key.split(":", 1) for c in await app.conversations.all()]
        named = f"{platform}.support"
        assert sorted(channel for channel, _ in keys) == [platform, named]  # one per bot
        assert len({chat for _, chat in keys}) == 1  # of the same chat
        async with aiohttp.ClientSession() as http:
            async with http.get(svc.gateway_url + "/api/channels") as resp:
                listed = (await resp.json())["channels"]
            async with http.get(svc.gateway_url + "/console/channels") as resp:
                page = await resp.text()
        assert f'<tr id="channel-{named}">' in page  # the console's channels page: its own row
        assert listed[platform]["connected"] is True
        assert listed[named]["connected"] is True
        assert app.metrics.value("antler_runs_started_total", channel=named) == 1
        assert app.metrics.value("antler_runs_started_total", channel=platform) == 1
    eng, desk = fake_openai.requests
    assert "You are the eng agent." in system_text(eng)
    assert "You are support." in system_text(desk)
    assert "You are the eng agent." not in system_text(desk)


async def test_each_slack_app_has_its_own_events_url_and_signing_secret(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    """HTTP mode: a named app's Request URL is the section's `http_path` plus its name, and only
    its own signing secret opens it."""
    main = FakeSlack().start()
    support = FakeSlack(bot_user="UBOT2", bot_token="xoxb-second").start()
    try:
        http = {"mode": "http", "enabled": True}
        bot = {"name": "support", "bot_token": "xoxb-second", "signing_secret": "second-secret",
               "api_base": support.api_base}  # fmt: skip
        section = {**http, "bot_token": BOT_TOKEN, "signing_secret": SIGNING_SECRET,
                   "api_base": main.api_base, "bots": [bot]}  # fmt: skip
        async with ServiceHarness(tmp_path, fake_openai, {"slack": section}) as svc:
            url = svc.gateway_url + "/slack/events/support"
            body = json.dumps(support.event_body(events.dm("via http"), event_id="EvS")).encode()
            assert (await signed_post(url, body))[0] == 401  # the section's secret
            assert (await signed_post(url, body, secret="second-secret"))[0] == 200
            await support.until(lambda f: f.calls_of("chat.stopStream"), timeout=10)
            await svc.idle()
            keys = [c.key for c in await svc.running.conversations.all()]
        assert [k.split(":", 1)[0] for k in keys] == ["slack.support"]
        assert main.calls_of("chat.startStream") == []  # answered by the support app only
    finally:
        support.stop()
        main.stop()
