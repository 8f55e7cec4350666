"""Several bots per platform: two Telegram bots in one process (the real python-telegram-bot
twice, against one fake Telegram server serving both tokens), bound to different agent profiles.
Each bot's chat runs its own agent, keeps its own conversation and shows in `/api/channels`
and the metrics; the person writing to both is one account (`telegram:42`), so shares memory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
import pytest

from agent.memory.records import NewFact
from bot.config.schema import ConfigError, settings_from_dict
from tests.e2e.hands_helpers import system_text
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.telegram_server import FakeTelegram
from tests.harness import ServiceHarness

CHAT = 4242
SUPPORT_TOKEN = "222222:SUPPORT-token"
AGENTS = [
    {"name": "eng", "display_name": "Engineering", "system_prompt": "You are the eng agent."},
    {"name": "support", "display_name": "Support desk", "system_prompt": "You are support."},
]


async def said(bot: FakeTelegram, text: str) -> str:
    before = len(bot.shown_texts(CHAT))
    bot.push_message(CHAT, text)
    await bot.wait_for(lambda: len(bot.shown_texts(CHAT)) > before, timeout=10)
    return bot.shown_texts(CHAT)[-1]


def channels(main: FakeTelegram) -> dict[str, Any]:
    support = {"name": "support", "bot_token": SUPPORT_TOKEN, "agent": "support"}
    return {"telegram": main.channel_config(agent="eng", bots=[support])}


async def test_two_telegram_bots_talk_as_their_own_agents(
    tmp_path: Path, fake_openai: FakeOpenAI, telegram: FakeTelegram
) -> None:
    support = telegram.add_bot(SUPPORT_TOKEN, bot_id=222222, username="support_bot")
    agent = {"title": {"enabled": False}, "memory": {"debounce_seconds": 300}}
    async with ServiceHarness(
        tmp_path / "data", fake_openai, channels(telegram), agent=agent, agents=AGENTS,
    ) as svc:  # fmt: skip
        app = svc.running
        fact = NewFact("Likes green tea", "preference", 0.9)
        await app.runner.memory.store.add_fact("telegram:42", fact, source="test")
        await said(telegram, "hello eng")
        await svc.idle()
        await said(support, "hello support")
        await svc.idle()
        assert "Agent: Support desk (support)" in await said(support, "/status")
        assert "Agent: Engineering (eng)" in await said(telegram, "/status")
        keys = sorted(c.key for c in await app.conversations.all())
        assert keys == [f"telegram.support:{CHAT}", f"telegram:{CHAT}"]  # one per bot
        async with (
            aiohttp.ClientSession() as http,
            http.get(svc.gateway_url + "/api/channels") as resp,
        ):
            listed = (await resp.json())["channels"]
        assert {"telegram", "telegram.support"} <= set(listed)
        assert listed["telegram.support"]["connected"] is True
        assert app.metrics.value("antler_runs_started_total", channel="telegram.support") == 1
        assert app.metrics.value("antler_runs_started_total", channel="telegram") == 1
    eng, desk = fake_openai.requests
    assert "You are the eng agent." in system_text(eng)
    assert "You are support." in system_text(desk)
    assert "You are the eng agent." not in system_text(desk)
    assert "green tea" in system_text(eng)
    assert "green tea" in system_text(desk)  # one person on both bots: the same memory
    assert support.calls_of("getUpdates")  # each bot polls with its own token
    assert all(c.body.get("chat_id") in (None, CHAT) for c in support.calls)


def test_bad_bots_are_refused_with_their_yaml_path() -> None:
    def problems(platform: str, section: dict[str, Any]) -> list[str]:
        raw = {"models": [{"name": "m", "model": "m"}], "channels": {platform: section}}
        with pytest.raises(ConfigError) as info:
            settings_from_dict(raw)
        return info.value.problems

    def telegram(bots: list[dict[str, Any]], **section: Any) -> list[str]:
        return problems("telegram", {"enabled": True, "bot_token": "1:x", "bots": bots, **section})

    assert telegram([{"bot_token": "2:y"}]) == [
        "channels.telegram.bots[0].name: required, lower-case letters, digits, - and _ (32 at most)"
    ]
    assert telegram([{"name": "a", "bot_token": "2:y", "bogus": 1}]) == [
        "channels.telegram.bots[0].bogus: unknown key"
    ]
    assert telegram([{"name": "a", "bot_token": "2:y"}, {"name": "a", "bot_token": "3:z"}]) == [
        "channels.telegram.bots[1].name: duplicate bot name 'a'"
    ]
    assert telegram([{"name": "a", "bot_token": "2:y", "agent": "nobody"}]) == [
        "channels.telegram.bots[a].agent: 'nobody' is not one of agents[].name"
    ]
    assert telegram([], agent="nobody") == [
        "channels.telegram.agent: 'nobody' is not one of agents[].name"
    ]
    assert telegram([{"name": "a"}]) == [
        "channels.telegram.bots[0].bot_token: required (each bot has its own credentials)"
    ]
    assert telegram([{"name": "a", "bot_token": "1:x"}]) == [
        "channels.telegram.bots[0].bot_token: the same account as the section's own bot"
    ]
    slack = {"enabled": True, "bot_token": "xoxb-1", "app_token": "xapp-1"}
    assert problems("slack", {**slack, "bots": [{"name": "a", "bot_token": "xoxb-2"}]}) == [
        "channels.slack.bots[0].app_token: required (xapp-...) when channels.slack.mode is socket"
    ]  # an app's own token is never the section's
    feishu = {"enabled": True, "app_id": "cli_1", "app_secret": "s"}
    two = [{"name": "a", "app_id": "cli_2", "app_secret": "t"}, {"name": "b", "app_id": "cli_2"}]
    assert problems("feishu", {**feishu, "bots": two}) == [
        "channels.feishu.bots[1].app_secret: required (each bot has its own credentials)"
    ]
    two[1]["app_secret"] = "u"
    assert problems("feishu", {**feishu, "bots": two}) == [
        "channels.feishu.bots[1].app_id: the same account as bot 'a'"
    ]
    discord = {"enabled": True, "bot_token": "NDI0Mg.x", "api_base": "http://a"}
    bot = {"name": "a", "bot_token": "NDI0Mw.y", "api_base": "http://b"}
    assert problems("discord", {**discord, "bots": [bot]}) == [
        "channels.discord.bots[0].api_base: one for every bot (set it on the section)"
    ]
    same = {"name": "a", "app_id": "cli_2", "app_secret": "t", "webhook_path": "/feishu/events"}
    assert problems("feishu", {**feishu, "bots": [same]}) == [
        "channels.feishu.bots[0].webhook_path: already the route of the section's own bot"
    ]
    console = {"enabled": True, "bots": [{"name": "a"}]}
    assert problems("console", console) == ["channels.console.bots: this channel has no named bots"]


def test_named_bots_get_webhook_paths_and_secrets_of_their_own() -> None:
    feishu = {"enabled": True, "app_id": "cli_1", "app_secret": "s", "encrypt_key": "k"}
    bot = {"name": "desk", "app_id": "cli_2", "app_secret": "t"}
    raw = {
        "models": [{"name": "m", "model": "m"}],
        "channels": {"feishu": {**feishu, "bots": [bot]}},
    }
    section = settings_from_dict(raw).channels.platform("feishu")
    assert section is not None
    desk = section.bot_configs()["desk"]
    assert desk.webhook_path == "/feishu/events/desk"  # type: ignore[attr-defined]
    assert desk.encrypt_key.get_secret_value() == ""  # type: ignore[attr-defined]
