"""The whole service on Discord (bus, dispatcher, agent on the fake OpenAI, discord.py on the
fake Discord): streaming within the edit budget under 429s, the 2,000-character limit and
continuation messages, slash commands (and their locale as the language hint), a mention
answered in its thread."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot import i18n, texts
from tests.channels.discord.conftest import discord_config
from tests.fakes.discord_server import CHANNEL_ID, GUILD_ID, FakeDiscord
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.harness import ServiceHarness, answered

DM = 5555
LONG = "\n\n".join(f"Paragraph {i}: " + "lorem ipsum " * 60 for i in range(7))  # ~5,000 chars


@pytest.fixture
async def service(
    tmp_path: Path, fake_openai: FakeOpenAI, fake_discord: FakeDiscord
) -> AsyncIterator[ServiceHarness]:
    async with ServiceHarness(
        tmp_path, fake_openai, {"discord": discord_config(fake_discord)}
    ) as svc:
        yield svc


async def test_a_long_stream_keeps_the_edit_budget_and_the_2000_limit(
    service: ServiceHarness, fake_openai: FakeOpenAI, fake_discord: FakeDiscord
) -> None:
    fake_openai.script(Reply(text=LONG, tokens_per_second=400))
    fake_discord.push_message(fake_discord.message_payload(DM, "write a lot"))
    await answered(service, fake_openai, 1)
    parts = [m["content"] for m in fake_discord.bot_messages(DM)]
    assert len(parts) >= 3
    assert all(len(p) <= 2000 for p in parts)
    assert " ".join(parts).split() == LONG.split()
    edits = [h for h in fake_discord.history if h[0] == "PATCH"]
    assert len(edits) >= 3  # it streamed
    assert fake_discord.violations == []  # never 6 edits in 5 s, never over 2,000 characters


async def test_a_429_on_a_streaming_edit_is_waited_out_inside_the_budget(
    service: ServiceHarness, fake_openai: FakeOpenAI, fake_discord: FakeDiscord
) -> None:
    fake_discord.rate_limit("PATCH", f"/channels/{DM}/messages", retry_after=1.5, times=2)
    text = "Streaming: " + "token " * 200
    fake_openai.script(Reply(text=text, tokens_per_second=60))
    fake_discord.push_message(fake_discord.message_payload(DM, "stream"))
    await answered(service, fake_openai, 1)
    assert fake_discord.limits_served == 2
    assert [m["content"] for m in fake_discord.bot_messages(DM)] == [text.strip()]
    assert fake_discord.violations == []  # nothing reached the bucket before its retry-after


async def test_a_global_429_holds_every_call_until_it_passes(
    service: ServiceHarness, fake_openai: FakeOpenAI, fake_discord: FakeDiscord
) -> None:
    fake_discord.rate_limit("POST", "/messages", retry_after=1, is_global=True)
    fake_discord.push_message(fake_discord.message_payload(DM, "/new"))
    await fake_discord.until(lambda f: bool(f.bot_messages(DM)), timeout=20)
    await service.idle(timeout=20)
    assert [m["content"] for m in fake_discord.bot_messages(DM)] == [texts.NEW_STARTED]
    assert fake_discord.violations == []


async def test_a_slash_command_is_answered_below_its_echo(
    service: ServiceHarness, fake_openai: FakeOpenAI, fake_discord: FakeDiscord
) -> None:
    data = {"id": "1", "name": "new", "type": 1}
    fake_discord.push_interaction(fake_discord.interaction_payload(2, data, channel=DM))
    await fake_discord.until(lambda f: len(f.bot_messages(DM)) == 2, timeout=20)
    await service.idle(timeout=20)
    echo, answer = fake_discord.bot_messages(DM)
    assert echo["content"] == "`/new`"
    assert answer["content"] == texts.NEW_STARTED
    assert answer["message_reference"]["message_id"] == int(echo["id"])
    assert fake_openai.requests == []


async def test_a_slash_commands_locale_is_the_language_hint(
    service: ServiceHarness, fake_openai: FakeOpenAI, fake_discord: FakeDiscord
) -> None:
    with i18n.use("zh_CN"):
        new_started, in_main = texts.NEW_STARTED, texts.NEW_IN_MAIN_CHAT
        lang_set = texts.lang_set("English")
    data = {"id": "1", "name": "new", "type": 1}
    fake_discord.push_interaction(
        fake_discord.interaction_payload(2, data, channel=DM, locale="zh-CN")
    )
    await fake_discord.until(lambda f: len(f.bot_messages(DM)) == 2, timeout=20)
    await service.idle(timeout=20)
    assert fake_discord.bot_messages(DM)[-1]["content"] == new_started  # no /lang needed
    # in a server: a language Discord does not know falls back to the server's (guild_locale)
    fake_discord.guild_locale = "zh-CN"
    payload = fake_discord.interaction_payload(
        2, data, channel=CHANNEL_ID, guild=GUILD_ID, locale="xx-XX"
    )
    fake_discord.push_interaction(payload)
    await fake_discord.until(lambda f: len(f.bot_messages(CHANNEL_ID)) == 2, timeout=20)
    await service.idle(timeout=20)
    assert fake_discord.bot_messages(CHANNEL_ID)[-1]["content"] == in_main
    # the person's own choice wins over the hint
    lang = {"id": "2", "name": "lang", "type": 1, "options": [{"name": "args", "value": "en"}]}
    fake_discord.push_interaction(
        fake_discord.interaction_payload(2, lang, channel=DM, locale="zh-CN")
    )
    await fake_discord.until(lambda f: len(f.bot_messages(DM)) == 4, timeout=20)
    await service.idle(timeout=20)
    assert fake_discord.bot_messages(DM)[-1]["content"] == texts.lang_set("English")
    assert lang_set != texts.lang_set("English")


async def test_a_mention_is_answered_in_its_thread_and_the_thread_continues(
    service: ServiceHarness, fake_openai: FakeOpenAI, fake_discord: FakeDiscord
) -> None:
    first = fake_discord.mention_payload("hello")
    fake_discord.push_message(first)
    await answered(service, fake_openai, 1)
    thread = int(first["id"])
    (answer,) = fake_discord.bot_messages(thread)
    assert answer["content"].endswith("hello")  # "echo: alice wrote: hello" (a group)
    # a message in the thread, without a mention: the bot answers there (its thread)
    fake_discord.push_message(fake_discord.message_payload(thread, "more", guild=GUILD_ID))
    await answered(service, fake_openai, 2)
    assert fake_discord.bot_messages(thread)[-1]["content"].endswith("more")
    assert len(FakeOpenAI.user_texts(fake_openai.requests[1])) == 2  # one conversation
    # chatter in the channel without a mention is not for the bot
    fake_discord.push_message(fake_discord.message_payload(CHANNEL_ID, "lunch?", guild=GUILD_ID))
    await service.idle(timeout=10)
    assert len(fake_openai.requests) == 2
    assert fake_discord.bot_messages(CHANNEL_ID) == []


async def test_a_command_in_a_channel_is_answered_there_without_a_thread(
    service: ServiceHarness, fake_openai: FakeOpenAI, fake_discord: FakeDiscord
) -> None:
    command = fake_discord.mention_payload("/status")
    fake_discord.push_message(command)
    await fake_discord.until(lambda f: bool(f.bot_messages(CHANNEL_ID)), timeout=20)
    await service.idle(timeout=20)
    (answer,) = fake_discord.bot_messages(CHANNEL_ID)
    assert answer["message_reference"]["message_id"] == int(command["id"])
    assert fake_discord.threads == {}
    assert fake_openai.requests == []
