"""Which language a person gets, through the real SDKs: `/lang zh` is remembered for the person
(across a restart, and on an account linked from another platform), Telegram's `language_code`
and Slack's user locale (users.info) are hints when they chose none, and Telegram gets its
command menu once per language."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from bot import i18n, texts
from tests.channels.contract.driver import Driver
from tests.channels.contract.slack import SlackDriver
from tests.channels.contract.telegram import DM, TelegramDriver
from tests.e2e.test_link_accounts import said
from tests.fakes.openai_server import FakeOpenAI
from tests.harness import ServiceHarness


def zh(text: str) -> str:
    with i18n.use("zh_CN"):
        return i18n.gettext(text)


def harness(tmp_path: Path, fake_openai: FakeOpenAI, *drivers: Driver) -> ServiceHarness:
    return ServiceHarness(tmp_path, fake_openai, {d.name: d.config() for d in drivers})


async def test_lang_is_remembered_and_follows_linked_accounts(
    tmp_path: Path, fake_openai: FakeOpenAI, drivers: tuple[TelegramDriver, SlackDriver]
) -> None:
    telegram, slack = drivers
    new_started = texts.constants()["NEW_STARTED"]
    async with harness(tmp_path, fake_openai, telegram, slack):
        assert await said(telegram, "/lang", "t0") == texts.lang_is("English")
        with i18n.use("zh_CN"):
            chosen = texts.lang_set("中文")
        assert await said(telegram, "/lang zh", "t1") == chosen  # answered in the new language
        assert await said(telegram, "/new", "t2") == zh(new_started)
        assert await said(slack, "/new", "s1") == new_started  # another person so far
        assert await said(telegram, "/lang klingon", "t3") == zh(texts.constants()["LANG_USAGE"])
    async with harness(tmp_path, fake_openai, telegram, slack):  # a restart: still chosen
        assert await said(telegram, "/new", "t4") == zh(new_started)
        code = re.search(r"：(\w+)\n", await said(telegram, "/link", "t5"))
        assert code is not None
        await said(slack, f"/link {code.group(1)}", "s2")
        assert await said(slack, "/new", "s3") == zh(new_started)  # the person's choice
        assert await said(slack, "/lang auto", "s4") == texts.lang_set("English")
        assert await said(telegram, "/new", "t6") == new_started  # forgotten for the person


async def test_telegrams_language_code_is_a_hint(
    tmp_path: Path, fake_openai: FakeOpenAI, drivers: tuple[TelegramDriver, SlackDriver]
) -> None:
    telegram, _ = drivers
    async with harness(tmp_path, fake_openai, telegram):
        before = len(telegram.shown())
        update = telegram.fake.message(DM, "/help")
        update["from"]["language_code"] = "zh-hans"
        telegram.fake.push_update({"message": update})
        for _ in range(400):
            if len(telegram.shown()) > before:
                break
            await asyncio.sleep(0.05)
        assert telegram.shown()[-1].startswith(zh("Commands:"))
        assert await said(telegram, "/lang en", "t1") == texts.lang_set("English")  # a choice wins


async def test_slacks_user_locale_is_a_hint_asked_once(
    tmp_path: Path, fake_openai: FakeOpenAI, drivers: tuple[TelegramDriver, SlackDriver]
) -> None:
    _, slack = drivers
    slack.fake.user_locales["U0001"] = "zh-CN"  # the person's Slack is in Chinese
    new_started = texts.constants()["NEW_STARTED"]
    async with harness(tmp_path, fake_openai, slack):
        assert await said(slack, "/new", "s1") == zh(new_started)  # no /lang needed
        assert (await said(slack, "/help", "s2")).startswith(zh("Commands:"))
        asked = slack.fake.calls_of("users.info")
        assert len(asked) == 1  # remembered for the next messages
        assert asked[0].body["user"] == "U0001"
        assert str(asked[0].body["include_locale"]).lower() in ("true", "1")
        assert await said(slack, "/lang en", "s3") == texts.lang_set("English")  # a choice wins
        assert await said(slack, "/new", "s4") == new_started


async def test_telegram_gets_a_command_menu_per_language(
    tmp_path: Path, fake_openai: FakeOpenAI, drivers: tuple[TelegramDriver, SlackDriver]
) -> None:
    telegram, _ = drivers
    channels = {"telegram": {**telegram.config(), "locale": "zh-CN"}}
    async with ServiceHarness(tmp_path, fake_openai, channels):
        menus = {
            c.body.get("language_code", ""): {
                cmd["command"]: cmd["description"] for cmd in c.body["commands"]
            }
            for c in telegram.fake.calls_of("setMyCommands")
        }
    assert set(menus) == {"", "en", "zh"}
    assert menus["en"]["new"] == "start a new conversation (the agent forgets this chat's history)"
    assert menus["zh"]["new"] == zh(menus["en"]["new"])
    assert menus[""] == menus["zh"]  # everyone else: the channel's language
    assert menus["zh"]["lang"] == zh("show or set the language I answer you in")
