"""The Discord channel against the fake Discord: threads, slash commands, buttons, files,
the gateway's resume, start outages, the connection's name. (The contract suite covers the
DM basics; tests/channels/discord/test_service.py runs the whole service.)"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from channels.base import FileTooLarge, ReplyDoc
from channels.discord.channel import DiscordChannel
from channels.discord.config import DiscordConfig, bot_id
from channels.errors import ChannelError
from tests.channels.fenced import lapsed
from tests.fakes.discord_server import (
    BOT_ID,
    CHANNEL_ID,
    GUILD_ID,
    ROLE_ID,
    TOKEN,
    USER_ID,
    FakeDiscord,
)
from tests.fakes.recording_context import RecordingContext

Make = Any
DM = 5555


async def test_start_registers_the_command_registry_as_slash_commands(
    make_channel: Make, fake_discord: FakeDiscord
) -> None:
    await make_channel()
    names = [c["name"] for c in fake_discord.commands]
    assert {"new", "models", "stop", "help"} <= set(names)
    assert all(c["options"][0]["name"] == "text" for c in fake_discord.commands)


async def test_a_mention_in_a_channel_is_answered_in_a_thread_started_from_it(
    make_channel: Make, fake_discord: FakeDiscord
) -> None:
    channel, ctx = await make_channel()
    message = fake_discord.mention_payload("summarise this")
    fake_discord.push_message(message)
    (msg,) = await ctx.wait_published(1)
    assert msg.text == "summarise this"
    assert msg.mentions_bot
    assert msg.in_main_chat
    assert msg.chat.workspace == str(GUILD_ID)
    assert msg.chat.chat_id == str(CHANNEL_ID)
    assert msg.chat.topic_id == message["id"]  # a thread started from a message has its id
    assert msg.sender.roles == (str(ROLE_ID),)

    handle = await channel.open_reply(msg, ReplyDoc())
    await channel.finish_reply(handle, ReplyDoc(text="the summary", status="done"))
    assert int(message["id"]) in fake_discord.threads
    assert [m["content"] for m in fake_discord.bot_messages(int(message["id"]))] == ["the summary"]
    assert fake_discord.bot_messages(CHANNEL_ID) == []  # nothing in the channel itself

    # the user answers in the thread: a reply to the bot, in the same conversation
    await fake_discord.until(lambda f: True)
    follow = fake_discord.message_payload(int(message["id"]), "and more", guild=GUILD_ID)
    await _wait_thread_known(channel, int(message["id"]))
    fake_discord.push_message(follow)
    _, second = await ctx.wait_published(2)
    assert second.replies_to_bot
    assert not second.in_main_chat
    assert second.chat.key == msg.chat.key


async def _wait_thread_known(channel: DiscordChannel, thread: int) -> None:
    guild = channel.client.get_guild(GUILD_ID)
    async with asyncio.timeout(5):
        while guild is None or guild.get_thread(thread) is None:
            await asyncio.sleep(0.01)
            guild = channel.client.get_guild(GUILD_ID)


async def test_thread_replies_off_answers_in_the_channel(
    make_channel: Make, fake_discord: FakeDiscord
) -> None:
    channel, ctx = await make_channel(thread_replies=False)
    message = fake_discord.mention_payload("hi")
    fake_discord.push_message(message)
    (msg,) = await ctx.wait_published(1)
    assert msg.chat.topic_id is None
    assert not msg.in_main_chat
    handle = await channel.open_reply(msg, ReplyDoc())
    await channel.finish_reply(handle, ReplyDoc(text="hello", status="done"))
    (reply,) = fake_discord.bot_messages(CHANNEL_ID)
    assert reply["message_reference"]["message_id"] == int(message["id"])
    assert fake_discord.threads == {}


async def test_a_slash_command_is_echoed_and_published(
    make_channel: Make, fake_discord: FakeDiscord
) -> None:
    _, ctx = await make_channel()
    data = {
        "id": "1",
        "name": "models",
        "type": 1,
        "options": [{"name": "text", "type": 3, "value": "gpt-x"}],
    }
    fake_discord.push_interaction(fake_discord.interaction_payload(2, data, channel=DM))
    (msg,) = await ctx.wait_published(1)
    assert msg.text == "/models gpt-x"
    assert msg.event_id.startswith("i")
    (callback,) = fake_discord.callbacks
    assert callback["type"] == 4  # answered within the 3 s, with the command's echo
    assert msg.message_id == str(next(iter(fake_discord.messages)))  # the reply answers the echo


async def test_a_button_with_a_long_value_goes_through_the_choice_store(
    make_channel: Make, fake_discord: FakeDiscord
) -> None:
    channel, ctx = await make_channel()
    long_value = "/approve " + "x" * 150
    fake_discord.push_message(fake_discord.message_payload(DM, "hi"))
    (msg,) = await ctx.wait_published(1)
    handle = await channel.open_reply(msg, ReplyDoc())
    doc = ReplyDoc(text="Approve?", status="done", buttons=(_button("Yes", long_value),))
    await channel.finish_reply(handle, doc)
    (shown,) = fake_discord.bot_messages(DM)
    (button,) = shown["components"][0]["components"]
    assert len(button["custom_id"]) <= 100
    data = {"custom_id": button["custom_id"], "component_type": 2}
    fake_discord.push_interaction(
        fake_discord.interaction_payload(3, data, channel=DM, message=shown)
    )
    _, press = await ctx.wait_published(2)
    assert press.is_button
    assert press.text == long_value
    assert fake_discord.callbacks[-1]["type"] == 6  # a deferred update: the message stays


def _button(label: str, value: str) -> Any:
    from channels.base import Button

    return Button(label=label, value=value)


async def test_a_press_on_a_foreign_button_is_ignored(
    make_channel: Make, fake_discord: FakeDiscord
) -> None:
    _, ctx = await make_channel()
    message = fake_discord.message_payload(DM, "x")
    data = {"custom_id": "someone-elses", "component_type": 2}
    fake_discord.push_interaction(
        fake_discord.interaction_payload(3, data, channel=DM, message=message)
    )
    fake_discord.push_message(fake_discord.message_payload(DM, "after"))
    (msg,) = await ctx.wait_published(1)
    assert msg.text == "after"


async def test_a_file_over_the_limit_is_refused_while_downloading(
    make_channel: Make, fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    channel, ctx = await make_channel(max_file_mb=0.001)
    message = fake_discord.message_payload(DM, "file")
    att = fake_discord.add_file("big.txt", b"x" * 5000)
    att["size"] = 10  # the event understates it: the download still stops at the limit
    message["attachments"] = [att]
    fake_discord.push_message(message)
    (msg,) = await ctx.wait_published(1)
    with pytest.raises(FileTooLarge):
        await channel.fetch_file(msg, msg.attachments[0], tmp_path)
    assert not list(tmp_path.glob("big*"))


async def test_a_dropped_socket_resumes_and_replays_what_it_missed(
    make_channel: Make, fake_discord: FakeDiscord
) -> None:
    _, ctx = await make_channel()
    fake_discord.drop()
    fake_discord.dispatch("MESSAGE_CREATE", fake_discord.message_payload(DM, "while away"))
    (msg,) = await ctx.wait_published(1, timeout=20)
    assert msg.text == "while away"
    assert fake_discord.identifies == 1
    assert fake_discord.resumes == 1
    fake_discord.push_message(fake_discord.message_payload(DM, "after"))
    await ctx.wait_published(2)


async def test_an_invalid_session_identifies_again(
    make_channel: Make, fake_discord: FakeDiscord
) -> None:
    _, ctx = await make_channel()
    fake_discord.invalidate()
    await fake_discord.until(lambda f: f.identifies == 2, timeout=20)
    fake_discord.push_message(fake_discord.message_payload(DM, "hello again"))
    await ctx.wait_published(1)


async def test_a_first_connect_that_fails_is_a_retryable_start_error(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    config = DiscordConfig(
        enabled=True,
        bot_token=TOKEN,
        api_base=fake_discord.api_base,
        gateway_url="ws://127.0.0.1:9/",
    )
    channel = DiscordChannel(config, RecordingContext(tmp_path))
    with pytest.raises(ChannelError) as caught:
        await channel.start()
    assert caught.value.retryable
    await channel.stop()
    # and a start after it (the supervisor's retry) connects
    channel.config = DiscordConfig(enabled=True, bot_token=TOKEN, api_base=fake_discord.api_base)
    await channel.start()
    assert fake_discord.identifies == 1
    await channel.stop()


async def test_a_bad_token_is_a_clear_error(fake_discord: FakeDiscord, tmp_path: Path) -> None:
    config = DiscordConfig(enabled=True, bot_token="bm90.a.token", api_base=fake_discord.api_base)
    channel = DiscordChannel(config, RecordingContext(tmp_path))
    with pytest.raises(ChannelError, match="rejected bot_token") as caught:
        await channel.start()
    assert not caught.value.retryable
    await channel.stop()


async def test_a_rest_503_is_retryable(make_channel: Make, fake_discord: FakeDiscord) -> None:
    channel, ctx = await make_channel()
    fake_discord.push_message(fake_discord.message_payload(DM, "hi"))
    (msg,) = await ctx.wait_published(1)
    fake_discord.fail("POST", f"/channels/{DM}/messages", 503)
    with pytest.raises(ChannelError) as caught:
        await channel.send_text(msg.chat, "answer")
    assert caught.value.retryable


async def test_the_connection_is_named_by_the_bot_id_in_the_token() -> None:
    assert bot_id(TOKEN) == str(BOT_ID)
    assert bot_id("not a token").startswith("bot-")
    assert USER_ID != BOT_ID


async def test_gateway_bot_failing_at_start_is_retryable(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    fake_discord.fail("GET", "/gateway/bot", 503)
    config = DiscordConfig(enabled=True, bot_token=TOKEN, api_base=fake_discord.api_base)
    channel = DiscordChannel(config, RecordingContext(tmp_path))
    with pytest.raises(ChannelError) as caught:
        await channel.start()
    assert caught.value.retryable
    assert channel.client.is_closed()  # nothing left open; the retry starts a new client
    await channel.start()
    assert fake_discord.identifies == 1
    await channel.stop()


async def test_a_standby_worker_sends_without_a_gateway_and_takes_over(
    fake_discord: FakeDiscord, tmp_path: Path
) -> None:
    ctx = RecordingContext(tmp_path)
    config = DiscordConfig(enabled=True, bot_token=TOKEN, api_base=fake_discord.api_base)
    channel = DiscordChannel(config, ctx)
    channel.receiving = False
    await channel.start()
    try:
        assert fake_discord.identifies == 0
        assert channel.exclusive_connection() == str(BOT_ID)
        from channels.base import ChatRef

        await channel.send_text(ChatRef(channel="discord", chat_id=str(DM)), "from standby")
        assert [m["content"] for m in fake_discord.bot_messages(DM)] == ["from standby"]
        await channel.start_receiving()
        fake_discord.push_message(fake_discord.message_payload(DM, "now me"))
        await ctx.wait_published(1)
        await channel.stop_receiving()
        await fake_discord.until(lambda f: f.open_sockets == 0)
    finally:
        await channel.stop()


async def test_a_holder_whose_lease_lapsed_publishes_nothing(
    make_channel: Make, fake_discord: FakeDiscord
) -> None:
    channel, ctx = await make_channel()
    asked = lapsed(channel)
    fake_discord.push_message(fake_discord.message_payload(DM, "not mine now"))
    async with asyncio.timeout(5):
        while not asked:  # the event arrived and was fenced
            await asyncio.sleep(0.01)
    channel.may_receive = lambda: True
    fake_discord.push_message(fake_discord.message_payload(DM, "mine again"))
    (msg,) = await ctx.wait_published(1)
    assert msg.text == "mine again"
    assert ctx.publishes == 1


async def test_a_command_whose_answer_fails_is_logged_in_one_line(
    make_channel: Make, fake_discord: FakeDiscord, caplog: pytest.LogCaptureFixture
) -> None:
    _, ctx = await make_channel()
    fake_discord.fail("POST", "/callback", 400)
    data = {"id": "1", "name": "new", "type": 1}
    fake_discord.push_interaction(fake_discord.interaction_payload(2, data, channel=DM))
    async with asyncio.timeout(5):
        while not any("not answered" in r.getMessage() for r in caplog.records):
            await asyncio.sleep(0.01)
    assert ctx.published == []
    assert all(r.exc_info is None for r in caplog.records if r.name.startswith("discord"))
